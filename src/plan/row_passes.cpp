#include "plan/row_passes.hpp"

#include <algorithm>

namespace kiln::plan {

std::vector<int> operands_of(const FusedGroup& g, const Instr& ins) {
  if (ins.kind == InstrKind::User) return g.user_calls[ins.user_call()].operands;
  std::vector<int> out;
  for (int v : {ins.a, ins.b, ins.c})
    if (v >= 0) out.push_back(v);
  return out;
}

std::vector<int> RowPasses::folds(int p) const {
  std::vector<int> out;
  for (size_t i = 0; i < pass.size(); ++i)
    if (pass[i] == p) out.push_back(static_cast<int>(i));
  return out;
}

RowPasses row_passes(const FusedGroup& g) {
  const size_t n = g.code.size();
  RowPasses rp;
  rp.pass.assign(n, -1);
  std::vector<int> ready(n, 0);  // passes that must finish before instruction i has a value
  for (size_t i = 0; i < n; ++i) {
    const Instr& ins = g.code[i];
    for (int v : operands_of(g, ins)) ready[i] = std::max(ready[i], ready[v]);
    if (ins.kind == InstrKind::Reduce) {
      rp.pass[i] = ready[i];
      ready[i] += 1;
      rp.reducing = std::max(rp.reducing, ready[i]);
    }
  }
  rp.needed.assign(rp.reducing + 1, std::vector<bool>(n, false));
  rp.needed[rp.reducing].assign(n, true);
  for (int p = 0; p < rp.reducing; ++p) {
    auto& need = rp.needed[p];
    std::vector<int> stack = rp.folds(p);
    for (int i : stack) need[i] = true;  // marks the folds, whose operands are walked below
    while (!stack.empty()) {
      int i = stack.back();
      stack.pop_back();
      bool known = g.code[i].kind == InstrKind::Reduce && rp.pass[i] < p;
      if (known) continue;
      for (int v : operands_of(g, g.code[i]))
        if (!need[v]) {
          need[v] = true;
          stack.push_back(v);
        }
    }
    for (int i : rp.folds(p)) need[i] = false;  // folded by this pass, not evaluated in it
    // (their operands stay marked)
  }
  return rp;
}

}  // namespace kiln::plan
