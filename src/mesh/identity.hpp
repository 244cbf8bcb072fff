// The identity of max and min, which kiln's reductions do not have: what a rank whose piece is
// empty offers to a collective over the split axis (a max's or argmax's partial).
#pragma once
#include "kiln/array.hpp"

namespace kiln::mesh {

// An array of shape s on d whose every element max (min) over it and x leaves x: the lowest
// value of t when `lowest` (for a max), else the highest (for a min). DTypeError for a dtype
// without one.
Array extremum_identity(bool lowest, DType t, const Shape& s, Device d);

}  // namespace kiln::mesh
