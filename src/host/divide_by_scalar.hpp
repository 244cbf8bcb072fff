// Integer floor division and remainder by one divisor for a whole column, as index maps (pad,
// roll, tile, nonzero's coordinates) and `x // 7`, `x % n` compute them: through a double
// reciprocal instead of a hardware division per element.
#pragma once
#include <cstdint>

#include "graph/ops.hpp"
#include "kiln/dtype.hpp"

namespace kiln::cpu {

// out[k] = op(a[k], *b) for op FloorDivide or Remainder of an integer dtype t, NumPy's values
// (kernels/scalar.cuh's int_floor_divide / int_remainder) bit for bit. Returns false, having
// written nothing, for any other op or dtype, for a divisor of 0 or -1, and for
// divisors too large for the reciprocal; the caller then runs the general loop.
bool divide_by_scalar(graph::BinaryOp op, DType t, const void* a, const void* b, void* out,
                      int64_t n);

}  // namespace kiln::cpu
