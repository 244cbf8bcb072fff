// Random arrays on a GPU give the host's numbers: randint and uniform bit for bit, normal within
// a few ulp (log, sin and cos differ between CUDA and glibc). Without a GPU the GPU cases are
// skipped, and two cases still run: kernels/random.cuh's mappings, compiled for the host, must
// reproduce the host executor from the same cuRAND words, and its kernels must compile with
// NVRTC for sm_90.
#include <curand.h>
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

namespace {

using kiln::Array;
using kiln::DType;
using kiln::Shape;
using kiln::random::Generator;

bool have_gpu() {
  if (kiln::cuda_available()) return true;
  MESSAGE("no GPU found: skipped");
  return false;
}

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

// ---- the mappings on the host, from cuRAND's host words --------------------------------------
std::vector<unsigned> host_words(uint64_t seed, uint64_t offset, size_t n) {
  curandGenerator_t g;
  REQUIRE(curandCreateGeneratorHost(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10) == CURAND_STATUS_SUCCESS);
  curandSetGeneratorOrdering(g, CURAND_ORDERING_PSEUDO_LEGACY);
  curandSetPseudoRandomGeneratorSeed(g, seed);
  curandSetGeneratorOffset(g, offset);
  std::vector<unsigned> w(n);
  CHECK(curandGenerate(g, w.data(), n) == CURAND_STATUS_SUCCESS);
  curandDestroyGenerator(g);
  return w;
}

// What the GPU kernels compute, one element at a time on the host.
template <class T>
std::vector<T> map_on_host(const Call& c, const unsigned* w, int64_t n) {
  std::vector<T> out(n);
  if constexpr (std::is_integral_v<T>) {
    uint64_t low = static_cast<uint64_t>(static_cast<int64_t>(c.a));
    uint64_t range = static_cast<uint64_t>(static_cast<int64_t>(c.b)) - low;
    for (int64_t i = 0; i < n; ++i)
      out[i] = static_cast<T>(kiln::rng::randint_value(w, i, low, range));
  } else if (c.dist == Dist::Uniform) {
    T lo = static_cast<T>(c.a), hi = static_cast<T>(c.b);
    for (int64_t i = 0; i < n; ++i)
      out[i] = kiln::rng::uniform_value<T>(w, i, lo, hi - lo, hi, std::nextafter(hi, lo));
  } else {
    for (int64_t j = 0; 2 * j < n; ++j) {
      T z0, z1;
      kiln::rng::normal_pair<T>(w, j, static_cast<T>(c.a), static_cast<T>(c.b), &z0, &z1);
      out[2 * j] = z0;
      if (2 * j + 1 < n) out[2 * j + 1] = z1;
    }
  }
  return out;
}

template <class T>
void check_mapping(const Call& c, int64_t n, uint64_t seed, uint64_t offset) {
  Generator g(seed);
  g.set_offset(offset);
  std::vector<T> expected = draw(g, c, {n}).to_vector<T>();
  auto w = host_words(seed, offset, g.offset() - offset);
  std::vector<T> got = map_on_host<T>(c, w.data(), n);
  // Bit for bit, normal too: both sides call the same libm.
  CHECK(std::memcmp(got.data(), expected.data(), n * sizeof(T)) == 0);
}

}  // namespace

TEST_CASE("kernels/random.cuh's mappings, run on the host, give the host executor's arrays") {
  for (const Call& c : kCalls)
    for (int64_t n : {1, 2, 7, 1000, 4097})
      for (auto [seed, offset] : {std::pair<uint64_t, uint64_t>{42, 0}, {7, 5}, {1ull << 40, 3}}) {
        INFO(describe(c, {n}, seed, offset));
        switch (c.dtype) {
          case DType::Int32:
            check_mapping<int32_t>(c, n, seed, offset);
            break;
          case DType::Int64:
            check_mapping<int64_t>(c, n, seed, offset);
            break;
          case DType::Float32:
            check_mapping<float>(c, n, seed, offset);
            break;
          default:
            check_mapping<double>(c, n, seed, offset);
            break;
        }
      }
}

TEST_CASE("the mapping kernels compile with NVRTC for sm_90 (no GPU needed)") {
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

TEST_CASE("every distribution and dtype equals the host: seeds, offsets, shapes") {
  if (!have_gpu()) return;
  const std::vector<Shape> shapes = {{0}, {1}, {2}, {3}, {1001}, {17, 33}, {2, 0, 5}, {}};
  const std::pair<uint64_t, uint64_t> places[] = {
      {0, 0}, {42, 1}, {42, 1000001}, {(1ull << 40) + 7, 5}, {~0ull, (1ull << 33) + 2}};
  Observed seen;
  for (const Call& c : kCalls)
    for (const Shape& s : shapes)
      for (auto [seed, offset] : places) compare_at(c, s, seed, offset, &seen);
  seen.report("small shapes");
}

TEST_CASE("16M + 3 elements of every distribution and dtype equal the host") {
  if (!have_gpu()) return;
  const int64_t n = (int64_t{1} << 24) + 3;
  Observed seen;
  for (const Call& c : kCalls) compare_at(c, {n}, 2026, 12345, &seen);
  seen.report("16M + 3 elements");
}

TEST_CASE("consecutive calls continue the stream the same way on both devices") {
  if (!have_gpu()) return;
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

TEST_CASE("randint(...) * 2 + 1 on the device is one random step and one fused kernel") {
  if (!have_gpu()) return;
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

TEST_CASE("free functions on the device follow the seeded default generator") {
  if (!have_gpu()) return;
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

TEST_CASE("eager mode and threads sharing the device generator give the same numbers") {
  if (!have_gpu()) return;
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
