// A one-line description of what a group computes, e.g. "out0 = exp(-(in0 * s0))", kept with
// the cached kernel so `kiln-cache list` and debug output can say where a kernel came from.
#pragma once
#include <string>

#include "plan/plan.hpp"

namespace kiln::codegen {

std::string summarize(const plan::FusedGroup& g);

}  // namespace kiln::codegen
