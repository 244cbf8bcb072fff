// The kernel cache: compiled kernels kept in memory and on disk ($KILN_CACHE_DIR, default
// $XDG_CACHE_HOME/kiln or ~/.cache/kiln), so a kernel is compiled once per machine.
// build/bin/kiln-cache inspects the same directory from the command line.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::cache {

struct Stats {
  int64_t compiles = 0;     // NVRTC compilations in this process
  int64_t memory_hits = 0;  // kernels found in this process's memory
  int64_t disk_hits = 0;    // kernels loaded from the disk cache
  double compile_ms = 0;    // total NVRTC time in this process
};

Stats stats();
void reset_stats();
// The directory in use ("" when the cache is memory-only or off).
std::string dir();

// One file of the disk cache.
struct Entry {
  std::string key;                   // hex SHA-256 of the kernel's inputs (the file is <key>.kkc)
  std::string name;                  // the kernel, e.g. k_sin_mul_f32_3fa2
  std::string summary;               // what it computes
  std::string dtypes;                // what it reads and writes, "i64 f32 -> f64"
  std::string arch;                  // sm_90
  std::vector<std::string> options;  // NVRTC options, arch included
  size_t bytes = 0;                  // file size
  double compile_ms = 0;             // what compiling it cost
  int64_t hits = 0;                  // times a process used it instead of compiling (all processes)
  int64_t created = 0;               // Unix seconds
  int64_t last_used = 0;  // Unix seconds: the last hit, or when the file was written or loaded
  bool valid = false;     // false: corrupt, truncated, another format version, misnamed
  std::string problem;    // why it is not valid
};

// The entries of dir(), sorted by key; empty when there is no disk cache. Hits include those
// of other processes (their usage logs) and this one's.
std::vector<Entry> entries();

// Removes every entry (and the usage logs) from the disk cache and forgets the kernels in
// memory, so each is compiled again. Kernels already handed out stay valid.
void clear();

}  // namespace kiln::cache
