#include "api/build.hpp"

#include <atomic>

#include "api/evaluate.hpp"
#include "graph/shape.hpp"

namespace kiln::api {

using graph::OpKind;

namespace {

// A node of one input on that input's device, found or made without copying its shape first.
NodeRef one_input(OpKind kind, uint8_t op, DType t, const Shape& shape, const graph::Node& in) {
  const graph::Node* p = &in;
  return graph::make_node(graph::NodeKey{kind, op, t, shape, in.device, {&p, 1}});
}

// Whether broadcast_shapes(from, to) == to, without building the result: each dimension of
// `from`, aligned at the end, is 1 or equal to the one in `to`.
bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  size_t lead = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[lead + i]) return false;
  return true;
}

}  // namespace

const graph::Node& node_of(const Array& a) {
  if (!a.valid())
    throw Error(
        "kiln::Array is empty (default-constructed); assign it the result of a kiln "
        "function before use");
  return *a.node();
}

NodeRef ref_of(const Array& a) {
  node_of(a);
  return a.node();
}

NodeRef cast(const NodeRef& n, DType t) {
  if (n->dtype == t) return n;
  if (n->kind == OpKind::Scalar)  // the value converts too, as a Cast node would convert it
    return scalar(visit_dtype(t, [&](auto z) { return Scalar(n->scalars[0].as<decltype(z)>()); }),
                  t, n->device);
  return one_input(OpKind::Cast, 0, t, n->shape, *n);
}

NodeRef broadcast(const NodeRef& n, const Shape& shape) {
  if (n->shape == shape) return n;
  if (!broadcasts_to(n->shape, shape)) {
    Shape b = graph::broadcast_shapes(n->shape, shape);  // its error when they are incompatible
    if (b != shape)
      throw ShapeError("cannot broadcast an array of shape " + shape_str(n->shape) +
                       " to shape " + shape_str(shape) + ": each dimension must match or be 1");
  }
  return one_input(OpKind::Broadcast, 0, n->dtype, shape, *n);
}

NodeRef unary(graph::UnaryOp op, const NodeRef& a, DType out) {
  return one_input(OpKind::Unary, static_cast<uint8_t>(op), out, a->shape, *a);
}

NodeRef binary(graph::BinaryOp op, const NodeRef& a, const NodeRef& b, DType out) {
  const graph::Node* in[] = {a.get(), b.get()};
  return graph::make_node(
      graph::NodeKey{OpKind::Binary, static_cast<uint8_t>(op), out, a->shape, a->device, in});
}

NodeRef scalar(Scalar v, DType t, Device d) { return graph::scalar_node(v, t, d); }

namespace {
std::atomic<TransferPolicy> g_transfer_policy{TransferPolicy::Explicit};
}  // namespace

Device common_device(const std::vector<const graph::Node*>& nodes, const char* what) {
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
  if (n->kind == OpKind::Scalar && !n->is_leaf()) return scalar(n->scalars[0], n->dtype, d);
  const graph::Node* in = n.get();
  return graph::make_node(graph::NodeKey{OpKind::Copy, 0, n->dtype, n->shape, d, {&in, 1}});
}

}  // namespace kiln::api

namespace kiln {
void set_transfer_policy(TransferPolicy p) { api::g_transfer_policy = p; }
TransferPolicy get_transfer_policy() { return api::g_transfer_policy; }
}  // namespace kiln

namespace kiln::api {

Array finish(NodeRef n) {
  bool forceable = n->kind != OpKind::Scalar && n->kind != OpKind::Buffer &&
                   n->kind != OpKind::Reshape && n->kind != OpKind::Permute &&
                   n->kind != OpKind::Slice && n->kind != OpKind::Broadcast;
  if (forceable && !n->is_leaf() && (get_mode() == Mode::Eager || n->depth >= kMaxGraphDepth))
    realize({n});
  return Array(std::move(n));
}

}  // namespace kiln::api
