#include "api/evaluate.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <string>
#include <unordered_map>

#include "api/build.hpp"
#include "api/debug.hpp"
#include "api/run_plan.hpp"
#include "graph/hash.hpp"
#include "jit/cache_config.hpp"
#include "kiln/array.hpp"
#include "plan/planner.hpp"

namespace kiln {
namespace {

// Every thread reads KILN_MODE as it starts: one warning per bad value, not one per thread.
void warn_bad_mode(const std::string& value) {
  static std::mutex mu;
  static std::string warned;
  std::lock_guard lock(mu);
  if (value == warned) return;
  warned = value;
  jit::warn("KILN_MODE=" + value + " is not one of lazy, eager; using lazy");
}

Mode mode_from_env() {
  const char* m = std::getenv("KILN_MODE");
  std::string value = m ? m : "";
  if (value == "eager") return Mode::Eager;
  if (!value.empty() && value != "lazy") warn_bad_mode(value);
  return Mode::Lazy;
}
thread_local Mode t_mode = mode_from_env();

}  // namespace

void set_mode(Mode m) { t_mode = m; }
Mode get_mode() { return t_mode; }

namespace {
std::atomic<bool> g_materialize_held{true};
}  // namespace
void set_materialize_held(bool on) { g_materialize_held = on; }
bool get_materialize_held() { return g_materialize_held; }

}  // namespace kiln

namespace kiln::api {
namespace {

// One evaluation at a time: evaluation turns nodes into leaves, which planning must not see
// half-done. Building graphs needs no lock beyond the hash-cons table's.
std::mutex& eval_mutex() {
  static std::mutex mu;
  return mu;
}

// What a value node looked like when a plan was made: a guard against hash collisions. A leaf
// is data whatever it was computed by: an evaluated product and a Buffer are the same kind.
graph::OpKind value_kind(const graph::Node& n) {
  return n.is_leaf() ? graph::OpKind::Buffer : n.kind;
}
struct ValueShape {
  graph::OpKind kind;
  bool leaf;
  DType dtype;
  Shape shape;
  bool operator==(const ValueShape&) const = default;
};
// Compared in place: this runs on every evaluation of a cached structure.
bool same_values(const std::vector<ValueShape>& cached, const graph::Signature& sig) {
  if (cached.size() != sig.values.size()) return false;
  for (size_t i = 0; i < cached.size(); ++i) {
    const graph::Node& n = *sig.values[i];
    const ValueShape& c = cached[i];
    if (c.kind != value_kind(n) || c.leaf != n.is_leaf() || c.dtype != n.dtype ||
        c.shape != n.shape)
      return false;
  }
  return true;
}

std::vector<ValueShape> value_shapes(const graph::Signature& sig) {
  std::vector<ValueShape> out;
  for (const auto* n : sig.values)
    out.push_back({value_kind(*n), n->is_leaf(), n->dtype, n->shape});
  return out;
}

struct CachedPlan {
  plan::Plan plan;  // with the bound buffers cleared, so the cache holds no array's memory
  std::vector<ValueShape> values;
};

// Plans by structural hash: an expression whose structure was seen before skips planning,
// code generation and kernel lookup; run_plan binds its buffers, scalars and random draws.
// (Counters and the forced hash are for tests; like the cache, they are guarded by
// eval_mutex.)
class PlanCache {
 public:
  const plan::Plan& lookup_or_make(const std::vector<graph::NodeRef>& outputs,
                                   const graph::Signature& sig, size_t held) {
    const size_t key = forced_hash.value_or(sig.hash);
    auto it = plans_.find(key);
    if (it != plans_.end()) {
      if (same_values(it->second.values, sig)) {
        ++counters.hits;
        return it->second.plan;
      }
      ++counters.collisions;
    }
    if (plans_.size() >= kMaxCachedPlans) {  // a crude bound; plans are cheap to redo
      plans_.clear();
      ++counters.clears;
    }
    ++counters.misses;
    CachedPlan c{plan::make_plan(outputs, &sig, held), value_shapes(sig)};
    for (const auto& b : c.plan.bindings.buffers) c.plan.buffers[b.buffer].external.reset();
    return (plans_[key] = std::move(c)).plan;
  }

  PlanCacheCounters counters;
  std::optional<size_t> forced_hash;

 private:
  std::unordered_map<size_t, CachedPlan> plans_;
};

PlanCache& plan_cache() {
  static PlanCache cache;
  return cache;
}

}  // namespace

std::unique_lock<std::mutex> hold_evaluation() { return std::unique_lock(eval_mutex()); }

Request to_realize(const std::vector<graph::NodeRef>& nodes) {
  Request r;
  for (const auto& n : nodes)
    if (!n->is_leaf()) r.nodes.push_back(n);
  if (!r.nodes.empty() && get_materialize_held()) {
    auto held = graph::held_nodes(r.nodes);
    r.held = held.size();
    for (auto& h : held) r.nodes.push_back(std::move(h));
  }
  return r;
}

std::optional<plan::Plan> plan_for(const std::vector<Array>& outputs) {
  std::vector<graph::NodeRef> requested;
  for (const auto& a : outputs) {
    node_of(a);  // an empty handle is an error that says so
    requested.push_back(a.node());
  }
  Request req = to_realize(requested);
  if (req.nodes.empty()) return std::nullopt;
  return plan::make_plan(req.nodes, nullptr, req.held);
}

void realize(const std::vector<graph::NodeRef>& nodes) {
  std::lock_guard lock(eval_mutex());
  Request req = to_realize(nodes);
  const std::vector<graph::NodeRef>& todo = req.nodes;
  if (todo.empty()) return;
  graph::Signature sig = graph::signature(todo);
  sig.hash = graph::hash_mix(sig.hash, req.held);  // which outputs are only held is structure
  const plan::Plan& p = plan_cache().lookup_or_make(todo, sig, req.held);
  if (debug_level() >= 2) std::cerr << "[kiln] plan\n" << plan::to_string(p);
  auto results = run_plan(p, sig);
  for (size_t i = 0; i < todo.size(); ++i)
    if (results[i]) graph::set_realized(*todo[i], results[i]);  // null: held, not written
}

PlanCacheCounters plan_cache_counters() {
  std::lock_guard lock(eval_mutex());
  return plan_cache().counters;
}
void reset_plan_cache_counters() {
  std::lock_guard lock(eval_mutex());
  plan_cache().counters = {};
}
void force_plan_hash_for_testing(std::optional<size_t> hash) {
  std::lock_guard lock(eval_mutex());
  plan_cache().forced_hash = hash;
}

int debug_level() {
  static const int level = [] {
    const char* d = std::getenv("KILN_DEBUG");
    return d ? std::atoi(d) : 0;
  }();
  return level;
}

}  // namespace kiln::api
