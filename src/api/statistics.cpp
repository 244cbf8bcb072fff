// Statistics (include/kiln/statistics.hpp) and numpy.fft's frequency helpers, as compositions of
// kiln's lazy operations: each follows NumPy's own formula (numpy/core/_methods.py,
// numpy/lib/nanfunctions.py, function_base.py, histograms.py) step for step, so the results and
// dtypes agree with NumPy's, and the planner fuses the steps (a variance is a mean, then one
// reduction whose prologue subtracts it).
#include "kiln/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <numeric>
#include <string>

#include "api/build.hpp"
#include "graph/shape.hpp"
#include "kiln/fft.hpp"
#include "kiln/joining.hpp"
#include "kiln/linalg.hpp"

namespace kiln {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The number of elements each reduction over `axes` combines.
int64_t reduced_count(const Array& a, const AxesArg& axes, const char* what) {
  int64_t n = 1;
  if (axes.given() && axes.axes().empty()) return n;  // axis=(): nothing combined
  for (int ax : graph::normalize_axes(axes.axes(), a.ndim(), what)) n *= a.shape()[ax];
  return n;
}

bool may_hold_nan(DType t) { return is_floating(t) || is_complex(t); }

// NaN test that needs no isnan op: NaN is the one value unequal to itself (for complex, either
// part NaN).
Array nan_mask(const Array& a) { return a != a; }

// Bool and integers as float64, as NumPy's var and mean compute them.
Array as_inexact(const Array& a) { return may_hold_nan(a.dtype()) ? a : a.astype(DType::Float64); }

// |d|^2 in d's real dtype: re^2 + im^2 for complex, as NumPy's _var.
Array squared_magnitude(const Array& d) {
  if (!is_complex(d.dtype())) return d * d;
  Array re = real(d), im = imag(d);
  return re * re + im * im;
}

// a with every NaN replaced by v (a itself when it cannot hold NaN).
Array replace_nan(const Array& a, Scalar v) {
  return may_hold_nan(a.dtype()) ? where(nan_mask(a), v, a) : a;
}

// Reads a 0-d (or one-element) array's value, evaluated now.
double value_now(const Array& a) { return a.item<double>(); }

}  // namespace

// ---- variance ------------------------------------------------------------------------------

Array var(const Array& a, AxesArg axes, double ddof, bool keepdims) {
  int64_t n = reduced_count(a, axes, "var");
  Array x = as_inexact(a);
  Array d = x - mean(x, axes, true);
  // NumPy divides by max(n - ddof, 0): ddof >= n gives inf, or NaN where the sum is 0.
  return sum(squared_magnitude(d), axes, keepdims) / std::max(static_cast<double>(n) - ddof, 0.0);
}

Array std(const Array& a, AxesArg axes, double ddof, bool keepdims) {
  return sqrt(var(a, axes, ddof, keepdims));
}

Array ptp(const Array& a, AxesArg axes, bool keepdims) {
  return max(a, axes, keepdims) - min(a, axes, keepdims);
}

Array count_nonzero(const Array& a, AxesArg axes, bool keepdims) {
  // A bool array is its own test (a != 0 would widen it to int64 to compare it).
  return sum(a.dtype() == DType::Bool ? a : a != 0, axes, keepdims);
}

// ---- NaN-ignoring reductions -------------------------------------------------------------

Array nansum(const Array& a, AxesArg axes, bool keepdims) {
  return sum(replace_nan(a, 0), axes, keepdims);
}

Array nanprod(const Array& a, AxesArg axes, bool keepdims) {
  return prod(replace_nan(a, 1), axes, keepdims);
}

