#include "runtime/plan_cache.hpp"

#include <unordered_map>

#include "plan/planner.hpp"
#include "runtime/pipeline.hpp"

namespace kiln::runtime {
namespace {

// What a value node looked like when a plan was made: a guard against hash collisions. A leaf
// is data whatever it was computed by: an evaluated product and a Buffer are the same kind.
graph::OpKind value_kind(const graph::Node& n) {
  return n.is_leaf() ? graph::OpKind::Buffer : n.kind;
}
struct ValueShape {
  graph::OpKind kind;
  int which;  // of a constant: which of the node's
  bool leaf;
  DType dtype;
  Shape shape;
  bool operator==(const ValueShape&) const = default;
};
// Compared in place: this runs on every evaluation of a cached structure.
bool same_values(const std::vector<ValueShape>& cached, const graph::Signature& sig) {
  if (cached.size() != sig.values.size()) return false;
  for (size_t i = 0; i < cached.size(); ++i) {
    const graph::Node& n = *sig.values[i].node;
    const ValueShape& c = cached[i];
    if (c.kind != value_kind(n) || c.which != sig.values[i].which || c.leaf != n.is_leaf() ||
        c.dtype != n.dtype || c.shape != n.shape)
      return false;
  }
  return true;
}

std::vector<ValueShape> value_shapes(const graph::Signature& sig) {
  std::vector<ValueShape> out;
  for (const auto& [n, which] : sig.values)
    out.push_back({value_kind(*n), which, n->is_leaf(), n->dtype, n->shape});
  return out;
}

struct CachedPlan {
  plan::Plan plan;  // with the bound buffers cleared, so the cache holds no array's memory
  std::vector<ValueShape> values;
};

// (Counters and the forced hash are for tests; like the cache, they are guarded by the
// evaluation lock.)
class PlanCache {
 public:
  const plan::Plan& lookup_or_make(const std::vector<graph::NodeRef>& outputs,
                                   const graph::Signature& sig, size_t held) {
    const size_t key = forced_hash.value_or(sig.hash);
    CachedPlan* found = last_key_ == key ? last_ : nullptr;
    if (!found)
      if (auto it = plans_.find(key); it != plans_.end()) found = &it->second;
    if (found) {
      if (same_values(found->values, sig)) {
        ++counters.hits;
        remember(key, found);
        return found->plan;
      }
      ++counters.collisions;
    }
    if (plans_.size() >= kMaxCachedPlans) {  // a crude bound; plans are cheap to redo
      plans_.clear();
      last_ = nullptr;
      ++counters.clears;
    }
    ++counters.misses;
    CachedPlan c{plan::make_plan(outputs, &sig, held), value_shapes(sig)};
    for (const auto& b : c.plan.bindings.buffers) c.plan.buffers[b.buffer].external.reset();
    CachedPlan& entry = plans_[key] = std::move(c);
    remember(key, &entry);
    return entry.plan;
  }

  PlanCacheCounters counters;
  std::optional<size_t> forced_hash;

 private:
  // The entry found last: a program evaluating one structure again and again finds it without
  // the map's lookup (its bucket index is a division). Entries stay put until the map is cleared.
  void remember(size_t key, CachedPlan* entry) {
    last_key_ = key;
    last_ = entry;
  }

  std::unordered_map<size_t, CachedPlan> plans_;
  size_t last_key_ = 0;
  CachedPlan* last_ = nullptr;
};

PlanCache& plan_cache() {
  static PlanCache cache;
  return cache;
}

}  // namespace

const plan::Plan& cached_plan(const std::vector<graph::NodeRef>& outputs,
                              const graph::Signature& sig, size_t held) {
  return plan_cache().lookup_or_make(outputs, sig, held);
}

PlanCacheCounters plan_cache_counters() {
  auto hold = hold_evaluation();
  return plan_cache().counters;
}
void reset_plan_cache_counters() {
  auto hold = hold_evaluation();
  plan_cache().counters = {};
}
void force_plan_hash_for_testing(std::optional<size_t> hash) {
  auto hold = hold_evaluation();
  plan_cache().forced_hash = hash;
}

}  // namespace kiln::runtime
