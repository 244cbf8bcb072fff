// Scatter steps on the host: x copied, then every update applied in order, as NumPy's ufunc.at
// (kernels/scatter.cuh says what one update does, for both executors).
#pragma once
#include "plan/plan.hpp"

namespace kiln::cpu {

void run_scatter(const plan::ScatterStep& step, const plan::PlanBuffer& out_desc, const void* x,
                 const int64_t* positions, const void* values, int64_t count, void* out,
                 uint64_t* check);

}  // namespace kiln::cpu
