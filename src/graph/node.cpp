#include "graph/node.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <utility>

#include "common/spin_lock.hpp"
#include "graph/draft.hpp"
#include "graph/hash.hpp"

namespace kiln::graph {
namespace {

// Live nodes by CSE hash, in one open-addressed array of (hash, node) slots: a lookup or an
// insertion allocates nothing. Entries are raw pointers and never keep a node alive; a node
// removes its own entry in its destructor, and a lookup takes a reference only while the
// node's count is above zero (make_node), so a dying node is never revived.
// Erasing shifts the entries after it back (linear probing without tombstones): programs
// build and drop nodes all the time, and a lookup that misses, the usual case, would
// otherwise probe over the tombstones they leave until the next rehash.
// The table's lock is a SpinLock (common/spin_lock.hpp): held for a few dozen instructions
// per node built or freed.
class HashConsTable {
 public:
  SpinLock mu;

  // Calls f(node) for each entry under hash h until f returns true.
  template <class F>
  void for_each(size_t h, F&& f) const {
    for (size_t i = home(h); slots_[i].node; i = (i + 1) & mask_)
      if (slots_[i].hash == h && f(*slots_[i].node)) return;
  }
  void insert(size_t h, const Node* n) {
    if (2 * (live_ + 1) > slots_.size()) grow();
    size_t i = home(h);
    while (slots_[i].node) i = (i + 1) & mask_;
    slots_[i] = {h, n};
    ++live_;
  }
  void erase(size_t h, const Node* n) {
    size_t i = home(h);
    while (slots_[i].node != n) {
      if (!slots_[i].node) return;
      i = (i + 1) & mask_;
    }
    --live_;
    // Moves back each later entry of the run whose home is not in (i, j], so that every
    // entry stays reachable from its home without passing an empty slot.
    for (size_t j = (i + 1) & mask_; slots_[j].node; j = (j + 1) & mask_) {
      size_t k = home(slots_[j].hash);
      if (((j - k) & mask_) >= ((j - i) & mask_)) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = {};
  }
  // Nodes kept by their input (Node::kept_user) instead of the table: counted as live too.
  void count_kept(long delta) { kept_ += delta; }
  size_t live() const { return live_ + kept_; }

 private:
  struct Slot {
    size_t hash = 0;
    const Node* node = nullptr;  // null: empty
  };
  size_t home(size_t h) const { return (h ^ (h >> 31)) & mask_; }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    live_ = 0;
    for (const Slot& s : old)
      if (s.node) insert(s.hash, s.node);
  }

