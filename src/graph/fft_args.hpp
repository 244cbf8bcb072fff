// numpy.fft's argument rules, one copy for the transforms of kiln/fft.hpp (src/api/fft.cpp) and
// for the layers that transform in steps (the slab decomposition of sharded arrays,
// src/mesh/sharded_fft.cpp), which must refuse what the plain functions refuse, with their
// messages, before any data moves.
#pragma once
#include <string_view>
#include <vector>

#include "graph/ops.hpp"
#include "kiln/fft.hpp"
#include "kiln/shape.hpp"

namespace kiln::graph {

enum class FftNorm { Backward, Ortho, Forward };
// "backward", "ortho" or "forward"; kiln::Error for anything else.
FftNorm parse_fft_norm(std::string_view norm, const char* what);
// The transformed axes, non-negative and in the caller's order (the order decides which axis
// rfftn halves, so unlike reductions they are not sorted): axes, else the last len(s), else all.
// ShapeError for an axis out of range or given twice, or lengths that do not match the axes.
std::vector<int> resolve_fft_axes(const fft::FftAxes& axes, const fft::Lengths& s, int ndim,
                                  const char* what);
// The logical transform length per axis (for C2R, the real output length: 2 (m - 1) on the last
// axis by default); ShapeError for one below 1.
std::vector<int64_t> resolve_fft_lengths(const Shape& shape, const std::vector<int>& axes,
                                         const fft::Lengths& s, FftKind kind, const char* what);

struct ResolvedFft {
  std::vector<int> axes;
  std::vector<int64_t> lengths;
};
// All three checks, for a transform of `shape`.
ResolvedFft resolve_fft(const Shape& shape, const fft::Lengths& s, const fft::FftAxes& axes,
                        std::string_view norm, FftKind kind, const char* what);

}  // namespace kiln::graph
