// The kernel cache's settings, read from the environment:
//   KILN_CACHE            disk (default) | memory | off. `off` disables both caches: every
//                         get() compiles (for measuring compiles or ruling the cache out).
//   KILN_CACHE_DIR        the directory; default $XDG_CACHE_HOME/kiln, else ~/.cache/kiln.
//   KILN_CACHE_MAX_BYTES  size cap of the directory, e.g. 500M or 2G (powers of 1024);
//                         default 1G; 0 means no cap.
#pragma once
#include <cstdint>
#include <string>

namespace kiln::jit {

enum class CacheMode { Disk, Memory, Off };

struct CacheConfig {
  CacheMode mode = CacheMode::Disk;
  std::string dir;  // "" when no location could be worked out (no HOME, no password entry)
  uint64_t max_bytes = uint64_t(1) << 30;
};

// Reads the variables above; a malformed value gets a warning and the default.
CacheConfig cache_config_from_env();

// "123", "500M", "2G", "1.5G", "64KiB": a number and an optional power-of-1024 suffix.
bool parse_size(const std::string& v, uint64_t& out);

// One "kiln: warning: ..." line on stderr.
void warn(const std::string& message);

}  // namespace kiln::jit
