#include "api/build.hpp"

#include <atomic>
#include <stdexcept>
#include <string>

#include "graph/draft.hpp"
#include "graph/shape.hpp"
#include "graph/value_range.hpp"
#include "runtime/pipeline.hpp"
#include "runtime/settings.hpp"

namespace kiln::api {

using graph::NodeSpec;
using graph::OpKind;

void throw_empty_array() {
  throw Error(
      "kiln::Array is empty (default-constructed); assign it the result of a kiln function "
      "before use");
}

std::vector<NodeRef> refs_of(const std::vector<Array>& arrays) {
  std::vector<NodeRef> out;
  for (const auto& a : arrays) out.push_back(ref_of(a));
  return out;
}

NodeRef cast(const NodeRef& n, DType t) {
  if (n->dtype == t) return n;
  if (n->kind == OpKind::Scalar)  // the value converts too, as a Cast node would convert it
    return scalar(visit_dtype(t,
                              [&](auto z) {
                                auto v = n->scalar_value().as<decltype(z)>();
                                if constexpr (std::is_same_v<decltype(v), float16> ||
                                              std::is_same_v<decltype(v), bfloat16>)
                                  return Scalar(static_cast<double>(v));  // rounded, exact
                                else
                                  return Scalar(v);
                              }),
                  t, n->device);
  graph::Draft d(OpKind::Cast, 0, t, n->device);
  d.copy_shape(*n);
  d->inputs.push_back(n);
  return graph::make_node(std::move(d));
}

NodeRef broadcast(const NodeRef& n, const Shape& shape) {
  if (n->shape == shape) return n;
  Shape b = graph::broadcast_shapes(n->shape, shape);
  if (b != shape)
    throw ShapeError("cannot broadcast an array of shape " + shape_str(n->shape) + " to shape " +
                     shape_str(shape) + ": each dimension must match or be 1");
  graph::Draft d(OpKind::Broadcast, 0, n->dtype, n->device);
  d->shape = shape;
  d->inputs.push_back(n);
  return graph::make_node(std::move(d));
}

NodeRef unary(graph::UnaryOp op, NodeRef a, DType out) {
  graph::Draft d(OpKind::Unary, static_cast<uint8_t>(op), out, a->device);
  d.copy_shape(*a);
  d->inputs.push_back(std::move(a));
  return graph::make_node(std::move(d));
}

NodeRef binary(graph::BinaryOp op, NodeRef a, NodeRef b, DType out, const Shape& shape) {
  graph::Draft d(OpKind::Binary, static_cast<uint8_t>(op), out, a->device);
  d->shape = shape;
  d->inputs.push_back(std::move(a));
  d->inputs.push_back(std::move(b));
  return graph::make_node(std::move(d));
}

NodeRef binary(graph::BinaryOp op, NodeRef a, const Scalar& v, bool left, DType out) {
  graph::Draft d(OpKind::Binary, static_cast<uint8_t>(op), out, a->device);
  d.copy_shape(*a);
  // Filled in place: a temporary of attributes copied in stalls on its narrow fields' stores.
  auto& immediate = d->attrs.emplace<graph::ImmediateAttrs>();
  immediate.value = v;
  immediate.dtype = a->dtype;
  immediate.left = left;
  d->inputs.push_back(std::move(a));
  return graph::make_node(std::move(d));
}

NodeRef scalar(Scalar v, DType t, Device d) { return graph::scalar_node(v, t, d); }

NodeRef remap(const NodeRef& n, const Shape& shape, std::vector<graph::RemapAxis> axes,
              const NodeRef& fill, const NodeRef& index) {
  bool identity = shape == n->shape && !index, masked = false;
  for (size_t d = 0; d < axes.size(); ++d) {
    const auto& ax = axes[d];
    bool offset = ax.mode == graph::IndexMode::Offset && !ax.indexed;
    identity &= offset && ax.origin == 0 && ax.step == 1;
    masked |= offset && !(ax.origin == 0 && ax.step == 1 && shape[d] == n->shape[d]);
    if (n->shape[d] == 0 && shape[d] > 0 && !offset)
      throw ShapeError(std::string("cannot ") + graph::mode_name(ax.mode) + " an empty axis (" +
                       std::to_string(d) + " of shape " + shape_str(n->shape) + ") to length " +
                       std::to_string(shape[d]) + ": there is no element to repeat");
    // Nothing of n is read: the result is the fill everywhere.
    if (n->shape[d] == 0 && offset && fill) return fill;
  }
  if (identity) return n;
  if (masked && !fill) throw std::logic_error("remap: an Offset axis without a fill (kiln bug)");
  std::vector<NodeRef> in{n};
  if (masked) in.push_back(fill);
  if (index) in.push_back(index);
  NodeSpec s{OpKind::Remap,
             0,
             n->dtype,
             shape,
             n->device,
             std::move(in),
             graph::RemapAttrs{std::move(axes)}};
  return graph::make_node(std::move(s));
}

namespace {
std::atomic<TransferPolicy> g_transfer_policy{TransferPolicy::Explicit};
}  // namespace

Device common_device(std::span<const graph::Node* const> nodes, const char* what) {
  if (nodes.size() == 1) return nodes[0]->device;  // (x * 2: the usual case)
  const graph::Node* first = nullptr;
  const graph::Node* largest = nullptr;
  bool mixed = false;
  for (const graph::Node* n : nodes) {
    if (n->kind == OpKind::Scalar && !n->is_leaf()) continue;  // constants go anywhere
    if (!first) first = n;
    mixed |= !(n->device == first->device);
    if (!largest || shape_size(n->shape) > shape_size(largest->shape)) largest = n;
  }
  if (mixed && get_transfer_policy() == TransferPolicy::Explicit) {
    const graph::Node* other = first;
    for (const graph::Node* n : nodes)
      if (!(n->device == first->device) && !(n->kind == OpKind::Scalar && !n->is_leaf())) other = n;
    throw DeviceError(std::string(what) + ": operands are on different devices (" +
                      first->device.str() + " and " + other->device.str() +
                      "); mixing host and cuda arrays needs an explicit copy: use "
                      "kiln::asarray(x, kiln::cuda()) or x.get() first, or "
                      "kiln::set_transfer_policy(kiln::TransferPolicy::Auto)");
  }
  if (mixed) return largest->device;
  return first ? first->device : nodes.empty() ? Device{} : nodes[0]->device;
}

NodeRef copy_to(const NodeRef& n, Device d) {
  if (n->device == d) return n;
  if (n->kind == OpKind::Scalar && !n->is_leaf()) return scalar(n->scalar_value(), n->dtype, d);
  NodeSpec spec{OpKind::Copy, 0, n->dtype, n->shape, d, {n}};
  return graph::make_node(std::move(spec));
}

}  // namespace kiln::api

