// Random arrays on a GPU give the host's numbers: randint and uniform bit for bit, normal within
// a few ulp (log, sin and cos differ between CUDA and glibc). Without a GPU the GPU cases are
// skipped, and two cases still run: kernels/random.cuh's per-block code (Philox words in
// registers, mapped straight to elements), compiled for the host, must reproduce the host
// executor, and its kernels must compile with NVRTC for sm_90. tests/test_philox.cpp checks the
// words themselves against cuRAND.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <kiln/kiln.hpp>
#include <limits>
#include <string>
#include <thread>
#include <type_traits>
#include <variant>
#include <vector>

#include "../kernels/random.cuh"
#include "cuda/random.hpp"
#include "plan/planner.hpp"
#include "support/gpu.hpp"

namespace {

using kiln::Array;
using kiln::DType;
using kiln::Shape;
using kiln::random::Generator;

// ---- the calls compared ---------------------------------------------------------------------
enum class Dist { Randint, Uniform, Normal };
struct Call {
  Dist dist;
  DType dtype;
  double a, b;  // low/high or mean/std (randint bounds are exact in a double here)
};

Array draw(Generator& g, const Call& c, const Shape& s) {
  switch (c.dist) {
    case Dist::Randint:
      return g.randint(static_cast<int64_t>(c.a), static_cast<int64_t>(c.b), s, c.dtype);
    case Dist::Uniform:
      return g.uniform(c.a, c.b, s, c.dtype);
    case Dist::Normal:
      return g.normal(c.a, c.b, s, c.dtype);
  }
  return {};
}

std::string describe(const Call& c, const Shape& s, uint64_t seed, uint64_t offset) {
  const char* names[] = {"randint", "uniform", "normal"};
  std::string shape;
  for (int64_t d : s) shape += std::to_string(d) + ",";
  return std::string(names[static_cast<int>(c.dist)]) + " " + kiln::dtype_name(c.dtype) + " (" +
         std::to_string(c.a) + ", " + std::to_string(c.b) + ") shape (" + shape + ") seed " +
         std::to_string(seed) + " offset " + std::to_string(offset);
}

// Every distribution and dtype, the randint ranges on both sides of the one/two-word switch
// (2^16), ranges up to 2^63, the float64 uniform whose every value rounds to low, and a
// normal whose mean dwarfs its std.
const std::vector<Call> kCalls = {
    {Dist::Randint, DType::Int64, -7, 250},
    {Dist::Randint, DType::Int64, 0, 65536},
    {Dist::Randint, DType::Int64, 0, 65537},
    {Dist::Randint, DType::Int64, -1099511627776.0, 2199023255552.0},
    {Dist::Randint, DType::Int64, -4611686018427387904.0, 4611686018427387904.0},
    {Dist::Randint, DType::Int32, -100, 100},
    {Dist::Randint, DType::Int32, -2147483648.0, 2147483647.0},
    {Dist::Uniform, DType::Float32, -2.5, 4},
    {Dist::Uniform, DType::Float64, -2.5, 4},
    {Dist::Uniform, DType::Float64, 1, 1.0000000000000002},
    {Dist::Normal, DType::Float32, 3, 2},
    {Dist::Normal, DType::Float64, 3, 2},
    {Dist::Normal, DType::Float64, -1000, 0.5},
};

// ---- comparison -----------------------------------------------------------------------------
template <class T>
double ulp_of(T x) {
  x = std::abs(x);
  return static_cast<double>(std::nextafter(x, std::numeric_limits<T>::infinity()) - x);
}

// Largest |device - host| in ulps of max(|host value|, std): Box-Muller samples are
// mean + std * z with |z| < 9, so this says how many roundings apart the two sides are.
template <class T>
double spread(const Array& dev, const Array& host, double sd) {
  auto d = dev.to_vector<T>(), h = host.to_vector<T>();
  const double eps = ulp_of(T(1));
  double worst = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    double scale = std::max<double>(std::abs(h[i]), sd);
    worst = std::max(worst, std::abs(static_cast<double>(d[i]) - h[i]) / (eps * scale));
  }
  return worst;
}

// Largest spread seen, per dtype, reported at the end of a case.
struct Observed {
  double f32 = 0, f64 = 0;
  void report(const char* what) const {
    MESSAGE(what << ": largest |gpu - host| of a normal sample, in ulps of max(|value|, std): "
                 << f32 << " in float32, " << f64 << " in float64");
  }
};