namespace {
// The non-NaN count over axes, in a's real dtype (NumPy divides by it in the sum's dtype).
Array non_nan_count(const Array& a, const AxesArg& axes, bool keepdims) {
  return sum(a == a, axes, keepdims).astype(real_dtype(a.dtype()));
}

// nanmax / nanmin: NaN becomes the identity of the extreme (-inf / +inf); an all-NaN slice
// gives NaN, as NumPy's fmax.reduce.
Array nan_extreme(bool is_max, const Array& a, const AxesArg& axes, bool keepdims) {
  if (!may_hold_nan(a.dtype())) return is_max ? max(a, axes, keepdims) : min(a, axes, keepdims);
  Array mask = nan_mask(a);
  Array filled = where(mask, is_max ? -kInf : kInf, a);
  Array r = is_max ? max(filled, axes, keepdims) : min(filled, axes, keepdims);
  return where(all(mask, axes, keepdims), kNaN, r);
}

Array nan_arg_extreme(bool is_max, const Array& a, std::optional<int> axis, bool keepdims) {
  const char* what = is_max ? "nanargmax" : "nanargmin";
  if (!may_hold_nan(a.dtype()))
    return is_max ? argmax(a, axis, keepdims) : argmin(a, axis, keepdims);
  Array mask = nan_mask(a);
  AxesArg axes = axis ? AxesArg(*axis) : AxesArg();
  if (axis) graph::normalize_axis(*axis, a.ndim(), what);
  // NumPy raises for an all-NaN slice before looking for the extreme; the check reads the data.
  if (any(all(mask, axes)).item<bool>())
    throw Error(std::string(what) + ": All-NaN slice encountered (a slice" +
                (axis ? " along axis " + std::to_string(*axis) : std::string()) +
                " holds only NaN, which has no position of an extreme); use argmax, or replace "
                "NaN first");
  Array filled = where(mask, is_max ? -kInf : kInf, a);
  return is_max ? argmax(filled, axis, keepdims) : argmin(filled, axis, keepdims);
}
}  // namespace

Array nanmean(const Array& a, AxesArg axes, bool keepdims) {
  if (!may_hold_nan(a.dtype())) return mean(a, axes, keepdims);
  reduced_count(a, axes, "nanmean");  // checks the axes
  return sum(replace_nan(a, 0), axes, keepdims) / non_nan_count(a, axes, keepdims);
}

Array nanmax(const Array& a, AxesArg axes, bool keepdims) {
  return nan_extreme(true, a, axes, keepdims);
}
Array nanmin(const Array& a, AxesArg axes, bool keepdims) {
  return nan_extreme(false, a, axes, keepdims);
}
Array nanargmax(const Array& a, std::optional<int> axis, bool keepdims) {
  return nan_arg_extreme(true, a, axis, keepdims);
}
Array nanargmin(const Array& a, std::optional<int> axis, bool keepdims) {
  return nan_arg_extreme(false, a, axis, keepdims);
}

Array nanvar(const Array& a, AxesArg axes, double ddof, bool keepdims) {
  if (!may_hold_nan(a.dtype())) return var(a, axes, ddof, keepdims);
  reduced_count(a, axes, "nanvar");  // checks the axes
  Array mask = nan_mask(a);
  Array x = where(mask, 0, a);
  Array avg = sum(x, axes, true) / non_nan_count(a, axes, true);
  Array d = where(mask, 0, x - avg);
  Array dof = non_nan_count(a, axes, keepdims) - ddof;
  // NumPy's _nanvar: NaN (not inf) where fewer than ddof + 1 values are left.
  return where(dof <= 0, kNaN, sum(squared_magnitude(d), axes, keepdims) / dof);
}

Array nanstd(const Array& a, AxesArg axes, double ddof, bool keepdims) {
  return sqrt(nanvar(a, axes, ddof, keepdims));
}

// ---- weighted average ----------------------------------------------------------------------

