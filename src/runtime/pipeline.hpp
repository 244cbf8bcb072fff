// Evaluation, start to end (runtime/pipeline.cpp's realize): the requested nodes' signature,
// their plan, each group's kernel generated and compiled, the plan run on the backend of each
// step's device, the results stored in the nodes.
#pragma once
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "graph/node.hpp"
#include "plan/plan.hpp"

namespace kiln::runtime {

void realize(const std::vector<graph::NodeRef>& nodes);
// The same for one node (Array::eval), with no list to fill.
void realize(const graph::NodeRef& node);
// realize's stages up to the compiled kernels (kiln::compile): the plan made or found, every
// kernel generated and compiled, nothing run and nothing stored.
void compile_ahead(const std::vector<graph::NodeRef>& nodes);

// What an evaluation of `nodes` plans: their unevaluated nodes, then (when
// kiln::get_materialize_held()) the `held` nodes below them that the program holds, which the
// plan may also write (plan::make_plan).
struct Request {
  std::vector<graph::NodeRef> nodes;
  size_t held = 0;
};
// The request, and into `sig` (when given) its signature, found in the same walk.
Request to_realize(const std::vector<graph::NodeRef>& nodes, graph::Signature* sig = nullptr);
// The same into `r` and `sig`, whose lists keep their memory (the evaluation path's).
void to_realize(const std::vector<graph::NodeRef>& nodes, Request& r, graph::Signature& sig);
void to_realize(std::span<const graph::NodeRef> nodes, Request& r, graph::Signature& sig);
// The plan an evaluation of `outputs` runs, made afresh (explain, to_dot); none when every
// node is evaluated. Call with hold_evaluation() held.
std::optional<plan::Plan> plan_for(const std::vector<graph::NodeRef>& outputs);

// One evaluation at a time: evaluation turns nodes into leaves, which planning must not see
// half-done, and drops their inputs, which may free them. Held by realize, and by callers that
// read graphs other threads may share (explain, to_dot). Never call realize() while holding it.
std::unique_lock<std::mutex> hold_evaluation();

}  // namespace kiln::runtime
