// kiln::random on the host: reproducibility, the stream accounting of kiln/random.hpp (each
// call continues where the last one ended), ranges, distribution statistics and errors.
// Known answers come from cuRAND's Philox words for seed 42, which a GPU must reproduce.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <kiln/kiln.hpp>
#include <limits>
#include <numbers>
#include <set>
#include <thread>
#include <vector>

#include "plan/planner.hpp"

namespace {

using kiln::Array;
using kiln::DType;
using kiln::Shape;
using kiln::random::Generator;

template <class T>
std::vector<T> values(const Array& a) {
  return a.to_vector<T>();
}

// A subrange of a vector.
template <class T>
std::vector<T> slice(const std::vector<T>& v, size_t from, size_t to) {
  return std::vector<T>(v.begin() + from, v.begin() + to);
}

// Draws 3 values and then 5 more from one Generator(3) and checks that they continue one stream:
// the offset is then `words`, and the two draws are the values [0, 3) and [b_from, b_from + 5)
// of `whole` values drawn at once from a fresh Generator(3).
template <class T, class Draw>
void check_one_stream(Draw draw, uint64_t words, int64_t whole, size_t b_from) {
  Generator g(3);
  auto a = values<T>(draw(g, Shape{3}));
  auto b = values<T>(draw(g, Shape{5}));
  CHECK(g.offset() == words);
  Generator fresh(3);
  auto all = values<T>(draw(fresh, Shape{whole}));
  CHECK(slice(all, 0, 3) == a);
  CHECK(slice(all, b_from, b_from + 5) == b);
}

// True when f throws kiln::Error but none of the more specific errors that would misdescribe
// a bad bound (ShapeError, DTypeError).
template <class F>
bool throws_plain_error(F f) {
  try {
    f();
  } catch (const kiln::ShapeError&) {
    return false;
  } catch (const kiln::DTypeError&) {
    return false;
  } catch (const kiln::Error&) {
    return true;
  }
  return false;
}

// The first Philox4_32_10 words of seed 42, offset 0 (curandGenerate, host and device alike).
const uint32_t kWords42[] = {0x9ceaf053, 0x77f5493b, 0x12bf50ad, 0x5742b3d7,
                             0x02933769, 0x2051e913, 0x3b68b038, 0xb62c409c};

}  // namespace

TEST_CASE("known answers: the Philox words of seed 42 through each mapping") {
  // randint with a range of 2^16 takes one word per element: value = word >> 16.
  std::vector<int64_t> small;
  for (int i = 0; i < 8; ++i) small.push_back(kWords42[i] >> 16);
  CHECK(values<int64_t>(Generator(42).randint(0, 65536, {8})) == small);

  // Above 2^16 two words make one 64-bit number, the first word low: for a range of 2^62 the
  // value is that number >> 2.
  std::vector<int64_t> wide;
  for (int i = 0; i < 4; ++i) {
    uint64_t x = kWords42[2 * i] | static_cast<uint64_t>(kWords42[2 * i + 1]) << 32;
    wide.push_back(static_cast<int64_t>(x >> 2) - 5);
  }
  CHECK(values<int64_t>(Generator(42).randint(-5, (int64_t{1} << 62) - 5, {4})) == wide);

  // uniform: float32 t = (w >> 8) * 2^-24, float64 t = (x >> 11) * 2^-53, both exact.
  std::vector<float> f32;
  for (int i = 0; i < 8; ++i) f32.push_back(static_cast<float>(kWords42[i] >> 8) * 0x1p-24f);
  CHECK(values<float>(Generator(42).uniform(0, 1, {8}, DType::Float32)) == f32);
  std::vector<double> f64;
  for (int i = 0; i < 4; ++i) {
    uint64_t x = kWords42[2 * i] | static_cast<uint64_t>(kWords42[2 * i + 1]) << 32;
    f64.push_back(static_cast<double>(x >> 11) * 0x1p-53);
  }
  CHECK(values<double>(Generator(42).uniform(0, 1, {4})) == f64);

  // normal float64, Box-Muller on the first pair's four words.
  uint64_t x0 = kWords42[0] | static_cast<uint64_t>(kWords42[1]) << 32;
  uint64_t x1 = kWords42[2] | static_cast<uint64_t>(kWords42[3]) << 32;
  double u = static_cast<double>(x0 >> 11) * 0x1p-53 + 0x1p-54;
  double t = static_cast<double>(x1 >> 11) * 0x1p-53;
  double rad = std::sqrt(-2 * std::log(u)), angle = 2 * std::numbers::pi * t;
  auto n = values<double>(Generator(42).normal(0, 1, {2}));
  CHECK(n[0] == doctest::Approx(rad * std::cos(angle)).epsilon(1e-14));
  CHECK(n[1] == doctest::Approx(rad * std::sin(angle)).epsilon(1e-14));
}

