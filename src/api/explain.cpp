#include "kiln/explain.hpp"

#include <cstdio>
#include <sstream>

#include "api/build.hpp"
#include "codegen/kernel_source.hpp"
#include "codegen/summary.hpp"
#include "plan/planner.hpp"
#include "runtime/kernel_state.hpp"
#include "runtime/pipeline.hpp"

namespace kiln {
namespace {

std::string mb(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f MB", static_cast<double>(bytes) / 1e6);
  return text;
}

std::string buffer(const plan::Plan& p, int id) {
  const auto& b = p.buffers[id];
  return std::string(dtype_name(b.dtype)) + shape_str(b.shape) + (b.external ? " (input)" : "") +
         " on " + b.device.str();
}

// What a kernel computes: its summary, or for a scan with a fused producer (FusedGroup::scan)
// the scan step's words with the producer's expression in place of the array it would read.
std::string what(const plan::FusedGroup& g, const codegen::KernelSource& src) {
  if (!g.scan) return src.summary;
  return std::string(graph::op_name(g.scan->op)) + " (scan) of " +
         codegen::expression(g, g.outputs[0].instr) + " fused, along " + std::to_string(g.scan->n) +
         " values, " + std::to_string(g.scan->outer * g.scan->inner) + " times";
}

struct Describe {
  const plan::Plan& p;
  std::ostringstream& os;
  int64_t bytes;  // what the step moves (plan::RunIndex::step_bytes)

  void operator()(const plan::KernelStep& s) const {
    const auto& g = s.group;
    auto src = codegen::generate(g);
    const Device& d = p.buffers[g.outputs[0].buffer].device;
    os << "kernel " << src.name << " on " << d.str() << " ("
       << runtime::kernel_state(src, d, !g.user_calls.empty()) << "): " << what(g, src) << "\n    "
       << g.code.size() << " instructions over " << shape_str(g.shape) << ", moves " << mb(bytes)
       << "\n    schedule: " << codegen::describe_schedule(src) << "\n";
  }
  void operator()(const plan::FftStep& s) const {
    os << "fft (" << (s.inverse ? "inverse" : "forward") << ") " << buffer(p, s.in) << " -> "
       << buffer(p, s.out) << ", moves " << mb(bytes) << "\n";
  }
  void operator()(const plan::RandomStep& s) const {
    os << "random draw into " << buffer(p, s.out) << ", writes " << mb(bytes) << "\n";
  }
  void operator()(const plan::CopyStep& s) const {
    const auto& from = p.buffers[s.src].device;
    const auto& to = p.buffers[s.dst].device;
    os << "copy "
       << (from.is_host() ? "host -> device"
           : to.is_host() ? "device -> host"
                          : "device -> device")
       << " " << buffer(p, s.src) << ", " << mb(p.index.buffer_bytes[s.src]) << "\n";
  }
  void operator()(const plan::ScatterStep& s) const {
    os << "scatter (" << graph::op_name(s.op) << ") into a copy of " << buffer(p, s.x) << " at "
       << shape_size(p.buffers[s.positions].shape)
       << (s.indices ? " indices (range checked as it runs)" : " positions") << ", moves "
       << mb(bytes) << "\n";
  }
  void operator()(const plan::ScanStep& s) const {
    os << "scan (" << graph::op_name(s.op) << ") of " << buffer(p, s.in) << " along " << s.n
       << " values, " << s.outer * s.inner << " times, moves " << mb(bytes) << "\n";
  }
  void operator()(const plan::CompressStep& s) const {
    os << "compress: " << s.count << " of " << s.rows
       << (s.values >= 0 ? " rows of " + buffer(p, s.values) : std::string(" positions"))
       << " where " << buffer(p, s.mask) << " is true, moves " << mb(bytes) << "\n";
  }
  void operator()(const plan::MatmulStep& s) const {
    os << plan::describe(s, p) << ", reads " << buffer(p, s.a.buffer)
       << (s.bias >= 0 ? ", " : " and ") << buffer(p, s.b.buffer)
       << (s.bias >= 0 ? " and the bias " + buffer(p, s.bias) : std::string()) << ", moves "
       << mb(bytes) << "\n";
  }
  void operator()(const plan::SortStep& s) const {
    os << graph::op_name(s.op) << " ("
       << (p.buffers[s.out].device.is_cuda() ? "CUB radix sort" : "stable sort") << ") of "
       << buffer(p, s.in) << ", " << s.rows << (s.rows == 1 ? " row" : " rows") << " of " << s.n
       << ", moves " << mb(bytes) << "\n";
  }
  void operator()(const plan::CollectiveStep& s) const {
    os << plan::describe(s, p) << "\n";
    for (size_t i = 0; i < s.in.size(); ++i)
      os << "    rank " << s.ranks[i] << ": " << buffer(p, s.in[i]) << " -> " << buffer(p, s.out[i])
         << "\n";
  }
  void operator()(const plan::FreeStep&) const {}
};

}  // namespace

std::string explain(const std::vector<Array>& outputs) {
  auto hold = runtime::hold_evaluation();  // another thread's evaluation must not change the graph
  std::optional<plan::Plan> planned = runtime::plan_for(api::refs_of(outputs));
  if (!planned) return "nothing to do: every array is already evaluated\n";
  const plan::Plan& p = *planned;
  std::ostringstream os;
  int n = 0;
  for (size_t i = 0; i < p.steps.size(); ++i)
    if (!std::holds_alternative<plan::FreeStep>(p.steps[i])) {
      os << "step " << ++n << ": ";
      std::visit(Describe{p, os, p.index.step_bytes[i]}, p.steps[i]);
    }
  return os.str();
}

}  // namespace kiln
