// Matmul steps on the host through Eigen's GEMM, one product per batch entry.
#pragma once
#include "plan/plan.hpp"

namespace kiln::cpu {

// out (dense, out_desc's dtype, batch... x m x n) = a @ b, the operands read in place through
// their strides from the buffers `a` and `b` (their plan buffers' starts). float16 and bfloat16
// are widened to float32, multiplied, and rounded once.
void run_matmul(const plan::MatmulStep& step, const plan::PlanBuffer& out_desc, const void* a,
                const void* b, void* out);

}  // namespace kiln::cpu
