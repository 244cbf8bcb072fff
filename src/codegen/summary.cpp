#include "codegen/summary.hpp"

namespace kiln::codegen {
namespace {

constexpr size_t kMaxLength = 160;  // past this, the summary ends in "..."

std::string describe(const plan::FusedGroup& g, int i, int depth) {
  const plan::Instr& ins = g.code[i];
  if (depth > 12) return "...";
  auto sub = [&](int j) { return describe(g, j, depth + 1); };
  switch (ins.kind) {
    case plan::InstrKind::Load:
      return "in" + std::to_string(ins.arg);
    case plan::InstrKind::Param:
      return "s" + std::to_string(ins.arg);
    case plan::InstrKind::Iota:
      return "arange";
    case plan::InstrKind::Cast:
      return std::string(dtype_name(ins.dtype)) + "(" + sub(ins.a) + ")";
    case plan::InstrKind::Where:
      return "where(" + sub(ins.a) + ", " + sub(ins.b) + ", " + sub(ins.c) + ")";
    case plan::InstrKind::Unary:
      return std::string(graph::op_name(static_cast<graph::UnaryOp>(ins.op))) + "(" + sub(ins.a) +
             ")";
    case plan::InstrKind::Binary:
      return std::string(graph::op_name(static_cast<graph::BinaryOp>(ins.op))) + "(" + sub(ins.a) +
             ", " + sub(ins.b) + ")";
  }
  return "?";
}

}  // namespace

std::string summarize(const plan::FusedGroup& g) {
  std::string s;
  for (size_t o = 0; o < g.outputs.size(); ++o) {
    std::string e = describe(g, g.outputs[o].instr, 0);
    if (g.reduction) e = std::string(graph::op_name(g.reduction->op)) + "(" + e + ")";
    s += (o ? "; out" : "out") + std::to_string(o) + " = " + e;
  }
  if (s.size() > kMaxLength) s = s.substr(0, kMaxLength - 3) + "...";
  return s;
}

}  // namespace kiln::codegen
