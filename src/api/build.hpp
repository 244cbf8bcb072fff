// Node builders shared by the API: casts, broadcasts and operations, each checked and
// hash-consed, and `finish`, which applies the evaluation policy (eager mode, growth limits).
#pragma once
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "graph/node.hpp"
#include "kiln/array.hpp"

namespace kiln::api {

using graph::NodeRef;

[[noreturn]] void throw_empty_array();  // the kiln::Error for a default-constructed Array
// Inline, as each operation built reads its operands through them, the throw out of line.
inline const graph::Node& node_of(const Array& a) {  // throws kiln::Error for an empty handle
  if (!a.valid()) [[unlikely]]
    throw_empty_array();
  return *a.node();
}
inline NodeRef ref_of(const Array& a) {
  node_of(a);
  return a.node();
}
inline NodeRef ref_of(Array&& a) {  // takes a's node, leaving a empty (an operation consuming it)
  node_of(a);
  return std::move(a).node();
}
std::vector<NodeRef> refs_of(const std::vector<Array>& arrays);

NodeRef cast(const NodeRef& n, DType t);
NodeRef broadcast(const NodeRef& n, const Shape& s);
// The operands are taken by value and moved into the node: building is on every program's
// path, and each copy of a NodeRef is an atomic operation (pass temporaries, or std::move).
NodeRef unary(graph::UnaryOp op, NodeRef a, DType out);
// Operands must already share dtype, and have `shape` or be rank-0 Scalar nodes (constants,
// which lowering reads as parameters).
NodeRef binary(graph::BinaryOp op, NodeRef a, NodeRef b, DType out, const Shape& shape);
// op of `a` and the constant v (of a's dtype, the first operand when `left`): v is the node's
// immediate (graph::ImmediateAttrs), not a node of its own.
NodeRef binary(graph::BinaryOp op, NodeRef a, const Scalar& v, bool left, DType out);
NodeRef scalar(Scalar v, DType t, Device d);
// n read through an index map per axis (graph::RemapAttrs) into `shape` (of n's rank): one
// Remap node, or n itself for the identity. `fill` (of `shape` and n's dtype) is the value
// where an Offset axis leaves n; it may be null when none can. An axis of another mode must
// not map into an empty one (ShapeError). `index`: the 1-d integer array of the indexed axis
// (take), null when none is.
NodeRef remap(const NodeRef& n, const Shape& shape, std::vector<graph::RemapAxis> axes,
              const NodeRef& fill = nullptr, const NodeRef& index = nullptr);
// The device an operation on these nodes runs on. They must share one (DeviceError), unless
// the transfer policy is Auto: then the largest operand's device, the others copied there.
Device common_device(std::span<const graph::Node* const> nodes, const char* what);
// n on device d: n itself, or a planned copy.
NodeRef copy_to(const NodeRef& n, Device d);

// x with `values` placed at flat `positions` (int64, in range or negative to skip; both 1-d of
// one length, values of x's dtype) by `op`: one Scatter node, its operands on a common device.
// With `indices`, the positions are indices along a 1-d x instead, checked when the scatter runs
// (graph::ScatterAttrs).
NodeRef scatter(const Array& x, const Array& positions, const Array& values, graph::ScatterOp op,
                bool indices = false);
// The inclusive scan of `in` (of the result's dtype) along axis (non-negative): one Scan node.
NodeRef scan(const Array& in, int axis, graph::ScanOp op);
// The rows of `rows` (L, R) whose entry in `mask` (L, bool) is true, in order, as an array of
// `shape` (count, then R's axes: the step writes count * R values densely, so any shape of that
// size reads them as they are); with no rows, the int64 positions of the true entries. One
// Compress node.
NodeRef compress(const Array& mask, const Array* rows, const Shape& shape);
// The stable sort of each row of `in` along its last axis: one Sort node, of in's dtype
// (values) or int64 (indices).
NodeRef sort(const Array& in, graph::SortOp op);

// Wraps a new node as an Array. In eager mode, or when the unevaluated chain below it grows
// past the limit, the node is evaluated now. Views and constants are never forced.
Array finish(NodeRef n);

// The smallest and largest values of a non-empty integer array, as int64, both evaluated in one
// plan with one wait (bincount's range; out_of_range's message).
std::pair<int64_t, int64_t> value_range(const Array& a);
// An index of `indices` outside [-n, n) (the smallest below, else the largest above), or none:
// none at once for indices whose range is known inside (graph/value_range.hpp), else one pass
// over the indices (is any out of range?) and, only when one is, value_range.
std::optional<int64_t> out_of_range(const Array& indices, int64_t n);

// The depth of unevaluated nodes at which a chain is evaluated, so a loop that keeps
// chaining operations never builds an unbounded graph.
inline constexpr uint32_t kMaxGraphDepth = 512;

}  // namespace kiln::api