  std::vector<Slot> slots_ = std::vector<Slot>(1024);
  size_t mask_ = 1023, live_ = 0, kept_ = 0;
};
// Made on first use, even by a node built during static initialisation, and leaked on purpose:
// nodes may die during exit. Its address is kept in an atomic besides, read on every node
// built and freed without the function-local static's initialisation check.
std::atomic<HashConsTable*> g_table{nullptr};
[[gnu::noinline]] HashConsTable& first_table() {
  static auto* t = new HashConsTable;
  g_table.store(t, std::memory_order_release);
  return *t;
}
HashConsTable& table() {
  if (HashConsTable* t = g_table.load(std::memory_order_acquire)) [[likely]]
    return *t;
  return first_table();
}

// A spec's hashes, one pass over its fields: its structure (Node::local_hash), its constants'
// (Node::value_hash, second_value_hash) and its data's (Node::leaf_hash). The hash-cons key,
// which adds the values and the inputs' identities, is cse_key's, made only where a lookup
// needs it.
struct SpecHashes {
  size_t local, value, second_value, leaf;
};
// Inlined into prepare (below), which then keeps the hashes in registers (a returned struct
// was stored and reloaded, a stall on every node built).
// `same_data`, when not null, is a node of s's shape (a builder copied it): of s's dtype and
// device too, its data hash is s's, taken instead of hashing the shape again. `first_constant`,
// when not 0, is constant_hash of s's constant 0, known already (fuse_constant_step's).
[[gnu::always_inline]] inline SpecHashes spec_hashes(const NodeSpec& s,
                                                     const Node* same_data = nullptr,
                                                     size_t first_constant = 0) {
  const size_t data = same_data && same_data->dtype == s.dtype && same_data->device == s.device
                          ? same_data->leaf_hash
                          : data_hash(s);
  // The node's own structure in one word of 16-bit fields, mixed once: its kind and op, then a
  // constant's side and dtype (structure; its value is not), or an Affine node's two ops and
  // its two constants' sides and dtypes.
  uint64_t word = static_cast<uint64_t>(s.kind) << 8 | s.op;
  auto side = [](const ImmediateAttrs& im) __attribute__((always_inline)) {
    return static_cast<uint64_t>(im.left) << 8 | static_cast<uint64_t>(im.dtype);
  };
  size_t value = 0, second_value = 0;
  bool structure_attrs = false;  // attributes hashed whole, as structure
  if (s.kind == OpKind::Scalar) {
    value = constant_hash(s.attr<ScalarAttrs>().value, s.dtype);
  } else if (const ImmediateAttrs* im = s.immediate()) {
    word |= side(*im) << 16;
    value = constant_hash(im->value, im->dtype);
    // A plan that folds a relu into a matmul is no plan for maximum(x, 0.5).
    if (s.op == static_cast<uint8_t>(BinaryOp::Maximum) && is_relu(s)) word |= uint64_t{1} << 32;
  } else if (s.kind == OpKind::Affine) {
    const auto& [first, second] = s.attr<AffineAttrs>().steps;
    word |= (static_cast<uint64_t>(first.op) << 8 | static_cast<uint64_t>(second.op)) << 16 |
            side(first.constant) << 32 | side(second.constant) << 48;
    value =
        first_constant ? first_constant : constant_hash(first.constant.value, first.constant.dtype);
    second_value = constant_hash(second.constant.value, second.constant.dtype);
  } else if (s.kind != OpKind::Random) {  // (a draw's attributes are values: cse_key's)
    structure_attrs = true;
  }
  size_t h = hash_mix(data, word);
  if (structure_attrs) h = hash_attrs(h, s.attrs);
  // A leaf's token is its data hash itself: a computing node's (local) differs by its kind.
  return {h, value, second_value, data};
}

// n's hash-cons key (never 0, which marks a node not in the table): its structure and
// constants, as prepare stored them, then what else makes two nodes the same node: a random
// draw's seed, offset and bounds, the inputs' identities, a leaf's buffer.
size_t cse_key(const Node& n) {
  size_t cse = hash_mix(n.local_hash, n.value_hash);
  if (n.second_value_hash) cse = hash_mix(cse, n.second_value_hash);
  if (n.kind == OpKind::Random) cse = hash_mix(cse, hash_attrs(0, n.attrs));
  for (const auto& in : n.inputs) cse = hash_mix(cse, reinterpret_cast<uintptr_t>(in.get()));
  if (n.buffer) cse = hash_mix(cse, reinterpret_cast<uintptr_t>(n.buffer.get()));
  return cse ? cse : 1;
}

bool same_spec(const NodeSpec& a, const NodeSpec& b) {
  if (a.kind != b.kind || a.op != b.op || a.dtype != b.dtype || !(a.device == b.device) ||
      a.shape != b.shape || a.inputs != b.inputs || a.buffer != b.buffer)
    return false;
  return a.attrs == b.attrs;
}

// Per-thread pool of retired nodes, for what every node built allocates: a program builds and
// drops nodes at a steady rate, so most come back to be reused without a trip through malloc,
// whose own per-thread cache keeps only a few blocks of a size (a dropped graph frees
// hundreds at once). A retired node stays constructed, so its shape and input list keep their
// memory: a builder that fills a pooled node (Draft) allocates nothing. A node freed on
// another thread joins that thread's pool. The pool keeps at most kKeep nodes; the rest are
// deleted.
class Pool {
 public:
  // This thread's pool, or null once it is destroyed (nodes freed later, by static
  // destructors at exit, are deleted).
  static Pool* of_thread() {
    if (gone()) return nullptr;
    thread_local Pool pool;
    return &pool;
  }
  Node* take() {
    if (nodes_.empty()) return nullptr;
    Node* n = nodes_.back();
    nodes_.pop_back();
    return n;
  }
  // False when the pool is full: the caller deletes n.
  bool put(Node* n) {
    if (nodes_.size() >= kKeep) return false;
    nodes_.push_back(n);
    return true;
  }
  ~Pool() {
    gone() = true;
    for (Node* n : nodes_) delete n;
  }

