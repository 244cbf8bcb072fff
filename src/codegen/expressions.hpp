// CUDA C++ text for one instruction of a fused group: types, casts and operations with
// NumPy's semantics (wrapping integers, NaN-propagating min/max, lexicographic complex order).
#pragma once
#include <string>

#include "plan/plan.hpp"

namespace kiln::codegen {

// "float", "long long", "kiln::complex<double>", ...
const char* cuda_type(DType t);
// The expression converting `x` (of dtype from) to dtype `to`.
std::string cast_expr(DType from, DType to, const std::string& x);
// The expression for a unary op applied to `x` of dtype `in`.
std::string unary_expr(graph::UnaryOp op, DType in, const std::string& x);
// The expression for a binary op on `a`, `b` of dtype `t`.
std::string binary_expr(graph::BinaryOp op, DType t, const std::string& a, const std::string& b);

}  // namespace kiln::codegen