std::pair<Array, Array> average_returned(const Array& a, AxesArg axes,
                                         const std::optional<Array>& weights, bool keepdims) {
  if (!weights) {
    int64_t n = reduced_count(a, axes, "average");
    Array avg = mean(a, axes, keepdims);
    return {avg, full(avg.shape(), static_cast<double>(n), avg.dtype(), avg.device())};
  }
  Array w = *weights;
  if (w.shape() != a.shape()) {
    // NumPy: weights of another shape must have exactly the shape of a's axes, in their order;
    // they are then laid along those axes.
    if (axes.axes().empty())
      throw ShapeError("average: weights of shape " + shape_str(w.shape()) +
                       " differ from a's shape " + shape_str(a.shape()) +
                       "; give axes, or weights of a's shape");
    std::vector<int> ax;
    for (int x : axes.axes()) ax.push_back(graph::normalize_axis(x, a.ndim(), "average"));
    graph::normalize_axes(axes.axes(), a.ndim(), "average");  // refuses a repeated axis
    Shape along;
    for (int x : ax) along.push_back(a.shape()[x]);
    if (w.shape() != along)
      throw ShapeError("average: weights of shape " + shape_str(w.shape()) +
                       " do not match a's shape " + shape_str(a.shape()) + " along axes; " +
                       "give weights of shape " + shape_str(along) + " or " + shape_str(a.shape()));
    std::vector<int> order(ax.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int i, int j) { return ax[i] < ax[j]; });
    Shape laid(a.ndim(), 1);
    for (size_t i = 0; i < ax.size(); ++i) laid[ax[i]] = a.shape()[ax[i]];
    w = w.transpose(order).reshape(laid);
  }
  DType t = promote_types(a.dtype(), w.dtype());
  if (is_integer_or_bool(a.dtype())) t = promote_types(t, DType::Float64);
  Array wt = w.astype(t);
  Array scl = sum(wt, axes, keepdims);
  Array avg = sum(a.astype(t) * wt, axes, keepdims) / scl;
  if (scl.shape() != avg.shape()) scl = scl.broadcast_to(avg.shape());
  return {avg, scl};
}

Array average(const Array& a, AxesArg axes, const std::optional<Array>& weights, bool keepdims) {
  return average_returned(a, std::move(axes), weights, keepdims).first;
}

// ---- covariance and correlation ------------------------------------------------------------

Array cov(const Array& m, bool rowvar, bool bias, std::optional<double> ddof) {
  if (m.ndim() > 2)
    throw ShapeError("cov: m has " + std::to_string(m.ndim()) +
                     " dimensions; give a 1-d or 2-d array");
  Array x = m.astype(promote_types(m.dtype(), DType::Float64));
  if (m.ndim() < 2) x = x.reshape({1, -1});  // NumPy's ndmin=2
  if (!rowvar && x.shape()[0] != 1) x = x.T();
  int64_t p = x.shape()[0], n = x.shape()[1];
  if (p == 0) return zeros({0, 0}, DType::Float64, m.device());
  double fact = static_cast<double>(n) - ddof.value_or(bias ? 0 : 1);
  Array d = x - mean(x, {1}, true);
  // c[i, j] = sum_k d[i, k] * conj(d[j, k]): NumPy's dot(X, X.T.conj()), a matrix product
  // (cuBLASLt or Eigen's GEMM) of d and its conjugate transpose, read as a view.
  Array c = matmul(d, (is_complex(d.dtype()) ? conj(d) : d).T());
  // NumPy multiplies by 1 / fact, with fact 0 (inf) when n <= ddof.
  c = c * (1.0 / std::max(fact, 0.0));
  return p == 1 ? c.reshape({}) : c;  // NumPy's squeeze: only one variable's matrix has 1s
}

Array corrcoef(const Array& m, bool rowvar) {
  Array c = cov(m, rowvar);
  if (c.ndim() == 0) return c / c;  // NumPy's answer for one variable
  int64_t p = c.shape()[0];
  if (p == 0) return c;
  Array sd = sqrt(real(c.reshape({p * p}).index({Slice(0, std::nullopt, p + 1)})));
  c = c / sd.reshape({p, 1}) / sd.reshape({1, p});
  if (!is_complex(c.dtype())) return clip(c, -1, 1);
  return clip(real(c), -1, 1) + clip(imag(c), -1, 1) * std::complex<double>(0, 1);
}

// ---- histograms ----------------------------------------------------------------------------

namespace {
// Per bin: how many of the bin numbers `bin` (1-d, int64, in [0, length)) fall in it (int64),
// or the sum of their weights (float64, complex128 for complex weights; in the order of x, as
// NumPy's bincount adds them). A scatter add: one pass over x, where a one-hot matrix would
// compare every value with every bin. The bin numbers are the scatter's positions as they are:
// they are in range already, where counts.at(bin) would check them again and gather its
// positions from an iota (two more passes over x, and 8 bytes a value written).
Array count_bins(const Array& bin, int64_t length, const std::optional<Array>& weights, Device d) {
  const DType t = !weights                       ? DType::Int64
                  : is_complex(weights->dtype()) ? DType::Complex128
                                                 : DType::Float64;
  Array counts = zeros({length}, t, d);
  if (bin.size() == 0) return counts;
  Array values =
      weights ? weights->astype(t).reshape({-1}) : full({}, 1, t, d).broadcast_to(bin.shape());
  return api::finish(api::scatter(counts, bin, values, graph::ScatterOp::Add));
}
}  // namespace

