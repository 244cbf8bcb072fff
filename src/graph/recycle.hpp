// Memory for what building a node allocates besides its block: its shape and its input list.
// A program builds and drops nodes at a steady rate, and a dropped graph frees hundreds of
// these at once, far more than malloc's per-thread cache keeps: so a node's destructor hands
// them to a per-thread list (graph/node.cpp), and the builders of the common operations take
// them from it (api/build.cpp).
#pragma once
#include <cstddef>
#include <vector>

#include "graph/node.hpp"

namespace kiln::graph {

// An empty input list with room for n inputs.
std::vector<NodeRef> input_list(size_t n);
// A copy of s.
Shape shape_copy(const Shape& s);
// Takes spec's input list and shape (releasing the inputs first) into the lists.
void recycle(NodeSpec& spec);

}  // namespace kiln::graph
