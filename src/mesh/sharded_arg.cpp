// argmax and argmin of sharded arrays. Along an axis other than the split one (or of a
// replicated array) each rank answers for its own piece. Along the split axis, or of the
// raveled array when it is split, each rank finds its piece's best value and that value's index
// in the whole array; an all-gather brings every rank's pair to every rank, which then keeps, per
// element, the best value and among equal ones (or NaNs, which win as in NumPy) the lowest
// index: NumPy's first occurrence. A rank whose piece is empty offers no candidate.
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "graph/shape.hpp"
#include "kiln/mesh.hpp"
#include "mesh/communicator.hpp"
#include "mesh/identity.hpp"
#include "mesh/map_shards.hpp"
#include "mesh/split.hpp"

namespace kiln {
namespace {

constexpr int64_t kNoCandidate = std::numeric_limits<int64_t>::max();

// Where rank r's piece starts along the split axis.
int64_t piece_offset(const ShardedArray& a, int rank) {
  return mesh::piece_of(a.shape()[static_cast<size_t>(*a.axis())], a.mesh().size(), rank).start;
}

// The index in the whole raveled array of flat index p (int64) of rank r's piece.
Array global_flat_index(const ShardedArray& a, int rank, const Array& p) {
  const Shape& piece = a.shard(rank).shape();
  const Shape& whole = a.shape();
  const auto split = static_cast<size_t>(*a.axis());
  Array global = zeros({}, DType::Int64, p.device());
  int64_t piece_stride = 1, whole_stride = 1;
  for (size_t k = piece.size(); k-- > 0;) {
    Array coord = floor_divide(p, piece_stride) % piece[k];
    if (k == split) coord = coord + piece_offset(a, rank);
    global = global + coord * whole_stride;
    piece_stride *= piece[k];
    whole_stride *= whole[k];
  }
  return global;
}

// Per element of the gathered pairs (ranks stacked on axis 0), the lowest index among the best
// values: a NaN is best (NumPy's argmax and argmin stop at the first NaN).
Array pick(bool largest, const Array& values, const Array& indices) {
  Array best = largest ? max(values, 0, true) : min(values, 0, true);
  Array is_best = values == best;
  if (is_floating(values.dtype()) || is_complex(values.dtype()))
    is_best = is_best | (isnan(values) & isnan(best));
  return min(where(is_best, indices, kNoCandidate), 0);
}

// Rank r's candidate along the split axis (axis given) or of the raveled array (none): the
// piece's best values and their indices in the whole array, of the result's shape without
// keepdims. An empty piece offers the values no other beats (the dtype's lowest for argmax)
// with no index.
std::pair<Array, Array> candidate(bool largest, const ShardedArray& a, int rank,
                                  std::optional<int> axis) {
  const Array& piece = a.shard(rank);
  if (piece.size() == 0) {
    Shape out;
    if (axis)
      for (int k = 0; k < a.ndim(); ++k)
        if (k != *axis) out.push_back(a.shape()[static_cast<size_t>(k)]);
    return {mesh::extremum_identity(largest, piece.dtype(), out, piece.device()),
            full(out, kNoCandidate, DType::Int64, piece.device())};
  }
  Array values = axis ? (largest ? max(piece, *axis) : min(piece, *axis))
                      : (largest ? max(piece) : min(piece));
  Array index = largest ? argmax(piece, axis) : argmin(piece, axis);
  index = axis ? index + piece_offset(a, rank) : global_flat_index(a, rank, index);
  return {values, index};
}

ShardedArray arg_reduce(bool largest, const ShardedArray& a, std::optional<int> axis_in,
                        bool keepdims) {
  const char* name = largest ? "argmax" : "argmin";
  std::optional<int> axis;
  if (axis_in) axis = graph::normalize_axes({*axis_in}, a.ndim(), name).front();
  auto local = [&](const Array& piece) {
    return largest ? argmax(piece, axis, keepdims) : argmin(piece, axis, keepdims);
  };
  const bool across = a.axis() && (!axis || *axis == *a.axis());
  if (!across) {
    std::vector<Array> pieces = a.shards();
    mesh::for_each_held(pieces, local);
    std::optional<int> split = a.axis();
    if (split && axis && !keepdims && *axis < *split) --*split;
    Shape out = mesh::first_held(pieces).shape();
    if (split) out[static_cast<size_t>(*split)] = a.shape()[static_cast<size_t>(*a.axis())];
    return ShardedArray(a.mesh(), split, out, std::move(pieces));
  }
  if (a.size() == 0) local(mesh::first_held(a));  // raises as kiln::argmax: an empty sequence
  std::vector<Array> values(a.mesh().size()), indices(a.mesh().size());
  for (int r = 0; r < a.mesh().size(); ++r)
    if (a.mesh().holds(r)) std::tie(values[r], indices[r]) = candidate(largest, a, r, axis);
  auto& comm = a.mesh().communicator();
  std::vector<Array> all_values = comm.all_gather(values), all_indices = comm.all_gather(indices);
  std::vector<Array> results(all_values.size());
  for (size_t r = 0; r < all_values.size(); ++r) {
    if (!all_values[r].valid()) continue;
    Array chosen = pick(largest, all_values[r], all_indices[r]);
    if (keepdims) {
      Shape kept = a.shape();
      if (axis)
        kept[static_cast<size_t>(*axis)] = 1;
      else
        std::fill(kept.begin(), kept.end(), 1);
      chosen = chosen.reshape(kept);
    }
    results[r] = chosen;
  }
  const Shape out = mesh::first_held(results).shape();
  return ShardedArray(a.mesh(), std::nullopt, out, std::move(results));
}

}  // namespace

ShardedArray argmax(const ShardedArray& a, std::optional<int> axis, bool keepdims) {
  return arg_reduce(true, a, axis, keepdims);
}
ShardedArray argmin(const ShardedArray& a, std::optional<int> axis, bool keepdims) {
  return arg_reduce(false, a, axis, keepdims);
}

}  // namespace kiln