Histogram histogram(const Array& a, int64_t bins, std::optional<std::pair<double, double>> range,
                    const std::optional<Array>& weights, bool density) {
  if (bins < 1) throw Error("histogram: bins must be positive, got " + std::to_string(bins));
  if (is_complex(a.dtype()))
    throw DTypeError("histogram: complex input has no order; histogram real(a) or abs(a)");
  if (weights && weights->shape() != a.shape())
    throw ShapeError("histogram: weights of shape " + shape_str(weights->shape()) +
                     " must have a's shape " + shape_str(a.shape()));
  Array x = a.reshape({-1});
  double first = 0, last = 1;
  if (range) {
    std::tie(first, last) = *range;
    if (first > last)
      throw Error("histogram: max must be larger than min in range, got [" + std::to_string(first) +
                  ", " + std::to_string(last) + "]");
    if (!std::isfinite(first) || !std::isfinite(last))
      throw Error("histogram: supplied range of [" + std::to_string(first) + ", " +
                  std::to_string(last) + "] is not finite");
  } else if (x.size() > 0) {
    Array lo = min(x), hi = max(x);
    eval({lo, hi});
    first = value_now(lo);
    last = value_now(hi);
    if (!std::isfinite(first) || !std::isfinite(last))
      throw Error("histogram: autodetected range of [" + std::to_string(first) + ", " +
                  std::to_string(last) + "] is not finite; pass a range, or drop NaN and inf");
  }
  if (first == last) {
    first -= 0.5;
    last += 0.5;
  }
  // NumPy: the float dtype of the input (float16 and bfloat16 too), float64 for integers.
  DType edge_t = a.dtype() == DType::Float32 || is_half(a.dtype()) ? a.dtype() : DType::Float64;
  Array edges = linspace(first, last, bins + 1, true, edge_t, a.device());
  // NumPy's fast path for equal bins: an estimated index from the scaled value, then moved by
  // one where the value lies on the other side of its bin's edges (as the edges are rounded).
  // The edges are recomputed from the index with linspace's formula (no gather of the edges).
  double step = (last - first) / static_cast<double>(bins);
  auto edge = [&](const Array& j) {
    return where(j == bins, last, j.astype(DType::Float64) * step + first).astype(edge_t);
  };
  Array keep = (x >= first) & (x <= last);
  double norm = static_cast<double>(bins) / (last - first);
  Array idx = ((x.astype(DType::Float64) - first) * norm).astype(DType::Int64);
  idx = where(keep, idx, 0);  // NaN and values out of range are dropped below
  idx = where(idx == bins, bins - 1, idx);
  idx = where(x < edge(idx), idx - 1, idx);
  idx = where((x >= edge(idx + 1)) & (idx != bins - 1), idx + 1, idx);
  // Values dropped above (NaN, out of range) go to an extra bin past the last, cut off after.
  idx = where(keep, idx, bins);
  Array counts = count_bins(idx, bins + 1, weights, a.device()).index({Slice(0, bins)});
  // NumPy's dtype: int64 counts, or the weights summed in float64 and cast to their sum's dtype.
  if (weights) counts = counts.astype(sum(*weights).dtype());
  if (density) {
    Array widths = edges.index({Slice(1, std::nullopt)}).astype(DType::Float64) -
                   edges.index({Slice(std::nullopt, -1)}).astype(DType::Float64);
    Array c = counts.astype(DType::Float64);
    counts = c / widths / sum(c);
  }
  return {counts, edges};
}

