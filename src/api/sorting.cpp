#include "kiln/sorting.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>

#include "api/build.hpp"
#include "graph/ops.hpp"
#include "graph/shape.hpp"
#include "kiln/joining.hpp"
#include "kiln/selection.hpp"
#include "kiln/statistics.hpp"

namespace kiln {
namespace {

// One Sort node over the last axis of `a` moved there (the planner writes that layout densely
// before the step), the result moved back: a view.
Array sorted(const Array& a, std::optional<int> axis, graph::SortOp op) {
  Array src = axis ? a : a.reshape({-1});
  // (A 0-d array has no axis to sort along, as NumPy says: only none ravels it.)
  const int ax = axis ? graph::normalize_axis(*axis, src.ndim(), graph::op_name(op)) : 0;
  const int last = src.ndim() - 1;
  Array rows = ax == last ? src : moveaxis(src, ax, last);
  if (rows.size() == 0)
    return op == graph::SortOp::Values ? src : zeros(src.shape(), DType::Int64, a.device());
  Array out = api::finish(api::sort(rows, op));
  return ax == last ? out : moveaxis(out, last, ax);
}

// NaN-aware inequality of neighbours: NaNs (any sign or payload) equal each other.
Array differs(const Array& x, const Array& y) {
  if (is_integer_or_bool(x.dtype())) return x != y;
  return logical_and(x != y, logical_not(logical_and(x != x, y != y)));
}

// The sorted raveled array and where each run of equal values starts, both evaluated: unique
// evaluates the count of runs now, and the selections after it read them again.
std::pair<Array, Array> runs(const Array& a) {
  Array s = sort(a, std::nullopt);
  const int64_t n = s.size();
  Array first = full({1}, true, DType::Bool, a.device());
  Array mask =
      n <= 1
          ? full({n}, true, DType::Bool, a.device())
          : concatenate({first, differs(s(Slice(1, std::nullopt)), s(Slice(std::nullopt, n - 1)))});
  kiln::eval({s, mask});
  return {s, mask};
}

// q as a person writes it: 150, 1.5, not 150.000000 (std::to_chars: the shortest that reads
// back as q).
std::string shortest(double q) {
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, q).ptr);
}

void check_real(const Array& a, const char* what) {
  if (is_complex(a.dtype()))
    throw DTypeError(std::string(what) + " of a " + dtype_name(a.dtype()) +
                     " array: complex values have no quantile (NumPy 1.25 and later refuse "
                     "them: \"a must be an array of real numbers\"); take real() or abs() first");
}

// The sorted axis moved last (rows x n), the axis's length, and the shape the result takes.
struct Rows {
  Array s;  // sorted, (rest..., n)
  int64_t n;
  Shape keep;  // the result's shape with keepdims
  bool any_nan_possible;
};
Rows sorted_rows(const Array& a, std::optional<int> axis, const char* what) {
  int ax = 0;
  if (axis) ax = graph::normalize_axis(*axis, a.ndim(), what);  // a 0-d array has no axis
  Array src = axis ? a : a.reshape({-1});
  const int last = src.ndim() - 1;
  Array rows = ax == last ? src : moveaxis(src, ax, last);
  Shape keep = a.shape();
  if (axis && a.ndim() > 0)
    keep[ax] = 1;
  else
    keep = Shape(a.ndim(), 1);
  const int64_t n = rows.shape()[last];
  const bool nan_possible = is_floating(a.dtype()) || is_complex(a.dtype());
  return {n == 0 ? rows : sort(rows, -1), n, keep, nan_possible};
}

// Element k of each sorted row, (rest...).
Array nth(const Rows& r, int64_t k) {
  std::vector<Index> idx(r.s.ndim() - 1, Index(Slice()));
  idx.push_back(Index(k));
  return r.s.index(idx);
}

Array finish_stat(const Rows& r, Array value, bool keepdims) {
  if (r.any_nan_possible && r.n > 0)  // NaNs sort last: the row holds one when its last does
    value = where(isnan(nth(r, r.n - 1)), std::numeric_limits<double>::quiet_NaN(), value);
  return keepdims ? value.reshape(r.keep) : value;
}

Array quantiles(const Array& a, const std::vector<double>& qs, bool vector, std::optional<int> axis,
                bool keepdims, const char* what, double scale) {
  check_real(a, what);
  if (a.dtype() == DType::Bool)
    throw DTypeError(std::string(what) +
                     " of a bool array: NumPy's linear interpolation "
                     "subtracts bools, which it refuses; astype(int64) first");
  for (double q : qs)
    if (!(q >= 0 && q <= scale))
      throw Error(std::string(what) + ": q = " + shortest(q) + " is outside [0, " +
                  (scale == 1 ? "1" : "100") + "]; give " +
                  (scale == 1 ? "q from 0 to 1" : "q from 0 to 100"));
  Rows r = sorted_rows(a, axis, what);
  if (r.n == 0)
    throw ShapeError(std::string(what) +
                     " of an empty axis (NumPy raises IndexError); there "
                     "is no value to interpolate");
  std::vector<Array> out;
  if (qs.empty()) {  // NumPy: a leading axis of length 0 before one quantile's shape
    const Shape& rows = r.s.shape();
    Shape empty = keepdims ? r.keep : Shape(rows.begin(), rows.end() - 1);
    empty.insert(empty.begin(), 0);
    return zeros(empty, DType::Float64, a.device());
  }
  for (double q0 : qs) {
    // NumPy's 'linear' method: the virtual index q (n - 1) between its floor and the next
    // position, interpolated in float64 as _lerp (from the upper side when gamma >= 0.5).
    const double q = scale == 1 ? q0 : q0 / scale;
    const double v = q * static_cast<double>(r.n - 1);
    const double lo = std::floor(v);
    const int64_t i = static_cast<int64_t>(lo), j = std::min<int64_t>(i + 1, r.n - 1);
    const double g = v - lo;
    Array prev = nth(r, i).astype(DType::Float64), next = nth(r, j).astype(DType::Float64);
    Array diff = next - prev;
    Array value = g >= 0.5 ? next - diff * (1 - g) : prev + diff * g;
    out.push_back(finish_stat(r, value, keepdims));
  }
  return vector ? stack(out, 0) : out[0];
}

}  // namespace

