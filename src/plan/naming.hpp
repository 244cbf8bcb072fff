// Readable kernel names: what a group does, so a name in a profile or in the kernel cache
// leads back to the expression (k_sin_mul_add_f32, k_sum_exp_f32).
#pragma once
#include <string>

#include "plan/plan.hpp"

namespace kiln::plan {

std::string kernel_name(const FusedGroup& g);
// "f32", "i64", "c128", "b"
const char* dtype_short(DType t);

}  // namespace kiln::plan
