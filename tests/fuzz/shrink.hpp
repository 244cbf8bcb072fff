// Reducing a failing program to a small one that still fails.
#pragma once
#include <functional>

#include "fuzz/program.hpp"

namespace kiln::fuzz {

// Drops ops that no output needs and inputs that no op reads, and renumbers.
Program compact(const Program& p);

// Greedily tries smaller variants of p (fewer outputs, an earlier value as the output, an op
// replaced by one of its operands, an array operand replaced by a scalar, simpler input
// data, smaller input shapes, simpler op arguments) and keeps each one for which
// still_fails holds, until none does or max_tries variants were tried.
Program shrink(const Program& p, const std::function<bool(const Program&)>& still_fails,
               int max_tries = 500);

// A size measure: shrinking only keeps variants that lower it.
int64_t program_weight(const Program& p);

}  // namespace kiln::fuzz
