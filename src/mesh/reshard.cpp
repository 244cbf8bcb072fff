// Moving a sharded array to another layout. From replicated to split, each rank keeps its part
// of what it holds: nothing moves. From split to replicated, an all-gather: pieces differ in
// length by one at most (array_split), and a collective moves equal blocks, so each piece is
// padded to the longest first and every rank trims the blocks it receives. From one split
// axis to another, through replicated: every rank receives the whole array, N times what an
// all-to-all would move (not built: NCCL's grouped send/receive).
#include <string>
#include <vector>

#include "kiln/joining.hpp"
#include "kiln/mesh.hpp"
#include "mesh/communicator.hpp"
#include "mesh/split.hpp"

namespace kiln {
namespace {

// Rank r's piece padded along `axis` to `length` with zeros (which the receivers cut off).
Array padded(const Array& piece, int axis, int64_t length) {
  const int64_t missing = length - piece.shape()[static_cast<size_t>(axis)];
  if (missing == 0) return piece;
  std::vector<std::pair<int64_t, int64_t>> width(static_cast<size_t>(piece.ndim()), {0, 0});
  width[static_cast<size_t>(axis)] = {0, missing};
  return pad(piece, width);
}

ShardedArray gathered(const ShardedArray& x) {
  const int axis = *x.axis(), ranks = x.mesh().size();
  const int64_t length = x.shape()[static_cast<size_t>(axis)];
  const int64_t longest = mesh::piece_of(length, ranks, 0).length();
  std::vector<Array> sent;
  for (const Array& piece : x.shards()) sent.push_back(padded(piece, axis, longest));
  std::vector<Array> received = x.mesh().communicator().all_gather(sent), whole;
  for (const Array& blocks : received) {
    std::vector<Array> pieces;
    for (int r = 0; r < ranks; ++r) {
      const int64_t own = mesh::piece_of(length, ranks, r).length();
      pieces.push_back(mesh::slice_along(blocks(r), axis, {0, own}));
    }
    whole.push_back(concatenate(pieces, axis));
  }
  return ShardedArray(x.mesh(), std::nullopt, x.shape(), std::move(whole));
}

ShardedArray split(const ShardedArray& x, int axis) {
  const int ranks = x.mesh().size();
  const int64_t length = x.shape()[static_cast<size_t>(axis)];
  std::vector<Array> pieces;
  for (int r = 0; r < ranks; ++r)
    pieces.push_back(mesh::slice_along(x.shard(r), axis, mesh::piece_of(length, ranks, r)));
  return ShardedArray(x.mesh(), axis, x.shape(), std::move(pieces));
}

}  // namespace

ShardedArray reshard(const ShardedArray& x, std::optional<int> axis) {
  if (axis) {
    const int nd = x.ndim();
    if (*axis < -nd || *axis >= nd)
      throw ShapeError("kiln::reshard: axis " + std::to_string(*axis) +
                       " is out of bounds for an array of dimension " + std::to_string(nd));
    if (*axis < 0) *axis += nd;
  }
  if (axis == x.axis()) return x;
  const ShardedArray whole = x.axis() ? gathered(x) : x;
  return axis ? split(whole, *axis) : whole;
}

}  // namespace kiln
