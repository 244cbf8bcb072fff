// Nodes of the lazy DAG. A node is immutable once built, except that evaluation stores its
// result buffer and then drops its inputs (it becomes a leaf), so evaluated history is freed.
// make_node hash-conses: building an equal expression twice gives the same node.
#pragma once
#include <atomic>
#include <memory>
#include <vector>

#include "graph/buffer.hpp"
#include "graph/ops.hpp"
#include "kiln/device.hpp"
#include "kiln/dtype.hpp"
#include "kiln/scalar.hpp"
#include "kiln/shape.hpp"

namespace kiln::graph {

struct Node;
using NodeRef = std::shared_ptr<const Node>;

// What a node is, without its identity: the arguments of make_node.
struct NodeSpec {
  NodeSpec() = default;
  NodeSpec(OpKind k, uint8_t o, DType t, Shape s, Device d, std::vector<NodeRef> in = {},
           std::vector<int64_t> p = {}, std::vector<Scalar> sc = {})
      : kind(k),
        op(o),
        dtype(t),
        shape(std::move(s)),
        device(d),
        inputs(std::move(in)),
        params(std::move(p)),
        scalars(std::move(sc)) {}

  OpKind kind = OpKind::Scalar;
  uint8_t op = 0;  // UnaryOp / BinaryOp / ReduceOp / FftKind / RandomDist per kind
  DType dtype = DType::Float64;
  Shape shape;
  Device device;
  std::vector<NodeRef> inputs;
  // Kind-specific integers: Permute: axes. Slice: start, step per axis. Reduce: axes then
  // keepdims. Fft: k, axes (k), lengths (k), inverse. Random: none (seed, offset, a, b are
  // scalars, so the structural hash ignores them).
  std::vector<int64_t> params;
  std::vector<Scalar> scalars;  // Scalar: its value. Random: distribution arguments.
  BufferRef buffer;             // Buffer leaves only
};

struct Node : NodeSpec {
  size_t cse_hash = 0;
  uint32_t depth = 0;  // longest chain of unevaluated nodes below, for graph growth limits

  // The evaluated result, or null. Set once by the evaluator.
  BufferRef realized() const { return std::atomic_load(&realized_); }
  bool is_leaf() const { return kind == OpKind::Buffer || realized() != nullptr; }
  // The evaluated data: a Buffer leaf's own buffer, or the stored result.
  BufferRef storage() const { return kind == OpKind::Buffer ? buffer : realized(); }
  // Inputs as the planner sees them: none once evaluated.
  const std::vector<NodeRef>& args() const { return inputs; }

 private:
  friend void set_realized(const Node& n, BufferRef b);
  mutable BufferRef realized_;
};

// The node for spec: an existing equal node if one is alive, else a new one.
NodeRef make_node(NodeSpec spec);
// Stores an evaluated result and turns the node into a leaf (drops its inputs, leaves the
// hash-cons table, since its identity no longer follows from its inputs).
void set_realized(const Node& n, BufferRef b);
// A leaf over existing data.
NodeRef buffer_node(BufferRef b, DType t, Shape s);
NodeRef scalar_node(Scalar v, DType t, Device d);

// Hash of the graph's structure: ignores scalar values and buffer addresses, keeps dtypes,
// shapes, operations and which leaves are the same leaf. Equal structure => equal plan.
size_t structural_hash(const std::vector<NodeRef>& outputs);
// The hash, and the nodes that carry values (evaluated leaves, scalars, random draws) in the
// order the hash visits them: what a cached plan is rebound to.
struct Signature {
  size_t hash = 0;
  std::vector<const Node*> values;
};
Signature signature(const std::vector<NodeRef>& outputs);
// Unevaluated nodes below `outputs` (not the outputs themselves) that something besides the
// graph still references, such as an Array the program keeps: in the order found, views and
// constants left out (see held.cpp).
std::vector<NodeRef> held_nodes(const std::vector<NodeRef>& outputs);
// Number of live hash-consed nodes (for tests).
size_t live_node_count();

}  // namespace kiln::graph
