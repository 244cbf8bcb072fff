// The structural signature: what the plan cache is keyed by. Two graphs with the same hash
// have the same operations, dtypes, shapes and sharing, whatever their scalar values and
// buffers; `values` lists, in one fixed visiting order, the nodes that carry those values, so
// a cached plan can be bound to a new graph of the same structure. Constants are numbered by
// value (equal ones are one kernel parameter), so only the first of equal ones is listed.
//
// The same walk finds the held nodes: every reference to a node is an input of a node above it
// or a handle from outside the graph (an Array the program keeps, an expression it has not
// evaluated yet), so a node referenced more often than the graph's own edges to it is held. An
// evaluation writes those too (runtime::realize), so a loop that keeps reading a value it holds
// does not recompute that value's history every time. One walk, not two: this runs on every
// evaluation.
#include <algorithm>
#include <atomic>

#include "graph/hash.hpp"
#include "graph/node.hpp"

namespace kiln::graph {
namespace {

// Nodes worth writing when held: those that compute values (not views, which cost nothing to
// redo, nor constants), and matmuls: a matmul's step may compute the bias and relu after it
// (plan/planner.cpp) and then never writes the product, unless the planner knows it is held.
bool computes(const Node& n) {
  return n.kind == OpKind::Unary || n.kind == OpKind::Binary || n.kind == OpKind::Where ||
         n.kind == OpKind::Cast || n.kind == OpKind::User || n.kind == OpKind::Matmul;
}

struct Seen {
  size_t hash;
  const NodeRef* ref;  // the first graph edge to the node (null for an output)
  long edges;          // graph edges to it from the nodes walked
};
// The constants met (Scalar nodes' values, Binary nodes' immediates), by value: equal ones are
// one kernel parameter (plan/lower.cpp), so which constants are equal is structure (x * 2 + 2
// has one parameter, x * 2 + 3 two), and the first node of each is the value a plan binds.
// Open addressing in one array, as PtrMap.
class Constants {
 public:
  // The place in `values` of the first constant equal to n's, n's own (added) if none is.
  size_t place(const Node& n, std::vector<const Node*>& values) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    size_t h = n.value_hash;  // constant_hash(n), hashed when n was built
    for (size_t i = home(h);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.use != use_) {
        s = {h, &n, values.size(), use_};
        ++size_;
        values.push_back(&n);
        return s.place;
      }
      if (s.hash == h && same_constant(*s.node, n)) return s.place;
    }
  }
  // Empties the table in constant time (slots stamped with their use, as PtrMap's), keeping its
  // memory unless a large walk grew it.
  void clear() {
    if (slots_.size() > kFirst && size_ * 8 < slots_.size())
      *this = Constants();
    else if (++use_ == 0)
      std::fill(slots_.begin(), slots_.end(), Slot{}), use_ = 1;
    size_ = 0;
  }

 private:
  static constexpr size_t kFirst = 16;
  struct Slot {
    size_t hash = 0;
    const Node* node = nullptr;
    size_t place = 0;
    uint32_t use = 0;  // the use that filled it; stale when not the table's
  };
  size_t home(size_t h) const { return (h ^ (h >> 29)) & mask_; }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    const uint32_t use = use_;
    use_ = 1;
    for (const Slot& s : old)
      if (s.use == use) {
        size_t i = home(s.hash);
        while (slots_[i].use == use_) i = (i + 1) & mask_;
        slots_[i] = s;
        slots_[i].use = use_;
      }
  }

  std::vector<Slot> slots_ = std::vector<Slot>(kFirst);
  size_t mask_ = kFirst - 1, size_ = 0;
  uint32_t use_ = 1;
};

constexpr uint64_t kCount = 0xc0a7ed0c0a7ed017ull;  // marks the number of outputs, of held nodes

// The walk's tables, kept per thread between walks: a signature is taken on every evaluation,
// and allocating them anew each time cost more than walking a small graph.
struct Scratch {
  PtrMap<size_t> index;  // node -> its place in seen
  std::vector<Seen> seen;
  Constants constants;
};

// The hash of a node is its own part, hashed when it was built (Node::local_hash) with its
// number of inputs now, then each input's hash, then which constant it is; a leaf's is its data
// (dtype, device, shape: Node::leaf_hash, whatever computed it) and which value it is. Values
// are numbered as the walk finishes them (inputs before the node), which is what lets a node
// hash its chain when it is built (Node::chain, note_chain below): the same hash, by the same
// rule, as this walk would give.
struct Hasher {
  PtrMap<size_t>& index;
  std::vector<Seen>& seen;
  Constants& constants;
  std::vector<const Node*>& values;  // numbered in finishing order: a+a differs from a+b

  // The hash of ref's node, walked once; `edge` says ref is an input of a walked node.
  size_t of(const NodeRef& ref, bool edge) {
    const Node& n = *ref;
    // Reached through its only reference: no other path leads here, and nothing outside the
    // graph holds it, so it needs no place in the tables (a chain's nodes, in a loop).
    // Reached more than once, a node has a reference per edge, and those stay while the walk
    // lasts: inputs change only under the evaluation lock.
    if (edge && n.ref_count() == 1) return hash_node(n);
    if (const size_t* i = index.find(&n)) {
      Seen& s = seen[*i];
      if (edge && !s.ref) s.ref = &ref;
      s.edges += edge;
      return s.hash;
    }
    size_t h = hash_node(n);
    index.add(&n, seen.size());
    seen.push_back({h, edge ? &ref : nullptr, edge ? 1 : 0});
    return h;
  }

