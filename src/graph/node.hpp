// Nodes of the lazy DAG. A node is immutable once built, except that evaluation stores its
// result buffer and then drops its inputs (it becomes a leaf), so evaluated history is freed.
// make_node hash-conses: building an equal expression twice gives the same node.
#pragma once
#include <atomic>
#include <cassert>
#include <memory>
#include <vector>

#include "graph/attrs.hpp"
#include "graph/buffer.hpp"
#include "graph/ops.hpp"
#include "kiln/device.hpp"
#include "kiln/dtype.hpp"
#include "kiln/node_ref.hpp"
#include "kiln/scalar.hpp"
#include "kiln/shape.hpp"

namespace kiln::graph {

struct Node;

// What a node is, without its identity: the arguments of make_node.
struct NodeSpec {
  NodeSpec() = default;
  NodeSpec(OpKind k, uint8_t o, DType t, Shape s, Device d, std::vector<NodeRef> in = {},
           Attrs a = {})
      : kind(k),
        op(o),
        dtype(t),
        shape(std::move(s)),
        device(d),
        inputs(std::move(in)),
        attrs(std::move(a)) {}

  OpKind kind = OpKind::Scalar;
  uint8_t op = 0;  // UnaryOp / BinaryOp / ReduceOp / FftKind / RandomDist / ScatterOp per kind
  DType dtype = DType::Float64;
  Shape shape;
  Device device;
  std::vector<NodeRef> inputs;
  Attrs attrs;       // the kind's attributes (graph/attrs.hpp), monostate for most
  BufferRef buffer;  // Buffer leaves only

  // The attributes of this node's kind, e.g. attr<ReduceAttrs>() of a Reduce node;
  // std::bad_variant_access for another kind's.
  template <class A>
  const A& attr() const {
    return std::get<A>(attrs);
  }
  // A Binary node's constant operand (graph/attrs.hpp), or null when both are nodes.
  const ImmediateAttrs* immediate() const { return std::get_if<ImmediateAttrs>(&attrs); }
  // The constants a node carries, numbered from 0: a Scalar node's value, a Binary node's
  // immediate, an Affine node's two (its steps', in order). Equal constants of a dtype are one
  // kernel parameter and one value of a signature (same_constant, below).
  int constant_count() const {
    return kind == OpKind::Affine                                              ? 2
           : kind == OpKind::Scalar || (kind == OpKind::Binary && immediate()) ? 1
                                                                               : 0;
  }
  const Scalar& scalar_value(int which = 0) const {
    if (const auto* a = std::get_if<AffineAttrs>(&attrs)) return a->steps[which].constant.value;
    const auto* im = immediate();
    return im ? im->value : attr<ScalarAttrs>().value;
  }
  DType scalar_dtype(int which = 0) const {
    if (const auto* a = std::get_if<AffineAttrs>(&attrs)) return a->steps[which].constant.dtype;
    const auto* im = immediate();
    return im ? im->dtype : dtype;
  }
  // `op` as its kind's enum (asserting the kind).
  UnaryOp unary_op() const { return op_as<UnaryOp>(OpKind::Unary); }
  BinaryOp binary_op() const { return op_as<BinaryOp>(OpKind::Binary); }
  ReduceOp reduce_op() const { return op_as<ReduceOp>(OpKind::Reduce); }
  FftKind fft_kind() const { return op_as<FftKind>(OpKind::Fft); }
  RandomDist random_dist() const { return op_as<RandomDist>(OpKind::Random); }
  ScatterOp scatter_op() const { return op_as<ScatterOp>(OpKind::Scatter); }
  ScanOp scan_op() const { return op_as<ScanOp>(OpKind::Scan); }
  SortOp sort_op() const { return op_as<SortOp>(OpKind::Sort); }

