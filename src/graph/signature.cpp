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
  return n.kind == OpKind::Unary || n.kind == OpKind::Binary || n.kind == OpKind::Affine ||
         n.kind == OpKind::Where || n.kind == OpKind::Cast || n.kind == OpKind::User ||
         n.kind == OpKind::Matmul;
}

struct Seen {
  size_t hash;
  const NodeRef* ref;  // the first graph edge to the node (null for an output)
  long edges;          // graph edges to it from the nodes walked
};
// The constants met (Scalar nodes' values, Binary and Affine nodes' own), by value: equal ones are
// one kernel parameter (plan/lower.cpp), so which constants are equal is structure (x * 2 + 2
// has one parameter, x * 2 + 3 two), and the first node of each is the value a plan binds.
// Open addressing in one array, as PtrMap.
class Constants {
 public:
  // The place in `values` of the first constant equal to c, c's own (added) if none is.
  size_t place(Value c, std::vector<Value>& values) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    size_t h = kept_constant_hash(*c.node, c.which);
    for (size_t i = home(h);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.use != use_) {
        s = {h, c, values.size(), use_};
        ++size_;
        values.push_back(c);
        return s.place;
      }
      if (s.hash == h && same_constant(*s.constant.node, s.constant.which, *c.node, c.which))
        return s.place;
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
    Value constant;
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
// are numbered as the walk finishes them (inputs before the node), which is what lets a chain
// be hashed in one pass up from its leaf (chain_signature below): the same hash, by the same
// rule, as this walk would give.
struct Hasher {
  PtrMap<size_t>& index;
  std::vector<Seen>& seen;
  Constants& constants;
  std::vector<Value>& values;  // numbered in finishing order: a+a differs from a+b

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
    for (int c = 0, count = n.constant_count(); c < count; ++c)  // which constants, by value
      h = hash_mix(h, constants.place({&n, c}, values));
    // A collective's runner is a value: the plan binds this node's.
    if (n.kind == OpKind::Collective) return value(h, n);
    return h;
  }

  // t with n's place among the values, n added to them.
  size_t value(size_t t, const Node& n) {
    t = hash_mix(t, values.size());
    values.push_back({&n});
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

// The signature of a chain (a loop's steps, x * 2 + 1): one output above nodes of one input
// each, every one below it referenced only by the node above (so none is held, none reached
// twice), down to a leaf. The walk's hash and values, by its rule, without its tables: one pass
// down that collects the nodes, one pass up that hashes them and numbers the constants by a
// linear search among the few distinct ones. False, with `sig` left to the walk, for any other
// graph, and for a chain of more than kChainConstants distinct constants (a search among many
// wants the walk's table).
constexpr size_t kChainConstants = 8;

bool chain_signature(const Node& top, Signature& sig, size_t& h) {
  thread_local std::vector<const Node*> path;
  path.clear();
  // Down: Node::chain_input and the count, the result flag and the depth (0: a Buffer leaf),
  // all in one cache line of each node.
  const Node* p = &top;
  for (; p->depth != 0 && !p->has_result(); p = p->chain_input) {
    if (!p->chain_input || (p != &top && p->ref_count() != 1)) return false;
    path.push_back(p);
  }
  if (path.empty()) return false;  // the output is itself a leaf
  sig.values.push_back({p});       // the walk's first value
  // The distinct constants met so far (sig.values[1 + k]): their hashes, values and dtypes at
  // hand, so that each node's constants are compared without reading those nodes again.
  struct Known {
    size_t hash;
    const Scalar* value;
    DType dtype;
  } known[kChainConstants];
  size_t distinct = 0;
  size_t below = hash_mix(p->leaf_hash, 0);
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    const Node& n = **it;
    below = hash_mix(n.local_hash + 1, below);  // Hasher::hash_node's rule
    // The node's constants (constant_hash is never 0; a node without a first has no second).
    for (int which = 0; which < 2; ++which) {
      const size_t hash = kept_constant_hash(n, which);
      if (hash == 0) break;
      const Scalar& value = n.scalar_value(which);
      const DType dtype = n.scalar_dtype(which);
      size_t k = 0;  // same_constant's rule: same dtype, same bits
      while (k < distinct &&
             !(known[k].hash == hash && known[k].dtype == dtype && known[k].value->same_as(value)))
        ++k;
      if (k == distinct) {
        if (distinct == kChainConstants) return false;
        known[distinct++] = {hash, &value, dtype};
        sig.values.push_back({&n, which});
      }
      // The constants follow the leaf, in the order the walk finishes them.
      below = hash_mix(below, 1 + k);
    }
  }
  h = hash_mix(h, below);
  return true;
}

// The walk itself, for any graph: sig.hash and sig.values, held found when asked for.
void walk(const std::vector<NodeRef>& outputs, std::vector<NodeRef>* held, Signature& sig,
          size_t h) {
  sig.values.clear();
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

size_t first_hash(const std::vector<NodeRef>& outputs) {
  return hash_mix(0x6b696c6e, kCount ^ outputs.size());  // "kiln"
}

}  // namespace

Signature signature(const std::vector<NodeRef>& outputs, std::vector<NodeRef>* held) {
  Signature sig;
  sig.values.reserve(8);  // one allocation for most graphs
  signature(outputs, held, sig);
  return sig;
}

void signature(const std::vector<NodeRef>& outputs, std::vector<NodeRef>* held, Signature& sig) {
  sig.values.clear();
  size_t h = first_hash(outputs);
  // One output above a chain: its hash and values without the walk's tables (h changes only
  // when it is one).
  if (outputs.size() == 1 && chain_signature(*outputs[0], sig, h)) {
    if (held) {
      held->clear();
      h = hash_mix(h, kCount ^ 0);
    }
    sig.hash = h;
    return;
  }
  walk(outputs, held, sig, h);
}

Signature walked_signature(const std::vector<NodeRef>& outputs, std::vector<NodeRef>* held) {
  Signature sig;
  walk(outputs, held, sig, first_hash(outputs));
  return sig;
}

size_t structural_hash(const std::vector<NodeRef>& outputs) { return signature(outputs).hash; }

std::vector<NodeRef> held_nodes(const std::vector<NodeRef>& outputs) {
  std::vector<NodeRef> held;
  signature(outputs, &held);
  return held;
}

}  // namespace kiln::graph
