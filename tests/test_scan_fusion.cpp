// A scan of an elementwise expression computes the expression as it loads it (the planner's
// fold_scan_producers, FusedGroup::scan): cumsum(x * 2 + 1) is one kernel that reads x and
// writes the scan, where it was a kernel writing x * 2 + 1 and a scan step reading it back.
// Checked against the unfused evaluation (eager mode writes every value, so its scan reads the
// producer from memory: the host's fused scan must give the same bits), against hand loops, and
// on a GPU against the host. Without a GPU, evaluation compiles each kernel through NVRTC under
// KILN_JIT_ARCH (set below, as in CI), so the generated scan kernels are compiled here too.
#include <doctest/doctest.h>

#include <stdlib.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <kiln/kiln.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "codegen/kernel_source.hpp"
#include "plan/planner.hpp"
#include "support/gpu.hpp"

namespace {

using kiln::Array;
using kiln::DType;
using kiln::Shape;

const bool kArchSet = [] { return ::setenv("KILN_JIT_ARCH", "sm_90", 0) == 0; }();

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// The steps explain() lists.
int steps(const std::string& text) { return count(text, "step "); }

// Uniform values in [0, 1) of `shape`, float64, evaluated (a leaf).
Array uniform(const Shape& shape, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int64_t size = 1;
  for (int64_t d : shape) size *= d;
  std::vector<double> v(size);
  for (double& x : v) x = unit(g);
  return kiln::asarray(v, shape).eval();
}

Array scan(const Array& x, bool product, std::optional<int> axis) {
  return product ? kiln::cumprod(x, axis) : kiln::cumsum(x, axis);
}

// The producers under test, each of x (float64 in [0, 1)) cast to t first: affine, a
// transcendental, a where, integer arithmetic, a comparison's running count. Builders, not
// arrays: a producer the program holds is not fused (the plan writes it, for later reads).
using Producer = std::pair<std::string, std::function<Array(const Array&)>>;
std::vector<Producer> producers(DType t) {
  std::vector<Producer> out;
  if (kiln::is_integer(t)) {
    out.push_back({"k * 3 - 7", [t](const Array& x) { return (x * 10).astype(t) * 3 - 7; }});
    out.push_back({"k % 4 + 1", [t](const Array& x) { return (x * 10).astype(t) % 4 + 1; }});
  } else {
    out.push_back({"y * 2 + 1", [t](const Array& x) { return x.astype(t) * 2 + 1; }});
    out.push_back({"exp(y)", [t](const Array& x) { return kiln::exp(x.astype(t)); }});
    out.push_back({"where(y > 0.5, y, 1 - y)", [t](const Array& x) {
                     Array y = x.astype(t);
                     return kiln::where(y > 0.5, y, 1 - y);
                   }});
  }
  out.push_back({"x > 0.5", [](const Array& x) { return x > 0.5; }});
  return out;
}

// The expression evaluated eagerly: every node written, so the scan is a scan step that reads
// its producer from memory (the unfused path).
Array eager(const std::function<Array()>& build) {
  kiln::EagerScope eager;
  return build().eval();
}

// The scan `build` makes is planned as one kernel step that says what it fuses, and its values
// are the unfused program's bit for bit.
void check_fused(const std::function<Array()>& build, const std::string& op) {
  Array fused = build();
  std::string plan = kiln::explain({fused});
  INFO(plan);
  CHECK(steps(plan) == 1);
  CHECK(count(plan, "kernel k_" + op) == 1);
  CHECK(count(plan, op + " (scan) of ") == 1);
  CHECK(count(plan, " fused, along ") == 1);
  fused.eval();
  Array unfused = eager(build);
  CHECK(fused.dtype() == unfused.dtype());
  CHECK(kiln::array_equal(fused, unfused));
}

}  // namespace