  size_t hash_node(const Node& n) {
    if (n.is_leaf()) return value(n.leaf_hash, n);
    // A Random's attributes are values, left out of its local hash.
    if (n.kind == OpKind::Random) return value(n.local_hash, n);
    size_t h = n.local_hash + n.inputs.size();
    for (const auto& in : n.inputs) h = hash_mix(h, of(in, true));
    if (n.kind == OpKind::Scalar || n.immediate())  // a constant: which one, by value
      h = hash_mix(h, constants.place(n, values));
    // A collective's runner is a value: the plan binds this node's.
    if (n.kind == OpKind::Collective) return value(h, n);
    return h;
  }

  // t with n's place among the values, n added to them.
  size_t value(size_t t, const Node& n) {
    t = hash_mix(t, values.size());
    values.push_back(&n);
    return t;
  }

  // Walked nodes other than the outputs that something besides the graph references, in the
  // order the walk finished them.
  std::vector<NodeRef> held(const std::vector<NodeRef>& outputs) {
    for (const auto& o : outputs) seen[*index.find(o.get())].ref = nullptr;  // never held
    std::vector<NodeRef> out;
    for (const Seen& s : seen)
      if (s.ref && !(*s.ref)->is_leaf() && computes(**s.ref) && s.ref->use_count() > s.edges)
        out.push_back(*s.ref);
    return out;
  }
};

// Evaluations so far that stored a result (set_realized): a node's chain is what the walk
// would find only while no node has been evaluated since it was built.
std::atomic<uint64_t> g_realized{0};

// Whether n's chain (Node::chain) is what a walk of n as the only output would find now:
// nothing evaluated since n was built (so every node below is as it was), and nothing but
// the chain's own edges referencing the nodes below n (so none is held, none reached twice).
// The check reads each node's count, the walk's least part.
bool chain_holds(const Node& n) {
  if (n.chain.count == 0 || n.chain.realized != g_realized.load(std::memory_order_acquire))
    return false;
  const Node* p = &n;
  for (uint32_t i = n.chain.length; i > 0; --i) {  // (none evaluated: the count says)
    p = p->chain.next;
    if (p->ref_count() != 1) return false;
  }
  return true;
}

}  // namespace

void note_chain(Node& n) {
  Node::Chain& c = n.chain;  // filled in place: a copy of a chain built aside stalls the store
  c.count = 0;
  if (n.inputs.size() != 1 || n.kind == OpKind::Random || n.kind == OpKind::Collective) return;
  const uint64_t now = g_realized.load(std::memory_order_acquire);
  const Node& in = *n.inputs[0];
  size_t below;
  uint8_t count;
  if (in.is_leaf()) {  // the walk's first value
    c.values[0] = &in;
    count = 1;
    c.length = 0;
    below = hash_mix(in.leaf_hash, 0);
  } else if (in.chain.count != 0 && in.chain.realized == now) {
    count = in.chain.count;
    std::copy(in.chain.values, in.chain.values + count, c.values);
    c.length = in.chain.length + 1;
    below = in.chain.hash;
  } else {
    return;
  }
  size_t h = hash_mix(n.local_hash + 1, below);  // Hasher::hash_node's rule
  if (n.kind == OpKind::Scalar || n.immediate()) {
    size_t place = 1;  // the constants follow the leaf, in the order the walk finishes them
    while (place < count &&
           !(c.values[place]->value_hash == n.value_hash && same_constant(*c.values[place], n)))
      ++place;
    if (place == count) {
      if (count == Node::Chain::kValues) return;  // too many constants to keep (count stays 0)
      c.values[count++] = &n;
    }
    h = hash_mix(h, place);
  }
  c.hash = h;
  c.realized = now;
  c.next = &in;
  c.count = count;  // last: a chain is whole once its count says so
}

void note_realized() {
  g_realized.store(g_realized.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

Signature signature(const std::vector<NodeRef>& outputs, std::vector<NodeRef>* held) {
  Signature sig;
  sig.values.reserve(8);  // one allocation for most graphs
  signature(outputs, held, sig);
  return sig;
}

void signature(const std::vector<NodeRef>& outputs, std::vector<NodeRef>* held, Signature& sig) {
  sig.values.clear();
  size_t h = hash_mix(0x6b696c6e, kCount ^ outputs.size());  // "kiln"
  // One output whose chain holds: its hash and values, kept since it was built, are the walk's.
  if (outputs.size() == 1 && chain_holds(*outputs[0])) {
    const Node::Chain& c = outputs[0]->chain;
    sig.values.assign(c.values, c.values + c.count);
    h = hash_mix(h, c.hash);
    if (held) {
      held->clear();
      h = hash_mix(h, kCount ^ 0);
    }
    sig.hash = h;
    return;
  }
  thread_local Scratch scratch;
  scratch.index.clear();
  scratch.seen.clear();
  if (scratch.seen.capacity() > 4096) scratch.seen.shrink_to_fit();  // a huge walk's list goes
  scratch.constants.clear();
  Hasher hasher{scratch.index, scratch.seen, scratch.constants, sig.values};
  for (const auto& n : outputs) h = hash_mix(h, hasher.of(n, false));
  if (held) {
    *held = hasher.held(outputs);
    for (const auto& n : *held) h = hash_mix(h, hasher.of(n, false));
    h = hash_mix(h, kCount ^ held->size());
  }
  sig.hash = h;
}

size_t structural_hash(const std::vector<NodeRef>& outputs) { return signature(outputs).hash; }

std::vector<NodeRef> held_nodes(const std::vector<NodeRef>& outputs) {
  std::vector<NodeRef> held;
  signature(outputs, &held);
  return held;
}

}  // namespace kiln::graph
