#include "plan/naming.hpp"

#include <vector>

#include "graph/dtype_table.hpp"

namespace kiln::plan {

const char* dtype_short(DType t) { return graph::row(t).short_name; }

std::string kernel_name(const FusedGroup& g) {
  constexpr size_t kMaxOps = 6;  // longer names stop being readable
  std::vector<std::string> ops;
  if (g.reduction) ops.push_back(graph::op_name(g.reduction->op));
  if (g.scan) ops.push_back(graph::op_name(g.scan->op));
  // A user expression (kiln::elementwise) is named first, so it shows in a long group's name.
  if (!g.user_calls.empty()) ops.push_back("user");
  for (const Instr& i : g.code) {
    std::string op;
    if (i.addressing) continue;  // index arithmetic: the gather it feeds names it
    if (i.storage) continue;     // a half's widening or rounding: the dtype names it
    if (i.kind == InstrKind::Gather) op = "gather";
    if (i.kind == InstrKind::Unary) op = graph::op_name(i.unary_op());
    if (i.kind == InstrKind::Binary) op = graph::op_name(i.binary_op());
    if (i.kind == InstrKind::Where) op = "where";
    if (i.kind == InstrKind::Cast) op = "cast";
    if (i.kind == InstrKind::Iota) op = "iota";
    if (i.kind == InstrKind::Reduce) op = graph::op_name(i.reduce_op());
    if (!op.empty() && ops.size() < kMaxOps) ops.push_back(op);
  }
  if (ops.empty()) ops.push_back("copy");
  std::string name = "k";
  for (const auto& op : ops) name += "_" + op;
  const Instr& out = g.code[g.outputs[0].instr];
  return name + "_" + dtype_short(out.dtype);
}

}  // namespace kiln::plan
