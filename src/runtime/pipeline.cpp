#include "runtime/pipeline.hpp"

#include <iostream>

#include "kiln/array.hpp"
#include "plan/planner.hpp"
#include "runtime/debug.hpp"
#include "runtime/plan_cache.hpp"
#include "runtime/run_plan.hpp"

namespace kiln::runtime {
namespace {

std::mutex& eval_mutex() {
  static std::mutex mu;
  return mu;
}

void store(const Request& req, PlanRun& run) {
  for (size_t i = 0; i < req.nodes.size(); ++i)
    if (auto b = run.output(i)) graph::set_realized(*req.nodes[i], std::move(b));  // null: held
}

}  // namespace

// The pipeline: signature -> plan -> generate and compile -> run -> store. Each stage is one
// call; the file named beside it says how it works.
void realize(const std::vector<graph::NodeRef>& nodes) {
  auto hold = hold_evaluation();
  graph::Signature sig;
  Request req = to_realize(nodes, &sig);  // graph/signature: structure, values, held nodes
  if (req.nodes.empty()) return;
  const plan::Plan& p = cached_plan(req.nodes, sig, req.held);  // plan/planner, once per structure
  if (debug_level() >= 2) std::cerr << "[kiln] plan\n" << plan::to_string(p);
  PlanRun run(p, sig);  // binds this graph's buffers, scalars and draws
  run.compile();        // codegen/ generates each kernel, jit/ compiles it or finds it cached
  run.run();            // each step on its device's backend (runtime/backends)
  store(req, run);
}

void compile_ahead(const std::vector<graph::NodeRef>& nodes) {
  auto hold = hold_evaluation();
  graph::Signature sig;
  Request req = to_realize(nodes, &sig);
  if (req.nodes.empty()) return;
  PlanRun run(cached_plan(req.nodes, sig, req.held), sig);
  run.compile();
}

std::unique_lock<std::mutex> hold_evaluation() { return std::unique_lock(eval_mutex()); }

// The structure of what is evaluated (hashed) and the values bound into it (buffers, scalars,
// random draws). Which outputs are only held is structure too.
Request to_realize(const std::vector<graph::NodeRef>& nodes, graph::Signature* sig) {
  Request r;
  for (const auto& n : nodes)
    if (!n->is_leaf()) r.nodes.push_back(n);
  if (r.nodes.empty()) return r;
  std::vector<graph::NodeRef> held;
  graph::Signature s = graph::signature(r.nodes, get_materialize_held() ? &held : nullptr);
  r.held = held.size();
  for (auto& h : held) r.nodes.push_back(std::move(h));
  if (sig) *sig = std::move(s);
  return r;
}

std::optional<plan::Plan> plan_for(const std::vector<graph::NodeRef>& outputs) {
  Request req = to_realize(outputs);
  if (req.nodes.empty()) return std::nullopt;
  return plan::make_plan(req.nodes, nullptr, req.held);
}

}  // namespace kiln::runtime
