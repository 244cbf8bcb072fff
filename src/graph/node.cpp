#include "graph/node.hpp"

#include <algorithm>
#include <mutex>

#include "graph/hash.hpp"

namespace kiln::graph {
namespace {

// Live nodes by CSE hash: open addressing with linear probing over plain pointers, so adding a
// node allocates nothing beyond the node (the table grows by doubling). The table never keeps
// a node alive: a dying node removes itself (~Node), and a lookup takes a reference only
// through weak_from_this, which fails once a node's count has reached zero.
class HashConsTable {
 public:
  std::mutex mu;

  // A live node under hash h that `same` accepts, or null. Call with mu held.
  template <class Same>
  NodeRef find(size_t h, const Same& same) const {
    for (size_t i = home(h);; i = next(i)) {
      const Slot& s = slots_[i];
      if (!s.node) return nullptr;
      if (s.hash == h && same(*s.node))
        if (auto p = s.node->weak_from_this().lock()) return p;
    }
  }
  void insert(const Node* n) {
    if (2 * (used_ + 1) > slots_.size()) grow();
    size_t i = home(n->cse_hash);
    while (slots_[i].node) i = next(i);
    slots_[i] = {n->cse_hash, n};
    ++used_;
  }
  // Removes n's own entry (backward-shift deletion keeps every probe chain unbroken).
  void erase(const Node* n) {
    size_t i = home(n->cse_hash);
    while (slots_[i].node != n) i = next(i);
    for (size_t j = next(i);; j = next(j)) {
      if (!slots_[j].node) break;
      size_t k = home(slots_[j].hash);  // j's entry may move to i if i lies on its probe path
      bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
      if (stays) continue;
      slots_[i] = slots_[j];
      i = j;
    }
    slots_[i] = {};
    --used_;
  }
  size_t live() const {
    size_t n = 0;
    for (const Slot& s : slots_) n += s.node && !s.node->weak_from_this().expired();
    return n;
  }

 private:
  struct Slot {
    size_t hash = 0;
    const Node* node = nullptr;
  };
  // Fibonacci hashing: the top bits of h * 2^64/phi, as h's own low bits may be poorly mixed.
  size_t home(size_t h) const { return (h * 0x9E3779B97F4A7C15ull) >> shift_; }
  size_t next(size_t i) const { return (i + 1) & (slots_.size() - 1); }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    --shift_;
    used_ = 0;
    for (const Slot& s : old)
      if (s.node) insert(s.node);
  }

  std::vector<Slot> slots_ = std::vector<Slot>(64);
  int shift_ = 64 - 6;
  size_t used_ = 0;
};
HashConsTable& table() {
  static auto* t = new HashConsTable;  // leaked on purpose: nodes may die during exit
  return *t;
}

const Node* ptr(const NodeRef& n) { return n.get(); }
const Node* ptr(const Node* n) { return n; }

// The hash of a NodeSpec and of the equal NodeKey are the same: one function for both.
template <class S, class In>
size_t hash_of(const S& s, const In& inputs, const void* buffer) {
  size_t h = hash_mix(0, static_cast<uint64_t>(s.kind));
  h = hash_mix(h, s.op);
  h = hash_mix(h, static_cast<uint64_t>(s.dtype));
  h = hash_mix(h, static_cast<uint64_t>(s.device.kind) * 131 + s.device.index);
  for (int64_t d : s.shape) h = hash_mix(h, d);
  for (const auto& in : inputs) h = hash_mix(h, reinterpret_cast<uintptr_t>(ptr(in)));
  for (int64_t p : s.params) h = hash_mix(h, p);
  for (const auto& v : s.scalars) h = hash_mix(h, v.hash());
  h = hash_mix(h, reinterpret_cast<uintptr_t>(buffer));
  return h == 0 ? 1 : h;  // 0 marks "not in the table"
}

template <class S, class In>
bool same_as(const Node& a, const S& b, const In& inputs, const void* buffer) {
  auto same_input = [](const NodeRef& x, const auto& y) { return x.get() == ptr(y); };
  auto same_scalar = [](const Scalar& x, const Scalar& y) { return x.same_as(y); };
  return a.kind == b.kind && a.op == b.op && a.dtype == b.dtype && a.device == b.device &&
         a.buffer.get() == buffer && std::ranges::equal(a.shape, b.shape) &&
         std::ranges::equal(a.inputs, inputs, same_input) &&
         std::ranges::equal(a.params, b.params) &&
         std::ranges::equal(a.scalars, b.scalars, same_scalar);
}

uint32_t depth_of(const NodeSpec& s) {
  uint32_t d = 0;
  for (const auto& in : s.inputs) d = std::max(d, in->is_leaf() ? 0u : in->depth);
  return d + 1;
}

// A new node for spec under hash h. Call with the table's lock held.
NodeRef add_node(NodeSpec spec, size_t h) {
  auto node = std::make_shared<Node>(std::move(spec));  // one allocation: node and counts
  node->cse_hash = h;
  node->depth = node->kind == OpKind::Buffer ? 0 : depth_of(*node);
  table().insert(node.get());
  return node;
}

}  // namespace

// The node's entry leaves the table before its members (inputs) are freed, so the lock is not
// held while they die (freeing them takes it).
Node::~Node() {
  if (cse_hash == 0) return;
  std::lock_guard lock(table().mu);
  table().erase(this);
}

NodeRef make_node(NodeSpec spec) {
  size_t h = hash_of(spec, spec.inputs, spec.buffer.get());
  std::lock_guard lock(table().mu);
  auto same = [&](const Node& n) { return same_as(n, spec, spec.inputs, spec.buffer.get()); };
  if (auto p = table().find(h, same)) return p;
  return add_node(std::move(spec), h);
}

NodeRef make_node(const NodeKey& key) {
  size_t h = hash_of(key, key.inputs, nullptr);
  std::lock_guard lock(table().mu);
  auto same = [&](const Node& n) { return same_as(n, key, key.inputs, nullptr); };
  if (auto p = table().find(h, same)) return p;
  std::vector<NodeRef> inputs;
  inputs.reserve(key.inputs.size());
  for (const Node* in : key.inputs) inputs.push_back(in->shared_from_this());
  return add_node({key.kind, key.op, key.dtype, Shape(key.shape.begin(), key.shape.end()),
                   key.device, std::move(inputs),
                   std::vector<int64_t>(key.params.begin(), key.params.end()),
                   std::vector<Scalar>(key.scalars.begin(), key.scalars.end())},
                  h);
}

void set_realized(const Node& n, BufferRef b) {
  std::vector<NodeRef> dropped;  // released after the lock, since freeing takes it
  {
    std::lock_guard lock(table().mu);
    auto& node = const_cast<Node&>(n);
    if (node.cse_hash != 0) table().erase(&node);
    node.cse_hash = 0;
    std::atomic_store(&node.realized_, std::move(b));
    node.leaf_.store(true, std::memory_order_release);
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
  return make_node(NodeKey{OpKind::Scalar, 0, t, {}, d, {}, {}, {&v, 1}});
}

size_t live_node_count() {
  std::lock_guard lock(table().mu);
  return table().live();
}

}  // namespace kiln::graph
