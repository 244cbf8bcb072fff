// The on-disk format of one cached kernel (<key>.kkc). All integers little-endian.
//
//   offset  size  field
//   0       8     magic "\x89KILNKC\n" (the high bit and the newline catch 7-bit or text-mode
//                 copies)
//   8       4     format version (kFormatVersion)
//   12      4     reserved, 0
//   16      8     payload size in bytes; the file is exactly 32 + this
//   24      8     FNV-1a 64 of the payload
//   32      ...   payload, a sequence of fields; a string is u32 length + bytes:
//                 key, name, summary, dtypes, arch, nvrtc version, u32 option count + options,
//                 f64 compile ms, i64 created (Unix seconds), source, u64 binary size + binary
//
// Hit counts and last-use times are deliberately not in the file: a hit never rewrites it.
// They live in the per-process usage logs under <dir>/usage/ (usage_log.hpp).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::jit {

// Bumping it changes every key as well, so old files are simply never looked up again.
inline constexpr uint32_t kFormatVersion = 2;  // 2: dtypes
inline constexpr size_t kFileHeaderSize = 32;

struct CacheEntry {
  std::string key;
  std::string name;
  std::string summary;
  std::string dtypes;
  std::string arch;
  std::string nvrtc_version;
  std::vector<std::string> options;
  double compile_ms = 0;
  int64_t created = 0;  // Unix seconds
  std::string source;
  std::vector<char> binary;  // cubin, or PTX for compute_XX targets
};

std::vector<char> encode_entry(const CacheEntry& e);

// Parses a file's bytes. On failure returns false and says why in `problem` (truncated, bad
// magic, format version, checksum, malformed payload); the caller treats it as a miss.
bool decode_entry(std::span<const char> file, CacheEntry& out, std::string& problem);

}  // namespace kiln::jit
