// kiln's side of the H200 benchmarks (PERFORMANCE.md). One workload per run:
//   gpu_bench chain|chain_sum|max|h2d|tiny|cold|warm_disk|warm_disk_stages|fft|fft_first|
//             randint|matmul|lazy_loop_200|selection|sorting|compile4
//   gpu_bench layout WORKLOAD ROWS COLS   (the 2-d programs, see bench_layout)
// prints one JSON object; bench/run_gpu_bench.py runs CuPy and PyTorch on the same machine
// in the same session and writes bench/results/h200.{json,md}.
#include <nvrtc.h>
#include <kiln/cache.hpp>
#include <kiln/kiln.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "codegen/kernel_source.hpp"
#include "compile_ahead.hpp"
#include "cuda/kernels.hpp"
#include "cuda/runtime.hpp"
#include "graph/node.hpp"
#include "jit/jit.hpp"
#include "plan/planner.hpp"
#include "runtime/backends.hpp"
#include "runtime/pipeline.hpp"
#include "runtime/plan_cache.hpp"
#include "runtime/run_plan.hpp"
#include "timing.hpp"

namespace {

using bench::Clock;
using bench::ms_since;
using bench::print;

// Median over `repeats` timings of `iters` back-to-back evaluations, synchronised at the end:
// the device time per evaluation when the host keeps ahead.
double time_ms(const std::function<void()>& f, int iters = 20, int repeats = 7) {
  return bench::median_ms(
      f, [] { kiln::synchronize(kiln::cuda()); }, iters, repeats);
}

kiln::Array chain(const kiln::Array& x, const kiln::Array& y) {
  auto t = x * 2 + 1;
  t = kiln::sin(t) * kiln::cos(y);
  t = t * t + y / 3;
  return kiln::exp(-t) - x;
}
kiln::Array chain_sum(const kiln::Array& x, const kiln::Array& y) {
  auto s = kiln::sin(x * 2 + 1) * kiln::cos(y);
  return kiln::sum(kiln::exp(-(s * s)) - x);
}

std::pair<kiln::Array, kiln::Array> chain_inputs(int64_t n) {
  kiln::random::Generator g(1, kiln::cuda());
  auto x = g.uniform(0, 1, {n}, kiln::DType::Float32).eval();
  auto y = g.uniform(0, 1, {n}, kiln::DType::Float32).eval();
  return {x, y};
}

void bench_chain(bool with_sum) {
  int64_t n = int64_t{1} << 27;
  auto [x, y] = chain_inputs(n);
  double fused = time_ms([&] { (with_sum ? chain_sum(x, y) : chain(x, y)).eval(); });
  double eager;
  {
    kiln::EagerScope eager_mode;
    eager = time_ms([&] { (with_sum ? chain_sum(x, y) : chain(x, y)).eval(); }, 5, 5);
  }
  print(with_sum ? "chain_sum" : "chain",
        {{"kiln_ms", fused}, {"kiln_eager_ms", eager}, {"n", double(n)}});
}

void bench_max() {
  auto a = kiln::random::randint(0, 255, {4000, 4000}, kiln::DType::Int64, kiln::cuda()).eval();
  double ms = time_ms([&] { kiln::max(a).eval(); });
  print("max", {{"kiln_ms", ms}, {"bytes", double(a.nbytes())}});
}

void bench_h2d() {
  std::vector<std::pair<std::string, double>> kv;
  for (int64_t side : {2000, 4000}) {
    auto host = kiln::random::randint(0, 255, {side, side}).eval();  // kiln host array: pinned
    std::vector<int64_t> pageable = host.to_vector<int64_t>();
    std::string s = std::to_string(side);
    kv.push_back(
        {"pinned_" + s + "_ms", time_ms([&] { kiln::asarray(host, kiln::cuda()).eval(); }, 10, 5)});
    kv.push_back(
        {"pageable_" + s + "_ms",
         time_ms(
             [&] {
               kiln::asarray(pageable.data(), kiln::DType::Int64, {side, side}, kiln::cuda());
             },
             10, 5)});
    auto dev = kiln::asarray(host, kiln::cuda()).eval();
    kv.push_back({"get_" + s + "_ms", time_ms([&] { dev.get().eval(); }, 10, 5)});
    kv.push_back({"bytes_" + s, double(host.nbytes())});
  }
  print("h2d", kv);
}

// Where the host time of a tiny evaluation goes: graph building, the signature, device memory,
// and a bare launch of an empty kernel, each timed alone.
double us_per(const std::function<void()>& f, int iters = 20000) {
  for (int i = 0; i < 100; ++i) f();
  auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) f();
  return ms_since(t0) * 1000 / iters;
}

