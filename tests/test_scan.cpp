// Long scans (cumsum, cumprod) on a GPU against the host executor, which walks each row in order
// as NumPy does: the single-pass tiled form of kernels/scan.cuh on rows of 10^6 and 2^20 + 3
// values, many rows of several tiles, rows that start unaligned, strided rows, an offset view,
// in every dtype. Values whose partial folds are exact in any order must match bit for bit;
// random floats within the bound of two summation orders (kiln/selection.hpp), and the same bits
// on every run.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <kiln/kiln.hpp>
#include <random>
#include <vector>

#include "support/gpu.hpp"

namespace {

using kiln::Array;
using kiln::DType;
using kiln::Shape;

struct Layout {
  Shape shape;
  int axis;
};

// Single rows long enough for many tiles, several rows whose starts are not 16-byte aligned
// (2^20 + 3 values), many rows of a few tiles, and a strided axis with few lanes.
// The last two: the look-back's groups (512 tiles of 32 KiB) chaining within a row and starting
// again in the next: two rows of 306 float32 / 611 float64 / 1221 complex128 tiles, and one of
// 1099 float32 tiles (the 4-byte values that travel inside the status word).
const Layout kLayouts[] = {{{1000000}, 0}, {{3, (1 << 20) + 3}, 1}, {{40, 5000}, 1},
                           {{6001, 3}, 0}, {{2, 2500003}, 1},       {{9000003}, 0}};

int64_t size_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Values whose every partial fold is exact in any association. Sums: integers 0 to 3 (below
// 2^24 for a row of millions, exact in float32; integer dtypes wrap alike in any order), or for
// float16 and bfloat16 signs with zeros between them, alternating, so every run of consecutive
// values sums to -1, 0 or 1. Products: signs, so every product is 1 or -1.
std::vector<double> exact_values(int64_t size, bool product, bool half, uint32_t seed) {
  std::mt19937 g(seed);
  std::vector<double> v(size);
  double sign = 1;
  for (double& x : v) {
    if (product) {
      x = g() % 2 ? 1.0 : -1.0;
    } else if (!half) {
      x = static_cast<double>(g() % 4);
    } else if (g() % 3 != 0) {
      sign = -sign;
      x = sign;
    } else {
      x = 0;
    }
  }
  return v;
}

Array on_gpu(const Array& a) { return a.to(kiln::cuda()); }

Array scan(const Array& x, bool product, int axis, std::optional<DType> t) {
  return product ? kiln::cumprod(x, axis, t) : kiln::cumsum(x, axis, t);
}

// gpu (any device) holds host's values within bound, element by element (float64 parts).
void check_within(const Array& gpu, const Array& host, const std::vector<double>& bound) {
  auto parts = [](const Array& a, bool imag) {
    Array h = a.to(kiln::host());
    return (imag ? kiln::imag(h) : kiln::real(h)).astype(DType::Float64).to_vector<double>();
  };
  int failures = 0;
  for (bool imag : {false, true}) {
    if (imag && !kiln::is_complex(host.dtype())) break;
    auto g = parts(gpu, imag), h = parts(host, imag);
    REQUIRE(g.size() == bound.size());
    for (size_t k = 0; k < g.size() && failures < 5; ++k)
      if (!(std::abs(g[k] - h[k]) <= bound[k])) {
        ++failures;
        FAIL_CHECK("element " << k << ": gpu " << g[k] << ", host " << h[k] << ", bound "
                              << bound[k]);
      }
  }
}

}  // namespace

GPU_TEST_CASE("long scans on the GPU equal the host's where every order is exact, in every dtype") {
  for (const Layout& l : kLayouts)
    for (DType t : kiln::kAllDTypes)
      for (bool product : {false, true}) {
        INFO(kiln::dtype_name(t) << (product ? " cumprod" : " cumsum") << ", axis " << l.axis
                                 << " of " << l.shape[0] << " x "
                                 << (l.shape.size() > 1 ? l.shape[1] : 1));
        // Cast on the host, so both scans read the same bits.
        Array x =
            kiln::asarray(exact_values(size_of(l.shape), product, kiln::is_half(t), 7), l.shape)
                .astype(t)
                .eval();
        // bool scans as int64 (a mask's running count), the others in their own dtype.
        std::optional<DType> as = t == DType::Bool ? std::nullopt : std::optional<DType>(t);
        Array want = scan(x, product, l.axis, as).eval();
        Array got = scan(on_gpu(x), product, l.axis, as).eval();
        CHECK(got.device() == kiln::cuda());
        CHECK(kiln::array_equal(got.to(kiln::host()), want));
        if (t == DType::Bool)  // and a bool accumulator: a running OR / AND
          CHECK(kiln::array_equal(scan(on_gpu(x), product, l.axis, DType::Bool).to(kiln::host()),
                                  scan(x, product, l.axis, DType::Bool)));
      }
}

// NumPy's dtype=bool accumulates in bool, the values cast to bool first: a running OR for
// cumsum, AND for cumprod (before, a bug report from the host executor). Hand-derived values.
TEST_CASE("cumsum and cumprod with a bool accumulator: a running OR and AND") {
  auto bools = [](const Array& a) { return a.astype(DType::Int64).to_vector<int64_t>(); };
  Array v = kiln::asarray(std::vector<int64_t>{0, 0, -2, 0, 5});
  Array or_ = kiln::cumsum(v, 0, DType::Bool), and_ = kiln::cumprod(v * v - 3, 0, DType::Bool);
  CHECK(or_.dtype() == DType::Bool);
  CHECK(bools(or_) == std::vector<int64_t>{0, 0, 1, 1, 1});
  CHECK(bools(and_) == std::vector<int64_t>{1, 1, 1, 1, 1});  // v * v - 3: -3, -3, 1, -3, 22
  CHECK(bools(kiln::cumprod(v + 2, 0, DType::Bool)) ==
        std::vector<int64_t>{1, 1, 0, 0, 0});  // v + 2: 2, 2, 0, 2, 7
  Array m = kiln::asarray(std::vector<bool>{1, 0, 1, 1, 1, 0}).reshape({2, 3});
  CHECK(bools(kiln::cumprod(m, 1, DType::Bool)) == std::vector<int64_t>{1, 0, 0, 1, 1, 0});
  CHECK(bools(kiln::cumsum(m, 0, DType::Bool)) == std::vector<int64_t>{1, 0, 1, 1, 1, 1});
  CHECK(bools(kiln::cumsum(m, std::nullopt, DType::Bool)) == std::vector<int64_t>(6, 1));
}

GPU_TEST_CASE("long float scans on the GPU stay within two summation orders of the host's") {
  std::mt19937 g(11);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (const Layout& l : kLayouts)
    for (DType t : {DType::Float32, DType::Float64, DType::Complex64, DType::Complex128})
      for (bool product : {false, true}) {
        if (product && kiln::is_complex(t)) continue;  // exact above; no bound of its own here
        INFO(kiln::dtype_name(t) << (product ? " cumprod" : " cumsum") << ", axis " << l.axis);
        const int64_t size = size_of(l.shape), n = l.shape[l.axis];
        std::vector<double> re(size), im(size);
        // Products of values within 5e-4 of 1 stay near 1 over a million steps.
        for (double& v : re) v = product ? 1.0 + (unit(g) - 0.5) * 1e-3 : unit(g);
        for (double& v : im) v = unit(g);
        Array x = kiln::asarray(re, l.shape);
        if (kiln::is_complex(t)) {
          std::vector<std::complex<double>> z(size);
          for (int64_t k = 0; k < size; ++k) z[k] = {re[k], im[k]};
          x = kiln::asarray(z, l.shape);
        }
        x = x.astype(t).eval();
        Array want = scan(x, product, l.axis, std::nullopt).eval();
        Array got = scan(on_gpu(x), product, l.axis, std::nullopt).eval();
        // Either order's error is at most (n - 1) eps times the scan of the magnitudes (for a
        // product: of the results' magnitudes), so their difference at most twice that.
        const double eps = t == DType::Float32 || t == DType::Complex64 ? 0x1p-23 : 0x1p-52;
        Array magnitudes =
            product
                ? kiln::abs(want.astype(DType::Float64))
                : kiln::cumsum(
                      kiln::abs(x.astype(kiln::is_complex(t) ? DType::Complex128 : DType::Float64)),
                      l.axis);
        std::vector<double> bound = magnitudes.to_vector<double>();
        for (double& b : bound) b *= 2.0 * static_cast<double>(n) * eps;
        check_within(got, want, bound);
        // Decoupled look-back folds forward from whichever prefix it finds: the same bits.
        Array again = scan(on_gpu(x), product, l.axis, std::nullopt).eval();
        CHECK(kiln::array_equal(again.to(kiln::host()), got.to(kiln::host())));
      }
}

GPU_TEST_CASE("a long scan of an offset view and of an elementwise producer match the host") {
  std::vector<double> v(3000017);
  std::mt19937 g(5);
  for (double& x : v) x = static_cast<double>(g() % 100) / 64.0;  // sums exact in float64
  Array x = kiln::asarray(v);
  for (const Array& in : {x, on_gpu(x)}) {
    INFO("on " << (in.device() == kiln::cuda() ? "the GPU" : "the host"));
    Array view = in("3:");
    Array host_view = x("3:");
    CHECK(kiln::array_equal(kiln::cumsum(view).to(kiln::host()), kiln::cumsum(host_view)));
    // A mask's running count, and an affine producer, in int64 and exact float64.
    CHECK(kiln::array_equal(kiln::cumsum(in > 0.75).to(kiln::host()), kiln::cumsum(x > 0.75)));
    CHECK(kiln::array_equal(kiln::cumsum(in * 2 + 1).to(kiln::host()), kiln::cumsum(x * 2 + 1)));
    CHECK(kiln::array_equal(kiln::cumsum(in.astype(DType::Int32), 0, DType::Int32).to(kiln::host()),
                            kiln::cumsum(x.astype(DType::Int32), 0, DType::Int32)));
  }
}