namespace kiln {
void set_transfer_policy(TransferPolicy p) { api::g_transfer_policy = p; }
TransferPolicy get_transfer_policy() { return api::g_transfer_policy; }
}  // namespace kiln

namespace kiln::api {

NodeRef scatter(const Array& x, const Array& positions, const Array& values, graph::ScatterOp op,
                bool indices) {
  const auto& n = node_of(x);
  const graph::Node* nodes[] = {&n, &node_of(positions), &node_of(values)};
  Device d = common_device(nodes, "scatter");
  return graph::make_node(
      NodeSpec{OpKind::Scatter,
               static_cast<uint8_t>(op),
               n.dtype,
               n.shape,
               d,
               {copy_to(ref_of(x), d), copy_to(ref_of(positions), d), copy_to(ref_of(values), d)},
               graph::ScatterAttrs{indices}});
}

NodeRef compress(const Array& mask, const Array* rows, const Shape& shape) {
  const auto& m = node_of(mask);
  if (!rows)
    return graph::make_node(
        NodeSpec{OpKind::Compress, 0, DType::Int64, shape, m.device, {ref_of(mask)}});
  const auto& r = node_of(*rows);
  const graph::Node* nodes[] = {&m, &r};
  Device d = common_device(nodes, "compress");
  return graph::make_node(NodeSpec{OpKind::Compress,
                                   0,
                                   r.dtype,
                                   shape,
                                   d,
                                   {copy_to(ref_of(mask), d), copy_to(ref_of(*rows), d)}});
}

NodeRef scan(const Array& in, int axis, graph::ScanOp op) {
  const auto& n = node_of(in);
  return graph::make_node(NodeSpec{OpKind::Scan,
                                   static_cast<uint8_t>(op),
                                   n.dtype,
                                   n.shape,
                                   n.device,
                                   {ref_of(in)},
                                   graph::ScanAttrs{axis}});
}

NodeRef sort(const Array& in, graph::SortOp op) {
  const auto& n = node_of(in);
  return graph::make_node(NodeSpec{OpKind::Sort,
                                   static_cast<uint8_t>(op),
                                   op == graph::SortOp::Values ? n.dtype : DType::Int64,
                                   n.shape,
                                   n.device,
                                   {ref_of(in)},
                                   {}});
}

std::pair<int64_t, int64_t> value_range(const Array& a) {
  Array lo = min(a).astype(DType::Int64), hi = max(a).astype(DType::Int64);
  eval({lo, hi});
  return {lo.item<int64_t>(), hi.item<int64_t>()};
}

std::optional<int64_t> out_of_range(const Array& indices, int64_t n) {
  // Indices whose range is known from how they were made (argsort's positions for
  // take_along_axis, say) need no pass: nothing is evaluated, nothing waited for.
  const auto known = graph::known_range(node_of(indices));
  if (known && known->lo >= -n && known->hi < n) return std::nullopt;
  const Array i = indices.astype(DType::Int64);  // fused into the test; -n fits any dtype then
  if (!any((i < -n) | (i >= n)).item<bool>()) return std::nullopt;
  const auto [lo, hi] = value_range(indices);
  return lo < -n ? lo : hi;
}

Array finish(NodeRef n) {
  bool forceable = n->kind != OpKind::Scalar && n->kind != OpKind::Buffer &&
                   n->kind != OpKind::Reshape && n->kind != OpKind::Permute &&
                   n->kind != OpKind::Slice && n->kind != OpKind::Broadcast;
  if (forceable && !n->is_leaf() &&
      (runtime::thread_mode() == Mode::Eager || n->depth >= kMaxGraphDepth))
    runtime::realize(n);
  return Array(std::move(n));
}

}  // namespace kiln::api
