// kiln::to_dot: the plan drawn as a graph, fusion groups as clusters.
#include <sstream>

#include "api/build.hpp"
#include "codegen/summary.hpp"
#include "kiln/explain.hpp"
#include "plan/planner.hpp"
#include "runtime/pipeline.hpp"

namespace kiln {
namespace {

std::string instr_label(const plan::Instr& ins) {
  switch (ins.kind) {
    case plan::InstrKind::Load:
      return "load";
    case plan::InstrKind::Param:
      return "scalar";
    case plan::InstrKind::Iota:
      return "arange";
    case plan::InstrKind::Gather:
      return "gather";
    case plan::InstrKind::Check:
      return "range check";
    case plan::InstrKind::Where:
      return "where";
    case plan::InstrKind::Cast:
      return std::string("to ") + dtype_name(ins.dtype);
    case plan::InstrKind::Unary:
      return graph::op_name(static_cast<graph::UnaryOp>(ins.op));
    case plan::InstrKind::Binary:
      return graph::op_name(static_cast<graph::BinaryOp>(ins.op));
    case plan::InstrKind::User:
      return "user expression";
    case plan::InstrKind::Reduce:
      return std::string(graph::op_name(static_cast<graph::ReduceOp>(ins.op))) + " of the row";
  }
  return "?";
}

class Dot {
 public:
  explicit Dot(const plan::Plan& p) : p_(p) {}

  std::string draw() {
    os_ << "digraph kiln {\n  rankdir=LR;\n  node [fontname=\"monospace\", fontsize=10];\n";
    for (size_t b = 0; b < p_.buffers.size(); ++b) buffer(static_cast<int>(b));
    for (size_t s = 0; s < p_.steps.size(); ++s) {
      step_ = static_cast<int>(s);
      std::visit([this](const auto& st) { draw_step(st); }, p_.steps[s]);
    }
    os_ << "}\n";
    return os_.str();
  }

 private:
  void buffer(int b) {
    const auto& d = p_.buffers[b];
    os_ << "  b" << b << " [shape=box, label=\"" << dtype_name(d.dtype) << shape_str(d.shape)
        << "\\n"
        << d.device.str() << (d.external ? ", input" : "") << "\"];\n";
  }
  std::string id(int i) const { return "s" + std::to_string(step_) + "_" + std::to_string(i); }

  void draw_step(const plan::KernelStep& s) {
    const auto& g = s.group;
    os_ << "  subgraph cluster_" << step_ << " {\n    label=\"" << g.name
        << (g.reduction ? std::string(" (") + graph::op_name(g.reduction->op) + ")" : "")
        << (g.scan ? std::string(" (") + graph::op_name(g.scan->op) + " of its value)" : "")
        << "\";\n    style=filled; fillcolor=\"#eef4ff\";\n";
    for (size_t i = 0; i < g.code.size(); ++i)
      os_ << "    " << id(static_cast<int>(i)) << " [label=\"" << instr_label(g.code[i])
          << "\"];\n";
    os_ << "  }\n";
    for (size_t i = 0; i < g.code.size(); ++i) {
      const auto& ins = g.code[i];
      for (int arg : {ins.a, ins.b, ins.c})
        if (arg >= 0 && ins.kind != plan::InstrKind::Load && ins.kind != plan::InstrKind::Gather)
          os_ << "  " << id(arg) << " -> " << id(static_cast<int>(i)) << ";\n";
      if (ins.kind == plan::InstrKind::User) {  // its operands are named, and may be many
        const auto& call = g.user_calls[ins.arg];
        for (size_t k = 0; k < call.operands.size(); ++k)
          os_ << "  " << id(call.operands[k]) << " -> " << id(static_cast<int>(i)) << " [label=\""
              << call.code->names[k] << "\"];\n";
      }
      if (ins.kind == plan::InstrKind::Gather)  // its index
        os_ << "  " << id(ins.a) << " -> " << id(static_cast<int>(i)) << " [label=\"index\"];\n";
      if ((ins.kind == plan::InstrKind::Load || ins.kind == plan::InstrKind::Gather) &&
          g.accesses[ins.arg].buffer >= 0)
        os_ << "  b" << g.accesses[ins.arg].buffer << " -> " << id(static_cast<int>(i)) << ";\n";
    }
    for (const auto& o : g.outputs) os_ << "  " << id(o.instr) << " -> b" << o.buffer << ";\n";
  }
  void library(const std::string& label, int in, int out) {
    os_ << "  " << id(0) << " [shape=component, style=filled, fillcolor=\"#fff3d6\", label=\""
        << label << "\"];\n";
    if (in >= 0) os_ << "  b" << in << " -> " << id(0) << ";\n";
    os_ << "  " << id(0) << " -> b" << out << ";\n";
  }
  void draw_step(const plan::FftStep& s) {
    library(s.inverse ? "inverse FFT" : "FFT", s.in, s.out);
  }
  void draw_step(const plan::RandomStep& s) { library("random", -1, s.out); }
  void draw_step(const plan::CopyStep& s) {
    os_ << "  b" << s.src << " -> b" << s.dst << " [style=dashed, color=red, label=\"copy "
        << p_.buffers[s.src].device.str() << " -> " << p_.buffers[s.dst].device.str() << "\"];\n";
  }
  void draw_step(const plan::ScatterStep& s) {
    library(std::string("scatter ") + graph::op_name(s.op), s.x, s.out);
    os_ << "  b" << s.positions << " -> " << id(0) << " [label=\"positions\"];\n"
        << "  b" << s.values << " -> " << id(0) << " [label=\"values\"];\n";
  }
  void draw_step(const plan::ScanStep& s) { library(graph::op_name(s.op), s.in, s.out); }
  void draw_step(const plan::CompressStep& s) {
    library("compress", s.mask, s.out);
    if (s.values >= 0) os_ << "  b" << s.values << " -> " << id(0) << " [label=\"values\"];\n";
  }
  void draw_step(const plan::SortStep& s) {
    library(std::string(graph::op_name(s.op)) +
                (p_.buffers[s.out].device.is_cuda() ? " (CUB)" : " (stable sort)"),
            s.in, s.out);
  }
  void draw_step(const plan::MatmulStep& s) {
    library((p_.buffers[s.out].device.is_cuda() ? "matmul (cuBLASLt)" : "matmul (Eigen)") +
                plan::epilogue_str(s.epilogue),
            s.a.buffer, s.out);
    os_ << "  b" << s.b.buffer << " -> " << id(0) << " [label=\"b\"];\n";
    if (s.bias >= 0) os_ << "  b" << s.bias << " -> " << id(0) << " [label=\"bias\"];\n";
  }
  // One node for the collective, every rank's part in and result out.
  void draw_step(const plan::CollectiveStep& s) {
    library(plan::describe(s, p_), s.in.front(), s.out.front());
    for (size_t i = 1; i < s.in.size(); ++i)
      os_ << "  b" << s.in[i] << " -> " << id(0) << ";\n  " << id(0) << " -> b" << s.out[i]
          << ";\n";
  }
  void draw_step(const plan::FreeStep&) {}

  const plan::Plan& p_;
  std::ostringstream os_;
  int step_ = 0;
};

}  // namespace

std::string to_dot(const std::vector<Array>& outputs) {
  auto hold = runtime::hold_evaluation();  // another thread's evaluation must not change the graph
  std::optional<plan::Plan> planned = runtime::plan_for(api::refs_of(outputs));
  return planned ? Dot(*planned).draw() : "digraph kiln {\n}\n";
}

}  // namespace kiln
