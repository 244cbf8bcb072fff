// Operations on columns: n consecutive values of one dtype. The host executor evaluates a
// fused group chunk by chunk, one instruction at a time, each as a column operation.
#pragma once
#include <cstdint>

#include "graph/ops.hpp"
#include "kiln/dtype.hpp"
#include "kiln/scalar.hpp"

namespace kiln::cpu {

void fill_column(DType t, const Scalar& v, void* out, int64_t n);
void cast_column(DType from, DType to, const void* a, void* out, int64_t n);
// `in` is the operand dtype; the output dtype follows from the op (abs/real/imag: real).
void unary_column(graph::UnaryOp op, DType in, const void* a, void* out, int64_t n);
// Operands share dtype t; comparisons write bool.
void binary_column(graph::BinaryOp op, DType t, const void* a, const void* b, void* out, int64_t n);
void where_column(DType t, const bool* cond, const void* x, const void* y, void* out, int64_t n);

}  // namespace kiln::cpu