// The device array against the host's: bit for bit for randint and uniform; normal within
// 16 ulps of |value| + 9 std (kernels/random.cuh says where the difference comes from).
void check_same(const Array& dev, const Array& host, const Call& c, Observed* seen) {
  REQUIRE(dev.device() == kiln::cuda());
  Array back = dev.get();
  REQUIRE(back.dtype() == host.dtype());
  REQUIRE(back.shape() == host.shape());
  if (c.dist != Dist::Normal) {
    CHECK(kiln::array_equal(back, host));
    return;
  }
  bool f32 = c.dtype == DType::Float32;
  double eps = f32 ? ulp_of(1.0f) : ulp_of(1.0);
  CHECK(kiln::allclose(back, host, 16 * eps, 16 * eps * 9 * c.b));
  double s = f32 ? spread<float>(back, host, c.b) : spread<double>(back, host, c.b);
  (f32 ? seen->f32 : seen->f64) = std::max(f32 ? seen->f32 : seen->f64, s);
}

void compare_at(const Call& c, const Shape& s, uint64_t seed, uint64_t offset, Observed* seen) {
  INFO(describe(c, s, seed, offset));
  Generator dev(seed, kiln::cuda()), host(seed);
  dev.set_offset(offset);
  host.set_offset(offset);
  check_same(draw(dev, c, s), draw(host, c, s), c, seen);
  CHECK(dev.offset() == host.offset());
}

// ---- the kernels' blocks on the host --------------------------------------------------------
// What a GPU thread computes, run on the host: kernels/random.cuh's warp loop (rng::run) spelled
// out, with the shuffle replaced by reading the next lane's words. write_block, philox_block
// and the mappings are the very functions the kernel calls.
template <class D>
std::vector<typename D::value_type> run_on_host(const D& d, int64_t n, uint64_t seed,
                                                uint64_t off) {
  // Poisoned, so an element that no block writes shows up.
  std::vector<typename D::value_type> out(n, std::numeric_limits<typename D::value_type>::max());
  const uint64_t owned = kiln::rng::owned_per_warp<D>(off);
  const uint64_t blocks = kiln::rng::blocks_of<D>(n, off), base = off >> 2;
  for (uint64_t first = 0; first < blocks; first += owned) {
    unsigned lanes[33][4];
    for (int lane = 0; lane < 32; ++lane)
      kiln::rng::philox_block(seed, base + first + lane, lanes[lane]);
    for (int j = 0; j < 4; ++j) lanes[32][j] = lanes[31][j];  // __shfl_down_sync's last lane
    for (uint64_t lane = 0; lane < owned && first + lane < blocks; ++lane) {
      unsigned ws[4 + D::K - 1];
      for (int j = 0; j < 4; ++j) ws[j] = lanes[lane][j];
      for (int j = 4; j < 4 + D::K - 1; ++j) ws[j] = lanes[lane + 1][j - 4];
      kiln::rng::write_block(d, out.data(), n, off, first + lane, ws, false);
    }
  }
  return out;
}

// The kernel's elements for a call, and the words it reads (which must be what the host
// executor advances the generator by).
template <class T>
struct Simulated {
  std::vector<T> values;
  uint64_t words;
};

template <class D>
Simulated<typename D::value_type> simulate(const D& d, int64_t n, uint64_t seed, uint64_t off) {
  return {run_on_host(d, n, seed, off), kiln::rng::units_of<D>(n) * D::K};
}

template <class T>
Simulated<T> simulate(const Call& c, int64_t n, uint64_t seed, uint64_t off) {
  namespace rng = kiln::rng;
  if constexpr (std::is_integral_v<T>) {
    uint64_t low = static_cast<uint64_t>(static_cast<int64_t>(c.a));
    uint64_t range = static_cast<uint64_t>(static_cast<int64_t>(c.b)) - low;
    if (range <= (uint64_t{1} << 16)) return simulate(rng::Randint<T, 1>{low, range}, n, seed, off);
    return simulate(rng::Randint<T, 2>{low, range}, n, seed, off);
  } else {
    if (c.dist == Dist::Uniform) {
      T lo = static_cast<T>(c.a), hi = static_cast<T>(c.b);
      return simulate(rng::Uniform<T>{lo, hi - lo, hi, std::nextafter(hi, lo)}, n, seed, off);
    }
    return simulate(rng::Normal<T>{static_cast<T>(c.a), static_cast<T>(c.b)}, n, seed, off);
  }
}

