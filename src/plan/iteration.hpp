// The iteration space of a group, simplified for execution: size-1 axes dropped, neighbouring
// axes merged wherever every access walks them contiguously. Both executors use it: the host
// to find dense runs, codegen to pick the contiguous or strided kernel and index cheaply.
#pragma once
#include <vector>

#include "plan/plan.hpp"

namespace kiln::plan {

struct IterationSpace {
  Shape shape;
  std::vector<Strides> strides;  // one per access of the group
  int reduced = 0;               // trailing axes that a reduction (or the Reduce instructions
                                 // of a group with row_axes) folds; 0: elementwise
  // A group whose row axes lead (columns, FusedGroup::row_axes) iterates in another order than
  // its outputs lie in memory: their strides along these axes (empty for every other group,
  // whose outputs are written at the iteration index).
  Strides out_strides;
};

// For a reduction group the reduced axes move last (kept axes keep their order), and kept and
// reduced axes are never merged with each other; a group's row axes count as reduced.
IterationSpace iteration_space(const FusedGroup& g);
// True when `strides` walk `shape` densely in row-major order.
bool is_dense(const Shape& shape, const Strides& strides);
// True when every stride is zero (one value broadcast everywhere).
bool is_constant(const Strides& strides);

}  // namespace kiln::plan
