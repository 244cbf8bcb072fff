// What evaluating some arrays would do, without doing it.
#pragma once
#include <string>
#include <vector>

#include "kiln/array.hpp"

namespace kiln {

// The plan as text: each fused kernel with its name and expression, each library call, each
// copy with its direction, and the bytes every step moves. Evaluates nothing.
std::string explain(const std::vector<Array>& outputs);

}  // namespace kiln
