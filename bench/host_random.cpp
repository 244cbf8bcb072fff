// Random draws on the host executor against NumPy's default generator (PCG64, Debian's
// python3-numpy) on the same machine in the same run: issue 14's 2x10^7 float64 uniforms, and
// normals and integers beside them. Each kiln draw is a fresh array (its memory first touched
// there, as NumPy's is).
// Usage: host_random [elements] [repeats]
#include <kiln/kiln.hpp>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "numpy_timer.hpp"

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 20000000;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 7;
  kiln::random::Generator g(1);
  struct Draw {
    const char* name;
    std::function<kiln::Array()> kiln;
    std::string numpy;
  };
  const std::vector<Draw> draws = {
      {"uniform float64", [&] { return g.uniform(0, 1, {n}, kiln::DType::Float64); },
       "rng.random(n)"},
      {"uniform float32", [&] { return g.uniform(0, 1, {n}, kiln::DType::Float32); },
       "rng.random(n, dtype=np.float32)"},
      {"normal float64", [&] { return g.normal(0, 1, {n}, kiln::DType::Float64); },
       "rng.standard_normal(n)"},
      {"randint int64 [0, 255)", [&] { return g.randint(0, 255, {n}, kiln::DType::Int64); },
       "rng.integers(0, 255, n)"}};
  std::printf("random draws on the host, %lld elements, median of %d runs\n",
              static_cast<long long>(n), repeats);
  for (const Draw& d : draws) {
    double k = bench::time_median_ms([&] { d.kiln().eval(); }, repeats);
    double np = bench::time_numpy("n=" + std::to_string(n) + "\nrng=np.random.default_rng(0)",
                                  d.numpy, repeats);
    if (np > 0)
      std::printf("  %-24s kiln %8.2f ms   numpy %8.2f ms   kiln/numpy %.2fx\n", d.name, k, np,
                  k / np);
    else
      std::printf("  %-24s kiln %8.2f ms   numpy not available\n", d.name, k);
  }
  return 0;
}
