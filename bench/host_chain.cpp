// The `chain` workload of PERFORMANCE.md on the host: kiln's host executor against NumPy
// (Debian's python3-numpy) on the same machine in the same run.
//   t = x*2+1; t = sin(t)*cos(y); t = t*t + y/3; out = exp(-t) - x     (float32, 2^24)
// Usage: host_chain [elements] [repeats]
#include <kiln/kiln.hpp>

#include "numpy_timer.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

kiln::Array chain(const kiln::Array& x, const kiln::Array& y) {
  auto t = x * 2 + 1;
  t = kiln::sin(t) * kiln::cos(y);
  t = t * t + y / 3;
  return kiln::exp(-t) - x;
}

double time_kiln(const kiln::Array& x, const kiln::Array& y, int repeats) {
  chain(x, y).eval();  // warm-up: thread pool start, first-touch of memory
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    auto t0 = Clock::now();
    chain(x, y).eval();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  return bench::median(ms);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = argc > 1 ? std::atoll(argv[1]) : int64_t{1} << 24;
  int repeats = argc > 2 ? std::atoi(argv[2]) : 11;
  std::mt19937 gen(0);
  std::uniform_real_distribution<float> dist(0, 1);
  std::vector<float> xs(n), ys(n);
  for (auto& v : xs) v = dist(gen);
  for (auto& v : ys) v = dist(gen);
  auto x = kiln::asarray(xs), y = kiln::asarray(ys);

  double kiln_ms = time_kiln(x, y, repeats);
  double numpy_ms =
      bench::time_numpy("n=" + std::to_string(n) +
                            "\nrng=np.random.default_rng(0)\n"
                            "x=rng.random(n,dtype=np.float32); y=rng.random(n,dtype=np.float32)",
                        "t=x*2+1; t=np.sin(t)*np.cos(y); t=t*t+y/3; return np.exp(-t)-x", repeats);
  std::printf("chain, float32, %lld elements, median of %d runs\n", static_cast<long long>(n),
              repeats);
  std::printf("  kiln host : %8.2f ms\n", kiln_ms);
  if (numpy_ms > 0) {
    std::printf("  numpy     : %8.2f ms\n", numpy_ms);
    std::printf("  kiln is %.2fx faster than NumPy (target: >= 3x)\n", numpy_ms / kiln_ms);
  } else {
    std::printf("  numpy     : not available (/usr/bin/python3 with numpy not found)\n");
  }
  return 0;
}
