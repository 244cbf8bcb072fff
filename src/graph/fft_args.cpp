#include "graph/fft_args.hpp"

#include <string>

#include "graph/shape.hpp"
#include "kiln/errors.hpp"

namespace kiln::graph {

FftNorm parse_fft_norm(std::string_view norm, const char* what) {
  if (norm == "backward") return FftNorm::Backward;
  if (norm == "ortho") return FftNorm::Ortho;
  if (norm == "forward") return FftNorm::Forward;
  throw Error(std::string(what) + ": unknown norm \"" + std::string(norm) +
              "\"; use \"backward\" (the default), \"ortho\" or \"forward\"");
}

std::vector<int> resolve_fft_axes(const fft::FftAxes& axes, const fft::Lengths& s, int ndim,
                                  const char* what) {
  std::vector<int> out;
  if (axes) {
    for (int a : *axes) out.push_back(normalize_axis(a, ndim, what));
  } else if (s) {
    // NumPy: s alone transforms the last len(s) axes.
    if (static_cast<int>(s->size()) > ndim)
      throw ShapeError(std::string(what) + ": s has " + std::to_string(s->size()) +
                       " lengths but the array has only " + std::to_string(ndim) +
                       " dimensions; give at most one length per axis");
    for (int i = ndim - static_cast<int>(s->size()); i < ndim; ++i) out.push_back(i);
  } else {
    for (int i = 0; i < ndim; ++i) out.push_back(i);
  }
  for (size_t i = 0; i < out.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (out[i] == out[j])
        throw ShapeError(std::string(what) + ": axis " + std::to_string(out[i]) +
                         " is given twice; give each axis once");
  if (s && s->size() != out.size())
    throw ShapeError(std::string(what) + ": s has " + std::to_string(s->size()) +
                     " lengths but there are " + std::to_string(out.size()) +
                     " axes; give one length per axis");
  return out;
}

std::vector<int64_t> resolve_fft_lengths(const Shape& shape, const std::vector<int>& axes,
                                         const fft::Lengths& s, FftKind kind, const char* what) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t m = shape[axes[i]];
    bool halved = kind == FftKind::C2R && i + 1 == axes.size();
    int64_t n = s ? (*s)[i] : halved ? 2 * (m - 1) : m;
    if (n < 1 && s)
      throw ShapeError(std::string(what) + ": transform length " + std::to_string(n) +
                       " for axis " + std::to_string(axes[i]) + " is not positive");
    if (n < 1)
      throw ShapeError(std::string(what) + ": axis " + std::to_string(axes[i]) + " of shape " +
                       shape_str(shape) + " gives a transform length of " + std::to_string(n) +
                       "; pass a positive n (or s) explicitly");
    out.push_back(n);
  }
  return out;
}

ResolvedFft resolve_fft(const Shape& shape, const fft::Lengths& s, const fft::FftAxes& axes,
                        std::string_view norm, FftKind kind, const char* what) {
  parse_fft_norm(norm, what);
  ResolvedFft r;
  r.axes = resolve_fft_axes(axes, s, static_cast<int>(shape.size()), what);
  r.lengths = resolve_fft_lengths(shape, r.axes, s, kind, what);
  return r;
}

}  // namespace kiln::graph