TEST_CASE("the same seed gives the same arrays; other seeds and later calls differ") {
  for (DType t : {DType::Int32, DType::Int64}) {
    auto a = values<int64_t>(Generator(7).randint(-100, 100, {1000}, t));
    CHECK(a == values<int64_t>(Generator(7).randint(-100, 100, {1000}, t)));
    CHECK(a != values<int64_t>(Generator(8).randint(-100, 100, {1000}, t)));
  }
  for (DType t : {DType::Float32, DType::Float64}) {
    Generator g(7);
    auto u = values<double>(g.uniform(0, 1, {1000}, t));
    auto n = values<double>(g.normal(0, 1, {1000}, t));
    Generator h(7);
    CHECK(u == values<double>(h.uniform(0, 1, {1000}, t)));
    CHECK(n == values<double>(h.normal(0, 1, {1000}, t)));
    CHECK(u != values<double>(Generator(8).uniform(0, 1, {1000}, t)));
    CHECK(n != values<double>(Generator(8).normal(0, 1, {1000}, t)));
    CHECK(u != values<double>(g.uniform(0, 1, {1000}, t)));  // a later call
  }
  // Seeds that differ only in the high 32 bits give different streams too.
  CHECK(values<int64_t>(Generator(1).randint(0, 1000, {100})) !=
        values<int64_t>(Generator(1 | uint64_t{1} << 40).randint(0, 1000, {100})));
}

TEST_CASE("consecutive calls continue one stream: the offset counts the words consumed") {
  SUBCASE("randint, one and two words per element") {
    for (int64_t high : {int64_t{1000}, int64_t{1} << 40}) {
      auto randint = [high](Generator& g, const Shape& s) { return g.randint(0, high, s); };
      check_one_stream<int64_t>(randint, high == 1000 ? 8u : 16u, 8, 3);
    }
  }
  SUBCASE("uniform float32 and float64") {
    for (DType t : {DType::Float32, DType::Float64}) {
      auto uniform = [t](Generator& g, const Shape& s) { return g.uniform(0, 1, s, t); };
      check_one_stream<double>(uniform, 8u * (kiln::itemsize(t) / 4), 8, 3);
    }
  }
  SUBCASE("normal of odd size uses its whole last pair") {
    for (DType t : {DType::Float32, DType::Float64}) {
      auto normal = [t](Generator& g, const Shape& s) { return g.normal(0, 1, s, t); };
      int k = kiln::itemsize(t) / 4;
      // 3 values use two pairs: the 4th is drawn and dropped, so the 5 start at the 5th.
      check_one_stream<double>(normal, static_cast<uint64_t>((4 + 6) * k), 9, 4);
    }
  }
  SUBCASE("mixed distributions, replayed from a saved offset") {
    Generator g(11);
    g.normal(0, 1, {7});
    uint64_t at = g.offset();
    auto r = values<int64_t>(g.randint(0, 10, {50}));
    Generator h(11);
    h.set_offset(at);
    CHECK(values<int64_t>(h.randint(0, 10, {50})) == r);
  }
  SUBCASE("evaluating out of order gives the same numbers") {
    Generator g(5);
    Array a = g.uniform(0, 1, {100});
    Array b = g.uniform(0, 1, {100});
    auto vb = values<double>(b);  // b first: its words come from a later offset
    auto va = values<double>(a);
    auto whole = values<double>(Generator(5).uniform(0, 1, {200}));
    CHECK(slice(whole, 0, 100) == va);
    CHECK(slice(whole, 100, 200) == vb);
  }
}

