// The elementwise operations, one row each. The enums, names and traits of src/graph/ops.hpp,
// the CUDA spelling (src/codegen/expressions.cpp), the host dispatch (src/host/column_ops.cpp)
// and the public functions of the math ops (src/api/elementwise.cpp) all come from these rows,
// so an op cannot be half added: the row is the op. CONTRIBUTING.md has the recipe.
#pragma once

// KILN_UNARY_OPS(X): X(Enum, name, cfn, form, complex, heavy)
//   name     NumPy's name: the public function (kiln::name), kernel names, explain(), errors.
//   cfn      the C math function (Math ops; `_` for Custom ones).
//   form     Custom: spelled by hand in codegen and on the host, with type rules of their own
//            in src/api/elementwise.cpp.
//            Math: a function of a float (float32, float64) value, or of a complex one when
//            `complex` is 1 (else a complex input raises); bool and integers convert first
//            as NumPy's float_dtype. Device: cfn##f / cfn for float32 / float64, kiln::cfn
//            for complex (kernels/complex.cuh); host: std::cfn, or Eigen's vectorised form
//            where column_ops.cpp has one.
//   heavy    1 for a transcendental function: the planner recomputes at most one of them
//            rather than write a shared value (src/plan/planner.cpp, recomputable).
#define KILN_UNARY_OPS(X)                \
  X(Neg, neg, _, Custom, 1, 0)           \
  X(Not, not, _, Custom, 0, 0)           \
  X(Abs, abs, _, Custom, 1, 0)           \
  X(Sqrt, sqrt, sqrt, Math, 1, 0)        \
  X(Exp, exp, exp, Math, 1, 1)           \
  X(Log, log, log, Math, 1, 1)           \
  X(Sin, sin, sin, Math, 1, 1)           \
  X(Cos, cos, cos, Math, 1, 1)           \
  X(Tan, tan, tan, Math, 1, 1)           \
  X(Tanh, tanh, tanh, Math, 1, 1)        \
  X(Floor, floor, _, Custom, 0, 0)       \
  X(Ceil, ceil, _, Custom, 0, 0)         \
  X(Real, real, _, Custom, 1, 0)         \
  X(Imag, imag, _, Custom, 1, 0)         \
  X(Conj, conj, _, Custom, 1, 0)         \
  X(Log1p, log1p, log1p, Math, 0, 1)     \
  X(Expm1, expm1, expm1, Math, 0, 1)     \
  X(Log2, log2, log2, Math, 0, 1)        \
  X(Log10, log10, log10, Math, 0, 1)     \
  X(Exp2, exp2, exp2, Math, 0, 1)        \
  X(Sinh, sinh, sinh, Math, 0, 1)        \
  X(Cosh, cosh, cosh, Math, 0, 1)        \
  X(Arcsin, arcsin, asin, Math, 0, 1)    \
  X(Arccos, arccos, acos, Math, 0, 1)    \
  X(Arctan, arctan, atan, Math, 0, 1)    \
  X(Arcsinh, arcsinh, asinh, Math, 0, 1) \
  X(Arccosh, arccosh, acosh, Math, 0, 1) \
  X(Arctanh, arctanh, atanh, Math, 0, 1) \
  X(Rint, rint, rint, Math, 0, 0)        \
  X(Gelu, gelu, _, Custom, 0, 1)         \
  X(GeluTanh, gelu_tanh, _, Custom, 0, 1)

// KILN_BINARY_OPS(X): X(Enum, name, cfn, form, complex, heavy)
//   form     Arith: the arithmetic of the dtype (wrapping for integers, bool as logic).
//            Compare: a bool result, NumPy's ordering (lexicographic for complex).
//            Bitwise: bool and integer operands only.
//            Math: cfn of two float values (float_dtype of the promoted type; complex raises).
#define KILN_BINARY_OPS(X)                     \
  X(Add, add, _, Arith, 1, 0)                  \
  X(Sub, sub, _, Arith, 1, 0)                  \
  X(Mul, mul, _, Arith, 1, 0)                  \
  X(Div, div, _, Arith, 1, 0)                  \
  X(Pow, pow, _, Arith, 1, 1)                  \
  X(Minimum, minimum, _, Arith, 1, 0)          \
  X(Maximum, maximum, _, Arith, 1, 0)          \
  X(Eq, eq, _, Compare, 1, 0)                  \
  X(Ne, ne, _, Compare, 1, 0)                  \
  X(Lt, lt, _, Compare, 1, 0)                  \
  X(Le, le, _, Compare, 1, 0)                  \
  X(Gt, gt, _, Compare, 1, 0)                  \
  X(Ge, ge, _, Compare, 1, 0)                  \
  X(And, and, _, Bitwise, 0, 0)                \
  X(Or, or, _, Bitwise, 0, 0)                  \
  X(Xor, xor, _, Bitwise, 0, 0)                \
  X(Arctan2, arctan2, atan2, Math, 0, 1)       \
  X(Hypot, hypot, hypot, Math, 0, 0)           \
  X(Copysign, copysign, copysign, Math, 0, 0)  \
  X(FloorDivide, floor_divide, _, Arith, 0, 0) \
  X(Remainder, remainder, _, Arith, 0, 0)      \
  X(Fmod, fmod, _, Arith, 0, 0)                \
  X(LeftShift, left_shift, _, Bitwise, 0, 0)   \
  X(RightShift, right_shift, _, Bitwise, 0, 0)
