#include "runtime/run_plan.hpp"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <chrono>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>

#include <nvtx3/nvToolsExt.h>

#include "../../kernels/scalar.cuh"

#include "kiln/errors.hpp"
#include "runtime/backends.hpp"
#include "runtime/debug.hpp"
#include "runtime/stats.hpp"

namespace kiln::runtime {
namespace {

// An NVTX range around a step, named after it, for Nsight timelines (costs nothing when no
// tool is attached).
struct Range {
  explicit Range(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~Range() { nvtxRangePop(); }
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;
};

// KILN_DEBUG=1: one line per step, timed to completion (so debugging serialises work). A
// kernel's first launch in the process also loads its module (CUDA loads lazily), which would
// pass for the kernel's own time: its line says so and gives no bandwidth.
void report(const std::string& what, plan::KernelOrigin origin, plan::Backend& b, const Device& d,
            int64_t bytes, std::chrono::steady_clock::time_point t0) {
  b.synchronize();
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  static constexpr const char* from[] = {"", " (compiled)", " (memory hit)", " (disk hit)"};
  bool first = origin == plan::KernelOrigin::Compiled || origin == plan::KernelOrigin::Disk;
  if (first && d.is_cuda())
    std::fprintf(stderr, "[kiln] %s on %s%s: %.3f ms, its first launch (module load included)\n",
                 what.c_str(), d.str().c_str(), from[static_cast<int>(origin)], ms);
  else
    std::fprintf(stderr, "[kiln] %s on %s%s: %.3f ms, %.1f GB/s\n", what.c_str(), d.str().c_str(),
                 from[static_cast<int>(origin)], ms, static_cast<double>(bytes) / ms / 1e6);
}

// The start of a step's KILN_DEBUG timing: reading the clock is left out without it.
std::chrono::steady_clock::time_point debug_clock() {
  return debug_level() >= 1 ? std::chrono::steady_clock::now()
                            : std::chrono::steady_clock::time_point{};
}

}  // namespace

// Never destroyed, as the pipeline's scratch lists: evaluations may run during exit.
PlanRun::Tables& PlanRun::tables() {
  static auto* t = new Tables;
  return *t;
}

PlanRun::PlanRun(const plan::Plan& p, const graph::Signature& sig) : PlanRun(p, sig, tables()) {}

PlanRun::PlanRun(const plan::Plan& p, const graph::Signature& sig, Tables& t)
    : p_(p), sig_(sig), bufs_(t.bufs), params_(t.params), backends_(t.backends) {
  // The index is derived by make_plan's last pass; a plan put together or edited elsewhere would
  // run from stale sizes and devices. Checked where the tests run with assertions (the sanitizer
  // builds), not on every release evaluation.
  assert(p.index.buffer_bytes.size() == p.buffers.size() &&
         p.index.step_bytes.size() == p.steps.size());
  backends_.clear();
  for (const Device& d : p.index.devices) backends_.push_back(&backend_for(d));
  bufs_.assign(p.buffers.size(), nullptr);
  params_.resize(p.steps.size());
  for (auto& v : params_) v.clear();
  for (size_t i = 0; i < p.buffers.size(); ++i)
    if (p.buffers[i].external) bufs_[i] = p.buffers[i].external;
  for (const auto& b : p.bindings.buffers) bufs_[b.buffer] = sig.values[b.value].node->storage();
  for (const auto& b : p.bindings.params) {
    auto& v = params_[b.step];
    if (v.empty()) {
      const auto& own = std::get<plan::KernelStep>(p.steps[b.step]).group.params;
      v.assign(own.begin(), own.end());
    }
    const graph::Value& c = sig.values[b.value];
    v[b.param] = c.node->scalar_value(c.which);
  }
}

PlanRun::~PlanRun() { bufs_.clear(); }  // the plan's buffers are released now, not at the next run

void PlanRun::allocate_buffer(int id) {
  const auto bytes = static_cast<size_t>(bytes_of(id));
  plan::Backend& b = backend_of(id);
  bufs_[id] = p_.buffers[id].check_words ? b.allocate_check_words(bytes) : b.allocate(bytes);
}

// A plan's kernels that this process has not compiled yet compile on threads of their own, up to
// one per core (NVRTC is thread-safe; the kernel cache locks per key, not while compiling): k new
// kernels then cost about the slowest compile, not the sum. Loading them stays in prepare(), on
// this thread. The first failure, in step order, is rethrown once all have finished. Returns
// what each step's compile reported (a null name where it compiled nothing here), or nothing
// when fewer than two kernels are new (every cached evaluation: no list is allocated then).
std::vector<plan::PreparedGroup> PlanRun::compile_new_kernels() {
  std::vector<size_t> fresh;
  for (size_t i = 0; i < p_.steps.size(); ++i)
    if (const auto* k = std::get_if<plan::KernelStep>(&p_.steps[i]);
        k && backend_of(k->group.outputs[0].buffer).needs_compile(*k))
      fresh.push_back(i);
  if (fresh.size() < 2) return {};
  std::vector<plan::PreparedGroup> early(p_.steps.size(), {nullptr});
  std::vector<std::exception_ptr> errors(fresh.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t j; (j = next++) < fresh.size();) {
      const auto& k = std::get<plan::KernelStep>(p_.steps[fresh[j]]);
      try {
        early[fresh[j]] = backend_of(k.group.outputs[0].buffer).compile_kernel(k);
      } catch (...) {
        errors[j] = std::current_exception();
      }
    }
  };
  // As many threads as cores (each NVRTC compile holds its own memory), this one among them.
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> threads;
  for (size_t t = 1; t < std::min(fresh.size(), cores); ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return early;
}

void PlanRun::compile() {
  // KILN_DEBUG reports what each kernel's lookup found, so it looks them up every time.
  if (p_.prepared->load(std::memory_order_acquire) && debug_level() < 1) return;
  const std::vector<plan::PreparedGroup> early = compile_new_kernels();
  if (debug_level() >= 1) kernels_.assign(p_.steps.size(), {nullptr});
  for (size_t i = 0; i < p_.steps.size(); ++i) {
    const auto* k = std::get_if<plan::KernelStep>(&p_.steps[i]);
    if (!k) continue;
    plan::Backend& b = backend_of(k->group.outputs[0].buffer);
    plan::PreparedGroup prepared = b.prepare(*k);
    if (!early.empty() && early[i].name) prepared = early[i];  // compiled just now, elsewhere
    if (!kernels_.empty()) kernels_[i] = prepared;
    if (!k->group.user_calls.empty()) check_user_code(*k, b);
  }
  p_.prepared->store(true, std::memory_order_release);
}

// Compiled first (above), so that a machine without a GPU but with KILN_JIT_ARCH still
// reports a user expression that does not compile.
void PlanRun::check_user_code(const plan::KernelStep& k, plan::Backend& b) const {
  try {
    b.check_user_code(k);
  } catch (const DeviceError& e) {
    if (cuda_available()) throw;
    throw DeviceError(std::string(e.what()) + "; this machine has no GPU");
  }
}

// Orders the run with other work on its devices (the backends' begin_run/read_from/end_run):
// the buffers it reads but did not write may come from other streams. end_run runs even when a
// step throws, so those streams still wait for what this run queued before their frees.
class PlanRun::Ordering {
 public:
  explicit Ordering(const PlanRun& r) : backends_(r.backends_) {
    for (plan::Backend* b : backends_) b->begin_run();
    for (size_t i = 0; i < r.bufs_.size(); ++i)
      if (r.bufs_[i]) r.backend_of(static_cast<int>(i)).read_from(*r.bufs_[i]);
  }
  ~Ordering() {
    for (plan::Backend* b : backends_) try {
        b->end_run();
      } catch (...) {  // a broken context: the step's own error is the one to report
      }
  }
  Ordering(const Ordering&) = delete;
  Ordering& operator=(const Ordering&) = delete;

