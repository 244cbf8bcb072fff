// What kiln's host side costs per operation, with no GPU and nothing worth computing: graph
// building, the structural signature a plan-cache lookup walks, and a plan-cache hit
// (issue 12, item 4: building one node <= 150 ns on the developer machine).
//   build_chain   y = y * float(i) + 1.0f for i in 0..N, never evaluated: ns per operation
//                 added (two per step). y restarts from x every kSegment steps, so the chain
//                 stays below api::kMaxGraphDepth and nothing is forced.
//   build_indep   x * float(i) + 1.0f for i in 0..N, each result dropped (the figure)
//   build_array   y = y * x + x: operations on arrays alone, one new node each (no scalar or
//                 broadcast nodes), the cost of a node as such
//   lazy_loop_200 200 lazy steps s = s * 0.999f + 0.001f on 2^10 float32, then one evaluation:
//                 "miss" is the first run (plans made), "hit" every later run (plans reused)
//   loop_steady   lazy_loop_200 as gpu_bench runs it, end to end, on one float32 element so
//                 that the host's arithmetic is nil: build the 200 steps, evaluate (a plan-cache
//                 hit), release the graph, again and again; ns per step (two operations, one
//                 Affine node: graph::fuse_constant_step). The
//                 graph's release is inside the timing, as it is in a real loop
//   eval_tiny     (s + 1).eval() on one float32, as gpu_bench's `tiny` on the host executor:
//                 an evaluation whose plan is cached and whose work is nil, i.e. the engine's
//                 host side per evaluation (signature, plan-cache hit, binding, running the
//                 plan's one step, storing the result): us per evaluation
//   compile4      kiln::compile of a plan of four new kernels against each compiled alone
//                 (bench/compile_ahead.hpp); only when named, under KILN_JIT_ARCH=sm_90
//                 KILN_CACHE=off
// Usage: host_overhead [repeats] [only]   (only: run the workloads whose id starts so)
// Prints one JSON object per line. The process starts a thread first, as every kiln program
// on a GPU has (the CUDA runtime's): once a process has had a second thread, libstdc++ changes
// shared_ptr counts with atomic instructions, and a single-threaded benchmark would time the
// cheaper plain increments that no real program gets.
#include <kiln/kiln.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "compile_ahead.hpp"
#include "graph/node.hpp"
#include "runtime/plan_cache.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double ns_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
}
// This thread's CPU time in ns: on a machine shared with builds, wall time also counts the
// time the thread waited for a core.
double cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

void print(const std::string& id, const std::vector<std::pair<std::string, double>>& kv) {
  std::printf("{\"id\": \"%s\"", id.c_str());
  for (const auto& [k, v] : kv) std::printf(", \"%s\": %.6g", k.c_str(), v);
  std::printf("}\n");
}

struct MinMedian {
  double min, median;
};
MinMedian min_median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v.front(), v[v.size() / 2]};
}

// Steps per restart of build_chain: 2 * kSegment unevaluated nodes deep, below the forcing depth.
constexpr int kSegment = 64;

struct PerOp {
  double wall_ns, cpu_ns;
};

// One timing of build_chain: ns per operation. The chain is freed inside the timing (as a
// program's dropped temporaries are), once per segment.
PerOp build_chain_once(const kiln::Array& x, int n) {
  auto t0 = Clock::now();
  double c0 = cpu_ns();
  kiln::Array y = x;
  for (int i = 0; i < n; ++i) {
    if (i % kSegment == 0) y = x;
    y = y * float(i) + 1.0f;
  }
  y = kiln::Array();
  return {ns_since(t0) / (2.0 * n), (cpu_ns() - c0) / (2.0 * n)};
}

PerOp build_indep_once(const kiln::Array& x, int n) {
  auto t0 = Clock::now();
  double c0 = cpu_ns();
  for (int i = 0; i < n; ++i) {
    kiln::Array y = x * float(i) + 1.0f;
  }
  return {ns_since(t0) / (2.0 * n), (cpu_ns() - c0) / (2.0 * n)};
}

