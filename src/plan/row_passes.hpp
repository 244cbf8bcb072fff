// The passes a group with row axes (plan.hpp, FusedGroup::row_axes) makes over each row.
// Both executors follow them: the GPU kernel over a row staged on chip, the host over chunks.
#pragma once
#include <vector>

#include "plan/plan.hpp"

namespace kiln::plan {

// Pass p folds the Reduce instructions whose operands need only the results of earlier
// passes, so independent reductions of a row (a mean and a mean of squares) share a pass,
// while softmax's sum of exp(x - max) comes one pass after its max. The pass after the last
// of those computes and writes the outputs.
struct RowPasses {
  std::vector<int> pass;  // per instruction: the pass that folds it (Reduce), else -1
  int reducing = 0;       // passes that fold; pass `reducing` writes the outputs
  // needed[p][i]: whether pass p evaluates instruction i (what its folds' operands read;
  // a Reduce instruction of an earlier pass is then its row's known value). The writing pass
  // evaluates all of them.
  std::vector<std::vector<bool>> needed;
  std::vector<int> folds(int p) const;  // the Reduce instructions of pass p, in order
};
RowPasses row_passes(const FusedGroup& g);

// The instructions `ins` reads (a, b, c, or a user expression's operands).
std::vector<int> operands_of(const FusedGroup& g, const Instr& ins);

}  // namespace kiln::plan
