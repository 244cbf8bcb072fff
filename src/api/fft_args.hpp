// numpy.fft's argument rules, for the layers above that transform in steps (the slab
// decomposition of sharded arrays, src/mesh/sharded_fft.cpp) and must refuse what the functions
// of kiln/fft.hpp refuse, with their messages, before any data moves.
#pragma once
#include <string_view>
#include <vector>

#include "graph/ops.hpp"
#include "kiln/fft.hpp"
#include "kiln/shape.hpp"

namespace kiln::fft {

struct ResolvedAxes {
  std::vector<int> axes;         // non-negative, in the caller's order (the last is rfftn's)
  std::vector<int64_t> lengths;  // one per axis (C2R: the real output length)
};
// The axes and lengths of a transform of `shape` (kind: C2R defaults the last length to
// 2 (m - 1)), after checking them and the norm: ShapeError, kiln::Error as the transform's.
ResolvedAxes resolve(const Shape& shape, const Lengths& s, const FftAxes& axes,
                     std::string_view norm, graph::FftKind kind, const char* what);

}  // namespace kiln::fft
