// How an axis is split over a mesh's ranks, as numpy.array_split splits it: near-equal
// contiguous pieces, the first (length % ranks) of them one longer (7 over 3: 3, 2, 2).
#pragma once
#include <cstdint>

#include "kiln/array.hpp"

namespace kiln::mesh {

struct Piece {
  int64_t start = 0, stop = 0;
  int64_t length() const { return stop - start; }
};

Piece piece_of(int64_t length, int ranks, int rank);
// x's elements [piece.start, piece.stop) along `axis`: a lazy view.
Array slice_along(const Array& x, int axis, Piece piece);

}  // namespace kiln::mesh