 private:
  template <class E>
  E op_as([[maybe_unused]] OpKind k) const {
    assert(kind == k);
    return static_cast<E>(op);
  }
};

// One block per node, its count inside (kiln/node_ref.hpp). The node leaves the hash-cons
// table (or its input's Node::kept_user) when its count reaches zero (release), before its
// inputs are released; its block then goes to a per-thread pool, still constructed, for the
// next node built (graph/draft.hpp).
struct Node : NodeSpec {
  explicit Node(NodeSpec&& s) : NodeSpec(std::move(s)) {}
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  size_t cse_hash = 0;
  // The node's own part of the structural signature, hashed once, here, since a signature is
  // taken on every evaluation and walks every node: its operation, dtype, device, shape and the
  // attributes that are structure (a constant's side and dtype, not its value; nothing of a
  // random draw). Its inputs are left out: the signature mixes in theirs as they are when it
  // walks (an input evaluated since this node was built is a leaf by then).
  size_t local_hash = 0;
  // constant_hash of the node's constant 0 (a Scalar node's, a Binary node's immediate, an
  // Affine node's first) and 1 (an Affine node's second), never 0; 0 where the node has no
  // such constant: the signature numbers constants by value.
  size_t value_hash = 0;
  size_t second_value_hash = 0;
  // The hash of the node's dtype, device and shape (data_hash): its token in the signature
  // once it is a leaf, whatever computed it, hashed here for the same reason.
  size_t leaf_hash = 0;
  // Operations on the longest chain of unevaluated nodes ending here (an Affine node's two
  // counted), for graph growth limits; 0 for a Buffer leaf.
  uint32_t depth = 0;
  // inputs[0] of a node with one input, null for others and for a Random or a Collective (whose
  // input the signature does not walk; graph/signature.cpp): the next step down a chain, kept
  // beside the count and the result flag, so that the signature's walk of a loop's steps reads
  // one cache line per node and not three (node, input list, node).
  const Node* chain_input = nullptr;

  // The evaluated result, or null. Written once, before the flag is raised (set_realized), and
  // never again: a reader that sees the flag reads it without a lock (std::atomic_load of a
  // shared_ptr takes one).
  BufferRef realized() const {
    return has_result_.load(std::memory_order_acquire) ? realized_ : nullptr;
  }
  // Asked on every node built (depth, devices, forcing): a flag.
  bool is_leaf() const {
    return kind == OpKind::Buffer || has_result_.load(std::memory_order_acquire);
  }
  // The evaluated data: a Buffer leaf's own buffer, or the stored result.
  BufferRef storage() const { return kind == OpKind::Buffer ? buffer : realized(); }
  // Whether the result is stored (is_leaf without reading the kind; a Buffer has depth 0).
  bool has_result() const { return has_result_.load(std::memory_order_acquire); }
  // References to the node (its use_count): read by the signature's walk on every node.
  long ref_count() const { return refs_.load(std::memory_order_relaxed); }
  // Inputs as the planner sees them: none once evaluated.
  const std::vector<NodeRef>& args() const { return inputs; }

 private:
  friend void set_realized(const Node& n, BufferRef b);
  friend void retain(const Node* n) noexcept;
  friend void release(const Node* n) noexcept;
  friend long use_count(const Node* n) noexcept;
  friend NodeRef publish(Node* n, const Node* same_data);
  friend void retire(Node* const* nodes, size_t count) noexcept;
  friend bool drop_under_lock(const Node& n) noexcept;
  friend bool revive(const Node& n) noexcept;
  friend NodeRef fuse_binary_step(NodeRef& n, BinaryOp op, const Scalar& v, bool left);
  mutable std::atomic<long> refs_{1};  // NodeRefs to it: the one make_node returns, to begin
  mutable BufferRef realized_;
  mutable std::atomic<bool> has_result_{false};