PerOp build_array_once(const kiln::Array& x, int n) {
  auto t0 = Clock::now();
  double c0 = cpu_ns();
  kiln::Array y = x;
  for (int i = 0; i < n; ++i) {
    if (i % kSegment == 0) y = x;
    y = y * x + x;
  }
  y = kiln::Array();
  return {ns_since(t0) / (2.0 * n), (cpu_ns() - c0) / (2.0 * n)};
}

// Graph nodes per operation of `y * c + 1.0f` steps: 0.5, the two operations of a step being
// one Affine node (graph::fuse_constant_step).
double nodes_per_op(const kiln::Array& x) {
  size_t before = kiln::graph::live_node_count();
  kiln::Array y = x;
  for (int i = 0; i < kSegment; ++i) y = y * float(i) + 1.0f;
  size_t after = kiln::graph::live_node_count();
  return double(after - before) / (2.0 * kSegment);
}

template <class F>
void bench_build(const char* id, const kiln::Array& x, int n, int repeats, F once,
                 bool scalars = true) {
  auto plans0 = kiln::engine_stats().plans;
  once(x, n);  // warm-up: the allocator's and the hash-cons table's first growth
  std::vector<double> wall, cpu;
  for (int r = 0; r < repeats; ++r) {
    PerOp t = once(x, n);
    wall.push_back(t.wall_ns), cpu.push_back(t.cpu_ns);
  }
  auto [mn, med] = min_median(wall);
  auto [cpu_mn, cpu_med] = min_median(cpu);
  print(id, {{"n", n},
             {"ns_per_op_min", mn},
             {"ns_per_op_median", med},
             {"cpu_ns_per_op_min", cpu_mn},
             {"cpu_ns_per_op_median", cpu_med},
             {"nodes_per_op", scalars ? nodes_per_op(x) : 1.0},
             {"evaluations", double(kiln::engine_stats().plans - plans0)}});
}

struct LoopTimes {
  double build_us, signature_us, eval_us, total_us;
};

// 200 lazy steps then one evaluation. The signature (the structural walk a plan-cache lookup
// starts with) is also timed on its own, on the graph just before it is evaluated.
LoopTimes lazy_loop_200(const kiln::Array& x) {
  auto t0 = Clock::now();
  kiln::Array s = x;
  for (int i = 0; i < 200; ++i) s = s * 0.999f + 0.001f;
  double build = ns_since(t0);
  auto t1 = Clock::now();
  auto sig = kiln::graph::signature({s.node()});
  double signature = ns_since(t1);
  auto t2 = Clock::now();
  s.eval();
  double eval = ns_since(t2);
  double total = build + eval;  // the signature's own timing is extra work, not counted
  return {build / 1e3, signature / 1e3, eval / 1e3, total / 1e3};
}

void bench_lazy_loop(const kiln::Array& x, int repeats) {
  kiln::runtime::reset_plan_cache_counters();
  LoopTimes miss = lazy_loop_200(x);
  auto c = kiln::runtime::plan_cache_counters();
  print("lazy_loop_200_miss", {{"total_us", miss.total_us},
                               {"build_us", miss.build_us},
                               {"signature_us", miss.signature_us},
                               {"eval_us", miss.eval_us},
                               {"plan_misses", double(c.misses)},
                               {"plan_hits", double(c.hits)}});
  kiln::runtime::reset_plan_cache_counters();
  std::vector<double> total, build, sig, eval;
  for (int r = 0; r < repeats; ++r) {
    LoopTimes t = lazy_loop_200(x);
    total.push_back(t.total_us), build.push_back(t.build_us);
    sig.push_back(t.signature_us), eval.push_back(t.eval_us);
  }
  c = kiln::runtime::plan_cache_counters();
  auto tt = min_median(total);
  print("lazy_loop_200_hit", {{"total_us_min", tt.min},
                              {"total_us_median", tt.median},
                              {"build_us_median", min_median(build).median},
                              {"signature_us_median", min_median(sig).median},
                              {"eval_us_median", min_median(eval).median},
                              {"plan_misses", double(c.misses) / repeats},
                              {"plan_hits", double(c.hits) / repeats}});
}

