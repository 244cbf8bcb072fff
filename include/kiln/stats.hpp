// Counters of what the engine ran, for programs that want to see what fusion buys
// (examples/eager_vs_fused) without a profiler.
#pragma once
#include <cstdint>

namespace kiln {

struct EngineStats {
  int64_t plans = 0;          // evaluations that ran a plan
  int64_t kernels = 0;        // fused groups run (GPU kernel launches, or host group passes)
  int64_t library_calls = 0;  // library steps: FFT, random, sort, matmul, a mesh's collectives...
  int64_t copies = 0;         // host <-> device copies
  int64_t bytes_moved = 0;    // bytes the steps read and wrote in memory (each buffer once)
};

EngineStats engine_stats();
void reset_engine_stats();

}  // namespace kiln
