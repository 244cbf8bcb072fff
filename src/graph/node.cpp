#include "graph/node.hpp"

#include <mutex>
#include <unordered_map>

#include "graph/hash.hpp"

namespace kiln::graph {
namespace {

// Live nodes by CSE hash. Entries are weak: the table never keeps a node alive.
struct HashConsTable {
  std::mutex mu;
  std::unordered_multimap<size_t, std::weak_ptr<const Node>> map;
};
HashConsTable& table() {
  static auto* t = new HashConsTable;  // leaked on purpose: nodes may die during exit
  return *t;
}

size_t spec_hash(const NodeSpec& s) {
  size_t h = hash_mix(0, static_cast<uint64_t>(s.kind));
  h = hash_mix(h, s.op);
  h = hash_mix(h, static_cast<uint64_t>(s.dtype));
  h = hash_mix(h, static_cast<uint64_t>(s.device.kind) * 131 + s.device.index);
  for (int64_t d : s.shape) h = hash_mix(h, d);
  for (const auto& in : s.inputs) h = hash_mix(h, reinterpret_cast<uintptr_t>(in.get()));
  h = hash_attrs(h, s.attrs);
  return hash_mix(h, reinterpret_cast<uintptr_t>(s.buffer.get()));
}

bool same_spec(const NodeSpec& a, const NodeSpec& b) {
  if (a.kind != b.kind || a.op != b.op || a.dtype != b.dtype || !(a.device == b.device) ||
      a.shape != b.shape || a.inputs != b.inputs || a.buffer != b.buffer)
    return false;
  return a.attrs == b.attrs;
}

// A dying node's own entry is expired (its count reached zero); any expired entry under the
// same hash belongs to a dying node, and each dying node removes exactly one.
void erase_entry(size_t hash, const Node* n, bool dying) {
  auto [lo, hi] = table().map.equal_range(hash);
  for (auto it = lo; it != hi; ++it) {
    if (dying ? it->second.expired() : it->second.lock().get() == n) {
      table().map.erase(it);
      return;
    }
  }
}

// Removes the node's entry before the node itself is freed.
struct NodeDeleter {
  void operator()(const Node* n) const {
    {
      std::lock_guard lock(table().mu);
      if (n->cse_hash != 0) erase_entry(n->cse_hash, n, true);
    }
    delete n;  // may recursively delete inputs; the lock is not held here
  }
};

uint32_t depth_of(const NodeSpec& s) {
  uint32_t d = 0;
  for (const auto& in : s.inputs) d = std::max(d, in->is_leaf() ? 0u : in->depth);
  return d + 1;
}

}  // namespace

NodeRef make_node(NodeSpec spec) {
  size_t h = spec_hash(spec);
  if (h == 0) h = 1;  // 0 marks "not in the table"
  std::lock_guard lock(table().mu);
  auto [lo, hi] = table().map.equal_range(h);
  for (auto it = lo; it != hi; ++it)
    if (auto p = it->second.lock(); p && same_spec(*p, spec)) return p;
  auto* raw = new Node;
  static_cast<NodeSpec&>(*raw) = std::move(spec);
  raw->cse_hash = h;
  raw->depth = raw->kind == OpKind::Buffer ? 0 : depth_of(*raw);
  NodeRef node(raw, NodeDeleter{});
  table().map.emplace(h, node);
  return node;
}

void set_realized(const Node& n, BufferRef b) {
  std::vector<NodeRef> dropped;  // released after the lock, since freeing takes it
  {
    std::lock_guard lock(table().mu);
    auto& node = const_cast<Node&>(n);
    if (node.cse_hash != 0) erase_entry(node.cse_hash, &node, false);
    node.cse_hash = 0;
    std::atomic_store(&node.realized_, std::move(b));
    dropped.swap(node.inputs);
  }
}

NodeRef buffer_node(BufferRef b, DType t, Shape s) {
  NodeSpec spec;
  spec.kind = OpKind::Buffer;
  spec.dtype = t;
  spec.shape = std::move(s);
  spec.device = b->device;
  spec.buffer = std::move(b);
  return make_node(std::move(spec));
}

NodeRef scalar_node(Scalar v, DType t, Device d) {
  NodeSpec spec;
  spec.kind = OpKind::Scalar;
  spec.dtype = t;
  spec.device = d;
  spec.attrs = ScalarAttrs{v};
  return make_node(std::move(spec));
}

size_t live_node_count() {
  std::lock_guard lock(table().mu);
  size_t n = 0;
  for (auto& [h, w] : table().map) n += !w.expired();
  return n;
}

}  // namespace kiln::graph