Array bincount(const Array& x, const std::optional<Array>& weights, int64_t minlength) {
  if (x.ndim() != 1) throw ShapeError("bincount: x must be 1-d, got shape " + shape_str(x.shape()));
  if (!is_integer_or_bool(x.dtype()))
    throw DTypeError(std::string("bincount: x must be bool or integer, got ") +
                     dtype_name(x.dtype()) + "; cast it with astype");
  if (weights && weights->shape() != x.shape())
    throw ShapeError("bincount: weights of shape " + shape_str(weights->shape()) +
                     " must have x's shape " + shape_str(x.shape()));
  if (minlength < 0)
    throw Error("bincount: minlength must not be negative, got " + std::to_string(minlength));
  if (weights && is_complex(weights->dtype()))
    throw DTypeError(std::string("bincount: weights of dtype ") + dtype_name(weights->dtype()) +
                     " cannot be summed in float64 (NumPy raises TypeError); pass real(w) and "
                     "imag(w) as two bincounts");
  int64_t length = minlength;
  if (x.size() > 0) {
    // One pass over x: read as uint64 (signed values wrapped, as astype does), its largest
    // value is past int64's range exactly when a signed x holds a negative one (which the
    // message then names, at the cost of a second pass) or an unsigned x a value no count of
    // bins could reach.
    const auto largest = max(x.astype(DType::UInt64)).item<uint64_t>();
    if (largest > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      if (is_unsigned(x.dtype()))
        throw ShapeError("bincount: x holds " + std::to_string(largest) +
                         ", more bins than an array can have");
      throw Error("bincount: x holds a negative value (" +
                  std::to_string(api::value_range(x).first) +
                  "); bins count the values 0, 1, .., max(x)");
    }
    length = std::max(length, static_cast<int64_t>(largest) + 1);
  }
  return count_bins(x.astype(DType::Int64), length, weights, x.device());
}

// ---- closeness ------------------------------------------------------------------------------

Array isclose(const Array& a, const Array& b, double rtol, double atol, bool equal_nan) {
  // NumPy's rule: |a - b| <= atol + rtol * |b|, elementwise, after broadcasting. Like NumPy,
  // b is first made floating (bool and integers to float64), so bool arrays subtract too.
  const graph::Node* operands[] = {&api::node_of(a), &api::node_of(b)};
  api::common_device(operands, "isclose");  // named here, not by the subtraction below
  DType bt = b.dtype();
  Array y = is_floating(bt) || is_complex(bt) ? b : b.astype(DType::Float64);
  // The tolerance applies where b is finite: an infinite b would make it infinite and every a
  // "close". Elsewhere, as in NumPy, only an equal value is (the same infinity).
  Array finite = abs(y) < kInf;
  Array close = ((abs(a - y) <= atol + rtol * abs(y)) & finite) | (a == y);
  if (equal_nan) close = close | (nan_mask(a) & nan_mask(y));
  return close;
}

// ---- numpy.fft's helpers -------------------------------------------------------------------

namespace {
Array shift_axes(const Array& a, const fft::FftAxes& axes, bool inverse, const char* what) {
  std::vector<int> ax;
  if (axes) {
    for (int x : *axes) ax.push_back(graph::normalize_axis(x, a.ndim(), what));
  } else {
    for (int i = 0; i < a.ndim(); ++i) ax.push_back(i);
  }
  // NumPy rolls each axis listed (an axis listed twice is rolled twice, as roll adds the
  // shifts of an axis given twice): one index map, fused into the kernel that reads it.
  std::vector<int64_t> shifts;
  for (int x : ax) shifts.push_back(inverse ? -(a.shape()[x] / 2) : a.shape()[x] / 2);
  return roll(a, shifts, Axes(ax.begin(), ax.end()));
}
}  // namespace

namespace fft {

Array fftfreq(int64_t n, double d, Device device) {
  if (n < 1) throw Error("fftfreq: n must be positive, got " + std::to_string(n));
  Array i = arange(0, n, 1, DType::Int64, device);
  int64_t positive = (n - 1) / 2 + 1;
  return where(i < positive, i, i - n) * (1.0 / (static_cast<double>(n) * d));
}

Array rfftfreq(int64_t n, double d, Device device) {
  if (n < 1) throw Error("rfftfreq: n must be positive, got " + std::to_string(n));
  return arange(0, n / 2 + 1, 1, DType::Int64, device) * (1.0 / (static_cast<double>(n) * d));
}

Array fftshift(const Array& a, FftAxes axes) { return shift_axes(a, axes, false, "fftshift"); }
Array ifftshift(const Array& a, FftAxes axes) { return shift_axes(a, axes, true, "ifftshift"); }

}  // namespace fft

}  // namespace kiln