 private:
  const std::vector<plan::Backend*>& backends_;  // one per device: distinct devices' backends
};

void PlanRun::run() {
  bump(counters().plans);
  Ordering ordering(*this);  // before any step: bufs_ holds exactly what the plan did not write
  for (current_ = 0; current_ < p_.steps.size(); ++current_)
    std::visit([this](const auto& s) { run_step(s); }, p_.steps[current_]);
  check_ranges();
  // No wait for copies still reading pinned host buffers: kiln's pinned allocator reuses a
  // freed block only after the streams current when it was freed (which the copies' streams
  // join, cuda/streams.hpp) have passed that point. So eval() returns with the GPU still busy.
}

// The range checks of the plan's steps, in step order: take's (a group's Check instructions)
// and a scatter's own (x.at(i) of a 1-d x).
void PlanRun::check_ranges() {
  for (int i : p_.index.checked_steps) {
    const plan::Step& step = p_.steps[i];
    if (const auto* k = std::get_if<plan::KernelStep>(&step)) {
      check_words(k->group.check_buffer, k->group.checks, "take",
                  "; use kiln::TakeMode::Wrap or Clip to map it into range");
    } else {
      const auto& s = std::get<plan::ScatterStep>(step);
      const plan::FusedGroup::IndexCheck c{shape_size(p_.buffers[s.out].shape), 0};
      check_words(s.check_buffer, {&c, 1}, "at", "");
    }
  }
}

// The words that `checks` folded the indices they found out of range into, read in place
// (Backend::allocate_check_words) once the steps that wrote them have finished: the lowest
// index below the range is reported, else the highest above it, as NumPy reports a bad index.
void PlanRun::check_words(int buffer, std::span<const plan::FusedGroup::IndexCheck> checks,
                          const char* what, const char* advice) {
  backend_of(buffer).synchronize();
  const auto* words = static_cast<const uint64_t*>(data(buffer));
  for (size_t c = 0; c < checks.size(); ++c) {
    const uint64_t below = words[2 * c], above = words[2 * c + 1];
    if (!below && !above) continue;
    const int64_t bad = below ? scalar::below_index(below) : scalar::above_index(above);
    throw ShapeError(std::string(what) + ": index " + std::to_string(bad) +
                     " is out of bounds for axis " + std::to_string(checks[c].axis) +
                     " with size " + std::to_string(checks[c].length) + advice);
  }
}

graph::BufferRef PlanRun::output(size_t i) {
  int id = p_.outputs[i];
  return id < 0 ? nullptr : get(id);  // -1: not written
}

void PlanRun::run_step(const plan::KernelStep& s) {
  bump(counters().kernels);
  const int64_t bytes = moved_bytes();
  bump(counters().bytes, bytes);
  Range range(s.group.name);
  auto t0 = debug_clock();
  // Allocate first: the group's worker threads only read the buffer table.
  for (const auto& o : s.group.outputs) get(o.buffer);
  for (const auto& a : s.group.accesses)
    if (a.buffer >= 0) get(a.buffer);
  if (s.group.check_buffer >= 0) get(s.group.check_buffer);
  auto lookup = [this](int id) { return bufs_[id]->data(); };
  const auto& bound = params_[current_];
  int out = s.group.outputs[0].buffer;
  plan::Backend& b = backend_of(out);
  b.run_group(s, bound.empty() ? s.group.params : bound, lookup);
  if (!kernels_.empty()) {
    const plan::PreparedGroup& k = kernels_[current_];
    report(*k.name, k.origin, b, device_of(out), bytes, t0);
    if (debug_level() >= 3 && k.source) std::fprintf(stderr, "%s\n", k.source->c_str());
  }
}

// Every copy passes through host memory: from a GPU to the host, from the host to a GPU, or
// both, through a staging buffer, between two GPUs.
void PlanRun::run_step(const plan::CopyStep& s) {
  Range range("copy");
  bump(counters().copies);
  bump(counters().bytes, moved_bytes());
  auto src = get(s.src);
  void* dst = data(s.dst);
  plan::Backend &from = backend_of(s.src), &to = backend_of(s.dst);
  size_t n = src->nbytes;
  if (device_of(s.dst).is_host()) {
    from.copy_to_host(dst, src->data(), n, get(s.dst)->pinned);
  } else if (device_of(s.src).is_host()) {
    to.copy_from_host(dst, src->data(), n, src->pinned);  // may still read src: see run()
  } else {
    auto staging = allocate(host(), n);
    from.copy_to_host(staging->data(), src->data(), n, staging->pinned);
    to.copy_from_host(dst, staging->data(), n, staging->pinned);
    to.synchronize();
  }
}

void PlanRun::run_step(const plan::FftStep& s) {
  Range range("fft");
  bump(counters().library);
  const int64_t bytes = moved_bytes();
  bump(counters().bytes, bytes);
  auto t0 = debug_clock();
  plan::Backend& b = backend_of(s.out);
  b.run_fft(s, p_.buffers[s.in], data(s.in), p_.buffers[s.out], data(s.out));
  if (debug_level() >= 1)
    report(std::string("fft (") + (s.inverse ? "inverse" : "forward") + ")",
           plan::KernelOrigin::None, b, device_of(s.out), bytes, t0);
}

void PlanRun::run_step(const plan::RandomStep& cached) {
  Range range("random");
  bump(counters().library);
  bump(counters().bytes, moved_bytes());
  plan::RandomStep s = cached;  // this graph's seed, offset and bounds
  for (const auto& r : p_.bindings.randoms)
    if (r.step == static_cast<int>(current_)) {
      const auto& a = sig_.values[r.value].node->attr<graph::RandomAttrs>();
      s.seed = a.seed;
      s.offset = a.offset;
      s.a = a.a;
      s.b = a.b;
    }
  auto t0 = debug_clock();
  plan::Backend& b = backend_of(s.out);
  b.run_random(s, p_.buffers[s.out], data(s.out));
  if (debug_level() >= 1)
    report("random draw", plan::KernelOrigin::None, b, device_of(s.out), moved_bytes(), t0);
}

void PlanRun::run_step(const plan::ScatterStep& s) {
  Range range("scatter");
  bump(counters().library);
  const int64_t count = shape_size(p_.buffers[s.positions].shape);
  const int64_t bytes = moved_bytes();
  bump(counters().bytes, bytes);
  auto t0 = debug_clock();
  plan::Backend& b = backend_of(s.out);
  const auto* values = static_cast<const char*>(data(s.values)) +
                       s.values_offset * itemsize(p_.buffers[s.values].dtype);
  void* check = s.check_buffer >= 0 ? data(s.check_buffer) : nullptr;
  b.run_scatter(s, p_.buffers[s.out], data(s.x), static_cast<const int64_t*>(data(s.positions)),
                values, count, data(s.out), static_cast<uint64_t*>(check));
  if (debug_level() >= 1)
    report(std::string("scatter (") + graph::op_name(s.op) + ")", plan::KernelOrigin::None, b,
           device_of(s.out), bytes, t0);
}

void PlanRun::run_step(const plan::ScanStep& s) {
  Range range("scan");
  bump(counters().library);
  const int64_t bytes = moved_bytes();
  bump(counters().bytes, bytes);
  auto t0 = debug_clock();
  plan::Backend& b = backend_of(s.out);
  b.run_scan(s, p_.buffers[s.out], data(s.in), data(s.out));
  if (debug_level() >= 1)
    report(std::string("scan (") + graph::op_name(s.op) + ")", plan::KernelOrigin::None, b,
           device_of(s.out), bytes, t0);
}

void PlanRun::run_step(const plan::CompressStep& s) {
  Range range("compress");
  bump(counters().library);
  const int64_t bytes = moved_bytes();
  bump(counters().bytes, bytes);
  auto t0 = debug_clock();
  plan::Backend& b = backend_of(s.out);
  b.run_compress(s, p_.buffers[s.out], static_cast<const bool*>(data(s.mask)),
                 s.values >= 0 ? data(s.values) : nullptr, data(s.out));
  if (debug_level() >= 1)
    report("compress", plan::KernelOrigin::None, b, device_of(s.out), bytes, t0);
}

void PlanRun::run_step(const plan::SortStep& s) {
  Range range("sort");
  bump(counters().library);
  const int64_t bytes = moved_bytes();
  bump(counters().bytes, bytes);
  auto t0 = debug_clock();
  plan::Backend& b = backend_of(s.out);
  b.run_sort(s, p_.buffers[s.out], data(s.in), data(s.out));
  if (debug_level() >= 1)
    report(std::string(graph::op_name(s.op)), plan::KernelOrigin::None, b, device_of(s.out), bytes,
           t0);
}

void PlanRun::run_step(const plan::MatmulStep& s) {
  Range range("matmul");
  bump(counters().library);
  const int64_t bytes = moved_bytes();
  bump(counters().bytes, bytes);
  auto t0 = debug_clock();
  plan::Backend& b = backend_of(s.out);
  b.run_matmul(s, p_.buffers[s.out], data(s.a.buffer), data(s.b.buffer),
               s.bias >= 0 ? data(s.bias) : nullptr, data(s.out));
  if (debug_level() >= 1)
    report(plan::describe(s, p_), plan::KernelOrigin::None, b, device_of(s.out), bytes, t0);
}

// Every rank's part is allocated and written (steps before), every rank's result allocated here;
// the graph's runner (the mesh's communicator, bound per evaluation) moves the data.
void PlanRun::run_step(const plan::CollectiveStep& s) {
  Range range(graph::collective_name(s.kind));
  bump(counters().library);
  const plan::PlanBuffer& part = p_.buffers[s.in.front()];
  const int64_t bytes = moved_bytes();
  bump(counters().bytes, bytes);
  graph::CollectiveRunner* runner = nullptr;
  for (const auto& c : p_.bindings.collectives)
    if (c.step == static_cast<int>(current_))
      runner = sig_.values[c.value].node->attr<graph::CollectiveAttrs>().runner.get();
  if (!runner) throw std::logic_error("plan: a collective step with no runner bound (kiln bug)");
  std::vector<const void*> in;
  std::vector<void*> out;
  for (size_t i = 0; i < s.in.size(); ++i) {
    in.push_back(data(s.in[i]));
    out.push_back(data(s.out[i]));
  }
  auto t0 = debug_clock();
  runner->run_collective(
      {s.kind, s.reduction, part.dtype, shape_size(part.shape), s.ranks, in, out});
  if (debug_level() >= 1)
    report(plan::describe(s, p_), plan::KernelOrigin::None, backend_of(s.out.front()),
           device_of(s.out.front()), bytes, t0);
}

}  // namespace kiln::runtime
