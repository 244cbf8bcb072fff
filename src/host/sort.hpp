// Sort steps (sort, argsort) on the host: std::sort of each row's keys (kernels/sort_keys.cuh)
// with the position as the last key, which is the stable order; the reference for CUB's.
#pragma once
#include "plan/plan.hpp"

namespace kiln::cpu {

// Each of step.rows rows of step.n values of in sorted stably in NumPy's order: the values
// into out (step.dtype), or their positions along the row (int64).
void run_sort(const plan::SortStep& step, const plan::PlanBuffer& out_desc, const void* in,
              void* out);

}  // namespace kiln::cpu
