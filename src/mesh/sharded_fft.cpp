// FFTs of sharded arrays: the slab decomposition. Axes that are not split transform on each
// rank (its own FFT step, lazy like kiln::fft::fftn). The split axis cannot transform in
// pieces, so after the other axes are done the array is resharded along another axis (the
// longest; a 1-d array is replicated), each rank transforms the old split axis locally, and the
// result is resharded back. A transform over several axes is the product of its one-axis
// transforms and so is its scaling (1/N = 1/N1 * 1/N2), so doing them in two rounds with the same
// norm is the whole transform.
#include <algorithm>
#include <string>
#include <vector>

#include "graph/shape.hpp"
#include "kiln/fft.hpp"
#include "kiln/mesh.hpp"
#include "mesh/map_shards.hpp"

namespace kiln::fft {
namespace {

// The axis to split along while the split axis `s` transforms: the longest other one.
std::optional<int> slab_axis(const ShardedArray& x, int s) {
  std::optional<int> best;
  for (int k = 0; k < x.ndim(); ++k)
    if (k != s &&
        (!best || x.shape()[static_cast<size_t>(k)] > x.shape()[static_cast<size_t>(*best)]))
      best = k;
  return best;
}

ShardedArray transform(const ShardedArray& x, FftAxes axes_in, std::string_view norm,
                       bool inverse) {
  std::vector<int> axes;
  if (axes_in)
    axes = graph::normalize_axes(*axes_in, x.ndim(), inverse ? "ifftn" : "fftn");
  else
    for (int k = 0; k < x.ndim(); ++k) axes.push_back(k);
  auto local = [&](const ShardedArray& a, const std::vector<int>& over) {
    if (over.empty()) return a;
    return mesh::map_shards(a, [&](const Array& piece) {
      return inverse ? ifftn(piece, std::nullopt, over, norm)
                     : fftn(piece, std::nullopt, over, norm);
    });
  };
  const std::optional<int> split = x.axis();
  if (!split || std::find(axes.begin(), axes.end(), *split) == axes.end()) return local(x, axes);
  std::vector<int> others;
  for (int k : axes)
    if (k != *split) others.push_back(k);
  const ShardedArray done = local(x, others);
  const ShardedArray slabs = local(reshard(done, slab_axis(x, *split)), {*split});
  return reshard(slabs, *split);
}

}  // namespace

ShardedArray fftn(const ShardedArray& x, FftAxes axes, std::string_view norm) {
  return transform(x, std::move(axes), norm, false);
}
ShardedArray ifftn(const ShardedArray& x, FftAxes axes, std::string_view norm) {
  return transform(x, std::move(axes), norm, true);
}
ShardedArray fft(const ShardedArray& x, int axis, std::string_view norm) {
  return transform(x, std::vector<int>{axis}, norm, false);
}
ShardedArray ifft(const ShardedArray& x, int axis, std::string_view norm) {
  return transform(x, std::vector<int>{axis}, norm, true);
}

}  // namespace kiln::fft
