// Moving a sharded array to another layout. From replicated to split, each rank keeps its part
// of what it holds: nothing moves. From split to replicated, an all-gather; from one split axis
// to another, an all-to-all: rank r cuts its piece along the new axis into the parts each rank's
// new piece covers, and each rank joins what it receives along the old axis, so every rank sends
// its piece once. Collectives move equal blocks and array_split's pieces differ in length by one
// at most, so each block is padded to the longest first and the receivers trim it.
#include <vector>

#include "graph/shape.hpp"
#include "kiln/joining.hpp"
#include "kiln/mesh.hpp"
#include "mesh/communicator.hpp"
#include "mesh/map_shards.hpp"
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

// What a rank received, one padded block per sending rank along the leading axis: block r
// trimmed to rank r's piece of `length` along `axis` (of the blocks), the blocks joined there.
Array joined(const Array& blocks, int axis, int64_t length, int ranks) {
  std::vector<Array> pieces;
  for (int r = 0; r < ranks; ++r)
    pieces.push_back(
        mesh::slice_along(blocks(r), axis, {0, mesh::piece_of(length, ranks, r).length()}));
  return concatenate(pieces, axis);
}

ShardedArray gathered(const ShardedArray& x) {
  const int axis = *x.axis(), ranks = x.mesh().size();
  const int64_t length = x.shape()[static_cast<size_t>(axis)];
  const int64_t longest = mesh::piece_of(length, ranks, 0).length();
  std::vector<Array> sent = x.shards();
  mesh::for_each_held(sent, [&](const Array& piece) { return padded(piece, axis, longest); });
  std::vector<Array> whole = x.mesh().communicator().all_gather(sent);
  mesh::for_each_held(whole,
                      [&](const Array& blocks) { return joined(blocks, axis, length, ranks); });
  return ShardedArray(x.mesh(), std::nullopt, x.shape(), std::move(whole));
}

// Split along x's axis a to split along b: block s of rank r's part is the piece of r along a
// and of s along b, each padded to the longest of its kind.
ShardedArray exchanged(const ShardedArray& x, int b) {
  const int a = *x.axis(), ranks = x.mesh().size();
  const int64_t length_a = x.shape()[static_cast<size_t>(a)];
  const int64_t length_b = x.shape()[static_cast<size_t>(b)];
  const int64_t longest_a = mesh::piece_of(length_a, ranks, 0).length();
  const int64_t longest_b = mesh::piece_of(length_b, ranks, 0).length();
  std::vector<Array> sent = mesh::per_held_rank(x.mesh(), [&](int r) {
    std::vector<Array> blocks;
    for (int s = 0; s < ranks; ++s) {
      Array block = mesh::slice_along(x.shard(r), b, mesh::piece_of(length_b, ranks, s));
      blocks.push_back(padded(padded(block, a, longest_a), b, longest_b));
    }
    return stack(blocks);
  });
  std::vector<Array> received = x.mesh().communicator().all_to_all(sent);
  std::vector<Array> pieces = mesh::per_held_rank(x.mesh(), [&](int s) {
    // Every block holds rank s's part along b (+1: the blocks' leading axis).
    const mesh::Piece own_b{0, mesh::piece_of(length_b, ranks, s).length()};
    return joined(mesh::slice_along(received[s], b + 1, own_b), a, length_a, ranks);
  });
  return ShardedArray(x.mesh(), b, x.shape(), std::move(pieces));
}

ShardedArray split(const ShardedArray& x, int axis) {
  const int ranks = x.mesh().size();
  const int64_t length = x.shape()[static_cast<size_t>(axis)];
  std::vector<Array> pieces = mesh::per_held_rank(x.mesh(), [&](int r) {
    return mesh::slice_along(x.shard(r), axis, mesh::piece_of(length, ranks, r));
  });
  return ShardedArray(x.mesh(), axis, x.shape(), std::move(pieces));
}

}  // namespace

ShardedArray reshard(const ShardedArray& x, std::optional<int> axis) {
  if (axis) axis = graph::normalize_axis(*axis, x.ndim(), "kiln::reshard");
  if (axis == x.axis()) return x;
  // One rank holds the whole array in every layout: nothing moves.
  if (x.mesh().size() == 1) return ShardedArray(x.mesh(), axis, x.shape(), x.shards());
  if (x.axis() && axis) return exchanged(x, *axis);
  const ShardedArray whole = x.axis() ? gathered(x) : x;
  return axis ? split(whole, *axis) : whole;
}

}  // namespace kiln
