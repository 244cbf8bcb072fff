// The fuzzer's own promotion and shape oracle: what NumPy 2 (NEP 50 promotion of Python
// scalars, kiln's documented deviations) makes of each op the fuzzer generates, decided
// without asking kiln.
//
// Dtypes come from tables written by NumPy (tests/data/promotion.txt,
// reductions_dtypes.txt and fuzz_dtypes.txt, see make_fuzz_fixtures.py); shapes from the
// broadcasting, reduction, view and FFT rules restated here. check.cpp compares kiln's dtype
// and shape of every value with these, so a promotion or shape-inference error in kiln is a
// mismatch instead of being adopted as the expectation.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "fuzz/program.hpp"

namespace kiln::fuzz {

struct Typed {
  DType dtype = DType::Float64;
  Shape shape;
};

struct Expectation {
  std::optional<Typed> result;  // nullopt: NumPy refuses the op
  std::string refusal;          // why, when it does
};

// The result of op applied to values (only their dtypes and shapes are read).
Expectation expect(const Op& op, const std::vector<Typed>& values);

// NEP 50's result_type of args: the arrays' result_type, then each Python scalar in turn as a
// weak operand (only Python scalars: the highest kind's default dtype); nullopt: none exists.
std::optional<DType> promote(const std::vector<Operand>& args, const std::vector<Typed>& values);

// "v3 = add(int32 (3, 4), Python float)": the op and its operands' dtypes and shapes.
std::string describe(const Op& op, const std::vector<Typed>& values);

// The axes an FFT op transforms over an input of rank nd, as NumPy picks them when none are
// given (negative axes as written). Shared by the oracle and the error bounds (facts.cpp).
std::vector<int> fft_axes(const Op& op, int nd);

}  // namespace kiln::fuzz
