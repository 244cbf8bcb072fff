// Evaluation: plans the requested nodes and runs the plan on the backend of their device,
// then stores each result in its node.
#pragma once
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "graph/node.hpp"
#include "kiln/array.hpp"
#include "plan/plan.hpp"

namespace kiln::api {

void realize(const std::vector<graph::NodeRef>& nodes);
// What an evaluation of `nodes` plans: their unevaluated nodes, then (when
// kiln::get_materialize_held()) the `held` nodes below them that the program holds, which the
// plan may also write (plan::make_plan).
struct Request {
  std::vector<graph::NodeRef> nodes;
  size_t held = 0;
};
Request to_realize(const std::vector<graph::NodeRef>& nodes);
// The plan an evaluation of `outputs` runs, made afresh (explain, to_dot); none when every
// array is evaluated. Empty handles are an error. Call with hold_evaluation() held.
std::optional<plan::Plan> plan_for(const std::vector<Array>& outputs);

// Holds off every evaluation while the caller reads graphs that may be shared with other
// threads (explain, to_dot): evaluating a node drops its inputs, which may free them.
// Never call realize() while holding it.
std::unique_lock<std::mutex> hold_evaluation();

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

}  // namespace kiln::api