TEST_CASE("randint stays in [low, high)") {
  Generator g(123);
  SUBCASE("a small range hits both ends") {
    auto v = values<int64_t>(g.randint(-3, 4, {10000}));
    CHECK(*std::min_element(v.begin(), v.end()) == -3);
    CHECK(*std::max_element(v.begin(), v.end()) == 3);
  }
  SUBCASE("a range of one") {
    auto v = values<int64_t>(g.randint(-9, -8, {100}));
    CHECK(std::all_of(v.begin(), v.end(), [](int64_t x) { return x == -9; }));
  }
  SUBCASE("ranges around 2^16 and 2^32, and beyond") {
    for (int64_t span : {int64_t{65535}, int64_t{65536}, int64_t{65537}, int64_t{1} << 32,
                         (int64_t{1} << 32) + 1, int64_t{3} << 40}) {
      int64_t low = -span / 3;
      auto v = values<int64_t>(g.randint(low, low + span, {20000}));
      CHECK(*std::min_element(v.begin(), v.end()) >= low);
      CHECK(*std::max_element(v.begin(), v.end()) < low + span);
      // Both halves of the range show up.
      CHECK(std::count_if(v.begin(), v.end(), [&](int64_t x) { return x < low + span / 2; }) >
            9000);
      CHECK(std::count_if(v.begin(), v.end(), [&](int64_t x) { return x >= low + span / 2; }) >
            9000);
    }
  }
  SUBCASE("the whole int64 range") {
    constexpr int64_t lo = std::numeric_limits<int64_t>::min();
    constexpr int64_t hi = std::numeric_limits<int64_t>::max();
    auto v = values<int64_t>(g.randint(lo, hi, {10000}));
    CHECK(*std::max_element(v.begin(), v.end()) < hi);
    CHECK(std::count_if(v.begin(), v.end(), [](int64_t x) { return x < 0; }) > 4500);
    CHECK(std::count_if(v.begin(), v.end(), [](int64_t x) { return x >= 0; }) > 4500);
  }
  SUBCASE("int32 up to its limits") {
    constexpr int64_t lo = std::numeric_limits<int32_t>::min();
    constexpr int64_t hi = int64_t{std::numeric_limits<int32_t>::max()} + 1;
    Array a = g.randint(lo, hi, {10000}, DType::Int32);
    CHECK(a.dtype() == DType::Int32);
    auto v = values<int32_t>(a);
    CHECK(std::count_if(v.begin(), v.end(), [](int32_t x) { return x < 0; }) > 4500);
    CHECK(std::count_if(v.begin(), v.end(), [](int32_t x) { return x >= 0; }) > 4500);
  }
}

TEST_CASE("randint histogram: chi-square of 10 bins over 10^6 draws") {
  const int64_t n = 1000000;
  Array r = Generator(2024).randint(0, 10, {n});
  double chi2 = 0, expected = n / 10.0;
  for (int64_t v = 0; v < 10; ++v) {
    double count = static_cast<double>(kiln::sum(r == v).item<int64_t>());
    chi2 += (count - expected) * (count - expected) / expected;
  }
  // 9 degrees of freedom: mean 9; P(chi2 > 40) is about 5e-6.
  CHECK(chi2 < 40);
  // And the large-range path: the top decile of [0, 10 * 2^40) holds a tenth of the draws.
  Array w = Generator(2025).randint(0, int64_t{10} << 40, {n});
  double top = static_cast<double>(kiln::sum(w >= (int64_t{9} << 40)).item<int64_t>());
  CHECK(std::abs(top - n / 10.0) < 5 * std::sqrt(n * 0.1 * 0.9));
}

TEST_CASE("uniform stays in [low, high)") {
  for (DType t : {DType::Float32, DType::Float64}) {
    CAPTURE(kiln::dtype_name(t));
    Generator g(99);
    auto v = values<double>(g.uniform(-2.5, 4, {200000}, t));
    CHECK(*std::min_element(v.begin(), v.end()) >= -2.5);
    CHECK(*std::max_element(v.begin(), v.end()) < 4);
    CHECK(*std::min_element(v.begin(), v.end()) < -2.49);
    CHECK(*std::max_element(v.begin(), v.end()) > 3.99);
    // Mean (low + high) / 2 and variance (high - low)^2 / 12.
    Array a = g.uniform(-2.5, 4, {1000000}, t);
    double m = kiln::mean(a).item<double>();
    double var = kiln::mean((a - m) * (a - m)).item<double>();
    CHECK(std::abs(m - 0.75) < 0.01);
    CHECK(std::abs(var - 6.5 * 6.5 / 12) < 0.02);
  }
  SUBCASE("a range of one ulp: values that round up to high become low") {
    double hi64 = std::nextafter(1.0, 2.0);
    auto v = values<double>(Generator(1).uniform(1.0, hi64, {1000}));
    CHECK(std::all_of(v.begin(), v.end(), [](double x) { return x == 1.0; }));
    double hi32 = std::nextafter(1.0f, 2.0f);
    auto f = values<float>(Generator(1).uniform(1.0, hi32, {1000}, DType::Float32));
    CHECK(std::all_of(f.begin(), f.end(), [](float x) { return x == 1.0f; }));
  }
}