// A kernel compiled from `source` through kiln's JIT, as a launchable handle.
const void* bare_kernel(const char* name, const char* source,
                        std::vector<std::string> options = {}) {
  auto k = kiln::jit::get({name, source, name, kiln::jit::target_arch(), std::move(options), ""});
  cudaLibrary_t lib;
  cudaKernel_t kern;
  cudaLibraryLoadData(&lib, k.kernel->cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
  cudaLibraryGetKernel(&kern, lib, name);
  return reinterpret_cast<const void*>(kern);
}

// GPU ms between two events around `launch`, the stream kept busy by a spinning kernel while the
// host enqueues it, so no host time falls between the events: the kernel's own time.
double kernel_ms(const std::function<void()>& launch) {
  static const void* spin = bare_kernel("k_spin",
                                        "extern \"C\" __global__ void k_spin(long long cycles) {\n"
                                        "  long long t0 = clock64();\n"
                                        "  while (clock64() - t0 < cycles) {}\n"
                                        "}");
  cudaStream_t stream = kiln::gpu::device(0).stream;
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  long long cycles = 2000000;  // about 1 ms at the H100's and H200's clocks
  void* args[] = {&cycles};
  cudaLaunchKernel(spin, dim3(1), dim3(1), args, 0, stream);
  cudaEventRecord(e0, stream);
  launch();
  cudaEventRecord(e1, stream);
  cudaEventSynchronize(e1);
  float ms = 0;
  cudaEventElapsedTime(&ms, e0, e1);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return ms;
}

// Host us per call of f in bursts of 128 calls, the GPU idle at each burst's start (median of
// 50 bursts).
double burst_us(const std::function<void()>& f) {
  constexpr int kBurst = 128;
  std::vector<double> t;
  for (int r = 0; r < 51; ++r) {
    kiln::synchronize(kiln::cuda());
    auto t0 = Clock::now();
    for (int i = 0; i < kBurst; ++i) f();
    if (r > 0) t.push_back(ms_since(t0) * 1000 / kBurst);  // the first warms up
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The plan's one kernel launched through the CUDA backend alone (run_group: the kernel's
// lookup, its arguments packed, cudaLaunchKernel), its buffers bound once: launch_us less this
// is what the plan runner adds around a launch (allocation, ordering, counters, the range).
// Back to back (the queue full), and in bursts (host time alone).
std::pair<double, double> run_group_us(const kiln::Array& s) {
  namespace rt = kiln::runtime;
  auto r = s + 1;
  auto hold = rt::hold_evaluation();
  kiln::graph::Signature sig;
  rt::Request req = rt::to_realize({r.node()}, &sig);
  const kiln::plan::Plan& p = rt::cached_plan(req.nodes, sig, req.held);
  {
    rt::PlanRun run(p, sig);
    run.compile();  // the kernel prepared and loaded, as every later evaluation finds it
  }
  std::vector<void*> data(p.buffers.size(), nullptr);
  std::vector<std::shared_ptr<kiln::graph::Buffer>> own;
  for (const auto& b : p.bindings.buffers)
    data[b.buffer] = sig.values[b.value].node->storage()->data();
  for (size_t i = 0; i < data.size(); ++i)
    if (!data[i]) {
      const auto& b = p.buffers[i];
      own.push_back(kiln::gpu::allocate(0, kiln::shape_size(b.shape) * kiln::itemsize(b.dtype)));
      data[i] = own.back()->data();
    }
  const auto& step = std::get<kiln::plan::KernelStep>(p.steps.front());
  kiln::plan::Backend& backend = rt::backend_for(kiln::cuda());
  const std::function<void*(int)> lookup = [&](int id) { return data[id]; };
  auto launch = [&] { backend.run_group(step, step.group.params, lookup); };
  const std::pair<double, double> us{us_per(launch), burst_us(launch)};
  kiln::synchronize(kiln::cuda());
  return us;
}

// An evaluation of r up to stage `last` of kStageNames (runtime/pipeline.cpp's realize without
// storing the result): timed with the stages before it, the differences say what each costs.
constexpr int kStages = 5;
constexpr const char* kStageNames[kStages] = {"to_realize_us", "plan_hit_us", "plan_run_us",
                                              "compile_us", "launch_us"};
void run_stages(const kiln::Array& r, int last) {
  namespace rt = kiln::runtime;
  auto hold = rt::hold_evaluation();
  kiln::graph::Signature sig;
  rt::Request req = rt::to_realize({r.node()}, &sig);
  if (last < 1) return;
  const kiln::plan::Plan& p = rt::cached_plan(req.nodes, sig, req.held);
  if (last < 2) return;
  rt::PlanRun run(p, sig);
  if (last < 3) return;
  run.compile();
  if (last < 4) return;
  run.run();
}

// The bare launch tiny is measured against: an empty kernel, one block of 32 threads, on kiln's
// stream.
std::function<void()> bare_empty_launch() {
  static const void* empty =
      bare_kernel("k_empty", "extern \"C\" __global__ void k_empty(float* p) {}");
  static void* p = nullptr;
  static void* args[] = {&p};
  cudaStream_t stream = kiln::gpu::device(0).stream;
  return [stream] { cudaLaunchKernel(empty, dim3(1), dim3(32), args, 0, stream); };
}

// tiny and the bare launch in alternating rounds, the order swapped every round, each round
// starting with the GPU idle: both sides see the host as it is at that moment. One long run of
// each, taken a second apart, can differ by 15% for the same work on a shared host (session 37:
// kiln_us 3.89 us against launch_us 3.39 us in one process), so the row's ratio is the median of
// the rounds' ratios (bench/run_gpu_bench.py).
void tiny_rounds(const kiln::Array& s, std::vector<std::pair<std::string, double>>& kv) {
  constexpr int kRounds = 9, kIters = 5000;
  const std::function<void()> bare = bare_empty_launch();
  const std::function<void()> tiny = [&] { (s + 1).eval(); };
  auto round_us = [](const std::function<void()>& f) {
    kiln::synchronize(kiln::cuda());
    return us_per(f, kIters);
  };
  for (int r = 0; r < kRounds; ++r) {
    const std::string at = "round" + std::to_string(r);
    double kiln_us, bare_us;
    if (r % 2 == 0) {
      kiln_us = round_us(tiny);
      bare_us = round_us(bare);
    } else {
      bare_us = round_us(bare);
      kiln_us = round_us(tiny);
    }
    kv.push_back({at + "_kiln_us", kiln_us});
    kv.push_back({at + "_bare_us", bare_us});
  }
  kiln::synchronize(kiln::cuda());
}

void tiny_breakdown(const kiln::Array& s, std::vector<std::pair<std::string, double>>& kv) {
  kv.push_back({"build_us", us_per([&] { auto r = s + 1; })});
  kv.push_back({"build_signature_us", us_per([&] {
                  auto r = s + 1;
                  auto sig = kiln::graph::signature({r.node()});
                })});
  kv.push_back({"alloc_free_us", us_per([] { kiln::gpu::allocate(0, 4); })});
  // A 4 MiB result (lazy_loop_200's) recycled by kiln, beside the CUDA pool's own calls for it.
  kv.push_back({"alloc_free_4mib_us", us_per([] { kiln::gpu::allocate(0, size_t{4} << 20); })});
  {
    cudaMemPool_t pool = nullptr;
    cudaDeviceGetDefaultMemPool(&pool, 0);
    cudaStream_t stream = kiln::gpu::device(0).stream;
    kv.push_back({"pool_alloc_free_4mib_us", us_per([&] {
                    void* p = nullptr;
                    cudaMallocFromPoolAsync(&p, size_t{4} << 20, pool, stream);
                    cudaFreeAsync(p, stream);
                  })});
  }
  for (int k = 0; k < kStages; ++k)
    kv.push_back({kStageNames[k], us_per([&] { run_stages(s + 1, k); })});
  const auto [group_us, group_burst_us] = run_group_us(s);
  kv.push_back({"run_group_us", group_us});
  kv.push_back({"run_group_burst_us", group_burst_us});
  cudaStream_t stream = kiln::gpu::device(0).stream;
  const std::function<void()> launch_empty = bare_empty_launch();
  kv.push_back({"bare_launch_us", us_per(launch_empty)});
  // The same work as kiln's kernel (one float read, 1 added, written to another buffer) in a
  // block of 256 threads as kiln launches it: what a hand-written launch of s + 1 costs.
  const void* add1 =
      bare_kernel("k_add1",
                  "extern \"C\" __global__ void k_add1(const float* x, float* y, int n) {\n"
                  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                  "  if (i < n) y[i] = x[i] + 1.0f;\n"
                  "}");
  auto out = kiln::gpu::allocate(0, 4);
  const void* in_ptr = s.data();
  void* out_ptr = out->data();
  int n = 1;
  void* add_args[] = {&in_ptr, &out_ptr, &n};
  auto launch_add1 = [&] { cudaLaunchKernel(add1, dim3(1), dim3(256), add_args, 0, stream); };
  kv.push_back({"bare_add1_launch_us", us_per(launch_add1)});
  kiln::synchronize(kiln::cuda());
  // Host time alone: bursts short enough that the launch queue never fills, so no call waits
  // for the GPU (the loops above run at the GPU's rate of tiny kernels once the queue is full).
  kv.push_back({"kiln_burst_us", burst_us([&] { (s + 1).eval(); })});
  kv.push_back({"bare_add1_burst_us", burst_us(launch_add1)});
  // GPU time alone: 100 launches queued behind a spinning kernel, so the GPU never waits for the
  // host; per launch. Says whether the back-to-back figures above are the host's rate or the GPU's.
  auto queued_us = [](const std::function<void()>& f) {
    return kernel_ms([&] {
             for (int i = 0; i < 100; ++i) f();
           }) *
           10;
  };
  kv.push_back({"kiln_gpu_us", queued_us([&] { (s + 1).eval(); })});
  kv.push_back({"bare_add1_gpu_us", queued_us(launch_add1)});
  kv.push_back({"bare_launch_gpu_us", queued_us(launch_empty)});
}

void bench_tiny() {
  auto s = kiln::asarray<float>({1.0f}, kiln::cuda()).eval();
  for (int i = 0; i < 100; ++i) (s + 1).eval();
  kiln::synchronize(kiln::cuda());
  const int iters = 20000;
  auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) (s + 1).eval();
  double host_us = ms_since(t0) * 1000 / iters;
  kiln::synchronize(kiln::cuda());
  std::vector<std::pair<std::string, double>> kv = {{"kiln_us", host_us}};
  tiny_breakdown(s, kv);
  tiny_rounds(s, kv);
  print("tiny", kv);
}

// lazy_loop_200's kernel alone on the GPU, beside the same 200 steps hand-written, rounded after
// each multiply and add as kiln's kernels are (--fmad=false: the host's and NumPy's results) and
// contracted into one fused multiply-add a step (NVRTC's default, and what Triton emits for
// torch.compile): how much of the time is the GPU's arithmetic, and what contraction saves.
void lazy_loop_kernel_times(const std::function<kiln::Array()>& build,
                            std::vector<std::pair<std::string, double>>& kv) {
  auto median_of = [](const std::function<double()>& f) {
    std::vector<double> t;
    for (int r = 0; r < 11; ++r) t.push_back(f() * 1000);
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  kv.push_back({"kernel_us", median_of([&] {
                  kiln::Array s = build();
                  return kernel_ms([&] { s.eval(); });
                })});
  const char* loop =
      "extern \"C\" __global__ void k_loop200(const float* x, float* y, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i >= n) return;\n"
      "  float s = x[i];\n"
      "  for (int k = 0; k < 200; ++k) s = s * 0.999f + 0.001f;\n"
      "  y[i] = s;\n"
      "}";
  const int n = 1 << 20;
  auto in = kiln::gpu::allocate(0, n * sizeof(float));
  auto out = kiln::gpu::allocate(0, n * sizeof(float));
  cudaMemset(in->data(), 0, n * sizeof(float));
  const void* x = in->data();
  void* y = out->data();
  int count = n;
  void* args[] = {&x, &y, &count};
  for (auto [key, options] : {std::pair<const char*, std::vector<std::string>>{
                                  "bare_rounded_kernel_us", {"--fmad=false"}},
                              {"bare_contracted_kernel_us", {}}}) {
    const void* k = bare_kernel("k_loop200", loop, options);
    cudaStream_t stream = kiln::gpu::device(0).stream;
    kv.push_back({key, median_of([&] {
                    return kernel_ms(
                        [&] { cudaLaunchKernel(k, dim3(n / 256), dim3(256), args, 0, stream); });
                  })});
  }
}

// Issue 12's host-overhead workload: 200 lazy steps s = s * 0.999f + 0.001f on 2^20 float32
// elements, then one evaluation (graph building, the plan-cache hit and one launch), per call.
void bench_lazy_loop() {
  auto x = kiln::asarray(std::vector<float>(size_t{1} << 20, 1.0f), kiln::cuda()).eval();
  auto build = [&] {
    kiln::Array s = x;
    for (int i = 0; i < 200; ++i) s = s * 0.999f + 0.001f;
    return s;
  };
  auto loop = [&] { build().eval(); };
  // Where one run's time goes, each part timed alone (medians of 21): building the 200 nodes (a
  // multiply and an add each: graph::fuse_constant_step), the evaluation's host side
  // (signature, plan-cache hit, launch), and the GPU's work.
  std::vector<double> b, e, g;
  for (int r = 0; r < 21; ++r) {
    kiln::synchronize(kiln::cuda());
    auto t0 = Clock::now();
    kiln::Array s = build();
    b.push_back(ms_since(t0));
    t0 = Clock::now();
    s.eval();
    e.push_back(ms_since(t0));
    t0 = Clock::now();
    kiln::synchronize(kiln::cuda());
    g.push_back(ms_since(t0));
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::vector<std::pair<std::string, double>> kv = {{"kiln_ms", time_ms(loop)},
                                                    {"build_ms", median(b)},
                                                    {"eval_host_ms", median(e)},
                                                    {"gpu_wait_ms", median(g)}};
  // The evaluation's host side in stages (as tiny's, the 200 nodes built outside the timing),
  // and the release of the 200 nodes (which an evaluation does once it has stored its result).
  for (int k = 0; k < kStages; ++k) {
    std::vector<double> t;
    for (int r = 0; r < 21; ++r) {
      kiln::Array s = build();
      kiln::synchronize(kiln::cuda());
      auto t0 = Clock::now();
      run_stages(s, k);
      t.push_back(ms_since(t0) * 1000);
    }
    kv.push_back({std::string("eval_") + kStageNames[k], median(t)});
  }
  std::vector<double> drop;
  for (int r = 0; r < 21; ++r) {
    kiln::Array s = build();
    auto t0 = Clock::now();
    s = kiln::Array();
    drop.push_back(ms_since(t0) * 1000);
  }
  kv.push_back({"release_graph_us", median(drop)});
  lazy_loop_kernel_times(build, kv);
  print("lazy_loop_200", kv);
}

// A bare NVRTC compile of `src` with the options kiln uses, in ms.
double bare_nvrtc_ms(const kiln::codegen::KernelSource& src, const std::string& arch) {
  const auto& headers = kiln::jit::embedded_headers();
  std::vector<const char*> names, texts;
  for (const auto& h : headers) names.push_back(h.name), texts.push_back(h.text);
  auto t0 = Clock::now();
  nvrtcProgram prog;
  nvrtcCreateProgram(&prog, src.source.c_str(), "bare.cu", static_cast<int>(names.size()),
                     texts.data(), names.data());
  std::string a = "--gpu-architecture=" + arch;
  const char* opts[] = {a.c_str(), "-std=c++17", "-default-device"};
  nvrtcCompileProgram(prog, 3, opts);
  size_t n = 0;
  nvrtcGetCUBINSize(prog, &n);
  std::vector<char> cubin(n);
  nvrtcGetCUBIN(prog, cubin.data());
  nvrtcDestroyProgram(&prog);
  return ms_since(t0);
}

// First evaluation of a never-seen fused kernel (run with an empty KILN_CACHE_DIR).
void bench_cold() {
  auto x = kiln::asarray<float>({1, 2, 3, 4}, kiln::cuda()).eval();
  kiln::synchronize(kiln::cuda());
  auto expr = kiln::tanh(x * 3 - 1) / (kiln::abs(x) + 2);
  auto t0 = Clock::now();
  expr.eval();
  kiln::synchronize(kiln::cuda());
  double first = ms_since(t0);
  // The same source again, compiled bare, now that NVRTC is loaded and warm in the process.
  auto e2 = kiln::tanh(x * 3 - 1) / (kiln::abs(x) + 2);
  auto plan = kiln::plan::make_plan({e2.node()});
  auto& g = std::get<kiln::plan::KernelStep>(plan.steps[0]).group;
  auto src = kiln::codegen::generate(g);
  double bare = bare_nvrtc_ms(src, kiln::jit::target_arch());
  auto st = kiln::cache::stats();
  print("cold",
        {{"kiln_first_ms", first}, {"bare_nvrtc_ms", bare}, {"compiles", double(st.compiles)}});
}

// First evaluation of the chain in a fresh process (its kernel on disk from an earlier run).
void bench_warm_disk() {
  auto x = kiln::asarray<float>({1, 2, 3, 4}, kiln::cuda()).eval();
  auto y = kiln::asarray<float>({4, 3, 2, 1}, kiln::cuda()).eval();
  kiln::synchronize(kiln::cuda());
  auto t0 = Clock::now();
  float v = chain(x, y).to_vector<float>()[0];
  double ms = ms_since(t0);
  auto st = kiln::cache::stats();
  print("warm_disk", {{"kiln_ms", ms},
                      {"compiles", double(st.compiles)},
                      {"disk_hits", double(st.disk_hits)},
                      {"value", v}});
}

// Where warm_disk's first evaluation goes, stage by stage (a fresh process, the kernel on
// disk): planning (signature and plan-cache miss), generating the kernel's source and finding it
// on disk, loading its module, the launch, its completion; then reading the result (an
// evaluation hitting every cache, the copy to the host queued, and waited for).
void bench_warm_disk_stages() {
  auto x = kiln::asarray<float>({1, 2, 3, 4}, kiln::cuda()).eval();
  auto y = kiln::asarray<float>({4, 3, 2, 1}, kiln::cuda()).eval();
  kiln::synchronize(kiln::cuda());
  namespace rt = kiln::runtime;
  std::vector<std::pair<std::string, double>> kv;
  auto t0 = Clock::now();
  auto stage = [&](const char* name) {
    kv.push_back({name, ms_since(t0)});
    t0 = Clock::now();
  };
  kiln::Array r = chain(x, y);
  {
    auto hold = rt::hold_evaluation();
    kiln::graph::Signature sig;
    rt::Request req = rt::to_realize({r.node()}, &sig);
    const kiln::plan::Plan& p = rt::cached_plan(req.nodes, sig, req.held);
    stage("plan_ms");
    for (const auto& step : p.steps)
      if (const auto* k = std::get_if<kiln::plan::KernelStep>(&step))
        kiln::gpu::compile_group(*k, kiln::gpu::device(0).arch);
    stage("source_and_cache_ms");  // generating the source, the disk cache's hit
    rt::PlanRun run(p, sig);
    run.compile();
    stage("module_load_ms");
    run.run();
    stage("launch_ms");
    kiln::synchronize(kiln::cuda());
    stage("complete_ms");
  }
  r.eval();
  stage("eval_again_ms");  // every cache hit: the result was not stored above
  kiln::Array h = r.get().eval();
  stage("copy_enqueue_ms");
  float v = static_cast<const float*>(h.data())[0];
  stage("copy_wait_ms");
  auto st = kiln::cache::stats();
  kv.push_back({"disk_hits", double(st.disk_hits)});
  kv.push_back({"compiles", double(st.compiles)});
  kv.push_back({"value", v});
  print("warm_disk_stages", kv);
}

void bench_fft() {
  auto a = kiln::random::randint(0, 255, {4000, 4000}, kiln::DType::Int64, kiln::cuda()).eval();
  auto b = kiln::random::uniform(0, 1, {4000, 4000}, kiln::DType::Float32, kiln::cuda())
               .astype(kiln::DType::Complex64)
               .eval();
  // fftn of real input runs R2C and expands the Hermitian half; cast to complex first, the
  // same array takes the C2C path it replaced (cast kernel + Z2Z), timed here for comparison.
  double i64 = time_ms([&] { kiln::fft::fftn(a).eval(); });
  double i64_c2c = time_ms([&] { kiln::fft::fftn(a.astype(kiln::DType::Complex128)).eval(); });
  double c64 = time_ms([&] { kiln::fft::fftn(b).eval(); });
  print("fft", {{"fftn_i64_ms", i64}, {"fftn_i64_c2c_ms", i64_c2c}, {"fftn_c64_ms", c64}});
}

// The tutorial's first fftn in a fresh process: plan creation, kernel lookup (compiled, or
// read from a warm disk cache), cuFFT planning. Run once with an empty and once with a warm
// KILN_CACHE_DIR.
void bench_fft_first() {
  auto a = kiln::random::randint(0, 255, {4000, 4000}, kiln::DType::Int64, kiln::cuda()).eval();
  kiln::synchronize(kiln::cuda());
  auto before = kiln::cache::stats();
  auto t0 = Clock::now();
  kiln::fft::fftn(a).eval();
  kiln::synchronize(kiln::cuda());
  double first = ms_since(t0);
  auto after = kiln::cache::stats();
  double warm = time_ms([&] { kiln::fft::fftn(a).eval(); }, 5, 5);
  print("fft_first", {{"first_ms", first},
                      {"warm_ms", warm},
                      {"compiles", double(after.compiles - before.compiles)},
                      {"disk_hits", double(after.disk_hits - before.disk_hits)}});
}

void bench_randint() {
  kiln::random::Generator g(3, kiln::cuda());
  double ms = time_ms([&] { g.randint(0, 255, {4000, 4000}).eval(); });
  print("randint", {{"kiln_ms", ms}, {"bytes", 4000.0 * 4000 * 8}});
}

// A plan of four new kernels compiled at once against each alone (run with KILN_CACHE=off).
void bench_compile4() {
  auto t = bench::compile_ahead_times(kiln::cuda());
  print("compile4", t.fields());
}

// Issue 13's scans and selections on 2^27 float32: cumsum, take of 2^26 random indices, and
// x[x > 0.5] (its count evaluated first, as kiln::masked does); issue 14's scatter: 2^26 random
// updates into 2^24 float32, set (NumPy's last update wins) and add (add.at).
void bench_selection() {
  const int64_t n = int64_t{1} << 27;
  kiln::random::Generator g(7, kiln::cuda());
  auto x = g.uniform(0, 1, {n}, kiln::DType::Float32).eval();
  auto idx = g.randint(0, n, {n / 2}, kiln::DType::Int64).eval();
  // The same indices with no history (as loaded or computed ones): take checks them.
  auto idx_unknown = (idx + 0).eval();
  auto small = g.uniform(0, 1, {n / 8}, kiln::DType::Float32).eval();
  auto at = g.randint(0, n / 8, {n / 2}, kiln::DType::Int64).eval();
  auto updates = g.uniform(0, 1, {n / 2}, kiln::DType::Float32).eval();
  print("selection",
        {{"cumsum_ms", time_ms([&] { kiln::cumsum(x).eval(); }, 10, 5)},
         // randint(0, n)'s indices, which take knows are in range (graph/value_range.hpp).
         {"take_ms", time_ms([&] { kiln::take(x, idx).eval(); }, 10, 5)},
         {"take_checked_ms", time_ms([&] { kiln::take(x, idx_unknown).eval(); }, 10, 5)},
         // Clip mode: the same gather with no range check, so no read of the
         // check's words (a wait for the GPU) at the end of each evaluation.
         {"take_clip_ms",
          time_ms([&] { kiln::take(x, idx, 0, kiln::TakeMode::Clip).eval(); }, 10, 5)},
         {"mask_ms", time_ms([&] { kiln::masked(x, x > 0.5f).eval(); }, 10, 5)},
         {"scatter_set_ms", time_ms([&] { small.at(at).set(updates).eval(); }, 10, 5)},
         {"scatter_add_ms", time_ms([&] { small.at(at).add(updates).eval(); }, 10, 5)}});
}

// cumsum(x * 2 + 1) on 2^27 float32: the producer computed in the scan's loads (one kernel,
// reading x once and writing the scan once), beside the same program unfused (eager: the
// producer written by a kernel, then scanned) and the scan alone.
void bench_cumsum_fused() {
  const int64_t n = int64_t{1} << 27;
  kiln::random::Generator g(7, kiln::cuda());
  auto x = g.uniform(0, 1, {n}, kiln::DType::Float32).eval();
  double fused = time_ms([&] { kiln::cumsum(x * 2 + 1).eval(); }, 10, 5);
  double unfused = 0;
  {
    kiln::EagerScope eager;
    unfused = time_ms([&] { kiln::cumsum(x * 2 + 1).eval(); }, 10, 5);
  }
  double scan_only = time_ms([&] { kiln::cumsum(x).eval(); }, 10, 5);
  print("cumsum_fused", {{"kiln_ms", fused},
                         {"unfused_ms", unfused},
                         {"cumsum_ms", scan_only},
                         {"bytes", 2.0 * 4 * static_cast<double>(n)}});
}

// Issue 13's sorts on 2^26 float32 (uniform, no NaNs): sort and argsort of the whole array,
// each evaluation writing a new result (CUB's radix sort, kiln/sorting.hpp).
void bench_sorting() {
  const int64_t n = int64_t{1} << 26;
  kiln::random::Generator g(11, kiln::cuda());
  auto x = g.uniform(0, 1, {n}, kiln::DType::Float32).eval();
  print("sorting", {{"sort_ms", time_ms([&] { kiln::sort(x).eval(); }, 10, 5)},
                    {"argsort_ms", time_ms([&] { kiln::argsort(x).eval(); }, 10, 5)}});
}

// Matrix products (issue 13), operands in memory, each evaluation writing a new product:
// float32 4096^3 in exact FP32 (kiln's default) and, for reference, TF32; a dense layer
// relu(a @ b + bias) at float32 4096^3 (the bias and relu in cuBLASLt's epilogue), and the
// same with gelu's tanh form (the bias in the epilogue, the gelu a kernel reading the step's
// result: plan::Epilogue has no gelu yet); float16 8192^3 (float32 accumulation); 64 batched
// float32 512^3 products. Each is timed after half a second idle (settled()): a product timed
// right after the float16 one ran up to 40% slower (64x512^3: 0.39-0.52 ms per step against 0.355
// alone, session 24), the clocks still held down by the power the previous product drew; the
// peers (run_gpu_bench.py) are timed the same way.
double settled(const std::function<void()>& f) {
  kiln::synchronize(kiln::cuda());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  return time_ms(f);
}

void bench_matmul() {
  using kiln::DType;
  kiln::random::Generator g(5, kiln::cuda());
  auto a = g.uniform(-1, 1, {4096, 4096}, DType::Float32).eval();
  auto b = g.uniform(-1, 1, {4096, 4096}, DType::Float32).eval();
  double f32 = settled([&] { kiln::matmul(a, b).eval(); });
  kiln::set_matmul_precision(kiln::MatmulPrecision::Tf32);
  double tf32 = settled([&] { kiln::matmul(a, b).eval(); });
  kiln::set_matmul_precision(kiln::MatmulPrecision::Float32);
  auto bias = g.uniform(-1, 1, {4096}, DType::Float32).eval();
  double dense = settled([&] { kiln::maximum(kiln::matmul(a, b) + bias, 0.0f).eval(); });
  double dense_gelu =
      settled([&] { kiln::gelu(kiln::matmul(a, b) + bias, kiln::GeluApproximate::Tanh).eval(); });
  a = b = bias = kiln::Array();
  auto h = g.uniform(-1, 1, {8192, 8192}, DType::Float16).eval();
  auto h2 = g.uniform(-1, 1, {8192, 8192}, DType::Float16).eval();
  double f16 = settled([&] { kiln::matmul(h, h2).eval(); });
  h = h2 = kiln::Array();
  auto x = g.uniform(-1, 1, {64, 512, 512}, DType::Float32).eval();
  auto y = g.uniform(-1, 1, {64, 512, 512}, DType::Float32).eval();
  double bmm = settled([&] { kiln::matmul(x, y).eval(); });
  print("matmul", {{"matmul_f32_4096_ms", f32},
                   {"matmul_tf32_4096_ms", tf32},
                   {"matmul_bias_relu_f32_4096_ms", dense},
                   {"matmul_bias_gelu_tanh_f32_4096_ms", dense_gelu},
                   {"matmul_f16_8192_ms", f16},
                   {"bmm_64x512x512_f32_ms", bmm}});
}

// The 2-d programs of PERFORMANCE.md's second set, at any shape:
//   gpu_bench layout softmax|layernorm|colnorm|colsum|rowsum|transpose|outer ROWS COLS
// (outer: a of ROWS times b of COLS), and layernorm's program over the middle axis of a
// (BATCH, ROWS, COLS) array: midnorm in one evaluation, midnorm_split with its mean and
// variance evaluated one by one (the three kernels kiln ran before it folded middle axes):
//   gpu_bench layout midnorm|midnorm_split ROWS COLS BATCH
// Prints the time and the bytes that must move once.
kiln::Array layout_program(const std::string& w, const kiln::Array& x, const kiln::Array& b) {
  if (w == "midnorm" || w == "midnorm_split") {
    auto m = kiln::mean(x, {1}, true);
    if (w == "midnorm_split") m = m.eval();
    auto d = x - m;
    auto v = kiln::mean(d * d, {1}, true);
    if (w == "midnorm_split") v = v.eval();
    return d / kiln::sqrt(v + 1e-5);
  }
  if (w == "softmax") {
    auto e = kiln::exp(x - kiln::max(x, {1}, true));
    return e / kiln::sum(e, {1}, true);
  }
  if (w == "layernorm") {
    auto d = x - kiln::mean(x, {1}, true);
    return d / kiln::sqrt(kiln::mean(d * d, {1}, true) + 1e-5);
  }
  if (w == "colnorm") {  // batch statistics: layernorm's program down the columns
    auto d = x - kiln::mean(x, {0}, true);
    return d / kiln::sqrt(kiln::mean(d * d, {0}, true) + 1e-5);
  }
  if (w == "colsum") return kiln::sum(x, {0});
  if (w == "rowsum") return kiln::sum(x, {1});
  if (w == "transpose") return x.T() * 2 + 1;
  if (w == "outer") return x.reshape({-1, 1}) * b.reshape({1, -1});
  throw std::invalid_argument("unknown layout workload " + w);
}

void bench_layout(const std::string& w, int64_t rows, int64_t cols, int64_t batch) {
  kiln::random::Generator g(5, kiln::cuda());
  bool outer = w == "outer";
  kiln::Shape shape = outer ? kiln::Shape{rows} : kiln::Shape{rows, cols};
  if (batch > 0) shape.insert(shape.begin(), batch);
  auto x = g.uniform(0, 1, shape, kiln::DType::Float32).eval();
  auto b = g.uniform(0, 1, {outer ? cols : 1}, kiln::DType::Float32).eval();
  auto out = layout_program(w, x, b).eval();
  double ms = time_ms([&] { layout_program(w, x, b).eval(); });
  double bytes = double(x.nbytes() + out.nbytes()) + (outer ? double(b.nbytes()) : 0.0);
  print("layout",
        {{"kiln_ms", ms}, {"bytes", bytes}, {"rows", double(rows)}, {"cols", double(cols)}});
}

// Issue 14's scatter on shapes and dtypes nobody tuned for: `updates` random positions in
// `positions` elements of `dtype` (float32, float16, int8, bool, float64, int64), set (the
// last update wins, as NumPy) and, for numbers, add (add.at). Values of at most 4 bytes take
// the packed one-pass set; wider ones the claim pass.
void bench_scatter(const std::string& dtype, int64_t updates, int64_t positions) {
  const std::map<std::string, kiln::DType> dtypes = {
      {"float32", kiln::DType::Float32}, {"float16", kiln::DType::Float16},
      {"int8", kiln::DType::Int8},       {"bool", kiln::DType::Bool},
      {"float64", kiln::DType::Float64}, {"int64", kiln::DType::Int64}};
  kiln::DType dt = dtypes.at(dtype);
  kiln::random::Generator g(13, kiln::cuda());
  auto x = (g.uniform(0, 1, {positions}, kiln::DType::Float32) * 100).astype(dt).eval();
  auto at = g.randint(0, positions, {updates}, kiln::DType::Int64).eval();
  auto values = (g.uniform(0, 1, {updates}, kiln::DType::Float32) * 100).astype(dt).eval();
  double set = time_ms([&] { x.at(at).set(values).eval(); }, 10, 5);
  double add = dt == kiln::DType::Bool ? 0.0 : time_ms([&] { x.at(at).add(values).eval(); }, 10, 5);
  print("scatter", {{"set_ms", set}, {"add_ms", add}});
}

}  // namespace

int main(int argc, char** argv) {
  if (!kiln::cuda_available()) {
    std::printf("{\"error\": \"no GPU\"}\n");
    return 0;
  }
  std::string w = argc > 1 ? argv[1] : "";
  if (w == "chain")
    bench_chain(false);
  else if (w == "chain_sum")
    bench_chain(true);
  else if (w == "max")
    bench_max();
  else if (w == "h2d")
    bench_h2d();
  else if (w == "tiny")
    bench_tiny();
  else if (w == "cold")
    bench_cold();
  else if (w == "warm_disk")
    bench_warm_disk();
  else if (w == "warm_disk_stages")
    bench_warm_disk_stages();
  else if (w == "fft")
    bench_fft();
  else if (w == "fft_first")
    bench_fft_first();
  else if (w == "randint")
    bench_randint();
  else if (w == "matmul")
    bench_matmul();
  else if (w == "lazy_loop_200")
    bench_lazy_loop();
  else if (w == "selection")
    bench_selection();
  else if (w == "sorting")
    bench_sorting();
  else if (w == "cumsum_fused")
    bench_cumsum_fused();
  else if (w == "compile4")
    bench_compile4();
  else if (w == "scatter" && argc == 5)
    bench_scatter(argv[2], std::atoll(argv[3]), std::atoll(argv[4]));
  else if (w == "layout" && (argc == 5 || argc == 6))
    bench_layout(argv[2], std::atoll(argv[3]), std::atoll(argv[4]),
                 argc == 6 ? std::atoll(argv[5]) : 0);
  else {
    std::fprintf(
        stderr,
        "usage: gpu_bench chain|chain_sum|max|h2d|tiny|cold|warm_disk|warm_disk_stages|fft|"
        "fft_first|randint|"
        "matmul|lazy_loop_200|selection|sorting|cumsum_fused|compile4\n"
        "       gpu_bench layout softmax|layernorm|colnorm|colsum|rowsum|transpose|outer ROWS "
        "COLS\n"
        "       gpu_bench layout midnorm|midnorm_split ROWS COLS BATCH\n"
        "       gpu_bench scatter float32|float16|int8|bool|float64|int64 UPDATES POSITIONS\n");
    return 2;
  }
  return 0;
}