 private:
  static constexpr size_t kKeep = 4096;
  static bool& gone() {
    thread_local bool g = false;
    return g;
  }
  std::vector<Node*> nodes_;
};

// A retired node keeps its shape and input list when they are this small, so that one pool
// serves every rank.
constexpr size_t kRoomy = 8;

// A node to build: a pooled one (count 1, no result, empty lists and attributes), or new.
Node* fresh_node() {
  if (Pool* p = Pool::of_thread())
    if (Node* n = p->take()) return n;
  Node* n = new Node(NodeSpec{});
  n->shape.reserve(4);
  n->inputs.reserve(3);  // room for where's three
  return n;
}

uint32_t depth_of(const NodeSpec& s) {
  uint32_t d = 0;
  for (const auto& in : s.inputs) d = std::max(d, in->is_leaf() ? 0u : in->depth);
  return d + (s.kind == OpKind::Affine ? 2 : 1);
}

}  // namespace

// Empties nodes that left the graph (or were never published) and pools them, the pool looked
// up once for the batch (a dropped chain retires hundreds at once: release, below). Outside the
// table's lock: releasing what they held may free other nodes, or buffers (other locks).
void retire(Node* const* nodes, size_t count) noexcept {
  Pool* p = Pool::of_thread();
  for (size_t i = 0; i < count; ++i) {
    Node* n = nodes[i];
    n->inputs.clear();  // references past a release batch: may free nodes
    if (n->attrs.index() != 0) n->attrs.emplace<std::monostate>();
    n->buffer.reset();
    n->realized_.reset();
    n->has_result_.store(false, std::memory_order_relaxed);
    n->refs_.store(1, std::memory_order_relaxed);
    n->cse_hash = 0;
    n->chain_input = nullptr;
    n->kept_user = nullptr;
    n->table_users = false;
    n->shape.clear();
    if (!(p && n->shape.capacity() <= kRoomy && n->inputs.capacity() <= kRoomy && p->put(n)))
      delete n;
  }
}

void retire(Node* n) noexcept { retire(&n, 1); }

// Drops a reference the caller holds, under the table's lock; true when it was the last. A
// count of 1 is the caller's own reference, and nothing can add one: another would have to be
// copied from a reference (there is none) or taken from the table (whose lock is held). So
// it drops without an atomic read-modify-write (a chain dies a node at a time through here).
bool drop_under_lock(const Node& n) noexcept {
  if (n.refs_.load(std::memory_order_acquire) == 1) {
    n.refs_.store(0, std::memory_order_relaxed);
    return true;
  }
  return n.refs_.fetch_sub(1, std::memory_order_acq_rel) == 1;
}

void retain(const Node* n) noexcept { n->refs_.fetch_add(1, std::memory_order_relaxed); }

// Under the table's lock, a reference to a node found in the graph: taken unless the count has
// reached zero and the node is on its way out (its release waits for this lock to take it out),
// and then not reused.
bool revive(const Node& n) noexcept {
  long c = n.refs_.load(std::memory_order_relaxed);
  while (c != 0)
    if (n.refs_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel,
                                      std::memory_order_relaxed))
      return true;
  return false;
}

namespace {

// Where a node of one input may be kept (Node::kept_user): that input; null for other nodes.
const Node* sole_input(const Node& n) { return n.inputs.size() == 1 ? n.inputs[0].get() : nullptr; }

// Under the table's lock: enters n (prepared) into the graph, kept by its input when that keeps
// none yet, else in the table under the key h. Every live unevaluated node is in one of the two
// places, so a lookup (find_locked) that looks in both finds it.
[[gnu::always_inline]] inline void enter_locked(HashConsTable& t, Node* n, size_t h) {
  const Node* in = sole_input(*n);
  if (in && !in->kept_user) {
    in->kept_user = n;
    t.count_kept(1);
  } else {
    n->cse_hash = h;
    t.insert(h, n);
    if (in) in->table_users = true;
  }
}

// Under the table's lock: takes n out of the graph (the table, or its input's keeping), so that
// no lookup finds it again.
void leave_locked(HashConsTable& t, Node* n) {
  if (n->cse_hash != 0) {
    t.erase(n->cse_hash, n);
    n->cse_hash = 0;
  } else if (const Node* in = sole_input(*n); in && in->kept_user == n) {
    in->kept_user = nullptr;
    t.count_kept(-1);
  }
}

// Under the table's lock: a live node equal to n (prepared, key h, not in the graph), with a new
// reference; null when there is none.
[[gnu::always_inline]] inline const Node* find_locked(const HashConsTable& t, const Node& n,
                                                      size_t h) {
  if (const Node* in = sole_input(n))
    if (const Node* k = in->kept_user; k && same_spec(*k, n) && revive(*k)) return k;
  const Node* found = nullptr;
  t.for_each(h, [&](const Node& e) {
    if (!same_spec(e, n) || !revive(e)) return false;
    found = &e;
    return true;
  });
  return found;
}

// With the table's lock held (lock): the live node equal to n (prepared, not in the graph), n
// going back to the pool outside the lock; else n, entered as new. publish's and
// fuse_binary_step's end.
[[gnu::always_inline]] inline NodeRef take_or_enter(HashConsTable& t,
                                                    std::unique_lock<SpinLock>& lock, Node* n) {
  // A node equal to n would have n's one input as its own, and so be that input's kept user or
  // a table user of it. With neither, n is new and needs no key: its input keeps it (a loop's
  // step, built on the step before), and it is never looked for in the table.
  if (const Node* in = sole_input(*n); in && !in->kept_user && !in->table_users) {
    enter_locked(t, n, 0);  // (kept by in: no key)
    return NodeRef::adopt(n);
  }
  const size_t h = cse_key(*n);
  if (const Node* found = find_locked(t, *n, h)) {
    lock.unlock();
    retire(n);
    return NodeRef::adopt(found);
  }
  enter_locked(t, n, h);
  return NodeRef::adopt(n);
}

// Hashes n, a node not yet in the graph, and stores what it keeps of itself. publish does it
// before taking the lock: no other thread sees n until it is in the graph.
[[gnu::always_inline]] inline void prepare(Node* n, const Node* same_data,
                                           size_t first_constant = 0) {
  const SpecHashes hashes = spec_hashes(*n, same_data, first_constant);
  n->local_hash = hashes.local;
  n->value_hash = hashes.value;
  n->second_value_hash = hashes.second_value;
  n->leaf_hash = hashes.leaf;
  n->depth = n->kind == OpKind::Buffer ? 0 : depth_of(*n);
  n->chain_input =
      n->inputs.size() == 1 && n->kind != OpKind::Random && n->kind != OpKind::Collective
          ? n->inputs[0].get()
          : nullptr;
}

}  // namespace

