#include "api/run_plan.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>

#include <nvtx3/nvToolsExt.h>

#include "api/debug.hpp"
#include "api/memory.hpp"
#include "cuda/kernels.hpp"
#include "cuda/library.hpp"
#include "cuda/runtime.hpp"
#include "host/fft.hpp"
#include "host/fused.hpp"
#include "host/random.hpp"
#include "jit/jit.hpp"
#include "kiln/errors.hpp"
#include "kiln/stats.hpp"

namespace kiln::api {
namespace {

std::atomic<int64_t> g_plans{0}, g_kernels{0}, g_library{0}, g_copies{0}, g_bytes{0};

int64_t bytes_of(const plan::PlanBuffer& b) { return shape_size(b.shape) * itemsize(b.dtype); }

// Bytes a kernel moves: each buffer it reads, once, and each it writes. (Runs on every
// launch, so no allocation: an access counts when no earlier access names its buffer.)
int64_t kernel_bytes(const plan::Plan& p, const plan::FusedGroup& g) {
  int64_t total = 0;
  for (auto a = g.accesses.begin(); a != g.accesses.end(); ++a) {
    auto same = [&](const plan::Access& b) { return b.buffer == a->buffer; };
    if (a->buffer >= 0 && std::find_if(g.accesses.begin(), a, same) == a)
      total += bytes_of(p.buffers[a->buffer]);
  }
  for (const auto& o : g.outputs) total += bytes_of(p.buffers[o.buffer]);
  return total;
}

// Without a GPU but with KILN_JIT_ARCH set, every host group is also compiled for that arch,
// so code generation and NVRTC are exercised by everything that runs (this is how CI covers
// them).
const std::string& compile_only_arch() {
  static const std::string arch = cuda_available() ? "" : jit::target_arch();
  return arch;
}

// An NVTX range around a step, named after it, for Nsight timelines (costs nothing when no
// tool is attached).
struct Range {
  explicit Range(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~Range() { nvtxRangePop(); }
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;
};

class PlanRunner {
 public:
  PlanRunner(const plan::Plan& p, const graph::Signature& sig)
      : p_(p), sig_(sig), bufs_(p.buffers.size()), params_(p.steps.size()) {
    for (size_t i = 0; i < p.buffers.size(); ++i)
      if (p.buffers[i].external) bufs_[i] = p.buffers[i].external;
    for (const auto& b : p.bindings.buffers) bufs_[b.buffer] = sig.values[b.value]->storage();
    for (const auto& b : p.bindings.params) {
      auto& v = params_[b.step];
      if (v.empty()) v = std::get<plan::KernelStep>(p.steps[b.step]).group.params;
      v[b.param] = sig.values[b.value]->scalars[0];
    }
  }

  std::vector<graph::BufferRef> run() {
    refuse_host_user_code();
    for (current_ = 0; current_ < p_.steps.size(); ++current_)
      std::visit([this](const auto& s) { run_step(s); }, p_.steps[current_]);
    // A pinned host buffer that fed a copy may be reused once freed: let the copies finish.
    for (int dev : copied_from_pinned_) gpu::synchronize(dev);
    std::vector<graph::BufferRef> out;
    for (int id : p_.outputs) out.push_back(id < 0 ? nullptr : get(id));  // -1: not written
    return out;
  }

 private:
  graph::BufferRef get(int id) {
    if (!bufs_[id]) {
      const auto& b = p_.buffers[id];
      bufs_[id] = allocate(b.device, static_cast<size_t>(shape_size(b.shape)) * itemsize(b.dtype));
    }
    return bufs_[id];
  }
  void* data(int id) { return get(id)->data(); }

  // A user CUDA expression on the host cannot run: say so before any step runs. With
  // KILN_JIT_ARCH and no GPU its kernel is compiled first, as every host group is, so a
  // machine without a GPU still reports an expression that does not compile.
  void refuse_host_user_code() {
    for (const auto& step : p_.steps) {
      const auto* k = std::get_if<plan::KernelStep>(&step);
      if (!k || k->group.user_calls.empty() || !device_of(k->group.outputs[0].buffer).is_host())
        continue;
      if (!compile_only_arch().empty()) gpu::compile_group(*k, compile_only_arch());
      try {
        cpu::check_runs_on_host(k->group);
      } catch (const DeviceError& e) {
        if (cuda_available()) throw;
        throw DeviceError(std::string(e.what()) + "; this machine has no GPU");
      }
    }
  }
  const Device& device_of(int id) const { return p_.buffers[id].device; }

  void run_step(const plan::KernelStep& s) {
    ++g_kernels;
    int64_t bytes = kernel_bytes(p_, s.group);
    g_bytes += bytes;
    Range range(s.group.name);
    auto t0 = std::chrono::steady_clock::now();
    gpu::LaunchRecord rec = launch(s);
    if (debug_level() >= 1) report(rec, device_of(s.group.outputs[0].buffer), bytes, t0);
  }

