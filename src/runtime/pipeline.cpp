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

// An evaluation's lists (the request, the signature's values), kept between evaluations so
// that they keep their memory: evaluations run one at a time (under the evaluation lock), and
// a tiny one's few allocations cost about as much as its signature.
struct Scratch {
  Request req;
  graph::Signature sig;
};
Scratch& scratch() {
  static auto* s = new Scratch;  // never destroyed: evaluations may run during exit
  return *s;
}
// Empties the lists on the way out, thrown through or not: between evaluations they must hold
// no node (a held node would outlive the program's last handle to it).
struct Emptied {
  Scratch& s;
  ~Emptied() {
    s.req.nodes.clear();
    s.req.held = 0;
    s.sig.values.clear();
  }
};

// The pipeline: signature -> plan -> generate and compile -> run -> store. Each stage is one
// call; the file named beside it says how it works.
void realize_held(std::span<const graph::NodeRef> nodes, Scratch& s) {
  Request& req = s.req;
  graph::Signature& sig = s.sig;
  to_realize(nodes, req, sig);  // graph/signature: structure, values, held nodes
  if (req.nodes.empty()) return;
  const plan::Plan& p = cached_plan(req.nodes, sig, req.held);  // plan/planner, once per structure
  if (debug_level() >= 2) std::cerr << "[kiln] plan\n" << plan::to_string(p);
  PlanRun run(p, sig);  // binds this graph's buffers, scalars and draws
  run.compile();        // codegen/ generates each kernel, jit/ compiles it or finds it cached
  run.run();            // each step on its device's backend (runtime/backends)
  store(req, run);
}

}  // namespace

void realize(const std::vector<graph::NodeRef>& nodes) {
  auto hold = hold_evaluation();
  Emptied emptied{scratch()};
  realize_held(nodes, emptied.s);
}

void realize(const graph::NodeRef& node) {
  auto hold = hold_evaluation();
  Emptied emptied{scratch()};
  realize_held({&node, 1}, emptied.s);
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
  graph::Signature s;
  to_realize(nodes, r, s);
  if (sig && !r.nodes.empty()) *sig = std::move(s);
  return r;
}

void to_realize(const std::vector<graph::NodeRef>& nodes, Request& r, graph::Signature& sig) {
  to_realize(std::span<const graph::NodeRef>(nodes), r, sig);
}

void to_realize(std::span<const graph::NodeRef> nodes, Request& r, graph::Signature& sig) {
  r.nodes.clear();
  r.held = 0;
  for (const auto& n : nodes)
    if (!n->is_leaf()) r.nodes.push_back(n);
  if (r.nodes.empty()) return;
  std::vector<graph::NodeRef> held;
  graph::signature(r.nodes, get_materialize_held() ? &held : nullptr, sig);
  r.held = held.size();
  for (auto& h : held) r.nodes.push_back(std::move(h));
}

std::optional<plan::Plan> plan_for(const std::vector<graph::NodeRef>& outputs) {
  Request req = to_realize(outputs);
  if (req.nodes.empty()) return std::nullopt;
  return plan::make_plan(req.nodes, nullptr, req.held);
}

}  // namespace kiln::runtime
