// The planner: requested outputs -> Plan. Cuts the graph into fused groups (maximal
// elementwise subgraphs with their views; a reduction with its elementwise prologue), library
// steps (FFT, random) and copies, then lowers each group to the FusedGroup IR.
#pragma once
#include <vector>

#include "graph/node.hpp"
#include "plan/plan.hpp"

namespace kiln::plan {

// With a signature of the outputs, the plan also records its Bindings, so it can be cached
// and reused for any graph with that signature's hash. The last `held` outputs are values the
// program holds (graph::held_nodes): the plan writes those where it costs no extra pass or
// where their history has grown long, and gives -1 in Plan::outputs for the others.
Plan make_plan(const std::vector<graph::NodeRef>& outputs,
               const graph::Signature* signature = nullptr, size_t held = 0);

}  // namespace kiln::plan
