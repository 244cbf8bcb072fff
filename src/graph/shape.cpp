#include "graph/shape.hpp"

#include <algorithm>
#include <limits>

#include "kiln/errors.hpp"

namespace kiln {

namespace {
// What is wrong with s, whose product of non-zero dimensions nonzero_product could not count.
// Out of line: the loops that call it run for every evaluation's buffers.
[[noreturn, gnu::noinline]] void uncountable(const Shape& s, const char* what) {
  const bool negative = std::any_of(s.begin(), s.end(), [](int64_t d) { return d < 0; });
  throw ShapeError((what ? std::string(what) + ": " : std::string()) + "shape " + shape_str(s) +
                   (negative ? " has a negative dimension; dimensions must be >= 0"
                             : " has more elements than an int64 can count; use smaller "
                               "dimensions"));
}

// The product of the non-zero dimensions. As in NumPy, it must be countable even when a zero
// dimension makes the array empty, so strides never overflow either. A negative dimension
// has no count (shape_size({-1, 2}) would be -2). `what`, when given, names the caller.
// `has_zero`, when given, is set to whether a dimension is 0.
int64_t nonzero_product(const Shape& s, const char* what = nullptr, bool* has_zero = nullptr) {
  int64_t n = 1;
  bool zero = false;
  for (int64_t d : s) {
    if (d < 0) uncountable(s, what);
    zero |= d == 0;
    if (d != 0 && __builtin_mul_overflow(n, d, &n)) uncountable(s, what);
  }
  if (has_zero) *has_zero = zero;
  return n;
}
}  // namespace

int64_t shape_size(const Shape& s) {
  bool zero;
  const int64_t n = nonzero_product(s, nullptr, &zero);
  return zero ? 0 : n;
}

std::string shape_str(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  return out + (s.size() == 1 ? ",)" : ")");
}

}  // namespace kiln

namespace kiln::graph {

void check_rank(const Shape& s, const char* what) {
  if (s.size() > static_cast<size_t>(kMaxRank))
    throw ShapeError(std::string(what) + ": rank " + std::to_string(s.size()) +
                     " is over kiln's limit of " + std::to_string(kMaxRank) +
                     " dimensions; reshape to fewer axes");
  // Byte counts (elements times itemsize, up to 16) must fit in int64 too.
  if (nonzero_product(s, what) > std::numeric_limits<int64_t>::max() / 16)
    throw ShapeError(std::string(what) + ": shape " + shape_str(s) +
                     " has too many elements to address; use smaller dimensions");
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw ShapeError("operands could not be broadcast together with shapes " + shape_str(a) +
                       " " + shape_str(b) + ": each dimension must match or be 1 (align the " +
                       "trailing axes, or reshape one operand)");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

AxesEnd folded_end(const std::vector<int>& axes, size_t rank) {
  const size_t k = axes.size();
  if (k == 0 || k >= rank) return AxesEnd::Neither;
  bool trailing = true;
  for (size_t i = 0; i < k; ++i) trailing &= axes[i] == static_cast<int>(rank - k + i);
  if (trailing) return AxesEnd::Trailing;
  return axes.back() != static_cast<int>(rank - 1) ? AxesEnd::KeepsLast : AxesEnd::Neither;
}

Strides contiguous_strides(const Shape& s) {
  Strides st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= std::max<int64_t>(s[i], 1);
  }
  return st;
}

int normalize_axis(int axis, int ndim, const char* what) {
  if (axis < -ndim || axis >= ndim)
    throw ShapeError(std::string(what) + ": axis " + std::to_string(axis) +
                     " is out of bounds for an array of dimension " + std::to_string(ndim) +
                     (ndim == 0 ? std::string(" (it has no axes)")
                                : " (valid: " + std::to_string(-ndim) + " to " +
                                      std::to_string(ndim - 1) + ")"));
  return axis < 0 ? axis + ndim : axis;
}

std::vector<int> normalize_axes(const std::vector<int>& axes, int ndim, const char* what) {
  std::vector<int> out;
  if (axes.empty()) {
    for (int i = 0; i < ndim; ++i) out.push_back(i);
    return out;
  }
  for (int a : axes) out.push_back(normalize_axis(a, ndim, what));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    throw ShapeError(std::string(what) + ": an axis is repeated; give each axis once");
  return out;
}

Shape resolve_reshape(const Shape& from, Shape to) {
  Shape given = to;  // the -1 as 1: known is the product of the given dimensions
  int unknown = -1;
  for (size_t i = 0; i < to.size(); ++i) {
    if (to[i] == -1) {
      if (unknown >= 0) throw ShapeError("reshape: can only specify one unknown dimension (-1)");
      unknown = static_cast<int>(i);
      given[i] = 1;
    } else if (to[i] < 0) {
      throw ShapeError("reshape: dimension " + std::to_string(to[i]) +
                       " is negative; use -1 for one inferred dimension");
    }
  }
  int64_t known = shape_size(given);
  int64_t n = shape_size(from);
  if (unknown >= 0 && known != 0 && n % known == 0) to[unknown] = n / known;
  if ((unknown >= 0 && (known == 0 || n % known != 0)) || shape_size(to) != n)
    throw ShapeError("cannot reshape array of size " + std::to_string(n) + " into shape " +
                     shape_str(to) + ": the element counts must be equal");
  check_rank(to, "reshape");
  return to;
}

std::optional<Strides> reshape_strides(const Shape& from, const Strides& strides, const Shape& to) {
  // Drop size-1 axes of the source: they place no constraint.
  Shape os;
  Strides ost;
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1) os.push_back(from[i]), ost.push_back(strides[i]);
  Strides out(to.size(), 0);
  if (shape_size(from) == 0) return contiguous_strides(to);
  size_t oi = 0, oj = 0, ni = 0, nj = 0;
  // Walk groups of axes whose products match; each group must be contiguous in the source.
  while (ni < to.size() && oi < os.size()) {
    int64_t np = to[ni], op = os[oi];
    nj = ni + 1, oj = oi + 1;
    while (np != op) {
      if (np < op)
        np *= to[nj++];
      else
        op *= os[oj++];
    }
    for (size_t k = oi; k + 1 < oj; ++k)
      if (ost[k] != os[k + 1] * ost[k + 1]) return std::nullopt;
    out[nj - 1] = ost[oj - 1];
    for (size_t k = nj - 1; k > ni; --k) out[k - 1] = out[k] * to[k];
    ni = nj, oi = oj;
  }
  // Trailing size-1 axes of the target get any stride.
  for (size_t k = ni; k < to.size(); ++k) out[k] = 1;
  return out;
}

}  // namespace kiln::graph
