// FFTs of sharded arrays: the slab decomposition. Axes that are not split transform on each
// rank (its own FFT step, lazy like kiln::fft::fftn), at their lengths. The split axis cannot
// transform in pieces, so after the other axes are done the array is resharded along another
// axis (the longest; a 1-d array is replicated), each rank transforms the old split axis
// locally, and the result is resharded back. A transform over several axes is the product of
// its one-axis transforms and so is its scaling (1/N = 1/N1 * 1/N2, and the square roots of
// "ortho"), so doing them in rounds with the same norm is the whole transform; padding or
// cropping an axis to its length acts on that axis alone, so it goes with that axis's round.
// rfftn halves its last axis first, on each rank (moving the array off that axis first when it
// is the split one), then transforms the others as fftn does; irfftn runs in NumPy's order, the
// other axes' inverse first and the halved axis last.
#include <algorithm>
#include <string>
#include <vector>

#include "graph/fft_args.hpp"
#include "kiln/fft.hpp"
#include "kiln/mesh.hpp"
#include "mesh/map_shards.hpp"

namespace kiln::fft {
namespace {

using graph::FftKind;

// The axis to split along while axis `s` transforms on each rank: the longest other one.
std::optional<int> slab_axis(const ShardedArray& x, int s) {
  std::optional<int> best;
  for (int k = 0; k < x.ndim(); ++k)
    if (k != s &&
        (!best || x.shape()[static_cast<size_t>(k)] > x.shape()[static_cast<size_t>(*best)]))
      best = k;
  return best;
}

// f applied to each rank's piece, where f transforms axes that are not split: the pieces keep
// the layout, and the whole shape takes their lengths along those axes.
template <class F>
ShardedArray on_each_rank(const ShardedArray& x, const std::vector<int>& axes, F&& f) {
  std::vector<Array> pieces = x.shards();
  mesh::for_each_held(pieces, f);
  Shape shape = x.shape();
  for (int k : axes)
    shape[static_cast<size_t>(k)] = mesh::first_held(pieces).shape()[static_cast<size_t>(k)];
  return ShardedArray(x.mesh(), x.axis(), std::move(shape), std::move(pieces));
}

// x with its axis `k` not split (resharded along the slab axis when it is), and whether it moved.
std::pair<ShardedArray, bool> off_axis(const ShardedArray& x, int k) {
  if (x.axis() != k) return {x, false};
  return {reshard(x, slab_axis(x, k)), true};
}

// The complex transform of x over axes[i] at lengths[i] (fftn / ifftn).
ShardedArray complex_transform(const ShardedArray& x, const std::vector<int>& axes,
                               const std::vector<int64_t>& lengths, std::string_view norm,
                               bool inverse) {
  // The axes of `which` (indices into axes), on each rank.
  auto local = [&](const ShardedArray& a, const std::vector<size_t>& which) {
    std::vector<int> over;
    std::vector<int64_t> at;
    for (size_t i : which) over.push_back(axes[i]), at.push_back(lengths[i]);
    return on_each_rank(a, over, [&](const Array& piece) {
      return inverse ? ifftn(piece, at, over, norm) : fftn(piece, at, over, norm);
    });
  };
  std::vector<size_t> others, split;
  for (size_t i = 0; i < axes.size(); ++i) (x.axis() == axes[i] ? split : others).push_back(i);
  if (split.empty()) return local(x, others);
  const int s = axes[split.front()];
  auto [slabs, moved] = off_axis(local(x, others), s);
  const ShardedArray done = local(slabs, split);
  return moved ? reshard(done, s) : done;
}

ShardedArray complex_transform(const ShardedArray& x, const Lengths& s, const FftAxes& axes,
                               std::string_view norm, bool inverse, const char* what) {
  const graph::ResolvedFft r = graph::resolve_fft(x.shape(), s, axes, norm, FftKind::C2C, what);
  return complex_transform(x, r.axes, r.lengths, norm, inverse);
}

// All but the last of v.
template <class T>
std::vector<T> leading(const std::vector<T>& v) {
  return std::vector<T>(v.begin(), v.end() - 1);
}

}  // namespace

ShardedArray fft(const ShardedArray& x, std::optional<int64_t> n, int axis, std::string_view norm) {
  return complex_transform(x, n ? Lengths(std::vector<int64_t>{*n}) : std::nullopt,
                           std::vector<int>{axis}, norm, false, "fft");
}
ShardedArray ifft(const ShardedArray& x, std::optional<int64_t> n, int axis,
                  std::string_view norm) {
  return complex_transform(x, n ? Lengths(std::vector<int64_t>{*n}) : std::nullopt,
                           std::vector<int>{axis}, norm, true, "ifft");
}
ShardedArray fftn(const ShardedArray& x, Lengths s, FftAxes axes, std::string_view norm) {
  return complex_transform(x, s, axes, norm, false, "fftn");
}
ShardedArray ifftn(const ShardedArray& x, Lengths s, FftAxes axes, std::string_view norm) {
  return complex_transform(x, s, axes, norm, true, "ifftn");
}

namespace {

ShardedArray real_forward(const ShardedArray& x, const Lengths& s, const FftAxes& axes,
                          std::string_view norm, const char* what) {
  const graph::ResolvedFft r = graph::resolve_fft(x.shape(), s, axes, norm, FftKind::R2C, what);
  if (r.axes.empty())
    throw ShapeError(std::string(what) + ": needs at least one axis to transform");
  if (is_complex(x.dtype()))  // before any data moves: the plain rfftn's refusal
    (void)rfftn(mesh::first_held(x), r.lengths, r.axes, norm);
  const int last = r.axes.back();
  auto [a, moved] = off_axis(x, last);
  ShardedArray half = on_each_rank(
      a, {last}, [&](const Array& piece) { return rfft(piece, r.lengths.back(), last, norm); });
  if (moved) half = reshard(half, last);
  return complex_transform(half, leading(r.axes), leading(r.lengths), norm, false);
}

ShardedArray real_inverse(const ShardedArray& x, const Lengths& s, const FftAxes& axes,
                          std::string_view norm, const char* what) {
  const graph::ResolvedFft r = graph::resolve_fft(x.shape(), s, axes, norm, FftKind::C2R, what);
  if (r.axes.empty())
    throw ShapeError(std::string(what) + ": needs at least one axis to transform");
  const int last = r.axes.back();
  const ShardedArray other = complex_transform(x, leading(r.axes), leading(r.lengths), norm, true);
  auto [a, moved] = off_axis(other, last);
  const ShardedArray out = on_each_rank(
      a, {last}, [&](const Array& piece) { return irfft(piece, r.lengths.back(), last, norm); });
  return moved ? reshard(out, last) : out;
}

}  // namespace

ShardedArray rfftn(const ShardedArray& x, Lengths s, FftAxes axes, std::string_view norm) {
  return real_forward(x, s, axes, norm, "rfftn");
}
ShardedArray irfftn(const ShardedArray& x, Lengths s, FftAxes axes, std::string_view norm) {
  return real_inverse(x, s, axes, norm, "irfftn");
}
ShardedArray rfft(const ShardedArray& x, std::optional<int64_t> n, int axis,
                  std::string_view norm) {
  return real_forward(x, n ? Lengths(std::vector<int64_t>{*n}) : std::nullopt,
                      std::vector<int>{axis}, norm, "rfft");
}
ShardedArray irfft(const ShardedArray& x, std::optional<int64_t> n, int axis,
                   std::string_view norm) {
  return real_inverse(x, n ? Lengths(std::vector<int64_t>{*n}) : std::nullopt,
                      std::vector<int>{axis}, norm, "irfft");
}

}  // namespace kiln::fft
