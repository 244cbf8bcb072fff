// Plans as text, for KILN_DEBUG=2 and explain().
#include <sstream>

#include "plan/plan.hpp"

namespace kiln::plan {
namespace {

std::string buffer_str(const Plan& p, int id) {
  const auto& b = p.buffers[id];
  std::ostringstream os;
  os << "b" << id << ":" << dtype_name(b.dtype) << shape_str(b.shape);
  if (!b.device.is_host()) os << "@" << b.device.str();
  if (b.external) os << "(input)";
  return os.str();
}

struct Describe {
  const Plan& p;
  std::ostringstream& os;
  void operator()(const KernelStep& s) const {
    const auto& g = s.group;
    os << "  kernel " << g.name << " over " << shape_str(g.shape);
    if (g.reduction) {
      const auto& ax = g.reduction->axes;
      if (ax.size() == g.shape.size()) {
        os << " reducing every axis";
      } else {
        os << " reducing " << (ax.size() == 1 ? "axis" : "axes");
        for (size_t i = 0; i < ax.size(); ++i) os << (i ? ", " : " ") << ax[i];
      }
    }
    if (!g.row_axes.empty()) {
      os << " with its reductions along " << (g.row_axes.size() == 1 ? "axis" : "axes");
      for (size_t i = 0; i < g.row_axes.size(); ++i) os << (i ? ", " : " ") << g.row_axes[i];
      os << (g.folds_columns() ? " (columns)" : " (rows)");
    }
    if (g.scan)
      os << " then its " << graph::op_name(g.scan->op) << " along " << g.scan->n
         << " values (fused)";
    os << ": " << g.code.size() << " instructions, reads";
    for (const auto& a : g.accesses)
      if (a.buffer >= 0) os << " " << buffer_str(p, a.buffer);
    os << ", writes";
    for (const auto& o : g.outputs) os << " " << buffer_str(p, o.buffer);
    os << "\n";
  }
  void operator()(const FftStep& s) const {
    os << "  fft " << (s.inverse ? "inverse " : "") << buffer_str(p, s.in) << " -> "
       << buffer_str(p, s.out) << "\n";
  }
  void operator()(const RandomStep& s) const {
    os << "  random " << buffer_str(p, s.out) << " seed " << s.seed << "\n";
  }
  void operator()(const CopyStep& s) const {
    os << "  copy " << buffer_str(p, s.src) << " -> " << buffer_str(p, s.dst) << "\n";
  }
  void operator()(const ScatterStep& s) const {
    os << "  scatter " << graph::op_name(s.op) << " " << buffer_str(p, s.x) << " at "
       << buffer_str(p, s.positions) << " of " << buffer_str(p, s.values);
    if (s.values_stride == 0) os << "[" << s.values_offset << "] for each";
    if (s.indices) os << ", indices range-checked";
    os << " -> " << buffer_str(p, s.out) << "\n";
  }
  void operator()(const ScanStep& s) const {
    os << "  scan " << graph::op_name(s.op) << " " << buffer_str(p, s.in) << " -> "
       << buffer_str(p, s.out) << "\n";
  }
  void operator()(const CompressStep& s) const {
    os << "  compress " << (s.values >= 0 ? buffer_str(p, s.values) : std::string("positions"))
       << " where " << buffer_str(p, s.mask) << " -> " << buffer_str(p, s.out) << "\n";
  }
  void operator()(const MatmulStep& s) const {
    os << "  " << describe(s, p) << ", reads " << buffer_str(p, s.a.buffer) << " "
       << buffer_str(p, s.b.buffer)
       << (s.bias >= 0 ? " bias " + buffer_str(p, s.bias) : std::string()) << ", writes "
       << buffer_str(p, s.out) << "\n";
  }
  void operator()(const SortStep& s) const {
    os << "  " << graph::op_name(s.op) << " " << buffer_str(p, s.in) << " -> "
       << buffer_str(p, s.out) << "\n";
  }
  void operator()(const CollectiveStep& s) const {
    os << "  " << describe(s, p) << ":";
    for (size_t i = 0; i < s.in.size(); ++i)
      os << " " << buffer_str(p, s.in[i]) << " -> " << buffer_str(p, s.out[i]) << ";";
    os << "\n";
  }
  void operator()(const FreeStep& s) const { os << "  free b" << s.buffer << "\n"; }
};

}  // namespace

std::string describe(const CollectiveStep& s, const Plan& p) {
  const PlanBuffer& part = p.buffers[s.in.front()];
  const int64_t bytes = shape_size(part.shape) * itemsize(part.dtype);
  std::ostringstream os;
  os << graph::collective_name(s.kind);
  if (s.kind == graph::CollectiveKind::AllReduce)
    os << " (" << graph::collective_name(s.reduction) << ")";
  os << " over " << s.size << (s.size == 1 ? " rank" : " ranks") << " of " << dtype_name(part.dtype)
     << shape_str(part.shape) << " parts, " << graph::collective_bytes_sent(s.kind, bytes, s.size)
     << " bytes sent per rank";
  if (s.ranks.size() != static_cast<size_t>(s.size)) {
    os << " (this process: rank";
    for (int r : s.ranks) os << " " << r;
    os << ")";
  }
  return os.str();
}

int64_t moved_bytes(const ScatterStep& s, const Plan& p) {
  const auto& out = p.buffers[s.out];
  const int64_t count = shape_size(p.buffers[s.positions].shape);
  return (2 * shape_size(out.shape) + (s.values_stride ? count : 1)) * itemsize(out.dtype) +
         count * int64_t{sizeof(int64_t)};
}

std::string to_string(const Plan& p) {
  std::ostringstream os;
  for (const auto& s : p.steps) std::visit(Describe{p, os}, s);
  return os.str();
}

}  // namespace kiln::plan
