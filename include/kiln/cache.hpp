// The kernel cache: compiled kernels kept in memory and on disk ($KILN_CACHE_DIR, default
// $XDG_CACHE_HOME/kiln or ~/.cache/kiln), so a kernel is compiled once per machine.
#pragma once
#include <cstdint>
#include <string>

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

}  // namespace kiln::cache
