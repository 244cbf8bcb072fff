// How much fusion buys: each expression evaluated eagerly (every operation its own kernel, as
// CuPy does) and lazily (kiln's fused plan), on the GPU when there is one and on the host.
// For each: kernels launched, bytes moved through memory, time per evaluation, speedup.
#include <kiln/kiln.hpp>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

struct Run {
  double ms;
  kiln::EngineStats per_eval;
};

Run measure(const std::function<kiln::Array()>& expr, kiln::Device d, bool eager) {
  kiln::Mode saved = kiln::get_mode();
  kiln::set_mode(eager ? kiln::Mode::Eager : kiln::Mode::Lazy);
  expr().eval();  // warm-up: compiles kernels, fills caches
  kiln::synchronize(d);
  const int iters = 10;
  kiln::reset_engine_stats();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) expr().eval();
  kiln::synchronize(d);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  kiln::set_mode(saved);
  kiln::EngineStats s = kiln::engine_stats();
  return {ms / iters,
          {s.plans / iters, s.kernels / iters, s.library_calls / iters, s.copies / iters,
           s.bytes_moved / iters}};
}

void row(const char* name, const std::function<kiln::Array()>& expr, kiln::Device d) {
  Run eager = measure(expr, d, true), fused = measure(expr, d, false);
  std::printf("%-26s %7lld %7lld %10.1f %10.1f %9.3f %9.3f %8.1fx\n", name,
              static_cast<long long>(eager.per_eval.kernels),
              static_cast<long long>(fused.per_eval.kernels), eager.per_eval.bytes_moved / 1e6,
              fused.per_eval.bytes_moved / 1e6, eager.ms, fused.ms, eager.ms / fused.ms);
}

// One table: every expression on device d over n float32 elements.
void table(kiln::Device d, int64_t n) {
  kiln::random::Generator g(0, d);
  auto x = g.uniform(0, 1, {n}, kiln::DType::Float32).eval();
  auto y = g.uniform(0, 1, {n}, kiln::DType::Float32).eval();
  auto m = x.reshape({n / 1024, 1024});
  std::printf("eager vs fused on %s, float32, %lld elements\n",
              d.is_cuda() ? "the GPU" : "the host", static_cast<long long>(n));
  std::printf("%-26s %7s %7s %10s %10s %9s %9s %9s\n", "expression", "k.eager", "k.fused",
              "MB eager", "MB fused", "ms eager", "ms fused", "speedup");
  row(
      "chain (PERFORMANCE.md)",
      [&] {
        auto t = x * 2 + 1;
        t = kiln::sin(t) * kiln::cos(y);
        t = t * t + y / 3;
        return kiln::exp(-t) - x;
      },
      d);
  row(
      "row normalisation",
      [&] { return (m - kiln::mean(m, {1}, true)) / (kiln::max(m, {1}, true) + 1e-6f); }, d);
  row(
      "sum(exp(-x*x) * y)", [&] { return kiln::sum(kiln::exp(-x * x) * y); }, d);
  row(
      "where(x > y, x - y, 0)", [&] { return kiln::where(x > y, x - y, 0); }, d);
}

}  // namespace

// eager_vs_fused [N]: the GPU table (when there is a GPU) over N elements (default 2^26), then
// the host table over N / 16 (default 2^22), so the host's run stays short.
int main(int argc, char** argv) {
  bool gpu = kiln::cuda_available();
  int64_t n = argc > 1 ? std::atoll(argv[1]) : int64_t{1} << 26;
  if (n < 1024 * 16 || n % (1024 * 16) != 0) {
    std::fprintf(stderr, "eager_vs_fused: N must be a positive multiple of 16384, not %lld\n",
                 static_cast<long long>(n));
    return 2;
  }
  if (gpu)
    table(kiln::cuda(), n), std::printf("\n");
  else
    std::printf("no GPU found: the host table only\n\n");
  table(kiln::host(), n / 16);
  return 0;
}
