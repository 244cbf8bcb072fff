// The planner: requested outputs -> Plan. Cuts the graph into fused groups (maximal
// elementwise subgraphs with their views; a reduction with its elementwise prologue), library
// steps (FFT, random) and copies, then lowers each group to the FusedGroup IR.
#pragma once
#include <vector>

#include "graph/node.hpp"
#include "plan/plan.hpp"

namespace kiln::plan {

Plan make_plan(const std::vector<graph::NodeRef>& outputs);

}  // namespace kiln::plan
