// numpy's matmul on the graph. A float or complex product is one Matmul node over its operands
// cast to the result's dtype and broadcast to the batch shape (views, which the planner hands
// the BLAS as strides). A bool or integer product is NumPy's sum over k of a[i, k] * b[k, j] as
// kiln's own operations, a multiply fused into a reduction, exact on every device.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>

#include "api/build.hpp"
#include "graph/shape.hpp"
#include "kiln/linalg.hpp"

namespace kiln {
namespace {

std::atomic<MatmulPrecision> g_precision{MatmulPrecision::Float32};

using api::NodeRef;

struct Shapes {
  Shape a, b;    // as matrices: a 1-d a is (1, k), a 1-d b (k, 1)
  Shape batch;   // the broadcast batch shape
  Shape result;  // NumPy's: without the axes the 1-d promotion added
  int64_t m, k, n;
};

std::string pair_str(const Shape& a, const Shape& b) {
  return "shapes " + shape_str(a) + " and " + shape_str(b);
}

// `what`: the function the user called (dot and inner multiply through matmul and tensordot).
Shapes matmul_shapes(const Shape& a, const Shape& b, const std::string& what) {
  if (a.empty() || b.empty())
    throw ShapeError(what + ": " + pair_str(a, b) +
                     ": an operand is 0-d, and matmul takes no scalars (as NumPy); multiply "
                     "with a * b instead");
  Shapes s{a, b, {}, {}, 0, 0, 0};
  if (a.size() == 1) s.a.insert(s.a.begin(), 1);
  if (b.size() == 1) s.b.push_back(1);
  s.m = s.a[s.a.size() - 2];
  s.k = s.a.back();
  s.n = s.b.back();
  if (s.b[s.b.size() - 2] != s.k)
    throw ShapeError(what + ": " + pair_str(a, b) + " do not align: a's last axis (" +
                     std::to_string(s.k) + ") must equal b's " +
                     (b.size() == 1 ? "only" : "second-to-last") + " axis (" +
                     std::to_string(s.b[s.b.size() - 2]) + ")");
  try {
    s.batch = graph::broadcast_shapes(Shape(s.a.begin(), s.a.end() - 2),
                                      Shape(s.b.begin(), s.b.end() - 2));
  } catch (const ShapeError&) {
    throw ShapeError(what + ": " + pair_str(a, b) +
                     ": the batch axes (all but the last two) do not broadcast");
  }
  s.result = s.batch;
  if (a.size() > 1) s.result.push_back(s.m);
  if (b.size() > 1) s.result.push_back(s.n);
  return s;
}

Shape with(Shape batch, std::initializer_list<int64_t> tail) {
  batch.insert(batch.end(), tail);
  return batch;
}

// Bool and integers: (batch..., m, k, 1) * (batch..., 1, k, n) summed over k, which the planner
// fuses into one reduction kernel (the product is never written). Sums of small integers
// accumulate in int64 and are cast back, which wraps as NumPy's sum in the dtype itself.
Array exact_matmul(const Array& a, const Array& b, const Shapes& s, DType t) {
  Array x = a.astype(t).reshape(with(Shape(s.a.begin(), s.a.end() - 2), {s.m, s.k, 1}));
  Shape yb(s.b.begin(), s.b.end() - 2);
  Array y = b.astype(t).reshape(with(yb, {1, s.k, s.n}));
  if (t == DType::Bool) return any(logical_and(x, y), -2);
  return sum(x * y, -2).astype(t);
}

Array matmul_as(const Array& a, const Array& b, const std::string& what) {
  const graph::Node& x = api::node_of(a);
  const graph::Node& y = api::node_of(b);
  Shapes s = matmul_shapes(x.shape, y.shape, what);
  graph::check_rank(with(s.batch, {s.m, s.n}), what.c_str());
  const graph::Node* nodes[] = {&x, &y};
  Device d = api::common_device(nodes, what.c_str());
  DType t = promote_types(x.dtype, y.dtype);
  if (is_integer_or_bool(t))
    return exact_matmul(Array(api::copy_to(a.node(), d)), Array(api::copy_to(b.node(), d)), s, t)
        .reshape(s.result);
  auto operand = [&](const Array& v, const Shape& matrix, int64_t rows, int64_t cols) {
    NodeRef n = api::cast(api::copy_to(v.node(), d), t);
    return api::broadcast(Array(std::move(n)).reshape(matrix).node(), with(s.batch, {rows, cols}));
  };
  bool tf32 = t == DType::Float32 && g_precision == MatmulPrecision::Tf32;
  graph::NodeSpec spec{
      graph::OpKind::Matmul,     0, t,
      with(s.batch, {s.m, s.n}), d, {operand(a, s.a, s.m, s.k), operand(b, s.b, s.k, s.n)},
      graph::MatmulAttrs{tf32}};
  Array product = api::finish(graph::make_node(std::move(spec)));
  return product.shape() == s.result ? product : product.reshape(s.result);
}

}  // namespace

void set_matmul_precision(MatmulPrecision p) { g_precision = p; }
MatmulPrecision get_matmul_precision() { return g_precision; }

Array matmul(const Array& a, const Array& b) { return matmul_as(a, b, "matmul"); }

}  // namespace kiln

