// Compress steps on the host (kiln::masked, flatnonzero): the reference for the GPU's tiles.
#pragma once
#include "plan/plan.hpp"

namespace kiln::cpu {

// out = the rows of values (step.rows x step.width) whose mask byte is not zero, in order; with
// values null, the positions of those bytes as int64. Exactly step.count rows are selected.
void run_compress(const plan::CompressStep& step, const plan::PlanBuffer& out_desc,
                  const bool* mask, const void* values, void* out);

}  // namespace kiln::cpu
