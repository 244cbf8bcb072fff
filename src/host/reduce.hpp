// Folding values into reduction accumulators, per dtype and reduction op.
#pragma once
#include <cstdint>

#include "graph/ops.hpp"
#include "kiln/dtype.hpp"

namespace kiln::cpu {

// One accumulator: a running value and, for argmax/argmin, the index where it was found.
// `set` is false until the first value (max/min/arg have no identity).
struct Accumulator {
  alignas(16) unsigned char value[16];
  int64_t index = 0;
  bool set = false;
};

// Folds values[0..n) (dtype t), found at indices first.., into acc.
void fold(graph::ReduceOp op, DType t, const void* values, int64_t n, int64_t first,
          Accumulator& acc);
// Folds a later partial result into acc (order matters for argmax ties: acc comes first).
void merge(graph::ReduceOp op, DType t, const Accumulator& later, Accumulator& acc);
// Writes the final value (identity when nothing was folded; mean divides by `count`).
void finish(graph::ReduceOp op, DType t, const Accumulator& acc, int64_t count, void* out);

}  // namespace kiln::cpu