// ---- compositions of matmul -----------------------------------------------------------------
namespace kiln {
namespace {

std::string axes_str(const std::vector<int>& axes) {
  std::string s = "[";
  for (size_t i = 0; i < axes.size(); ++i) s += (i ? ", " : "") + std::to_string(axes[i]);
  return s + "]";
}

// Non-negative, each at most once (ShapeError naming the function otherwise).
std::vector<int> checked_axes(const std::vector<int>& axes, int ndim, const char* what) {
  std::vector<int> out;
  for (int a : axes) {
    int n = graph::normalize_axis(a, ndim, what);
    if (std::find(out.begin(), out.end(), n) != out.end())
      throw ShapeError(std::string(what) + ": axis " + std::to_string(a) + " of " + axes_str(axes) +
                       " is given twice; give each axis once");
    out.push_back(n);
  }
  return out;
}

std::vector<int> other_axes(const std::vector<int>& axes, int ndim) {
  std::vector<int> rest;
  for (int d = 0; d < ndim; ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) rest.push_back(d);
  return rest;
}

Array tensordot_as(const Array& a, const Array& b, const std::vector<int>& a_axes,
                   const std::vector<int>& b_axes, const std::string& what) {
  const Shape &sa = a.shape(), &sb = b.shape();
  if (a_axes.size() != b_axes.size())
    throw ShapeError(what + ": " + axes_str(a_axes) + " and " + axes_str(b_axes) +
                     " pair different numbers of axes; give one b axis per a axis");
  std::vector<int> ca = checked_axes(a_axes, a.ndim(), what.c_str());
  std::vector<int> cb = checked_axes(b_axes, b.ndim(), what.c_str());
  int64_t k = 1;
  for (size_t i = 0; i < ca.size(); ++i) {
    if (sa[ca[i]] != sb[cb[i]])
      throw ShapeError(what + ": shapes " + shape_str(sa) + " and " + shape_str(sb) +
                       " do not align: a's axis " + std::to_string(ca[i]) + " (" +
                       std::to_string(sa[ca[i]]) + ") against b's axis " + std::to_string(cb[i]) +
                       " (" + std::to_string(sb[cb[i]]) + ")");
    k *= sa[ca[i]];
  }
  std::vector<int> fa = other_axes(ca, a.ndim()), fb = other_axes(cb, b.ndim());
  Shape out;
  int64_t m = 1, n = 1;
  for (int d : fa) m *= sa[d], out.push_back(sa[d]);
  for (int d : fb) n *= sb[d], out.push_back(sb[d]);
  // a as (free, contracted) and b as (contracted, free) matrices: views where strides allow.
  std::vector<int> pa = fa, pb = cb;
  pa.insert(pa.end(), ca.begin(), ca.end());
  pb.insert(pb.end(), fb.begin(), fb.end());
  Array x = a.transpose(pa).reshape({m, k}), y = b.transpose(pb).reshape({k, n});
  return matmul_as(x, y, what).reshape(out);
}

}  // namespace

Array tensordot(const Array& a, const Array& b, const std::vector<int>& a_axes,
                const std::vector<int>& b_axes) {
  return tensordot_as(a, b, a_axes, b_axes, "tensordot");
}

Array tensordot(const Array& a, const Array& b, int axes) {
  if (axes < 0 || axes > a.ndim() || axes > b.ndim())
    throw ShapeError("tensordot: axes=" + std::to_string(axes) + " for shapes " +
                     shape_str(a.shape()) + " and " + shape_str(b.shape()) +
                     "; it must be between 0 and the smaller rank");
  std::vector<int> ca, cb;
  for (int i = 0; i < axes; ++i) {
    ca.push_back(a.ndim() - axes + i);
    cb.push_back(i);
  }
  return tensordot(a, b, ca, cb);
}

Array dot(const Array& a, const Array& b) {
  if (a.ndim() == 0 || b.ndim() == 0) return a * b;
  if (a.ndim() <= 2 && b.ndim() <= 2) return matmul_as(a, b, "dot");
  return tensordot_as(a, b, {-1}, {b.ndim() == 1 ? 0 : -2}, "dot");
}

Array vdot(const Array& a, const Array& b) {
  if (a.size() != b.size())
    throw ShapeError("vdot: shapes " + shape_str(a.shape()) + " and " + shape_str(b.shape()) +
                     " have different sizes; vdot needs as many elements in each");
  Array x = a.reshape({-1});
  return matmul_as(is_complex(a.dtype()) ? conj(x) : x, b.reshape({-1}), "vdot");
}

Array inner(const Array& a, const Array& b) {
  if (a.ndim() == 0 || b.ndim() == 0) return a * b;
  return tensordot_as(a, b, {-1}, {-1}, "inner");
}

Array outer(const Array& a, const Array& b) { return a.reshape({-1, 1}) * b.reshape({1, -1}); }

}  // namespace kiln