Array sort(const Array& a, std::optional<int> axis) {
  return sorted(a, axis, graph::SortOp::Values);
}
Array argsort(const Array& a, std::optional<int> axis) {
  return sorted(a, axis, graph::SortOp::Indices);
}

namespace {
void check_kth(const Array& a, const std::vector<int64_t>& kth, std::optional<int> axis,
               const char* what) {
  int64_t n = a.size();
  if (axis) {
    if (a.ndim() == 0) graph::normalize_axis(*axis, 0, what);  // throws
    n = a.shape()[graph::normalize_axis(*axis, a.ndim(), what)];
  }
  for (int64_t k : kth)
    if (k < -n || k >= n)
      throw ShapeError(std::string(what) + ": kth " + std::to_string(k) +
                       " is out of bounds for an axis of length " + std::to_string(n));
}
}  // namespace

Array partition(const Array& a, const std::vector<int64_t>& kth, std::optional<int> axis) {
  check_kth(a, kth, axis, "partition");
  return sort(a, axis);
}
Array argpartition(const Array& a, const std::vector<int64_t>& kth, std::optional<int> axis) {
  check_kth(a, kth, axis, "argpartition");
  return argsort(a, axis);
}

Array unique(const Array& a) {
  auto [s, mask] = runs(a);
  return s.size() == 0 ? s : masked(s, mask);
}

UniqueCounts unique_counts(const Array& a) {
  auto [s, mask] = runs(a);
  if (s.size() == 0) return {s, zeros({0}, DType::Int64, a.device())};
  Array values = masked(s, mask);
  Array starts = flatnonzero(mask);
  Array ends =
      concatenate({starts(Slice(1, std::nullopt)), full({1}, s.size(), DType::Int64, a.device())});
  return {values, ends - starts};
}

Array searchsorted(const Array& a, const Array& v, Side side) {
  if (a.ndim() != 1)
    throw ShapeError("searchsorted: the sorted array must be 1-d, not of shape " +
                     shape_str(a.shape()));
  const DType t = promote_types(a.dtype(), v.dtype());
  const int64_t m = v.size();
  if (m == 0) return zeros(v.shape(), DType::Int64, v.device());
  Array vs = v.reshape({-1}).astype(t), as = a.astype(t);
  // One stable sort of both: with v first, an element of a equal to a value of v sorts after it
  // (Left counts the elements of a below it); with a first, before it (Right counts those <=).
  const bool left = side == Side::Left;
  Array both = left ? concatenate({vs, as}) : concatenate({as, vs});
  Array perm = argsort(both, 0);
  const int64_t na = a.size();
  Array from_a = left ? perm >= m : perm < na;
  Array a_before = cumsum(from_a.astype(DType::Int64), 0) - from_a.astype(DType::Int64);
  Array which = left ? perm : perm - na;  // v's position of each sorted element (if from v)
  Array pos = where(from_a, int64_t{-1}, which);
  Array out = zeros({m}, DType::Int64, v.device());
  out = api::finish(api::scatter(out, pos, a_before, graph::ScatterOp::Set));
  return out.reshape(v.shape());
}

// Complex too, as NumPy: the middle of the lexicographic order (NaNs last), or the mean of the
// two middle values.
Array median(const Array& a, std::optional<int> axis, bool keepdims) {
  Rows r = sorted_rows(a, axis, "median");
  const bool own = is_floating(a.dtype()) || is_complex(a.dtype());
  const DType t = own ? a.dtype() : DType::Float64;
  if (r.n == 0) {  // NumPy: the mean of an empty slice, NaN (with a warning)
    Shape s = r.s.shape();
    s.pop_back();
    Array value = full(s, std::numeric_limits<double>::quiet_NaN(), t, a.device());
    return keepdims ? value.reshape(r.keep) : value;
  }
  // NumPy: the mean of the middle one or two, summed in the result's dtype (float16 in float32).
  Array mid = nth(r, r.n / 2).astype(t);
  Array value = r.n % 2 ? mid : (nth(r, r.n / 2 - 1).astype(t) + mid) / 2;
  return finish_stat(r, value, keepdims);
}

Array quantile(const Array& a, double q, std::optional<int> axis, bool keepdims) {
  return quantiles(a, {q}, false, axis, keepdims, "quantile", 1);
}
Array quantile(const Array& a, const std::vector<double>& q, std::optional<int> axis,
               bool keepdims) {
  return quantiles(a, q, true, axis, keepdims, "quantile", 1);
}
Array percentile(const Array& a, double q, std::optional<int> axis, bool keepdims) {
  return quantiles(a, {q}, false, axis, keepdims, "percentile", 100);
}
Array percentile(const Array& a, const std::vector<double>& q, std::optional<int> axis,
                 bool keepdims) {
  return quantiles(a, q, true, axis, keepdims, "percentile", 100);
}

}  // namespace kiln