// A dropped graph dies a chain at a time (a loop's steps each hold the step before), and each
// node leaves the hash-cons table under its lock: so the nodes that die with one release leave
// it together, under one lock. The first, then each input whose last reference a dying node
// held, and so on down, up to kBatch nodes; then they are destroyed outside the lock, where
// their buffers are released (which may take other locks) and their memory recycled. An input
// past the batch keeps its reference and is released then, starting a batch of its own (from
// inside retire: a batch boundary costs more than the nodes around it, lazy_loop_200's 400
// nodes released in 5.1 us in batches of 256, 4.7 us in one). A batch as long as the longest
// chain kiln lets a program build unevaluated (api::kMaxGraphDepth, 512): one batch for any
// such chain, 4 KiB of stack, the lock held a few microseconds at most.
void release(const Node* n) noexcept {
  if (n->refs_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  constexpr size_t kBatch = 512;
  Node* dead[kBatch];
  size_t count = 0;
  dead[count++] = const_cast<Node*>(n);
  if (n->cse_hash != 0 || !n->inputs.empty()) {  // else an evaluated leaf: nothing to leave
    HashConsTable& t = table();
    std::lock_guard lock(t.mu);
    for (size_t i = 0; i < count; ++i) {
      Node* d = dead[i];
      leave_locked(t, d);  // (before its inputs go: a kept node is found through its input)
      bool dropped_all = true;
      for (NodeRef& in : d->inputs) {
        if (count == kBatch) {
          dropped_all = false;
          break;
        }
        if (!in) continue;
        // The count is dropped here, so the reference lets go of the input without dropping
        // it again; the input dies with d when that was its last reference.
        if (drop_under_lock(*in)) dead[count++] = const_cast<Node*>(in.get());
        in.detach();
      }
      // Emptied now, while the list is in the cache: by retire's turn a batch of nodes has
      // pushed it out, and reading it again was retire's costliest load.
      if (dropped_all) d->inputs.clear();
    }
  }
  retire(dead, count);
}

long use_count(const Node* n) noexcept { return n->refs_.load(std::memory_order_relaxed); }

// Finds the node equal to n, a node not yet in the graph, or enters n as new.
NodeRef publish(Node* n, const Node* same_data) {
  prepare(n, same_data);
  HashConsTable& t = table();
  std::unique_lock lock(t.mu);
  return take_or_enter(t, lock, n);
}

NodeRef make_node(NodeSpec&& spec) {
  Node* n = fresh_node();
  static_cast<NodeSpec&>(*n) = std::move(spec);
  return publish(n, nullptr);
}

Draft::Draft(OpKind k, uint8_t op, DType t, Device d) : n_(fresh_node()) {
  n_->kind = k;
  n_->op = op;
  n_->dtype = t;
  n_->device = d;
}

Draft::~Draft() {
  if (n_) retire(n_);
}

NodeRef make_node(Draft&& d) { return publish(std::exchange(d.n_, nullptr), d.same_data_); }

namespace {
bool is_affine_step(BinaryOp op) {
  return op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul || op == BinaryOp::Div;
}
}  // namespace

// The node is changed in place rather than a second one built, all under the table's lock
// (where lookups take their references, so none can reach it meanwhile): it leaves the graph,
// becomes the Affine node, and enters again as a new node would (an equal one found is taken
// instead). Its shape, dtype, device and input stay, and so do its data hash and the hash of
// its constant, now the first.
NodeRef fuse_binary_step(NodeRef& ref, BinaryOp op, const Scalar& v, bool left) {
  Node* n = const_cast<Node*>(ref.get());
  const ImmediateAttrs* first = n->immediate();
  // (Not a Binary node: no immediate. fuse_constant_step has refused those already.)
  if (!first || first->dtype != n->dtype || !is_affine_step(op) ||
      !is_affine_step(n->binary_op()) || n->ref_count() != 1 || n->has_result())
    return nullptr;
  const size_t first_hash = n->value_hash;  // the product's constant is the Affine node's first
  HashConsTable& t = table();
  std::unique_lock lock(t.mu);
  // Both checked again here, where they are settled: a lookup may have taken a reference
  // since the check above, and an evaluation may have stored a result. The second happens
  // when another thread held the node too (its temporary found by CSE, then an input of an
  // expression it evaluated, which writes held nodes) and let go of it since: the count is
  // back to 1, and the node now holds the product's values. Turned into an Affine node, it
  // would keep them and read as the product alone (test_threads, 1 run in 80 under TSan).
  if (n->refs_.load(std::memory_order_relaxed) != 1 || n->has_result()) return nullptr;
  leave_locked(t, n);
  ref.detach();  // its one reference, handed on below
  AffineAttrs affine;
  affine.steps[0] = {n->binary_op(), *first};
  affine.steps[1] = {op, ImmediateAttrs{v, n->dtype, left}};
  n->kind = OpKind::Affine;
  n->op = 0;
  n->attrs = affine;
  prepare(n, n, first_hash);
  return take_or_enter(t, lock, n);
}

// The inputs are released after the lock, since freeing takes it. A short list (the pool
// keeps only those, kRoomy) is moved out element by element, so that the node's own list keeps
// its memory for the node that reuses it from the pool (an evaluation's result is mostly a
// pooled node soon again); a long one is taken whole.
void set_realized(const Node& n, BufferRef b) {
  NodeRef few[kRoomy];
  std::vector<NodeRef> many;
  {
    HashConsTable& t = table();
    std::lock_guard lock(t.mu);
    auto& node = const_cast<Node&>(n);
    if (node.has_result_.load(std::memory_order_relaxed)) return;  // listed twice: stored once
    leave_locked(t, &node);
    node.realized_ = std::move(b);
    node.chain_input = nullptr;  // (its inputs go below)
    node.has_result_.store(true, std::memory_order_release);
    if (node.inputs.size() > kRoomy) {
      many.swap(node.inputs);
    } else {
      std::move(node.inputs.begin(), node.inputs.end(), few);
      node.inputs.clear();
    }
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

bool is_relu(const NodeSpec& n) {
  const ImmediateAttrs* im = n.immediate();
  if (!im || n.kind != OpKind::Binary || n.binary_op() != BinaryOp::Maximum) return false;
  const double v = im->value.as_double();
  // +0 only: maximum(-0.0, x) may give -0.0 where a relu gives +0.
  return v == 0 && !std::signbit(v) && im->value.as_complex().imag() == 0;
}

size_t constant_hash(const Scalar& v, DType t) {
  const size_t h = v.hash(static_cast<uint64_t>(t));
  return h ? h : 1;  // never 0, the value_hash of a node that carries no constant
}

size_t data_hash(const NodeSpec& n) {
  // dtype, device kind and index in one word: one mix, then one per dimension.
  size_t h =
      hash_mix(0xda7a, static_cast<uint64_t>(n.dtype) | static_cast<uint64_t>(n.device.kind) << 8 |
                           static_cast<uint64_t>(static_cast<uint32_t>(n.device.index)) << 16);
  for (int64_t d : n.shape) h = hash_mix(h, d);
  return h;
}

size_t local_structure_hash(const NodeSpec& n) { return spec_hashes(n).local; }
size_t leaf_data_hash(const NodeSpec& n) { return data_hash(n); }

size_t live_node_count() {
  std::lock_guard lock(table().mu);
  return table().live();
}

}  // namespace kiln::graph