TEST_CASE("cumsum and cumprod of elementwise producers are one kernel, equal to the unfused") {
  const Shape shapes[] = {{7}, {5, 13}, {3, 4, 5}, {2, 1, 9}};
  for (const Shape& shape : shapes) {
    const Array x = uniform(shape, 3);
    const int nd = static_cast<int>(shape.size());
    std::vector<std::optional<int>> axes{std::nullopt, -1};
    for (int a = 0; a < nd; ++a) axes.push_back(a);
    for (DType t : {DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::Float16,
                    DType::Complex64})
      for (const auto& [name, build] : producers(t))
        for (auto axis : axes)
          for (bool product : {false, true}) {
            INFO(name << " in " << kiln::dtype_name(t) << (product ? ", cumprod" : ", cumsum")
                      << " along " << (axis ? std::to_string(*axis) : "None") << " of "
                      << kiln::shape_str(shape));
            check_fused([&] { return scan(build(x), product, axis); },
                        product ? "cumprod" : "cumsum");
          }
  }
}

TEST_CASE(
    "fused scans equal hand loops: an affine float32 sum, a mask's count, an integer product") {
  const int64_t n = 1001;  // odd: no whole vectors at the end
  std::vector<float> v(n);
  std::mt19937 g(9);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (float& x : v) x = unit(g);
  const Array x = kiln::asarray(v).eval();

  std::vector<float> affine(n);
  std::vector<int64_t> counts(n);
  float sum = 0;
  int64_t count_so_far = 0;
  for (int64_t k = 0; k < n; ++k) {
    const float y = v[k] * 2.0f;  // rounded before the add, as kiln's kernels (no contraction)
    sum += y + 1.0f;
    affine[k] = sum;
    counts[k] = count_so_far += v[k] > 0.5f;
  }
  CHECK(kiln::cumsum(x * 2.0f + 1.0f).to_vector<float>() == affine);
  Array running = kiln::cumsum(x > 0.5f);
  CHECK(running.dtype() == DType::Int64);
  CHECK(running.to_vector<int64_t>() == counts);

  // cumprod down the columns of a 3 x 4 int32 producer: NumPy gives int64.
  const Array k =
      kiln::asarray(std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, Shape{3, 4})
          .eval();
  std::vector<int64_t> want(12);
  for (int c = 0; c < 4; ++c)
    for (int r = 0, acc = 1; r < 3; ++r) want[r * 4 + c] = acc *= (r * 4 + c + 1) - 2;
  Array products = kiln::cumprod(k - 2, 0);
  CHECK(products.dtype() == DType::Int64);
  CHECK(products.to_vector<int64_t>() == want);
  CHECK(steps(kiln::explain({kiln::cumprod(k - 2, 0)})) == 1);
}

TEST_CASE("explain names the scan, the fused expression and the scanned extents") {
  const Array x = uniform({6, 1001}, 1).astype(DType::Float32).eval();
  std::string plan = kiln::explain({kiln::cumsum(x * 2.0f + 1.0f, 1)});
  INFO(plan);
  CHECK(steps(plan) == 1);
  CHECK(count(plan, "cumsum (scan) of add(mul(in0, s0), s1) fused, along 1001 values, 6 times") ==
        1);
  CHECK(count(plan, "schedule: inclusive scan computing its producer as it loads") == 1);
  CHECK(count(kiln::to_dot({kiln::cumsum(x * 2.0f + 1.0f, 1)}), "(cumsum of its value)") == 1);
}

