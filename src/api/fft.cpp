// numpy.fft on the graph: each function checks its arguments, casts the input to the dtype
// the transform reads, and adds one Fft node (graph::FftAttrs: axes, lengths, direction and
// the normalisation factor applied to the output).
//
// rfftn / irfftn are one node each, not an R2C node chained with a C2C node: FFTW's guru
// r2c / c2r take every axis in one plan and halve the last axis given, as NumPy does, so the
// intermediate complex array is never materialised and the graph stays one library call. A
// backend whose library cannot do a given axis set in one plan (cuFFT over non-trailing axes)
// splits the step itself. The order NumPy uses (irfftn: c2c over the leading axes, then c2r on
// the last) matters when the input is not Hermitian; the tests check that one FFTW plan gives
// NumPy's result there too.
//
// fft / fft2 / fftn of real input (bool, integer, float) are FftKind::R2CFull nodes: the input
// is cast to the real dtype of the transform (float64, or float32 for float32) instead of to
// complex, so the producer writes and the transform reads half the bytes, and the backend runs a
// real transform (about half the work of a complex one) and fills the other half of the
// spectrum from Hermitian symmetry. The result is NumPy's full spectrum either way.
#include "kiln/fft.hpp"

#include <cmath>
#include <string>

#include "api/build.hpp"
#include "graph/fft_args.hpp"
#include "graph/shape.hpp"