 public:
  // One node whose only input is this one, kept here instead of in the hash-cons table (null:
  // none): where a lookup of a node of one input looks besides the table, so a loop's
  // temporaries (each step's node, the only user of the step before) never enter the table and
  // never leave it. Read and written under the table's lock only (graph/node.cpp). Last, so
  // that the fields the signature's walk reads stay together above.
  mutable const Node* kept_user = nullptr;
  // Whether a node whose only input is this one has ever been entered in the table (when
  // kept_user was taken). Until then every such node alive is kept_user, so a lookup for one
  // that finds none kept needs no table, nor a key (graph/node.cpp). Under the table's lock.
  mutable bool table_users = false;
};

// The node for spec: an existing equal node if one is alive, else a new one. The spec is
// taken apart either way (moved into the node, or its lists recycled): an rvalue, so that
// it is moved once, not also into a parameter.
NodeRef make_node(NodeSpec&& spec);
// Stores an evaluated result and turns the node into a leaf (drops its inputs, leaves the
// hash-cons table, since its identity no longer follows from its inputs). Once: a node listed
// twice in one evaluation keeps its first result.
void set_realized(const Node& n, BufferRef b);
// The node below a chain of reshapes of n (n when it is no reshape): once that node is in
// memory (a leaf, or a result written densely in C order), the reshapes are views of its bytes,
// and a library step can read it there (a compress step reading x's rows, say).
inline const Node* below_reshapes(const Node* n) {
  while (!n->is_leaf() && n->kind == OpKind::Reshape) n = n->inputs[0].get();
  return n;
}
// A leaf over existing data.
NodeRef buffer_node(BufferRef b, DType t, Shape s);
NodeRef scalar_node(Scalar v, DType t, Device d);
// A value a plan binds: a node (an evaluated leaf, a random draw, a collective's runner, a
// constant) and, for a constant, which of the node's (NodeSpec::scalar_value).
struct Value {
  const Node* node = nullptr;
  int which = 0;
  bool operator==(const Value&) const = default;
};
// Two constants (scalar_value) are equal: same dtype, same bits. constant_hash agrees with it.
inline bool same_constant(const NodeSpec& a, int a_which, const NodeSpec& b, int b_which) {
  return a.scalar_dtype(a_which) == b.scalar_dtype(b_which) &&
         a.scalar_value(a_which).same_as(b.scalar_value(b_which));
}
// The hash of a constant of dtype t (never 0); of constant `which` of n.
size_t constant_hash(const Scalar& v, DType t);
inline size_t constant_hash(const NodeSpec& n, int which = 0) {
  return constant_hash(n.scalar_value(which), n.scalar_dtype(which));
}
// Node::value_hash or second_value_hash: constant `which`'s hash, kept since the node was built.
inline size_t kept_constant_hash(const Node& n, int which) {
  return which == 0 ? n.value_hash : n.second_value_hash;
}
// n followed by `op` with the constant v (of n's dtype; the first operand when `left`) as one
// node, when n is a Binary node with a constant, unevaluated, held by the caller alone (a
// temporary: x * 2 in x * 2 + 1), both operations among + - * / and both constants of n's
// dtype: n itself turned into an Affine node (so no node is built), or an equal Affine node
// already in the graph. Null otherwise, n untouched: the caller builds the Binary node.
NodeRef fuse_binary_step(NodeRef& n, BinaryOp op, const Scalar& v, bool left);
inline NodeRef fuse_constant_step(NodeRef& n, BinaryOp op, const Scalar& v, bool left) {
  // The usual refusal (n is no Binary node: a loop's previous step, an Affine node) without a
  // call of the full check, whose frame is large.
  if (n->kind != OpKind::Binary) return nullptr;
  return fuse_binary_step(n, op, v, left);
}
// Whether n is maximum(x, +0) or maximum(+0, x) with the constant held in the node (a relu):
// a matmul's epilogue computes it (plan/planner.cpp), so it is structure, not only a value.
bool is_relu(const NodeSpec& n);
// The hash of a node's dtype, device and shape: all a leaf's structure, and where its
// Node::local_hash starts.
size_t data_hash(const NodeSpec& n);
// What make_node stores as Node::local_hash, computed from the fields (for tests).
size_t local_structure_hash(const NodeSpec& n);
// What make_node stores as Node::leaf_hash (for tests).
size_t leaf_data_hash(const NodeSpec& n);

// Hash of the graph's structure: ignores scalar values and buffer addresses, keeps dtypes,
// shapes, operations and which leaves are the same leaf. Equal structure => equal plan.
size_t structural_hash(const std::vector<NodeRef>& outputs);
// The hash, and the values (evaluated leaves, constants, random draws) in the order the hash
// visits them: what a cached plan is rebound to. Of equal constants (one kernel parameter) only
// the first is listed.
struct Signature {
  size_t hash = 0;
  std::vector<Value> values;
};
// With `held`, the same walk also finds the held nodes (below) and hashes them as outputs
// after `outputs`, then their number: the signature of evaluating both.
Signature signature(const std::vector<NodeRef>& outputs, std::vector<NodeRef>* held = nullptr);
// The same into `sig`, whose list keeps its memory: for the evaluation path, which reuses one
// Signature rather than allocating a list per evaluation.
void signature(const std::vector<NodeRef>& outputs, std::vector<NodeRef>* held, Signature& sig);
// The same by the general walk alone, never a chain's shortcut (for tests: both must agree).
Signature walked_signature(const std::vector<NodeRef>& outputs, std::vector<NodeRef>* held);
// Unevaluated nodes below `outputs` (not the outputs themselves) that something besides the
// graph still references, such as an Array the program keeps: in the order the walk finishes
// them, views and constants left out (see signature.cpp).
std::vector<NodeRef> held_nodes(const std::vector<NodeRef>& outputs);
// Number of live hash-consed nodes (for tests).
size_t live_node_count();

}  // namespace kiln::graph
