// Plans by structural hash: an expression whose structure was seen before skips planning,
// code generation and kernel lookup; the plan runner binds its buffers, scalars and random
// draws. Used under hold_evaluation() (runtime/pipeline.hpp), like everything it returns.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "graph/node.hpp"
#include "plan/plan.hpp"

namespace kiln::runtime {

// The cached plan for this structure (sig.hash and the values' kinds, dtypes and shapes),
// made by plan::make_plan(outputs, &sig, held) when there is none.
const plan::Plan& cached_plan(const std::vector<graph::NodeRef>& outputs,
                              const graph::Signature& sig, size_t held);

// ---- for tests (tests/test_plan_cache.cpp) -----------------------------------------------
// What the plan cache did since the last reset: the engine's own counters (kiln::engine_stats)
// cannot tell a reused plan from a new one.
struct PlanCacheCounters {
  int64_t hits = 0;        // evaluations that reused a cached plan
  int64_t misses = 0;      // plans made
  int64_t collisions = 0;  // a plan found under the hash but for other values: made anew
  int64_t clears = 0;      // the cache was full (kMaxCachedPlans) and was emptied
};
inline constexpr size_t kMaxCachedPlans = 4096;
PlanCacheCounters plan_cache_counters();
void reset_plan_cache_counters();
// Set: every structure is cached under this hash instead of its own, so that two different
// graphs collide, as two structures whose 64-bit hashes are equal would. Unset: normal.
void force_plan_hash_for_testing(std::optional<size_t> hash);

}  // namespace kiln::runtime
