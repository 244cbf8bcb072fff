// Variance and standard deviation of sharded arrays, as kiln::var and kiln::std compute them
// (src/api/statistics.cpp): the deviations from the mean, squared, summed, divided by
// max(n - ddof, 0). Over the split axis the mean and the sum are the collectives of
// sharded_reduce.cpp, and the replicated mean meets each rank's piece locally, so the data
// itself never moves: two all-reduces of the reduced shape.
#include <algorithm>
#include <vector>

#include "graph/shape.hpp"
#include "kiln/mesh.hpp"

namespace kiln {

ShardedArray var(const ShardedArray& a, AxesArg axes, double ddof, bool keepdims) {
  std::vector<int> reduced;
  if (!axes.given() || !axes.axes().empty())
    reduced = graph::normalize_axes(axes.axes(), a.ndim(), "var");
  int64_t n = 1;
  for (int k : reduced) n *= a.shape()[static_cast<size_t>(k)];
  // Integers and bools in float64, as NumPy's var; floats and complex values in their own dtype.
  const ShardedArray x =
      is_floating(a.dtype()) || is_complex(a.dtype()) ? a : a.astype(DType::Float64);
  const ShardedArray d = x - mean(x, axes, true);
  const ShardedArray magnitude = is_complex(d.dtype()) ? abs(d) : d;
  return sum(magnitude * magnitude, axes, keepdims) / std::max(static_cast<double>(n) - ddof, 0.0);
}

ShardedArray std(const ShardedArray& a, AxesArg axes, double ddof, bool keepdims) {
  return sqrt(var(a, axes, ddof, keepdims));
}

}  // namespace kiln