TEST_CASE("normal: mean, std and shape of 10^6 samples") {
  for (DType t : {DType::Float32, DType::Float64}) {
    CAPTURE(kiln::dtype_name(t));
    Array a = Generator(77).normal(3, 2, {1000, 1000}, t);
    CHECK(a.dtype() == t);
    double m = kiln::mean(a.astype(DType::Float64)).item<double>();
    Array z = (a.astype(DType::Float64) - 3) / 2;
    double var = kiln::mean(z * z).item<double>();
    // Standard errors: 2 / 1000 for the mean, sqrt(2 / 10^6) for the variance; 5 of each.
    CHECK(std::abs(m - 3) < 0.01);
    CHECK(std::abs(var - 1) < 0.0075);
    // Tails: P(|z| < 1) = 0.6827, P(|z| < 2) = 0.9545; and no huge values.
    double in1 = kiln::mean(kiln::abs(z) < 1.0).item<double>();
    double in2 = kiln::mean(kiln::abs(z) < 2.0).item<double>();
    CHECK(std::abs(in1 - 0.6827) < 0.003);
    CHECK(std::abs(in2 - 0.9545) < 0.002);
    CHECK(kiln::max(kiln::abs(z)).item<double>() < 9);
    // Odd and even elements (the cos and sin halves of each pair) are uncorrelated.
    Array flat = z.reshape({500000, 2});
    double corr = kiln::mean(flat(kiln::Slice(), 0) * flat(kiln::Slice(), 1)).item<double>();
    CHECK(std::abs(corr) < 0.01);
  }
  SUBCASE("std 0 gives the mean") {
    auto v = values<double>(Generator(1).normal(1.5, 0, {5}));
    CHECK(v == std::vector<double>(5, 1.5));
  }
}

TEST_CASE("dtypes and shapes, zero-size and 0-d included") {
  Generator g(0);
  for (Shape s : {Shape{}, Shape{0}, Shape{3, 0, 2}, Shape{1}, Shape{2, 3, 4}}) {
    CAPTURE(kiln::shape_str(s));
    Array r = g.randint(0, 5, s, DType::Int32);
    Array u = g.uniform(0, 1, s, DType::Float32);
    Array n = g.normal(0, 1, s);
    CHECK(r.dtype() == DType::Int32);
    CHECK(u.dtype() == DType::Float32);
    CHECK(n.dtype() == DType::Float64);
    for (const Array& a : {r, u, n}) {
      CHECK(a.shape() == s);
      CHECK(a.device() == kiln::host());
      CHECK(a.to_vector<double>().size() == static_cast<size_t>(kiln::shape_size(s)));
    }
  }
  // A zero-size call consumes nothing.
  Generator h(0);
  h.uniform(0, 1, {0, 5});
  CHECK(h.offset() == 0u);
  CHECK(Generator(0).randint(0, 5, {4}).dtype() == DType::Int64);
}

TEST_CASE("errors, which leave the generator's offset unchanged") {
  Generator g(1);
  g.randint(0, 5, {3});
  const uint64_t at = g.offset();
  // Empty ranges are value errors, not shape or dtype errors.
  CHECK(throws_plain_error([&] { g.randint(5, 5, {3}); }));
  CHECK(throws_plain_error([&] { g.randint(5, -1, {3}); }));
  CHECK(throws_plain_error([&] { g.uniform(1, 1, {3}); }));
  CHECK(throws_plain_error([&] { g.uniform(2, 1, {3}); }));
  CHECK(throws_plain_error([&] { g.uniform(0, INFINITY, {3}); }));
  CHECK(throws_plain_error([&] { g.uniform(NAN, 1, {3}); }));
  CHECK(throws_plain_error([&] { g.uniform(-3e38, 3e38, {3}, DType::Float32); }));   // inf span
  CHECK(throws_plain_error([&] { g.uniform(1, 1 + 1e-12, {3}, DType::Float32); }));  // one float
  CHECK(throws_plain_error([&] { g.normal(0, -1, {3}); }));
  CHECK(throws_plain_error([&] { g.normal(0, NAN, {3}); }));
  CHECK(throws_plain_error([&] { g.normal(INFINITY, 1, {3}); }));
  // Dtypes.
  for (DType t : {DType::Float32, DType::Float64, DType::Bool, DType::Complex128})
    CHECK_THROWS_AS(g.randint(0, 5, {3}, t), kiln::DTypeError);
  for (DType t : {DType::Int32, DType::Int64, DType::Bool, DType::Complex64}) {
    CHECK_THROWS_AS(g.uniform(0, 1, {3}, t), kiln::DTypeError);
    CHECK_THROWS_AS(g.normal(0, 1, {3}, t), kiln::DTypeError);
  }
  CHECK_THROWS_AS(g.randint(0, (int64_t{1} << 31) + 1, {3}, DType::Int32), kiln::DTypeError);
  CHECK_THROWS_AS(g.randint(-(int64_t{1} << 31) - 1, 0, {3}, DType::Int32), kiln::DTypeError);
  // Shapes.
  CHECK_THROWS_AS(g.randint(0, 5, {2, -1}), kiln::ShapeError);
  CHECK_THROWS_AS(g.uniform(0, 1, {-3}), kiln::ShapeError);
  CHECK_THROWS_AS(g.normal(0, 1, {1, 1, 1, 1, 1, 1, 1, 1, 1}), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::random::randint(0, 5, {-1}), kiln::ShapeError);
  CHECK(g.offset() == at);
  // The messages say what to do.
  CHECK_THROWS_WITH(g.randint(3, 3, {1}), doctest::Contains("greater than low"));
  CHECK_THROWS_WITH(g.uniform(0, 1, {1}, DType::Int64), doctest::Contains("float32 or float64"));
}

