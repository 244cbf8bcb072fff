// A finished plan's RunIndex: the sizes and devices its runs would otherwise work out again on
// every evaluation of a cached plan.
#include <algorithm>

#include "plan/plan.hpp"

namespace kiln::plan {
namespace {

// Bytes a kernel moves: each buffer it reads, once, and each it writes.
int64_t kernel_bytes(const FusedGroup& g, const std::vector<int64_t>& bytes) {
  int64_t total = 0;
  for (auto a = g.accesses.begin(); a != g.accesses.end(); ++a) {
    auto same = [&](const Access& b) { return b.buffer == a->buffer; };
    if (a->buffer >= 0 && std::find_if(g.accesses.begin(), a, same) == a) total += bytes[a->buffer];
  }
  for (const auto& o : g.outputs) total += bytes[o.buffer];
  return total;
}

// Bytes a step moves: what it reads and what it writes (a copy's data passes through both).
struct MovedBytes {
  const Plan& p;
  const std::vector<int64_t>& bytes;
  int64_t operator()(const KernelStep& s) const { return kernel_bytes(s.group, bytes); }
  int64_t operator()(const FftStep& s) const { return bytes[s.in] + bytes[s.out]; }
  int64_t operator()(const RandomStep& s) const { return bytes[s.out]; }
  int64_t operator()(const CopyStep& s) const { return 2 * bytes[s.src]; }
  int64_t operator()(const ScatterStep& s) const { return moved_bytes(s, p); }
  int64_t operator()(const ScanStep& s) const { return bytes[s.in] + bytes[s.out]; }
  int64_t operator()(const CompressStep& s) const {
    return bytes[s.mask] + bytes[s.out] + (s.values >= 0 ? bytes[s.values] : 0);
  }
  int64_t operator()(const MatmulStep& s) const {
    const int64_t bias = s.bias >= 0 ? s.n * itemsize(p.buffers[s.out].dtype) : 0;
    return bytes[s.a.buffer] + bytes[s.b.buffer] + bytes[s.out] + bias;
  }
  int64_t operator()(const SortStep& s) const { return bytes[s.in] + bytes[s.out]; }
  int64_t operator()(const CollectiveStep& s) const {
    return static_cast<int64_t>(s.in.size()) * (bytes[s.in.front()] + bytes[s.out.front()]);
  }
  int64_t operator()(const FreeStep&) const { return 0; }
};

}  // namespace

void index_plan(Plan& p) {
  RunIndex& x = p.index;
  x = {};
  for (const auto& b : p.buffers) {
    x.buffer_bytes.push_back(shape_size(b.shape) * itemsize(b.dtype));
    auto d = std::find(x.devices.begin(), x.devices.end(), b.device);
    if (d == x.devices.end()) d = x.devices.insert(d, b.device);
    x.buffer_device.push_back(static_cast<int>(d - x.devices.begin()));
  }
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const Step& s = p.steps[i];
    x.step_bytes.push_back(std::visit(MovedBytes{p, x.buffer_bytes}, s));
    const auto* k = std::get_if<KernelStep>(&s);
    const auto* scatter = std::get_if<ScatterStep>(&s);
    if ((k && k->group.check_buffer >= 0) || (scatter && scatter->check_buffer >= 0))
      x.checked_steps.push_back(static_cast<int>(i));
  }
}

}  // namespace kiln::plan
