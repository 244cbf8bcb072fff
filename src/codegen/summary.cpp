#include "codegen/summary.hpp"

#include "plan/naming.hpp"

namespace kiln::codegen {
namespace {

constexpr size_t kMaxLength = 160;  // past this, the summary ends in "..."

// A user expression may span lines; a summary is one line (it heads the source as a comment).
std::string one_line(const std::string& text) {
  std::string out;
  for (char ch : text) {
    bool space = ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
    if (!space)
      out += ch;
    else if (!out.empty() && out.back() != ' ')
      out += ' ';
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string describe(const plan::FusedGroup& g, int i, int depth) {
  const plan::Instr& ins = g.code[i];
  if (depth > 12) return "...";
  auto sub = [&](int j) { return describe(g, j, depth + 1); };
  switch (ins.kind) {
    case plan::InstrKind::Load:
      return "in" + std::to_string(ins.access());
    case plan::InstrKind::Param:
      return "s" + std::to_string(ins.param_index());
    case plan::InstrKind::Iota:
      return "arange";
    case plan::InstrKind::Gather:  // its index arithmetic (a remap, a take) left out
      return "in" + std::to_string(ins.access()) + "[map]";
    case plan::InstrKind::Check:  // no value: never an operand or an output
      return "range_check(" + sub(ins.b) + ")";
    case plan::InstrKind::Cast:
      return std::string(dtype_name(ins.dtype)) + "(" + sub(ins.a) + ")";
    case plan::InstrKind::Where:
      if (g.code[ins.a].addressing)  // an index map's value and, where it reads nothing, fill
        return "remap(" + sub(ins.b) + ", fill=" + sub(ins.c) + ")";
      return "where(" + sub(ins.a) + ", " + sub(ins.b) + ", " + sub(ins.c) + ")";
    case plan::InstrKind::Unary:
      return std::string(graph::op_name(ins.unary_op())) + "(" + sub(ins.a) + ")";
    case plan::InstrKind::Binary:
      return std::string(graph::op_name(ins.binary_op())) + "(" + sub(ins.a) + ", " + sub(ins.b) +
             ")";
    case plan::InstrKind::Reduce:  // folded along the row, the same at every position of it
      return std::string(graph::op_name(ins.reduce_op())) + "_row(" + sub(ins.a) + ")";
    case plan::InstrKind::User: {
      // The expression with its bindings: user[x * y](x=in0, y=in1).
      const auto& call = g.user_calls[ins.user_call()];
      std::string s = "user[" + one_line(call.code->expr) + "](";
      for (size_t k = 0; k < call.operands.size(); ++k)
        s += (k ? ", " : "") + call.code->names[k] + "=" + sub(call.operands[k]);
      return s + ")";
    }
  }
  return "?";
}

}  // namespace

std::string expression(const plan::FusedGroup& g, int instr) { return describe(g, instr, 0); }

std::string summarize(const plan::FusedGroup& g) {
  std::string s;
  for (size_t o = 0; o < g.outputs.size(); ++o) {
    std::string e = describe(g, g.outputs[o].instr, 0);
    if (g.reduction) e = std::string(graph::op_name(g.reduction->op)) + "(" + e + ")";
    if (g.scan) e = std::string(graph::op_name(g.scan->op)) + "(" + e + ")";
    s += (o ? "; out" : "out") + std::to_string(o) + " = " + e;
  }
  if (s.size() > kMaxLength) s = s.substr(0, kMaxLength - 3) + "...";
  return s;
}

std::string dtype_signature(const plan::FusedGroup& g) {
  std::string s;
  for (size_t a = 0; a < g.accesses.size(); ++a) {
    if (g.accesses[a].buffer < 0) continue;  // an iota reads no memory
    for (const plan::Instr& ins : g.code)
      if ((ins.kind == plan::InstrKind::Load || ins.kind == plan::InstrKind::Gather) &&
          ins.access() == static_cast<int>(a)) {
        s += std::string(plan::dtype_short(ins.dtype)) + " ";
        break;
      }
  }
  s += "->";
  for (size_t o = 0; o < g.outputs.size(); ++o)
    s += " " + std::string(plan::dtype_short(g.out_dtype(o)));
  return s;
}

}  // namespace kiln::codegen