TEST_CASE("a producer that is held, shared or not elementwise is written, and the scan reads it") {
  const Array x = uniform({4, 33}, 5);
  auto unfused = [](const std::string& plan) {
    INFO(plan);
    CHECK(count(plan, "scan (cumsum) of ") + count(plan, "scan (cumprod) of ") == 1);
    CHECK(count(plan, " fused, along ") == 0);
  };
  SUBCASE("held by the program: it may read it again, and the plan writes it anyway") {
    Array y = x * 2 + 1;
    Array z = kiln::cumsum(y, 1);
    unfused(kiln::explain({z}));
    CHECK(kiln::array_equal(z, eager([&] { return kiln::cumsum(x * 2 + 1, 1); })));
    CHECK(kiln::array_equal(y, x * 2 + 1));
  }
  SUBCASE("read by another consumer: written once, read by both") {
    // The same expression built twice is one node (hash-consing), read by the scan and the sum.
    std::string plan = kiln::explain({kiln::cumsum(x * 2 + 1, 0), kiln::sum(x * 2 + 1)});
    unfused(plan);
    auto [c, s] = std::pair{kiln::cumsum(x * 2 + 1, 0), kiln::sum(x * 2 + 1)};
    kiln::eval({c, s});
    CHECK(kiln::array_equal(c, eager([&] { return kiln::cumsum(x * 2 + 1, 0); })));
    CHECK(kiln::array_equal(s, eager([&] { return kiln::sum(x * 2 + 1); })));
  }
  SUBCASE("a reduction: its own kernel") {
    unfused(kiln::explain({kiln::cumprod(kiln::sum(x, 0), 0)}));
    CHECK(steps(kiln::explain({kiln::cumsum(kiln::sum(x, 0), 0)})) == 2);
    CHECK(kiln::array_equal(kiln::cumsum(kiln::sum(x, 0), 0),
                            eager([&] { return kiln::cumsum(kiln::sum(x, 0), 0); })));
  }
  SUBCASE("another scan: the inner one fuses its producer, the outer reads it") {
    std::string plan = kiln::explain({kiln::cumsum(kiln::cumsum(x * 2, 1), 1)});
    INFO(plan);
    CHECK(steps(plan) == 2);
    CHECK(count(plan, " fused, along ") == 1);
    CHECK(count(plan, "scan (cumsum) of ") == 1);
    CHECK(kiln::array_equal(kiln::cumsum(kiln::cumsum(x * 2, 1), 1),
                            eager([&] { return kiln::cumsum(kiln::cumsum(x * 2, 1), 1); })));
  }
}

TEST_CASE("what the producer reads from other groups is written; the rest fuses") {
  const Array x = uniform({8, 50}, 6);
  // x - mean(x, 1): the mean is a reduction of its own (a scan does not fold one in), the
  // subtraction and the scan one kernel.
  auto build = [&] { return kiln::cumsum(x - kiln::mean(x, 1, true), 1); };
  std::string plan = kiln::explain({build()});
  INFO(plan);
  CHECK(steps(plan) == 2);
  CHECK(count(plan, "cumsum (scan) of sub(in0, in1) fused") == 1);
  CHECK(kiln::array_equal(build(), eager(build)));
}

TEST_CASE("fused scans read views, broadcasts and aranges where they lie") {
  const Array a = uniform({9, 7}, 7), b = uniform({7}, 8);
  struct Case {
    std::string name, op;
    std::function<Array()> build;
  };
  const Case cases[] = {
      {"a transpose", "cumsum", [&] { return kiln::cumsum(a.T() * 2, 0); }},
      {"a stepped slice", "cumprod", [&] { return kiln::cumprod(a("::2", "1:") + 0.5, 1); }},
      {"a broadcast row", "cumsum", [&] { return kiln::cumsum(a * b, 0); }},
      {"an outer product", "cumsum",
       [&] { return kiln::cumsum(a(kiln::_, 0, kiln::newaxis) * b, 0); }},
      {"an arange", "cumsum", [&] { return kiln::cumsum(kiln::arange(0, 37) * 3 - 5); }},
      {"a reshape", "cumsum",
       [&] {
         return kiln::cumsum((a + 1).reshape({7, 9}), 1);
       }},
      {"raveled", "cumprod", [&] { return kiln::cumprod(a * 0.5 + 0.75); }},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    check_fused(c.build, c.op);
  }
}

TEST_CASE("a cached plan of a fused scan takes each evaluation's scalars and arrays") {
  const Array x = uniform({3, 101}, 10), y = uniform({3, 101}, 11);
  for (double scale : {2.0, 3.0, -0.5})
    for (const Array& in : {x, y}) {
      INFO("scale " << scale);
      Array got = kiln::cumsum(in * scale + 1, 1);
      CHECK(kiln::array_equal(got, eager([&] { return kiln::cumsum(in * scale + 1, 1); })));
    }
}

