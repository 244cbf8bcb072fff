// The reductions, one row each: the enum graph::ReduceOp, its names and its dtype rules come from
// these rows (src/graph/ops.cpp), so a reduction's name, accumulator and identity are stated
// once. The executors' folds (src/host/reduce.cpp, kernels/reduction.cuh) are written per op.
#pragma once

// KILN_REDUCE_OPS(X): X(Enum, name, acc, result, identity)
//   name      NumPy's name: the public function (kiln::name), kernel names, errors.
//   acc       the dtype it accumulates in, from the input's (NumPy's rules):
//             Wide: bool and int32 widen to int64; Float: bool and integers become float64;
//             Bool: the input as bool; Same: the input's own.
//   result    Acc: the accumulator's dtype; Index: int64 positions (argmax, argmin).
//   identity  1 when a reduction over nothing has a value (0 for sum, 1 for prod, NaN for
//             mean, false / true for any / all); 0 when it raises ShapeError, as NumPy.
// The enum's order is the rows' order; append rows at the end.
#define KILN_REDUCE_OPS(X)          \
  X(Sum, sum, Wide, Acc, 1)         \
  X(Prod, prod, Wide, Acc, 1)       \
  X(Max, max, Same, Acc, 0)         \
  X(Min, min, Same, Acc, 0)         \
  X(Mean, mean, Float, Acc, 1)      \
  X(ArgMax, argmax, Same, Index, 0) \
  X(ArgMin, argmin, Same, Index, 0) \
  X(Any, any, Bool, Acc, 1)         \
  X(All, all, Bool, Acc, 1)