TEST_CASE("randint(...) * 2 + 1 is a random step and one fused kernel") {
  Generator g(31);
  Array r = g.randint(-50, 50, {1000});
  Array y = r * 2 + 1;
  auto plan = kiln::plan::make_plan({y.node()});
  int randoms = 0, kernels = 0;
  for (const auto& step : plan.steps) {
    randoms += std::holds_alternative<kiln::plan::RandomStep>(step);
    kernels += std::holds_alternative<kiln::plan::KernelStep>(step);
  }
  CHECK(randoms == 1);
  CHECK(kernels == 1);
  auto vy = values<int64_t>(y);  // y first, so r is computed again by its own plan
  auto vr = values<int64_t>(r);
  REQUIRE(vy.size() == vr.size());
  for (size_t i = 0; i < vr.size(); ++i) CHECK(vy[i] == 2 * vr[i] + 1);
  CHECK(y.dtype() == DType::Int64);
}

TEST_CASE("eager mode gives the same numbers") {
  auto lazy = values<double>(Generator(8).normal(0, 1, {33}) * 3);
  kiln::EagerScope eager;
  CHECK(values<double>(Generator(8).normal(0, 1, {33}) * 3) == lazy);
}

TEST_CASE("free functions: seeded default generators") {
  kiln::random::seed(2026);
  auto a = values<int64_t>(kiln::random::randint(0, 100, {50}));
  auto b = values<double>(kiln::random::uniform(0, 1, {50}));
  auto c = values<double>(kiln::random::normal(0, 1, {50}, DType::Float32));
  CHECK(values<int64_t>(kiln::random::randint(0, 100, {50})) != a);  // the stream moved on
  // Reseeding restarts, and the default generator is Generator(seed) on the host.
  kiln::random::seed(2026);
  CHECK(values<int64_t>(kiln::random::randint(0, 100, {50})) == a);
  Generator g(2026);
  CHECK(values<int64_t>(g.randint(0, 100, {50})) == a);
  CHECK(values<double>(g.uniform(0, 1, {50})) == b);
  CHECK(values<double>(g.normal(0, 1, {50}, DType::Float32)) == c);
  CHECK(values<double>(kiln::random::uniform(0, 1, {50}, DType::Float64, kiln::host())) == b);
  CHECK(g.seed() == 2026u);
  CHECK(g.device() == kiln::host());
}

TEST_CASE("the default generator is safe to share between threads") {
  kiln::random::seed(5);
  constexpr int kThreads = 4, kCalls = 200;
  std::vector<std::vector<double>> got(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&got, i] {
      for (int c = 0; c < kCalls; ++c)
        got[i].push_back(kiln::random::uniform(0, 1, {1}).item<double>());
    });
  for (auto& t : threads) t.join();
  // Every call took its own word pair: together they are one stream of 800 values.
  std::multiset<double> all, expected;
  for (const auto& v : got) all.insert(v.begin(), v.end());
  auto ref = values<double>(Generator(5).uniform(0, 1, {kThreads * kCalls}));
  expected.insert(ref.begin(), ref.end());
  CHECK(all == expected);
}

TEST_CASE("randint(0, 255) on a 2000 x 2000 host array") {
  Array a = Generator(0).randint(0, 255, {2000, 2000});
  CHECK(a.nbytes() == 32000000);
  CHECK(kiln::min(a).item<int64_t>() == 0);
  CHECK(kiln::max(a).item<int64_t>() == 254);
  CHECK(std::abs(kiln::mean(a).item<double>() - 127) < 0.5);
}