template <class T>
void check_blocks(const Call& c, int64_t n, uint64_t seed, uint64_t offset) {
  Generator g(seed);
  g.set_offset(offset);
  std::vector<T> expected = draw(g, c, {n}).to_vector<T>();
  Simulated<T> got = simulate<T>(c, n, seed, offset);
  CHECK(got.words == g.offset() - offset);
  // Bit for bit, normal too: both sides call the same libm.
  CHECK(std::memcmp(got.values.data(), expected.data(), n * sizeof(T)) == 0);
}

}  // namespace

TEST_CASE("kernels/random.cuh's blocks, run on the host, give the host executor's arrays") {
  // Sizes within a block, across blocks, and beyond one warp's 31 or 32 blocks (129 one-word
  // elements are 33 blocks); offsets of every phase mod 4, seeds above 2^32, block indices that
  // need the counter's second word.
  const int64_t sizes[] = {1, 3, 4, 5, 9, 129, 4097};
  const std::pair<uint64_t, uint64_t> places[] = {{42, 0},
                                                  {7, 1},
                                                  {1ull << 40, 2},
                                                  {(1ull << 40) + 3, 3},
                                                  {7, 5},
                                                  {~0ull, (1ull << 33) + 2},
                                                  {0x123456789ABCDEF0ull, (1ull << 50) + 3}};
  for (const Call& c : kCalls)
    for (int64_t n : sizes)
      for (auto [seed, offset] : places) {
        INFO(describe(c, {n}, seed, offset));
        switch (c.dtype) {
          case DType::Int32:
            check_blocks<int32_t>(c, n, seed, offset);
            break;
          case DType::Int64:
            check_blocks<int64_t>(c, n, seed, offset);
            break;
          case DType::Float32:
            check_blocks<float>(c, n, seed, offset);
            break;
          default:
            check_blocks<double>(c, n, seed, offset);
            break;
        }
      }
}

TEST_CASE("the random kernels compile with NVRTC for sm_90 (no GPU needed)") {
  auto r = kiln::jit::get(kiln::gpu::random_kernels_request("sm_90"));
  REQUIRE(r.kernel != nullptr);
  const auto& bin = r.kernel->cubin;
  REQUIRE(!bin.empty());
  CHECK(std::string(bin.data(), 4) ==
        "\x7f"
        "ELF");
  std::string text(bin.begin(), bin.end());
  for (const char* name : kiln::gpu::kRandomKernelNames) {
    INFO(std::string(name));
    CHECK(text.find(name) != std::string::npos);  // each entry point is in the symbol table
  }
}

GPU_TEST_CASE("every distribution and dtype equals the host: seeds, offsets, shapes") {
  const std::vector<Shape> shapes = {{0}, {1}, {2}, {3}, {1001}, {17, 33}, {2, 0, 5}, {}};
  const std::pair<uint64_t, uint64_t> places[] = {
      {0, 0}, {42, 1}, {42, 1000001}, {(1ull << 40) + 7, 5}, {~0ull, (1ull << 33) + 2}};
  Observed seen;
  for (const Call& c : kCalls)
    for (const Shape& s : shapes)
      for (auto [seed, offset] : places) compare_at(c, s, seed, offset, &seen);
  seen.report("small shapes");
}

GPU_TEST_CASE("16M + 3 elements of every distribution and dtype equal the host") {
  const int64_t n = (int64_t{1} << 24) + 3;
  Observed seen;
  for (const Call& c : kCalls) compare_at(c, {n}, 2026, 12345, &seen);
  seen.report("16M + 3 elements");
}

