// Scan steps (cumsum, cumprod) on the host, in order: the reference for the GPU's tiles.
#pragma once
#include "plan/plan.hpp"

namespace kiln::cpu {

// The inclusive scan of in along the step's axis (step.outer x step.n x step.inner). `in` may be
// `out`: each value is read before its place is written.
void run_scan(const plan::ScanStep& step, const plan::PlanBuffer& out_desc, const void* in,
              void* out);

}  // namespace kiln::cpu
