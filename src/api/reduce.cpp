// Reductions. The builder casts the input to the accumulation dtype (graph/reduce_table.hpp:
// NumPy's, int32 and bool sums accumulate in int64, integer means in float64), so the planner
// can fuse that cast into the reduction's prologue and backends accumulate in the input's dtype.
#include "api/build.hpp"
#include "graph/shape.hpp"
#include "kiln/statistics.hpp"

namespace kiln {

using graph::ReduceOp;

namespace {

Array reduce(ReduceOp op, const Array& a, const AxesArg& axes_in, bool keepdims) {
  const auto& n = api::node_of(a);
  DType acc = graph::accumulation_dtype(op, n.dtype);
  DType result = graph::reduce_result_dtype(op, acc, n.dtype);
  // NumPy's axis=(): nothing reduced, each value in the reduction's dtype (bool for any/all).
  if (axes_in.given() && axes_in.axes().empty())
    return api::finish(api::cast(api::cast(a.node(), acc), result));
  int nd = static_cast<int>(n.shape.size());
  auto axes = graph::normalize_axes(axes_in.axes(), nd, graph::op_name(op));
  Shape out;
  graph::ReduceAttrs attrs{{}, keepdims};
  for (int i = 0, k = 0; i < nd; ++i) {
    bool reduced = k < static_cast<int>(axes.size()) && axes[k] == i;
    if (reduced) {
      ++k;
      attrs.axes.push_back(i);
      if (n.shape[i] == 0 && !graph::has_identity(op))
        throw ShapeError(std::string(graph::op_name(op)) + ": zero-size array along axis " +
                         std::to_string(i) + " has no identity (shape " + shape_str(n.shape) +
                         "); check the array is not empty first");
      if (keepdims) out.push_back(1);
    } else {
      out.push_back(n.shape[i]);
    }
  }
  auto in = api::cast(a.node(), acc);
  graph::NodeSpec spec{graph::OpKind::Reduce, static_cast<uint8_t>(op), result, out, n.device, {in},
                       std::move(attrs)};
  return api::finish(graph::make_node(std::move(spec)));
}

Array arg_reduce(ReduceOp op, const Array& a, std::optional<int> axis, bool keepdims) {
  if (axis) return reduce(op, a, Axes{*axis}, keepdims);
  Array flat = reduce(op, a.reshape({-1}), Axes{0}, false);
  return keepdims ? flat.reshape(Shape(a.ndim(), 1)) : flat;
}

}  // namespace

Array sum(const Array& a, AxesArg axes, bool keepdims) {
  return reduce(ReduceOp::Sum, a, axes, keepdims);
}
Array prod(const Array& a, AxesArg axes, bool keepdims) {
  return reduce(ReduceOp::Prod, a, axes, keepdims);
}
Array max(const Array& a, AxesArg axes, bool keepdims) {
  return reduce(ReduceOp::Max, a, axes, keepdims);
}
Array min(const Array& a, AxesArg axes, bool keepdims) {
  return reduce(ReduceOp::Min, a, axes, keepdims);
}
Array mean(const Array& a, AxesArg axes, bool keepdims) {
  return reduce(ReduceOp::Mean, a, axes, keepdims);
}
Array any(const Array& a, AxesArg axes, bool keepdims) {
  return reduce(ReduceOp::Any, a, axes, keepdims);
}
Array all(const Array& a, AxesArg axes, bool keepdims) {
  return reduce(ReduceOp::All, a, axes, keepdims);
}
Array argmax(const Array& a, std::optional<int> axis, bool keepdims) {
  return arg_reduce(ReduceOp::ArgMax, a, axis, keepdims);
}
Array argmin(const Array& a, std::optional<int> axis, bool keepdims) {
  return arg_reduce(ReduceOp::ArgMin, a, axis, keepdims);
}

bool allclose(const Array& a, const Array& b, double rtol, double atol, bool equal_nan) {
  return all(isclose(a, b, rtol, atol, equal_nan)).item<bool>();
}

bool array_equal(const Array& a, const Array& b, bool equal_nan) {
  if (a.shape() != b.shape()) return false;
  Array eq = a == b;
  if (equal_nan) eq = eq | ((a != a) & (b != b));
  return all(eq).item<bool>();
}

}  // namespace kiln