// The launch a GPU gets (codegen::launch_for on an H200's 132 SMs), decided as the scan step
// decides (src/cuda/scan.cpp): rows longer than 2048 values in tiles of 32 KiB, a block of 512
// threads each, when they are contiguous or their lanes too few to fill the GPU (fewer than a
// quarter of 16 blocks of 256 threads an SM); otherwise a thread per lane, at most 8 blocks of
// 512 an SM.
TEST_CASE("a fused scan launches as the scan step does: tiles of long rows, else a lane each") {
  struct Case {
    Shape shape;
    int axis;
    int64_t tiles, grid;
  };
  const Case cases[] = {
      {{int64_t{1} << 27}, 0, 16384, 16384},  // 8192 float32 a tile
      {{3, (1 << 20) + 3}, 1, 129, 3 * 129},
      {{200000, 3000}, 1, 1, 200000},  // contiguous rows: tiles, however many
      {{6001, 3}, 0, 1, 3},            // three lanes: too few
      {{3000, 200000}, 0, 0, 391},     // 200000 lanes fill the GPU
      {{2000, 1000}, 0, 0, 2},         // short rows
      {{4, 300000}, 0, 0, 586},
      {{2, 1000000}, 0, 0, 132 * 8},  // 8 blocks an SM at most
  };
  for (const Case& c : cases) {
    INFO(kiln::shape_str(c.shape) << " along " << c.axis);
    Array x = kiln::ones(c.shape, DType::Float32);  // nothing is allocated: only planned
    auto plan = kiln::plan::make_plan({kiln::cumsum(x * 2 + 1, c.axis).node()});
    REQUIRE(plan.steps.size() == 1);
    const auto& group = std::get<kiln::plan::KernelStep>(plan.steps[0]).group;
    const kiln::codegen::KernelSource k = kiln::codegen::generate(group);
    CHECK(k.form == kiln::codegen::Form::Scan);
    CHECK(k.vec == 4);
    CHECK(k.block == 512);
    const kiln::codegen::Launch l = kiln::codegen::launch_for(k, 132);
    CHECK(l.scan_tiles == c.tiles);
    CHECK(l.grid_x == c.grid);
    CHECK(l.block_x == 512);
  }
}

namespace {

// Layouts for both of the GPU's forms: long rows in tiles (contiguous, one aligned row of
// whole vectors and rows of 2^20 + 3 values that are not; a strided axis with few lanes),
// and a thread per lane (short rows, many lanes, strided and contiguous).
struct Layout {
  Shape shape;
  int axis;
};
const Layout kGpuLayouts[] = {{{1000000}, 0},    {{3, (1 << 20) + 3}, 1}, {{6001, 3}, 0},
                              {{2000, 1000}, 0}, {{1000, 37}, 1},         {{5, 7, 300}, 1}};

int64_t size_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Integers 0 to 3 (float64): every producer below keeps every partial sum exact in any order.
Array small_integers(const Shape& shape, uint32_t seed) {
  std::mt19937 g(seed);
  std::vector<double> v(size_of(shape));
  for (double& x : v) x = static_cast<double>(g() % 4);
  return kiln::asarray(v, shape).eval();
}

}  // namespace

GPU_TEST_CASE("fused scans on the GPU are one kernel and equal the host's where sums are exact") {
  for (const Layout& l : kGpuLayouts) {
    const Array x = small_integers(l.shape, 4);
    const Array dx = x.to(kiln::cuda()).eval();
    // Each producer keeps its partial folds exact in any association: small integers (float32,
    // float64, complex64, and int32 scanned in int64), a mask's count, and products of signs
    // (float64 and float16).
    std::vector<std::pair<std::string, std::function<Array(const Array&)>>> producers{
        {"f32 2x - 1",
         [&](const Array& a) { return kiln::cumsum(a.astype(DType::Float32) * 2 - 1, l.axis); }},
        {"f64 x * x", [&](const Array& a) { return kiln::cumsum(a * a, l.axis); }},
        {"x > 1.5", [&](const Array& a) { return kiln::cumsum(a > 1.5, l.axis); }},
        {"i32 x - 2",
         [&](const Array& a) { return kiln::cumsum(a.astype(DType::Int32) - 2, l.axis); }},
        {"signs",
         [&](const Array& a) { return kiln::cumprod(kiln::where(a > 1.5, 1.0, -1.0), l.axis); }},
        {"f16 signs",
         [&](const Array& a) {
           return kiln::cumprod(kiln::where(a > 1.5, 1.0, -1.0).astype(DType::Float16), l.axis);
         }},
        {"c64 x * (1 + 1j)",
         [&](const Array& a) {
           return kiln::cumsum(
               a.astype(DType::Complex64) * kiln::Scalar(std::complex<double>(1, 1)), l.axis);
         }},
    };
    for (const auto& [name, build] : producers) {
      INFO(name << " along " << l.axis << " of " << kiln::shape_str(l.shape));
      Array want = build(x).eval();
      Array got = build(dx);
      std::string plan = kiln::explain({got});
      INFO(plan);
      CHECK(steps(plan) == 1);
      CHECK(count(plan, " fused, along ") == 1);
      CHECK(got.device() == kiln::cuda());
      CHECK(kiln::array_equal(got.to(kiln::host()), want));
      CHECK(kiln::array_equal(want, eager([&] { return build(x); })));
    }
  }
}

