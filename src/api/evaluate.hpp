// Evaluation: plans the requested nodes and runs the plan on the backend of their device,
// then stores each result in its node.
#pragma once
#include <vector>

#include "graph/node.hpp"

namespace kiln::api {

void realize(const std::vector<graph::NodeRef>& nodes);

}  // namespace kiln::api
