// kiln's matmul plan-cache controls (kiln/linalg.hpp), beside the cuBLASLt plan cache they
// control. Without a GPU it stays empty, and none of these touch CUDA.
#include "cuda/matmul_plan_cache.hpp"
#include "kiln/linalg.hpp"

namespace kiln {

MatmulPlanCacheInfo matmul_plan_cache() { return gpu::matmul::plan_cache_info(); }
void set_matmul_plan_cache_limit(size_t max_plans) { gpu::matmul::set_plan_cache_limit(max_plans); }
void clear_matmul_plan_cache() { gpu::matmul::clear_plan_cache(); }

}  // namespace kiln