  gpu::LaunchRecord launch(const plan::KernelStep& s) {
    // Allocate first: the group's worker threads only read the buffer table.
    for (const auto& o : s.group.outputs) get(o.buffer);
    for (const auto& a : s.group.accesses)
      if (a.buffer >= 0) get(a.buffer);
    auto lookup = [this](int id) { return bufs_[id]->data(); };
    const auto& bound = params_[current_];
    const auto& params = bound.empty() ? s.group.params : bound;
    const Device& d = device_of(s.group.outputs[0].buffer);
    if (d.is_cuda()) return gpu::run_group(s, params, d.index, lookup);
    cpu::run_group(s.group, params, lookup);
    if (!compile_only_arch().empty()) return gpu::compile_group(s, compile_only_arch());
    return {&s.group.name, jit::Origin::Memory, 0, nullptr};
  }

  // KILN_DEBUG=1: one line per launch, timed to completion (so debugging serialises work).
  static void report(const gpu::LaunchRecord& rec, const Device& d, int64_t bytes,
                     std::chrono::steady_clock::time_point t0) {
    synchronize(d);
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    static constexpr const char* origin[] = {" (compiled)", " (memory hit)", " (disk hit)"};
    bool jit = d.is_cuda() || !compile_only_arch().empty();
    std::fprintf(stderr, "[kiln] %s on %s%s: %.3f ms, %.1f GB/s\n", rec.name->c_str(),
                 d.str().c_str(), jit ? origin[static_cast<int>(rec.origin)] : "", ms,
                 static_cast<double>(bytes) / ms / 1e6);
    if (debug_level() >= 3 && rec.source) std::fprintf(stderr, "%s\n", rec.source->c_str());
  }

  void run_step(const plan::CopyStep& s) {
    Range range("copy");
    ++g_copies;
    g_bytes += 2 * bytes_of(p_.buffers[s.src]);
    auto src = get(s.src);
    void* dst = data(s.dst);
    const Device &from = device_of(s.src), &to = device_of(s.dst);
    size_t n = src->nbytes;
    if (from.is_host() && to.is_host()) {
      if (n) std::memcpy(dst, src->data(), n);
    } else if (from.is_host()) {
      gpu::copy_to_device(to.index, dst, src->data(), n, src->pinned);
      if (src->pinned) copied_from_pinned_.push_back(to.index);
    } else if (to.is_host()) {
      gpu::copy_to_host(from.index, dst, src->data(), n, get(s.dst)->pinned);
    } else {  // between GPUs: through the host
      auto staging = allocate(host(), n);
      gpu::copy_to_host(from.index, staging->data(), src->data(), n, staging->pinned);
      gpu::copy_to_device(to.index, dst, staging->data(), n, staging->pinned);
      gpu::synchronize(to.index);
    }
  }

  void run_step(const plan::FftStep& s) {
    Range range("fft");
    ++g_library;
    g_bytes += bytes_of(p_.buffers[s.in]) + bytes_of(p_.buffers[s.out]);
    const Device& d = device_of(s.out);
    if (d.is_cuda())
      gpu::run_fft(s, p_.buffers[s.in], data(s.in), p_.buffers[s.out], data(s.out), d.index);
    else
      cpu::run_fft(s, p_.buffers[s.in], data(s.in), p_.buffers[s.out], data(s.out));
  }
  void run_step(const plan::RandomStep& cached) {
    Range range("random");
    ++g_library;
    g_bytes += bytes_of(p_.buffers[cached.out]);
    plan::RandomStep s = cached;  // this graph's seed, offset and bounds
    for (const auto& r : p_.bindings.randoms)
      if (r.step == static_cast<int>(current_)) {
        const auto& sc = sig_.values[r.value]->scalars;
        s.seed = static_cast<uint64_t>(sc[0].as_int());
        s.offset = static_cast<uint64_t>(sc[1].as_int());
        s.a = sc[2];
        s.b = sc[3];
      }
    const Device& d = device_of(s.out);
    if (d.is_cuda())
      gpu::run_random(s, p_.buffers[s.out], data(s.out), d.index);
    else
      cpu::run_random(s, p_.buffers[s.out], data(s.out));
  }
  void run_step(const plan::FreeStep& s) { bufs_[s.buffer].reset(); }

  const plan::Plan& p_;
  const graph::Signature& sig_;
  std::vector<graph::BufferRef> bufs_;
  std::vector<std::vector<Scalar>> params_;  // per step: the bound scalar parameters
  size_t current_ = 0;                       // the step being run
  std::vector<int> copied_from_pinned_;
};

}  // namespace

std::vector<graph::BufferRef> run_plan(const plan::Plan& p, const graph::Signature& sig) {
  ++g_plans;
  return PlanRunner(p, sig).run();
}

}  // namespace kiln::api

namespace kiln {

EngineStats engine_stats() {
  return {api::g_plans, api::g_kernels, api::g_library, api::g_copies, api::g_bytes};
}
void reset_engine_stats() {
  for (auto* c : {&api::g_plans, &api::g_kernels, &api::g_library, &api::g_copies, &api::g_bytes})
    *c = 0;
}

}  // namespace kiln
