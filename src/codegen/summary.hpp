// A one-line description of what a group computes, e.g. "out0 = exp(-(in0 * s0))", kept with
// the cached kernel so `kiln-cache list` and debug output can say where a kernel came from.
#pragma once
#include <string>

#include "plan/plan.hpp"

namespace kiln::codegen {

std::string summarize(const plan::FusedGroup& g);
// The expression of one value of the group, e.g. "add(mul(in0, s0), s1)".
std::string expression(const plan::FusedGroup& g, int instr);

// The dtypes a group reads and writes, inputs in parameter order: "i64 f32 -> f64" (a group
// that reads no memory, such as arange, shows "-> f32").
std::string dtype_signature(const plan::FusedGroup& g);

}  // namespace kiln::codegen
