// numpy's matmul on the graph. A float or complex product is one Matmul node over its operands
// cast to the result's dtype and broadcast to the batch shape (views, which the planner hands
// the BLAS as strides). A bool or integer product is NumPy's sum over k of a[i, k] * b[k, j] as
// kiln's own operations, a multiply fused into a reduction, exact on every device.
#include <atomic>
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

Shapes matmul_shapes(const Shape& a, const Shape& b) {
  if (a.empty() || b.empty())
    throw ShapeError("matmul: " + pair_str(a, b) +
                     ": an operand is 0-d, and matmul takes no scalars (as NumPy); multiply "
                     "with a * b instead");
  Shapes s{a, b, {}, {}, 0, 0, 0};
  if (a.size() == 1) s.a.insert(s.a.begin(), 1);
  if (b.size() == 1) s.b.push_back(1);
  s.m = s.a[s.a.size() - 2];
  s.k = s.a.back();
  s.n = s.b.back();
  if (s.b[s.b.size() - 2] != s.k)
    throw ShapeError("matmul: " + pair_str(a, b) + " do not align: a's last axis (" +
                     std::to_string(s.k) + ") must equal b's " +
                     (b.size() == 1 ? "only" : "second-to-last") + " axis (" +
                     std::to_string(s.b[s.b.size() - 2]) + ")");
  try {
    s.batch = graph::broadcast_shapes(Shape(s.a.begin(), s.a.end() - 2),
                                      Shape(s.b.begin(), s.b.end() - 2));
  } catch (const ShapeError&) {
    throw ShapeError("matmul: " + pair_str(a, b) +
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

}  // namespace

void set_matmul_precision(MatmulPrecision p) { g_precision = p; }
MatmulPrecision get_matmul_precision() { return g_precision; }

Array matmul(const Array& a, const Array& b) {
  const graph::Node& x = api::node_of(a);
  const graph::Node& y = api::node_of(b);
  Shapes s = matmul_shapes(x.shape, y.shape);
  graph::check_rank(with(s.batch, {s.m, s.n}), "matmul");
  const graph::Node* nodes[] = {&x, &y};
  Device d = api::common_device(nodes, "matmul");
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

}  // namespace kiln
