// The kernel cache's settings, read from the environment:
//   KILN_CACHE            disk (default) | memory | off. `off` disables both caches: every
//                         get() compiles (for measuring compiles or ruling the cache out).
//   KILN_CACHE_DIR        the directory; default $XDG_CACHE_HOME/kiln, else ~/.cache/kiln.
//   KILN_CACHE_MAX_BYTES  size cap of the directory, e.g. 500M or 2G (powers of 1024);
//                         default 1G; 0 means no cap.
//   KILN_CACHE_SHARED     unset (default): directories kiln creates are 0700, files 0600.
//                         `group`: 0750 and 0640, so the group can read the cache. Either way
//                         a directory or entry that another user can write is refused
//                         (file_util.hpp, trust_of).
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <string>

namespace kiln::jit {

enum class CacheMode { Disk, Memory, Off };

struct CacheConfig {
  CacheMode mode = CacheMode::Disk;
  std::string dir;  // "" when no location could be worked out (no HOME, no password entry)
  uint64_t max_bytes = uint64_t(1) << 30;
};

// The modes kiln creates cache directories and files with (the umask still applies).
struct CacheModes {
  mode_t dir = 0700;
  mode_t file = 0600;
};

// Reads the variables above; a malformed value gets a warning and the default.
CacheConfig cache_config_from_env();

// From KILN_CACHE_SHARED, read on every call: the usage logs and saved failing sources are
// written far from the cache's setup, and reading one variable costs nothing next to a file
// creation. A malformed value means private (cache_config_from_env warns about it).
CacheModes cache_modes();

// "123", "500M", "2G", "1.5G", "64KiB": a number and an optional power-of-1024 suffix.
bool parse_size(const std::string& v, uint64_t& out);

// One "kiln: warning: ..." line on stderr.
void warn(const std::string& message);

}  // namespace kiln::jit
