// Random steps on the host through cuRAND's host generator (Philox), so one seed gives the
// same numbers as on the device.
#pragma once
#include "plan/plan.hpp"

namespace kiln::cpu {

void run_random(const plan::RandomStep& step, const plan::PlanBuffer& out_desc, void* out);

}  // namespace kiln::cpu
