// kiln::fft's plan-cache controls (kiln/fft.hpp), beside the cuFFT plan cache they control.
// Without a GPU it stays empty, and none of these touch CUDA.
#include "cuda/fft_plan_cache.hpp"
#include "kiln/fft.hpp"

namespace kiln::fft {

PlanCacheInfo plan_cache() { return gpu::fft::plan_cache_info(); }

void set_plan_cache_limits(size_t max_plans, size_t max_work_bytes) {
  gpu::fft::set_plan_cache_limits(max_plans, max_work_bytes);
}

void clear_plan_cache() { gpu::fft::clear_plan_cache(); }

}  // namespace kiln::fft