GPU_TEST_CASE("consecutive calls continue the stream the same way on both devices") {
  Observed seen;
  SUBCASE("evaluated in order, odd word counts in between") {
    Generator dev(9, kiln::cuda()), host(9);
    for (int round = 0; round < 3; ++round)
      for (const Call& c : kCalls)
        for (int64_t n : {int64_t{3}, int64_t{1}, int64_t{1000}}) {
          INFO(describe(c, {n}, 9, host.offset()));
          check_same(draw(dev, c, {n}), draw(host, c, {n}), c, &seen);
          CHECK(dev.offset() == host.offset());
        }
  }
  SUBCASE("evaluated out of order") {
    Generator dev(5, kiln::cuda()), host(5);
    std::vector<Array> d, h;
    for (const Call& c : kCalls) {
      d.push_back(draw(dev, c, {77}));
      h.push_back(draw(host, c, {77}));
    }
    for (size_t i = d.size(); i-- > 0;) {
      INFO(describe(kCalls[i], {77}, 5, 0));
      check_same(d[i], h[i], kCalls[i], &seen);
    }
  }
  SUBCASE("one call equals its parts") {
    Generator dev(3, kiln::cuda());
    auto a = dev.uniform(0, 1, {3}).get().to_vector<double>();
    auto b = dev.uniform(0, 1, {5}).get().to_vector<double>();
    auto whole = Generator(3, kiln::cuda()).uniform(0, 1, {8}).to_vector<double>();
    a.insert(a.end(), b.begin(), b.end());
    CHECK(a == whole);
  }
  seen.report("consecutive calls");
}

GPU_TEST_CASE("randint(...) * 2 + 1 on the device is one random step and one fused kernel") {
  Generator g(31, kiln::cuda());
  Array r = g.randint(-50, 50, {1000});
  Array y = r * 2 + 1;
  auto plan = kiln::plan::make_plan({y.node()});
  int randoms = 0, kernels = 0, copies = 0;
  for (const auto& step : plan.steps) {
    randoms += std::holds_alternative<kiln::plan::RandomStep>(step);
    kernels += std::holds_alternative<kiln::plan::KernelStep>(step);
    copies += std::holds_alternative<kiln::plan::CopyStep>(step);
  }
  CHECK(randoms == 1);
  CHECK(kernels == 1);
  CHECK(copies == 0);  // everything stays on the device
  auto vy = y.to_vector<int64_t>();
  auto vr = Generator(31).randint(-50, 50, {1000}).to_vector<int64_t>();
  REQUIRE(vy.size() == vr.size());
  for (size_t i = 0; i < vr.size(); ++i) CHECK(vy[i] == 2 * vr[i] + 1);
  CHECK(y.device() == kiln::cuda());
}

GPU_TEST_CASE("free functions on the device follow the seeded default generator") {
  kiln::random::seed(2026);
  auto a = kiln::random::randint(0, 100, {50}, DType::Int64, kiln::cuda());
  auto b = kiln::random::uniform(0, 1, {51}, DType::Float32, kiln::cuda());
  auto c = kiln::random::normal(1, 3, {53}, DType::Float64, kiln::cuda());
  CHECK(a.device() == kiln::cuda());
  Generator h(2026);
  Observed seen;
  check_same(a, h.randint(0, 100, {50}), kCalls[0], &seen);
  check_same(b, h.uniform(0, 1, {51}, DType::Float32), {Dist::Uniform, DType::Float32, 0, 1},
             &seen);
  check_same(c, h.normal(1, 3, {53}), {Dist::Normal, DType::Float64, 1, 3}, &seen);
  // Reseeding restarts the device's default generator too.
  kiln::random::seed(2026);
  CHECK(kiln::array_equal(kiln::random::randint(0, 100, {50}, DType::Int64, kiln::cuda()).get(),
                          a.get()));
}

GPU_TEST_CASE("eager mode and threads sharing the device generator give the same numbers") {
  SUBCASE("eager") {
    auto lazy = (Generator(8, kiln::cuda()).uniform(0, 1, {33}) * 3).to_vector<double>();
    kiln::EagerScope eager;
    CHECK((Generator(8, kiln::cuda()).uniform(0, 1, {33}) * 3).to_vector<double>() == lazy);
  }
  SUBCASE("threads") {
    constexpr int kThreads = 4, kCalls = 25;
    std::vector<int> bad(kThreads, 0);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i)
      threads.emplace_back([&bad, i] {
        Generator dev(100 + i, kiln::cuda()), host(100 + i);
        for (int c = 0; c < kCalls; ++c) {
          auto d = dev.randint(0, 1 << 20, {257 + c}).get();
          bad[i] += !kiln::array_equal(d, host.randint(0, 1 << 20, {257 + c}));
        }
      });
    for (auto& t : threads) t.join();
    CHECK(bad == std::vector<int>(kThreads, 0));
  }
}