// ns per step of `iters` loops of gpu_bench's lazy_loop_200, back to back.
PerOp loop_steady_once(const kiln::Array& x, int iters) {
  auto t0 = Clock::now();
  double c0 = cpu_ns();
  for (int i = 0; i < iters; ++i) {
    kiln::Array s = x;
    for (int k = 0; k < 200; ++k) s = s * 0.999f + 0.001f;
    s.eval();
  }
  return {ns_since(t0) / (200.0 * iters), (cpu_ns() - c0) / (200.0 * iters)};
}

// Times once(per_timing) `repeats` times after a warm-up that makes and caches the plan, and
// prints the minimum and median wall and CPU time under `unit`, with the plan-cache hits per
// call (1 when every timed evaluation hit the cache).
template <class Once>
void time_cached(const char* name, const char* unit, int repeats, int per_timing, Once once) {
  once(per_timing);
  kiln::runtime::reset_plan_cache_counters();
  std::vector<double> wall, cpu;
  for (int r = 0; r < repeats; ++r) {
    PerOp t = once(per_timing);
    wall.push_back(t.wall_ns), cpu.push_back(t.cpu_ns);
  }
  auto c = kiln::runtime::plan_cache_counters();
  auto w = min_median(wall);
  auto u = min_median(cpu);
  const std::string per(unit);
  print(name, {{"iters", per_timing},
               {per + "_min", w.min},
               {per + "_median", w.median},
               {"cpu_" + per + "_min", u.min},
               {"cpu_" + per + "_median", u.median},
               {"plan_hits", double(c.hits) / (double(repeats) * per_timing)}});
}

void bench_loop_steady(int repeats) {
  kiln::Array x = kiln::asarray(std::vector<float>{1.0f}, kiln::host()).eval();
  time_cached("loop_steady", "ns_per_step", repeats, 20,
              [&](int iters) { return loop_steady_once(x, iters); });
}

// us per (s + 1).eval(), n of them per timing.
PerOp eval_tiny_once(const kiln::Array& s, int n) {
  auto t0 = Clock::now();
  double c0 = cpu_ns();
  for (int i = 0; i < n; ++i) (s + 1).eval();
  return {ns_since(t0) / (1e3 * n), (cpu_ns() - c0) / (1e3 * n)};
}

void bench_eval_tiny(int repeats) {
  kiln::Array s = kiln::asarray(std::vector<float>{1.0f}, kiln::host()).eval();
  time_cached("eval_tiny", "us_per_eval", repeats, 2000,
              [&](int n) { return eval_tiny_once(s, n); });
}

}  // namespace

int main(int argc, char** argv) {
  std::thread([] {}).join();  // shared_ptr counts atomic from now on, as in a real program
  int repeats = argc > 1 ? std::atoi(argv[1]) : 21;
  std::string only = argc > 2 ? argv[2] : "";
  auto runs = [&](const std::string& id) { return id.compare(0, only.size(), only) == 0; };
  std::vector<float> v(1 << 10, 0.5f);
  kiln::Array x = kiln::asarray(v, kiln::host());
  for (int n : {200, 10000}) {
    if (runs("build_chain")) bench_build("build_chain", x, n, repeats, build_chain_once);
    if (runs("build_indep")) bench_build("build_indep", x, n, repeats, build_indep_once);
    if (runs("build_array")) bench_build("build_array", x, n, repeats, build_array_once, false);
  }
  if (runs("lazy_loop_200")) bench_lazy_loop(x, repeats);
  if (runs("loop_steady")) bench_loop_steady(repeats);
  if (runs("eval_tiny")) bench_eval_tiny(repeats);
  if (only == "compile4") {
    auto t = bench::compile_ahead_times(kiln::host());
    print("compile4", t.fields());
  }
  return 0;
}