// numpy.linalg.norm, as NumPy 1.24's linalg.py computes it, from kiln's reductions (so it fuses
// and runs wherever they do).
namespace kiln::linalg {
namespace {

// The orders norm() takes: a number, or "fro" / "nuc" (matrices only).
struct Order {
  std::optional<double> p;
  std::string name;  // "fro" or "nuc" when given by name
  bool none() const { return !p && name.empty(); }
  std::string str() const { return name.empty() ? (p ? std::to_string(*p) : "None") : name; }
};

// |x|^2 in x's real dtype: NumPy's (x.conj() * x).real.
Array squared_magnitude(const Array& x) {
  if (!is_complex(x.dtype())) return x * x;
  Array re = real(x), im = imag(x);
  return re * re + im * im;
}

Array vector_norm(const Array& x, const Order& o, int axis, bool keepdims) {
  if (!o.name.empty())
    throw ShapeError("norm: order '" + o.name + "' is for matrices; a vector norm takes a " +
                     "number (None or 2, 1, inf, -inf, 0, any p)");
  const double p = o.p.value_or(2);
  if (p == 2) return sqrt(sum(squared_magnitude(x), axis, keepdims));
  if (std::isinf(p)) return p > 0 ? max(abs(x), axis, keepdims) : min(abs(x), axis, keepdims);
  if (p == 0) return sum((x != 0).astype(real_dtype(x.dtype())), axis, keepdims);
  if (p == 1) return sum(abs(x), axis, keepdims);
  return pow(sum(pow(abs(x), p), axis, keepdims), 1.0 / p);
}

Array matrix_norm(const Array& x, const Order& o, int row, int col, bool keepdims) {
  if (o.none() || o.name == "fro") return sqrt(sum(squared_magnitude(x), {row, col}, keepdims));
  const double p = o.p.value_or(0);
  if (o.name == "nuc" || p == 2 || p == -2)
    throw Error("norm: the matrix norm of order " + o.str() + " needs singular values, which " +
                "kiln does not compute yet; orders None, 'fro', 1, -1, inf and -inf work");
  if (p != 1 && p != -1 && !std::isinf(p))
    throw ShapeError("norm: invalid order " + o.str() + " for matrices (None, 'fro', 1, -1, " +
                     "inf, -inf)");
  // 1: columns' sums (over the row axis), then their extreme; inf: rows' sums, then theirs.
  const bool columns = p == 1 || p == -1;
  const int summed = columns ? row : col;
  int other = columns ? col : row;
  if (!keepdims && other > summed) --other;  // the summed axis is gone
  Array sums = sum(abs(x), summed, keepdims);
  return p > 0 ? max(sums, other, keepdims) : min(sums, other, keepdims);
}

Array norm_of(const Array& x0, const Order& o, const AxesArg& axis, bool keepdims) {
  const Array x = is_integer_or_bool(x0.dtype()) ? x0.astype(DType::Float64) : x0;
  const int nd = x.ndim();
  if (!axis.given() && o.none()) {
    Array r = sqrt(sum(squared_magnitude(x.reshape({-1}))));
    return keepdims ? r.reshape(Shape(static_cast<size_t>(nd), 1)) : r;
  }
  Axes axes = axis.given() ? axis.axes() : Axes{};
  if (!axis.given())
    for (int a = 0; a < nd; ++a) axes.push_back(a);
  for (int& a : axes) a = graph::normalize_axis(a, nd, "norm");
  if (axes.size() == 1) return vector_norm(x, o, axes[0], keepdims);
  if (axes.size() == 2 && axes[0] != axes[1]) return matrix_norm(x, o, axes[0], axes[1], keepdims);
  throw ShapeError("norm: " +
                   std::string(axes.size() == 2 ? "duplicate axes"
                                                : "improper number "
                                                  "of dimensions") +
                   " for an array of shape " + shape_str(x.shape()) +
                   ": give one axis (a vector norm) or two (a matrix norm)");
}

}  // namespace

Array norm(const Array& x, std::optional<double> ord, AxesArg axis, bool keepdims) {
  return norm_of(x, {ord, ""}, axis, keepdims);
}

Array norm(const Array& x, const std::string& ord, AxesArg axis, bool keepdims) {
  if (ord != "fro" && ord != "nuc")
    throw ShapeError("norm: invalid order '" + ord + "' (named orders: 'fro', 'nuc')");
  return norm_of(x, {std::nullopt, ord}, axis, keepdims);
}

}  // namespace kiln::linalg
