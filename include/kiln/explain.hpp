// What evaluating some arrays would do, without doing it.
#pragma once
#include <string>
#include <vector>

#include "kiln/array.hpp"

namespace kiln {

// The plan as text: each fused kernel with its name and expression, each library call, each
// copy with its direction, and the bytes every step moves. Evaluates nothing.
std::string explain(const std::vector<Array>& outputs);

// The same plan as a Graphviz DOT graph: each fused group a cluster of its operations, buffers
// as boxes, library calls as their own nodes, copies as dashed red edges. Render with
// `dot -Tsvg`.
std::string to_dot(const std::vector<Array>& outputs);

}  // namespace kiln