GPU_TEST_CASE("fused float scans on the GPU stay within two summation orders of the host's") {
  std::mt19937 g(12);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (const Layout& l : kGpuLayouts) {
    std::vector<double> v(size_of(l.shape));
    for (double& e : v) e = unit(g);
    const Array x = kiln::asarray(v, l.shape).eval();
    const Array dx = x.to(kiln::cuda()).eval();
    for (DType t : {DType::Float32, DType::Float64}) {
      INFO(kiln::dtype_name(t) << " along " << l.axis << " of " << kiln::shape_str(l.shape));
      auto build = [&](const Array& a) {
        return kiln::cumsum(kiln::exp(a.astype(t)) * 0.5, l.axis);
      };
      Array want = build(x).eval();
      Array got = build(dx).eval();
      // Either order errs by at most (n - 1) eps times the scan of the magnitudes, which the
      // values (positive) are: the difference by twice that, plus exp's own rounding on each
      // side (a few ulps of each term, also bounded by that scan).
      const double eps = t == DType::Float32 ? 0x1p-23 : 0x1p-52;
      const double n = static_cast<double>(l.shape[l.axis]);
      std::vector<double> bound = want.astype(DType::Float64).to_vector<double>();
      for (double& b : bound) b *= (2.0 * n + 8.0) * eps;
      std::vector<double> w = want.astype(DType::Float64).to_vector<double>();
      std::vector<double> r = got.to(kiln::host()).astype(DType::Float64).to_vector<double>();
      int failures = 0;
      for (size_t k = 0; k < w.size() && failures < 5; ++k)
        if (!(std::abs(r[k] - w[k]) <= bound[k])) {
          ++failures;
          FAIL_CHECK("element " << k << ": gpu " << r[k] << ", host " << w[k]);
        }
      // The look-back folds one fixed association whatever it finds published: the same bits.
      CHECK(kiln::array_equal(build(dx).eval().to(kiln::host()), got.to(kiln::host())));
    }
  }
}

GPU_TEST_CASE("scans on the GPU that do not fuse, and cached fused plans, give the host's values") {
  const Array x = small_integers({64, 3001}, 13);
  const Array dx = x.to(kiln::cuda()).eval();
  auto same = [](const Array& gpu, const Array& host) {
    CHECK(gpu.device() == kiln::cuda());
    CHECK(kiln::array_equal(gpu.to(kiln::host()), host));
  };
  {
    Array held = dx * 2 + 1;  // held: written, and the scan reads it
    same(kiln::cumsum(held, 1), kiln::cumsum(x * 2 + 1, 1));
  }
  same(kiln::cumsum(kiln::sum(dx, 1) - 100, 0), kiln::cumsum(kiln::sum(x, 1) - 100, 0));
  same(kiln::cumsum(kiln::cumsum(dx - 1, 0), 1), kiln::cumsum(kiln::cumsum(x - 1, 0), 1));
  same(kiln::cumsum(dx - kiln::max(dx, 1, true), 1), kiln::cumsum(x - kiln::max(x, 1, true), 1));
  for (double scale : {2.0, 3.0, -1.0}) {  // one plan, each scale bound in turn
    INFO("scale " << scale);
    same(kiln::cumsum(dx * scale + 1, 1), kiln::cumsum(x * scale + 1, 1));
  }
}