namespace kiln::fft {

using api::NodeRef;
using graph::FftKind;

namespace {

// false: forward transforms of real input cast it to complex and run C2C, as before R2CFull
// existed. Kept so both paths can be timed against each other on a GPU (the C2C one can also
// be reached from outside by casting explicitly: fftn(a.astype(DType::Complex128))).
constexpr bool kUseR2CForRealInput = true;

// The factor applied to the output; FFTW and cuFFT compute unnormalised sums both ways.
double scale_for(graph::FftNorm norm, bool inverse, double n) {
  switch (norm) {
    case graph::FftNorm::Ortho:
      return 1.0 / std::sqrt(n);
    case graph::FftNorm::Forward:
      return inverse ? 1.0 : 1.0 / n;
    default:
      return inverse ? 1.0 / n : 1.0;
  }
}

struct DTypes {
  DType in, out;  // what the transform reads and writes
};

DTypes transform_dtypes(DType t, FftKind kind, const char* what) {
  if (kind == FftKind::C2C) return {complex_dtype(t), complex_dtype(t)};
  if (kind == FftKind::C2R) return {complex_dtype(t), real_dtype(complex_dtype(t))};
  // R2C and R2CFull; R2CFull is only chosen for real input (see transform()).
  if (is_complex(t))
    throw DTypeError(std::string(what) + ": the input is " + dtype_name(t) +
                     "; a real transform needs real input (NumPy would silently drop the "
                     "imaginary part). Use fft/fftn, or pass kiln::real(x) explicitly");
  // float16 and bfloat16 transform in float32, as NumPy 2 gives complex64 for float16 input.
  DType real = t == DType::Float32 || is_half(t) ? DType::Float32 : DType::Float64;
  return {real, complex_dtype(real)};
}

// The input's shape with each transformed axis at its length; R2C keeps n / 2 + 1 entries of
// the last one.
Shape output_shape(Shape shape, const std::vector<int>& axes, const std::vector<int64_t>& lengths,
                   FftKind kind) {
  for (size_t i = 0; i < axes.size(); ++i) {
    bool halved = kind == FftKind::R2C && i + 1 == axes.size();
    shape[axes[i]] = halved ? lengths[i] / 2 + 1 : lengths[i];
  }
  return shape;
}

struct Request {
  FftKind kind;
  bool inverse;
  const char* what;
};

Array transform(const Array& a, const Lengths& s, const FftAxes& axes_in, std::string_view norm,
                Request r) {
  const graph::FftNorm nm = graph::parse_fft_norm(norm, r.what);
  const graph::Node& node = api::node_of(a);
  int ndim = static_cast<int>(node.shape.size());
  std::vector<int> axes = graph::resolve_fft_axes(axes_in, s, ndim, r.what);
  // Forward only: the inverse transform of real input has no symmetry to exploit here.
  FftKind kind = r.kind;
  if (kUseR2CForRealInput && kind == FftKind::C2C && !r.inverse && !is_complex(node.dtype))
    kind = FftKind::R2CFull;
  DTypes dt = transform_dtypes(node.dtype, kind, r.what);
  if (axes.empty()) {
    // fftn over no axes is the identity, as in NumPy; a real transform has no axis to halve.
    if (r.kind == FftKind::C2C) return api::finish(api::cast(a.node(), dt.out));
    throw ShapeError(std::string(r.what) + ": needs at least one axis to transform");
  }
  std::vector<int64_t> lengths = graph::resolve_fft_lengths(node.shape, axes, s, kind, r.what);
  double total = 1;
  for (int64_t n : lengths) total *= static_cast<double>(n);
  Shape out = output_shape(node.shape, axes, lengths, kind);
  graph::check_rank(out, r.what);  // lengths so long that the output cannot be counted
  graph::NodeSpec spec{graph::OpKind::Fft,
                       static_cast<uint8_t>(kind),
                       dt.out,
                       std::move(out),
                       node.device,
                       {api::cast(a.node(), dt.in)},
                       graph::FftAttrs{std::move(axes), std::move(lengths), r.inverse,
                                       scale_for(nm, r.inverse, total)}};
  return api::finish(graph::make_node(std::move(spec)));
}

Lengths one_length(std::optional<int64_t> n) {
  return n ? Lengths(std::vector<int64_t>{*n}) : std::nullopt;
}

}  // namespace

Array fft(const Array& a, std::optional<int64_t> n, int axis, std::string_view norm) {
  return transform(a, one_length(n), FftAxes(std::vector<int>{axis}), norm,
                   {FftKind::C2C, false, "fft"});
}
Array ifft(const Array& a, std::optional<int64_t> n, int axis, std::string_view norm) {
  return transform(a, one_length(n), FftAxes(std::vector<int>{axis}), norm,
                   {FftKind::C2C, true, "ifft"});
}
Array fft2(const Array& a, Lengths s, std::vector<int> axes, std::string_view norm) {
  return transform(a, s, std::move(axes), norm, {FftKind::C2C, false, "fft2"});
}
Array ifft2(const Array& a, Lengths s, std::vector<int> axes, std::string_view norm) {
  return transform(a, s, std::move(axes), norm, {FftKind::C2C, true, "ifft2"});
}
Array fftn(const Array& a, Lengths s, FftAxes axes, std::string_view norm) {
  return transform(a, s, axes, norm, {FftKind::C2C, false, "fftn"});
}
Array ifftn(const Array& a, Lengths s, FftAxes axes, std::string_view norm) {
  return transform(a, s, axes, norm, {FftKind::C2C, true, "ifftn"});
}
Array rfft(const Array& a, std::optional<int64_t> n, int axis, std::string_view norm) {
  return transform(a, one_length(n), FftAxes(std::vector<int>{axis}), norm,
                   {FftKind::R2C, false, "rfft"});
}
Array irfft(const Array& a, std::optional<int64_t> n, int axis, std::string_view norm) {
  return transform(a, one_length(n), FftAxes(std::vector<int>{axis}), norm,
                   {FftKind::C2R, true, "irfft"});
}
Array rfftn(const Array& a, Lengths s, FftAxes axes, std::string_view norm) {
  return transform(a, s, axes, norm, {FftKind::R2C, false, "rfftn"});
}
Array irfftn(const Array& a, Lengths s, FftAxes axes, std::string_view norm) {
  return transform(a, s, axes, norm, {FftKind::C2R, true, "irfftn"});
}

}  // namespace kiln::fft
