#include "mesh/split.hpp"

#include <algorithm>
#include <vector>

namespace kiln::mesh {

Piece piece_of(int64_t length, int ranks, int rank) {
  const int64_t base = length / ranks, longer = length % ranks;
  const int64_t start = rank * base + std::min<int64_t>(rank, longer);
  return {start, start + base + (rank < longer ? 1 : 0)};
}

Array slice_along(const Array& x, int axis, Piece piece) {
  std::vector<Index> idx(axis, _);
  idx.push_back(Slice(piece.start, piece.stop));
  return x.index(std::move(idx));
}

}  // namespace kiln::mesh
