// What an integer node's values are known to lie in from how the node was made, not from the
// values: a randint draw's [low, high), an integer arange's ends, argsort's, argmax's, argmin's
// and flatnonzero's positions, through views and casts that keep every value. take uses it to leave out a range
// check it can prove passes (api/array.cpp): indices drawn by randint(0, n) for an axis of n.
#pragma once
#include <cstdint>
#include <optional>

#include "graph/node.hpp"

namespace kiln::graph {

struct IntRange {
  int64_t lo = 0, hi = 0;  // closed: every value v has lo <= v <= hi
};

// Whether the integer dtype t holds v (false for any other dtype).
bool holds(DType t, int64_t v);

// The range of n's values, or nullopt where nothing is known (a computed or loaded array, a
// float one, an evaluated view or cast, whose history is gone).
std::optional<IntRange> known_range(const Node& n);

}  // namespace kiln::graph
