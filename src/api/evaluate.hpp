// Evaluation: plans the requested nodes and runs the plan on the backend of their device,
// then stores each result in its node.
#pragma once
#include <mutex>
#include <vector>

#include "graph/node.hpp"

namespace kiln::api {

void realize(const std::vector<graph::NodeRef>& nodes);

// Holds off every evaluation while the caller reads graphs that may be shared with other
// threads (explain, to_dot): evaluating a node drops its inputs, which may free them.
// Never call realize() while holding it.
std::unique_lock<std::mutex> hold_evaluation();

}  // namespace kiln::api
