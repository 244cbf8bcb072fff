// The host executor's paths of issue 14 (and 13's scans and selection) against NumPy on the
// same machine, in the same run: scatter (add.at, fancy assignment), gathers, boolean masks,
// nonzero, cumsum, joining and padding, statistics and histograms, and matrix products. Inputs are
// made and evaluated once; each timing evaluates a fresh result. kiln: fastest and median of
// `repeats` runs; NumPy: the same of as many timeit runs (Debian's python3-numpy). The ratio is
// of the medians.
// Usage: host_paths [scale] [repeats] [filter]   (scale multiplies every size; default 1;
// filter: only the paths whose name contains it)
#include <kiln/kiln.hpp>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "numpy_timer.hpp"

namespace {

using kiln::Array;
using kiln::DType;

struct Path {
  std::string name;
  std::function<Array()> kiln;
  std::string numpy;  // a statement over the setup's names
};

}  // namespace

int main(int argc, char** argv) {
  const double scale = argc > 1 ? std::atof(argv[1]) : 1.0;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 7;
  const std::string filter = argc > 3 ? argv[3] : "";
  const auto n = static_cast<int64_t>(1e7 * scale), m = static_cast<int64_t>(1e6 * scale),
             side = static_cast<int64_t>(3000 * (scale < 1 ? scale : 1));
  kiln::random::Generator g(1);
  // The same inputs on both sides: kiln draws them, NumPy reads them from .npy files.
  Array x = g.uniform(0, 1, {n}, DType::Float64).eval();
  Array idx = g.randint(0, m, {n}, DType::Int64).eval();
  Array mask = (x < 0.5).eval();
  Array small = g.uniform(0, 1, {m}, DType::Float64).eval();
  Array grid = g.uniform(0, 1, {side, side}, DType::Float32).eval();
  Array bins = g.randint(0, 1000, {n}, DType::Int64).eval();
  const int64_t mside = static_cast<int64_t>(1024 * (scale < 1 ? scale : 1));
  Array ma = g.uniform(-1, 1, {mside, mside}, DType::Float32).eval();
  Array mb = g.uniform(-1, 1, {mside, mside}, DType::Float32).eval();
  Array ba = g.uniform(-1, 1, {64, 128, 128}, DType::Float32).eval();
  Array bb = g.uniform(-1, 1, {64, 128, 128}, DType::Float32).eval();
  const std::string dir = "/tmp/kiln_host_paths";
  std::system(("mkdir -p " + dir).c_str());
  for (auto [name, a] : std::vector<std::pair<std::string, Array>>{{"x", x},
                                                                   {"idx", idx},
                                                                   {"mask", mask},
                                                                   {"small", small},
                                                                   {"grid", grid},
                                                                   {"bins", bins},
                                                                   {"ma", ma},
                                                                   {"mb", mb},
                                                                   {"ba", ba},
                                                                   {"bb", bb}})
    kiln::save_npy(dir + "/" + name + ".npy", a);
  std::string setup;
  for (const char* name : {"x", "idx", "mask", "small", "grid", "bins", "ma", "mb", "ba", "bb"})
    setup += std::string(name) + "=np.load(\"" + dir + "/" + name + ".npy\")\n";

  const std::vector<Path> paths = {
      {"scatter add, 1e7 into 1e6 (add.at)", [&] { return small.at(idx).add(1.0); },
       "s=small.copy(); np.add.at(s, idx, 1.0)"},
      {"scatter set, 1e7 into 1e6 (s[idx]=x)", [&] { return small.at(idx).set(x); },
       "s=small.copy(); s[idx]=x"},
      {"gather x[idx], 1e7 of 1e6", [&] { return small.index(idx); }, "small[idx]"},
      {"boolean mask x[x<0.5], 1e7", [&] { return x.index(mask); }, "x[mask]"},
      {"nonzero, 1e7", [&] { return kiln::nonzero(mask)[0]; }, "np.nonzero(mask)"},
      {"cumsum, 1e7 float64", [&] { return kiln::cumsum(x); }, "np.cumsum(x)"},
      {"cumsum axis 0, 3000x3000 float32", [&] { return kiln::cumsum(grid, 0); },
       "np.cumsum(grid, 0)"},
      {"concatenate 2x 1e7",
       [&] {
         return kiln::concatenate({x, x * 2.0});
       },
       "np.concatenate([x, x * 2.0])"},
      {"pad reflect 16, 3000x3000", [&] { return kiln::pad(grid, 16, kiln::PadMode::Reflect); },
       "np.pad(grid, 16, mode=\"reflect\")"},
      {"roll (5, -3), 3000x3000",
       [&] {
         return kiln::roll(grid, {5, -3}, {0, 1});
       },
       "np.roll(grid, (5, -3), (0, 1))"},
      {"std, 1e7 float64", [&] { return kiln::std(x); }, "np.std(x)"},
      {"std axis 0, 3000x3000 float32", [&] { return kiln::std(grid, 0); }, "np.std(grid, 0)"},
      {"bincount, 1e7 in 1000", [&] { return kiln::bincount(bins); }, "np.bincount(bins)"},
      {"histogram 100 bins, 1e7",
       [&] {
         return kiln::histogram(x, 100, {{0.0, 1.0}}).counts;
       },
       "np.histogram(x, 100, (0.0, 1.0))"},
      {"float16 cast, 1e7", [&] { return x.astype(DType::Float16); }, "x.astype(np.float16)"},
      {"matmul 1024^3 float32", [&] { return kiln::matmul(ma, mb); }, "ma @ mb"},
      {"matmul 1024^3 float32, a.T", [&] { return kiln::matmul(ma.T(), mb); }, "ma.T @ mb"},
      {"matmul 1024^3 float64", [&] { return kiln::matmul(ma, mb.astype(DType::Float64)); },
       "ma @ mb.astype(np.float64)"},
      {"batched matmul 64x128x128 float32", [&] { return kiln::matmul(ba, bb); }, "ba @ bb"},
  };
  std::printf("host paths against NumPy, scale %g, min / median of %d runs (ms)\n", scale, repeats);
  for (const Path& p : paths) {
    if (p.name.find(filter) == std::string::npos) continue;
    bench::Timing k = bench::time_ms([&] { p.kiln().eval(); }, repeats);
    bench::Timing np = bench::time_numpy_ms(setup, p.numpy, repeats);
    if (np.median > 0)
      std::printf("  %-40s kiln %8.2f / %8.2f   numpy %8.2f / %8.2f   kiln/numpy %6.2fx\n",
                  p.name.c_str(), k.min, k.median, np.min, np.median, k.median / np.median);
    else
      std::printf("  %-40s kiln %8.2f / %8.2f   numpy not available\n", p.name.c_str(), k.min,
                  k.median);
    std::fflush(stdout);
  }
  return 0;
}
