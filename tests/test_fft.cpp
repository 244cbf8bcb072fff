// kiln::fft against a direct O(N^2) DFT written here, which follows numpy.fft's definitions
// (crop / zero-pad, norms, rfftn's halved last axis, irfftn's order of operations).
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <kiln/kiln.hpp>
#include <numbers>
#include <random>
#include <string>
#include <vector>

using cd = std::complex<double>;
using kiln::Array;
using kiln::DType;
using kiln::Shape;

namespace {

const char* const kNorms[] = {"backward", "ortho", "forward"};

// ---- the reference ---------------------------------------------------------------------------
struct Ref {
  Shape shape;
  std::vector<cd> v;
};

// Views a dense array as [outer, len, inner] around one axis.
struct Around {
  int64_t outer = 1, len, inner = 1;
  Around(const Shape& s, int axis) : len(s[axis]) {
    for (int i = 0; i < axis; ++i) outer *= s[i];
    for (size_t i = axis + 1; i < s.size(); ++i) inner *= s[i];
  }
};

// The array cropped or zero-padded to m entries along axis.
Ref resize(const Ref& a, int axis, int64_t m) {
  Around in(a.shape, axis);
  Ref r{a.shape, {}};
  r.shape[axis] = m;
  r.v.assign(static_cast<size_t>(in.outer * m * in.inner), cd{});
  for (int64_t o = 0; o < in.outer; ++o)
    for (int64_t k = 0; k < std::min(m, in.len); ++k)
      for (int64_t i = 0; i < in.inner; ++i)
        r.v[(o * m + k) * in.inner + i] = a.v[(o * in.len + k) * in.inner + i];
  return r;
}

// Unnormalised DFT of length n along axis (after resizing to n), e^-i forward, e^+i inverse.
Ref dft(const Ref& a, int axis, int64_t n, bool inverse) {
  Ref x = resize(a, axis, n);
  Ref r = x;
  Around ar(x.shape, axis);
  double sign = inverse ? 1 : -1;
  for (int64_t o = 0; o < ar.outer; ++o)
    for (int64_t i = 0; i < ar.inner; ++i)
      for (int64_t k = 0; k < n; ++k) {
        cd acc{};
        for (int64_t j = 0; j < n; ++j) {
          double ang = sign * 2 * std::numbers::pi * static_cast<double>((j * k) % n) / n;
          acc += x.v[(o * n + j) * ar.inner + i] * std::polar(1.0, ang);
        }
        r.v[(o * n + k) * ar.inner + i] = acc;
      }
  return r;
}

// NumPy's irfft along one axis (unnormalised): keeps n / 2 + 1 entries, takes the real part
// of the DC term (and of the Nyquist term for even n), and extends by Hermitian symmetry.
Ref c2r(const Ref& a, int axis, int64_t n) {
  Ref x = resize(a, axis, n / 2 + 1);
  Ref r{x.shape, {}};
  r.shape[axis] = n;
  Around ar(x.shape, axis);
  r.v.assign(static_cast<size_t>(ar.outer * n * ar.inner), cd{});
  for (int64_t o = 0; o < ar.outer; ++o)
    for (int64_t i = 0; i < ar.inner; ++i)
      for (int64_t j = 0; j < n; ++j) {
        auto at = [&](int64_t k) { return x.v[(o * ar.len + k) * ar.inner + i]; };
        double acc = at(0).real();
        for (int64_t k = 1; 2 * k < n; ++k)
          acc += 2 * (at(k) * std::polar(1.0, 2 * std::numbers::pi * ((j * k) % n) / n)).real();
        if (n % 2 == 0) acc += at(n / 2).real() * (j % 2 ? -1 : 1);
        r.v[(o * n + j) * ar.inner + i] = acc;
      }
  return r;
}

double norm_scale(const std::string& norm, bool inverse, double n) {
  if (norm == "ortho") return 1 / std::sqrt(n);
  if (norm == "forward") return inverse ? 1 : 1 / n;
  return inverse ? 1 / n : 1;
}

Ref scaled(Ref a, double f) {
  for (auto& x : a.v) x *= f;
  return a;
}

int pos(int axis, size_t ndim) { return axis < 0 ? axis + static_cast<int>(ndim) : axis; }

// numpy.fft.fftn / ifftn.
Ref ref_fftn(Ref a, const std::vector<int>& axes, const std::vector<int64_t>& s, bool inverse,
             const std::string& norm) {
  double total = 1;
  for (size_t i = 0; i < axes.size(); ++i) {
    a = dft(a, pos(axes[i], a.shape.size()), s[i], inverse);
    total *= static_cast<double>(s[i]);
  }
  return scaled(a, norm_scale(norm, inverse, total));
}

// numpy.fft.rfftn: the full transform, then the halved last axis.
Ref ref_rfftn(const Ref& a, const std::vector<int>& axes, const std::vector<int64_t>& s,
              const std::string& norm) {
  Ref f = ref_fftn(a, axes, s, false, norm);
  return resize(f, pos(axes.back(), a.shape.size()), s.back() / 2 + 1);
}

// numpy.fft.irfftn: c2c inverse over the leading axes, then c2r on the last.
Ref ref_irfftn(Ref a, const std::vector<int>& axes, const std::vector<int64_t>& s,
               const std::string& norm) {
  double total = 1;
  for (size_t i = 0; i + 1 < axes.size(); ++i) {
    a = dft(a, pos(axes[i], a.shape.size()), s[i], true);
    total *= static_cast<double>(s[i]);
  }
  a = c2r(a, pos(axes.back(), a.shape.size()), s.back());
  return scaled(a, norm_scale(norm, true, total * static_cast<double>(s.back())));
}

// ---- inputs and comparison -------------------------------------------------------------------
std::vector<double> reals(const Shape& s, unsigned seed = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(static_cast<size_t>(kiln::shape_size(s)));
  for (auto& x : v) x = u(gen);
  return v;
}

std::vector<cd> complexes(const Shape& s, unsigned seed = 2) {
  auto re = reals(s, seed), im = reals(s, seed + 100);
  std::vector<cd> v(re.size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = {re[i], im[i]};
  return v;
}

Ref ref_of(const std::vector<double>& v, const Shape& s) { return {s, {v.begin(), v.end()}}; }
Ref ref_of(const std::vector<cd>& v, const Shape& s) { return {s, v}; }

// One test input two ways: as a kiln array and as the reference's copy of the same values.
struct Input {
  Array a;
  Ref r;
};
Input complex_input(const Shape& s, unsigned seed = 2) {
  auto x = complexes(s, seed);
  return {kiln::asarray(x, s), ref_of(x, s)};
}
Input real_input(const Shape& s, unsigned seed = 1) {
  auto x = reals(s, seed);
  return {kiln::asarray(x, s), ref_of(x, s)};
}

// Largest difference relative to the largest reference magnitude.
void check_close(const Array& got, const Ref& want, double tol = 1e-10) {
  REQUIRE(got.shape() == want.shape);
  auto g = got.to_vector<cd>();
  double scale = 1, err = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    scale = std::max(scale, std::abs(want.v[i]));
    err = std::max(err, std::abs(g[i] - want.v[i]));
  }
  CHECK(err <= tol * scale);
}

void check_close(const Array& got, const Array& want, double tol = 1e-10) {
  check_close(got, Ref{want.shape(), want.to_vector<cd>()}, tol);
}

}  // namespace

// ---- complex transforms --------------------------------------------------------------------
TEST_CASE("fft and ifft of 1-d arrays match the DFT for every norm") {
  for (int64_t n : {1, 2, 5, 7, 8, 16}) {
    auto [a, r] = complex_input({n});
    for (std::string norm : kNorms) {
      CAPTURE(n);
      CAPTURE(norm);
      check_close(kiln::fft::fft(a, std::nullopt, -1, norm), ref_fftn(r, {0}, {n}, false, norm));
      check_close(kiln::fft::ifft(a, std::nullopt, -1, norm), ref_fftn(r, {0}, {n}, true, norm));
    }
  }
}

TEST_CASE("fft with n crops or zero-pads, along any axis") {
  auto [a, r] = complex_input({5, 6});
  for (int64_t n : {1, 3, 6, 7, 11}) {
    CAPTURE(n);
    check_close(kiln::fft::fft(a, n), ref_fftn(r, {1}, {n}, false, "backward"));
    check_close(kiln::fft::fft(a, n, 0), ref_fftn(r, {0}, {n}, false, "backward"));
    check_close(kiln::fft::ifft(a, n, -2, "ortho"), ref_fftn(r, {0}, {n}, true, "ortho"));
  }
}

TEST_CASE("fft2 and ifft2: default axes, chosen axes, s") {
  auto [a, r] = complex_input({3, 4, 5});
  for (std::string norm : kNorms) {
    CAPTURE(norm);
    check_close(kiln::fft::fft2(a, std::nullopt, {-2, -1}, norm),
                ref_fftn(r, {1, 2}, {4, 5}, false, norm));
    check_close(kiln::fft::ifft2(a, std::nullopt, {-2, -1}, norm),
                ref_fftn(r, {1, 2}, {4, 5}, true, norm));
    check_close(kiln::fft::fft2(a, std::nullopt, {2, 0}, norm),
                ref_fftn(r, {2, 0}, {5, 3}, false, norm));
  }
  check_close(kiln::fft::fft2(a, std::vector<int64_t>{2, 7}),
              ref_fftn(r, {1, 2}, {2, 7}, false, "backward"));
  check_close(kiln::fft::ifft2(a, std::vector<int64_t>{6, 3}, {0, -1}),
              ref_fftn(r, {0, 2}, {6, 3}, true, "backward"));
  Shape s2{5, 6};
  auto y = complexes(s2, 9);
  check_close(kiln::fft::fft2(kiln::asarray(y, s2)),
              ref_fftn(ref_of(y, s2), {0, 1}, {5, 6}, false, "backward"));
}

TEST_CASE("fftn and ifftn: all axes, subsets, negative axes, s alone, s with axes") {
  auto [a, r] = complex_input({3, 4, 5});
  for (std::string norm : kNorms) {
    CAPTURE(norm);
    check_close(kiln::fft::fftn(a, std::nullopt, std::nullopt, norm),
                ref_fftn(r, {0, 1, 2}, {3, 4, 5}, false, norm));
    check_close(kiln::fft::ifftn(a, std::nullopt, std::nullopt, norm),
                ref_fftn(r, {0, 1, 2}, {3, 4, 5}, true, norm));
    check_close(kiln::fft::fftn(a, std::nullopt, std::vector<int>{-1, 0}, norm),
                ref_fftn(r, {2, 0}, {5, 3}, false, norm));
    check_close(kiln::fft::ifftn(a, std::nullopt, std::vector<int>{1}, norm),
                ref_fftn(r, {1}, {4}, true, norm));
  }
  // s alone transforms the last len(s) axes.
  check_close(kiln::fft::fftn(a, std::vector<int64_t>{2, 8}),
              ref_fftn(r, {1, 2}, {2, 8}, false, "backward"));
  check_close(kiln::fft::fftn(a, std::vector<int64_t>{4, 3, 7}, std::vector<int>{0, 1, 2}),
              ref_fftn(r, {0, 1, 2}, {4, 3, 7}, false, "backward"));
  check_close(kiln::fft::ifftn(a, std::vector<int64_t>{1, 6}, std::vector<int>{-3, -1}, "ortho"),
              ref_fftn(r, {0, 2}, {1, 6}, true, "ortho"));
  // 1-d and 2-d inputs.
  Shape s1{7};
  auto y = complexes(s1, 5);
  check_close(kiln::fft::fftn(kiln::asarray(y, s1)),
              ref_fftn(ref_of(y, s1), {0}, {7}, false, "backward"));
}

TEST_CASE("fftn over no axes is the identity, as complex") {
  Shape s{2, 3};
  auto x = reals(s);
  Array f = kiln::fft::fftn(kiln::asarray(x, s), std::nullopt, std::vector<int>{});
  CHECK(f.dtype() == DType::Complex128);
  check_close(f, ref_of(x, s));
}

// ---- complex transforms of real input -----------------------------------------------------------
// fft / fft2 / fftn of real input run a real transform and fill the other half of the spectrum
// from Hermitian symmetry (whichever transformed axis the executor halves), so the results must
// be the full DFT: every real dtype, odd and even lengths, axes in any order or not adjacent,
// s crops and pads (down to lengths 1 and 2, where there is nothing to fill), each norm.
namespace {

struct RealInput {
  Array a;
  Ref r;       // the values the transform sees
  DType want;  // the result's dtype
  double tol;
};

std::vector<RealInput> real_inputs(const Shape& s) {
  auto x = reals(s, 7);
  Array f64 = kiln::asarray(x, s);
  Array f32 = f64.astype(DType::Float32).eval();
  Array i64 = kiln::floor(f64 * 10).astype(DType::Int64).eval();
  return {{f64, ref_of(x, s), DType::Complex128, 1e-10},
          {f32, ref_of(f32.to_vector<double>(), s), DType::Complex64, 1e-5},
          {i64, ref_of(i64.to_vector<double>(), s), DType::Complex128, 1e-10}};
}

void check_real(const RealInput& in, const Array& got, const std::vector<int>& axes,
                const std::vector<int64_t>& s, const std::string& norm = "backward") {
  CHECK(got.dtype() == in.want);
  check_close(got, ref_fftn(in.r, axes, s, false, norm), in.tol);
}

}  // namespace

TEST_CASE("fft, fft2 and fftn of real input: every norm, axes in any order") {
  using namespace kiln::fft;
  using X = std::vector<int>;
  for (Shape s : {Shape{3, 4, 5}, Shape{5, 3, 6}}) {  // odd and even last axis
    for (const auto& in : real_inputs(s)) {
      for (std::string norm : kNorms) {
        CAPTURE(kiln::shape_str(s));
        CAPTURE(kiln::dtype_name(in.a.dtype()));
        CAPTURE(norm);
        check_real(in, fft(in.a, std::nullopt, -1, norm), {2}, {s[2]}, norm);
        check_real(in, fft(in.a, std::nullopt, 0, norm), {0}, {s[0]}, norm);
        check_real(in, fft(in.a, std::nullopt, 1, norm), {1}, {s[1]}, norm);
        check_real(in, fft2(in.a, std::nullopt, {-2, -1}, norm), {1, 2}, {s[1], s[2]}, norm);
        check_real(in, fft2(in.a, std::nullopt, {0, 1}, norm), {0, 1}, {s[0], s[1]}, norm);
        check_real(in, fft2(in.a, std::nullopt, {2, 0}, norm), {2, 0}, {s[2], s[0]}, norm);
        check_real(in, fftn(in.a, std::nullopt, std::nullopt, norm), {0, 1, 2}, {s[0], s[1], s[2]},
                   norm);
        check_real(in, fftn(in.a, std::nullopt, X{1, 0}, norm), {1, 0}, {s[1], s[0]}, norm);
        check_real(in, fftn(in.a, std::nullopt, X{2, 1, 0}, norm), {2, 1, 0}, {s[2], s[1], s[0]},
                   norm);
      }
    }
  }
}

TEST_CASE("fft, fft2 and fftn of real input: n and s crop and pad, lengths 1 and 2") {
  using namespace kiln::fft;
  using L = std::vector<int64_t>;
  using X = std::vector<int>;
  Shape s{4, 3, 5};
  for (const auto& in : real_inputs(s)) {
    CAPTURE(kiln::dtype_name(in.a.dtype()));
    for (int64_t n : {1, 2, 3, 4, 7, 8}) {
      CAPTURE(n);
      check_real(in, fft(in.a, n), {2}, {n});
      check_real(in, fft(in.a, n, 0, "ortho"), {0}, {n}, "ortho");
      check_real(in, fft(in.a, n, 1, "forward"), {1}, {n}, "forward");
    }
    check_real(in, fft2(in.a, L{2, 9}), {1, 2}, {2, 9});
    check_real(in, fft2(in.a, L{7, 1}), {1, 2}, {7, 1});
    check_real(in, fft2(in.a, L{6, 2}, {2, 0}, "ortho"), {2, 0}, {6, 2}, "ortho");
    check_real(in, fftn(in.a, L{1, 1, 1}), {0, 1, 2}, {1, 1, 1});
    check_real(in, fftn(in.a, L{5, 2, 8}), {0, 1, 2}, {5, 2, 8});
    check_real(in, fftn(in.a, L{3, 6}), {1, 2}, {3, 6});  // s alone: the last two axes
    check_real(in, fftn(in.a, L{6, 4}, X{0, 2}, "forward"), {0, 2}, {6, 4}, "forward");
    check_real(in, fftn(in.a, L{1, 8, 3}, X{2, 1, 0}), {2, 1, 0}, {1, 8, 3});
  }
}

TEST_CASE("fft, fft2 and fftn of real input: 1-d, 4-d, bool, axes not adjacent") {
  using namespace kiln::fft;
  using X = std::vector<int>;
  for (int64_t n : {1, 2, 7, 8}) {
    CAPTURE(n);
    for (const auto& in : real_inputs({n})) check_real(in, fft(in.a), {0}, {n});
  }
  Shape s{2, 3, 4, 5};
  for (const auto& in : real_inputs(s)) {
    CAPTURE(kiln::dtype_name(in.a.dtype()));
    check_real(in, fftn(in.a, std::nullopt, std::nullopt, "ortho"), {0, 1, 2, 3}, {2, 3, 4, 5},
               "ortho");
    check_real(in, fftn(in.a, std::nullopt, X{0, 2}), {0, 2}, {2, 4});
    check_real(in, fftn(in.a, std::nullopt, X{3, 1}), {3, 1}, {5, 3});
    check_real(in, fft2(in.a, std::nullopt, {0, 3}), {0, 3}, {2, 5});
  }
  Array b = kiln::asarray(reals({3, 6}), {3, 6}) > 0.0;
  Array f = fftn(b);
  CHECK(f.dtype() == DType::Complex128);
  check_close(f,
              ref_fftn(ref_of(b.to_vector<double>(), {3, 6}), {0, 1}, {3, 6}, false, "backward"));
}

TEST_CASE("complex transforms of real input: inverses unchanged, the input untouched") {
  Shape s{3, 4};
  auto x = reals(s);
  Array a = kiln::asarray(x, s);
  Ref r = ref_of(x, s);
  check_close(kiln::fft::ifft(a), ref_fftn(r, {1}, {4}, true, "backward"));
  check_close(kiln::fft::ifftn(a, std::nullopt, std::nullopt, "ortho"),
              ref_fftn(r, {0, 1}, {3, 4}, true, "ortho"));
  kiln::fft::fftn(a).eval();  // FFTW reads a float64 input where it is
  CHECK(a.to_vector<double>() == x);
  // The same values cast to complex first take the complex path; both agree.
  Array i = kiln::floor(a * 100).astype(DType::Int64);
  check_close(kiln::fft::fft2(i), kiln::fft::fft2(i.astype(DType::Complex128)));
}

// ---- real transforms -------------------------------------------------------------------------
TEST_CASE("rfft matches the first n / 2 + 1 DFT terms, with n and axis") {
  for (int64_t n : {1, 2, 7, 8}) {
    auto [a, r] = real_input({n});
    for (std::string norm : kNorms) {
      CAPTURE(n);
      CAPTURE(norm);
      check_close(kiln::fft::rfft(a, std::nullopt, -1, norm), ref_rfftn(r, {0}, {n}, norm));
    }
  }
  auto [a, r] = real_input({5, 6});
  for (int64_t n : {3, 4, 9, 10}) {
    CAPTURE(n);
    check_close(kiln::fft::rfft(a, n), ref_rfftn(r, {1}, {n}, "backward"));
    check_close(kiln::fft::rfft(a, n, 0, "ortho"), ref_rfftn(r, {0}, {n}, "ortho"));
  }
}

TEST_CASE("irfft follows NumPy, also for input that is not Hermitian") {
  // 5 stored terms: default n = 8; imaginary DC and Nyquist terms: NumPy ignores them.
  auto [a, r] = complex_input({4, 5});
  for (std::string norm : kNorms) {
    CAPTURE(norm);
    Array y = kiln::fft::irfft(a, std::nullopt, -1, norm);
    CHECK(y.dtype() == DType::Float64);
    check_close(y, ref_irfftn(r, {1}, {8}, norm));
  }
  for (int64_t n : {1, 2, 5, 7, 9, 12}) {  // crop and pad the stored terms, odd and even
    CAPTURE(n);
    check_close(kiln::fft::irfft(a, n), ref_irfftn(r, {1}, {n}, "backward"));
    check_close(kiln::fft::irfft(a, n, 0, "forward"), ref_irfftn(r, {0}, {n}, "forward"));
  }
}

TEST_CASE("rfftn halves the last of the axes given") {
  auto [a, r] = real_input({3, 4, 5});
  for (std::string norm : kNorms) {
    CAPTURE(norm);
    check_close(kiln::fft::rfftn(a, std::nullopt, std::nullopt, norm),
                ref_rfftn(r, {0, 1, 2}, {3, 4, 5}, norm));
    check_close(kiln::fft::rfftn(a, std::nullopt, std::vector<int>{2, 0}, norm),
                ref_rfftn(r, {2, 0}, {5, 3}, norm));
    check_close(kiln::fft::rfftn(a, std::nullopt, std::vector<int>{-1, -2}, norm),
                ref_rfftn(r, {2, 1}, {5, 4}, norm));
  }
  check_close(kiln::fft::rfftn(a, std::vector<int64_t>{6, 3}),
              ref_rfftn(r, {1, 2}, {6, 3}, "backward"));
  check_close(kiln::fft::rfftn(a, std::vector<int64_t>{2, 7, 4}, std::vector<int>{1, 0, 2}),
              ref_rfftn(r, {1, 0, 2}, {2, 7, 4}, "backward"));
}

TEST_CASE("irfftn follows NumPy's order: c2c over the leading axes, then c2r") {
  // not Hermitian, so the order of operations shows.
  auto [a, r] = complex_input({3, 4, 5});
  for (std::string norm : kNorms) {
    CAPTURE(norm);
    check_close(kiln::fft::irfftn(a, std::nullopt, std::nullopt, norm),
                ref_irfftn(r, {0, 1, 2}, {3, 4, 8}, norm));
    check_close(kiln::fft::irfftn(a, std::nullopt, std::vector<int>{2, 0}, norm),
                ref_irfftn(r, {2, 0}, {5, 4}, norm));
  }
  check_close(kiln::fft::irfftn(a, std::vector<int64_t>{5, 7}),
              ref_irfftn(r, {1, 2}, {5, 7}, "backward"));
  check_close(
      kiln::fft::irfftn(a, std::vector<int64_t>{2, 3, 9}, std::vector<int>{-1, 0, 1}, "ortho"),
      ref_irfftn(r, {2, 0, 1}, {2, 3, 9}, "ortho"));
}

// ---- round trips -----------------------------------------------------------------------------
TEST_CASE("each inverse undoes its forward transform, for every norm") {
  Shape s{3, 4, 5};
  auto xr = reals(s);
  auto xc = complexes(s);
  Array ar = kiln::asarray(xr, s), ac = kiln::asarray(xc, s);
  using namespace kiln::fft;
  for (std::string norm : kNorms) {
    CAPTURE(norm);
    check_close(ifft(fft(ac, std::nullopt, 1, norm), std::nullopt, 1, norm), ref_of(xc, s));
    check_close(ifft2(fft2(ac, std::nullopt, {-2, -1}, norm), std::nullopt, {-2, -1}, norm),
                ref_of(xc, s));
    check_close(ifftn(fftn(ac, std::nullopt, std::nullopt, norm), std::nullopt, std::nullopt, norm),
                ref_of(xc, s));
    for (int axis : {0, 1, 2}) {  // odd, even and odd lengths
      CAPTURE(axis);
      check_close(irfft(rfft(ar, std::nullopt, axis, norm), s[axis], axis, norm), ref_of(xr, s));
    }
    check_close(irfftn(rfftn(ar, std::nullopt, std::nullopt, norm), s, std::nullopt, norm),
                ref_of(xr, s));
    std::vector<int> axes{2, 0};
    check_close(irfftn(rfftn(ar, std::nullopt, axes, norm), std::vector<int64_t>{5, 3}, axes, norm),
                ref_of(xr, s));
  }
}

// ---- dtypes, inputs, evaluation ----------------------------------------------------------------
TEST_CASE("result dtypes follow NumPy") {
  Shape s{2, 6};
  auto x = reals(s);
  Array f64 = kiln::asarray(x, s);
  Array f32 = f64.astype(DType::Float32);
  Array i64 = kiln::arange(12).reshape(s);
  Array b = i64 > 5;
  using namespace kiln::fft;
  CHECK(fft(i64).dtype() == DType::Complex128);
  CHECK(fft(b).dtype() == DType::Complex128);
  CHECK(fft(i64.astype(DType::Int32)).dtype() == DType::Complex128);
  CHECK(fftn(f64).dtype() == DType::Complex128);
  CHECK(fft2(f32).dtype() == DType::Complex64);
  CHECK(ifft(f32.astype(DType::Complex64)).dtype() == DType::Complex64);
  CHECK(rfft(f32).dtype() == DType::Complex64);
  CHECK(rfftn(i64).dtype() == DType::Complex128);
  CHECK(irfft(rfft(f32)).dtype() == DType::Float32);
  CHECK(irfftn(f64).dtype() == DType::Float64);  // real input is read as complex
  CHECK(irfft(i64).dtype() == DType::Float64);

  // Single precision values, to single precision accuracy.
  Ref r = ref_of(x, s);
  check_close(fft2(f32), ref_fftn(r, {0, 1}, {2, 6}, false, "backward"), 1e-5);
  check_close(rfft(f32, 5, -1, "ortho"), ref_rfftn(r, {1}, {5}, "ortho"), 1e-5);
  check_close(irfftn(rfftn(f32), s), r, 1e-5);
  check_close(ifftn(fftn(f32.astype(DType::Complex64)), std::nullopt, std::nullopt), r, 1e-5);
  Ref ints{s, {}};
  for (int i = 0; i < 12; ++i) ints.v.push_back(i);
  check_close(fft(b), ref_fftn(ref_of(b.to_vector<double>(), s), {1}, {6}, false, "backward"));
  check_close(rfftn(i64), ref_rfftn(ints, {0, 1}, {2, 6}, "backward"));
}

TEST_CASE("fftn of an int64 arange reshaped (the cast fuses into the plan)") {
  Array a = kiln::arange(60).reshape({3, 4, 5});
  Ref r{{3, 4, 5}, {}};
  for (int i = 0; i < 60; ++i) r.v.push_back(i);
  Array f = kiln::fft::fftn(a);
  CHECK(f.dtype() == DType::Complex128);
  check_close(f, ref_fftn(r, {0, 1, 2}, {3, 4, 5}, false, "backward"));
  // An elementwise producer of int64 values, cropped along the last axis by s.
  Ref r2 = r;
  for (auto& v : r2.v) v = v * 2.0 - 1.0;
  check_close(kiln::fft::fftn(a * 2 - 1, std::vector<int64_t>{3}),
              ref_fftn(r2, {2}, {3}, false, "backward"));
}

TEST_CASE("views, elementwise producers and consumers around an FFT") {
  Shape s{4, 6};
  auto x = reals(s);
  Array a = kiln::asarray(x, s);
  Ref r = ref_of(x, s);
  // A transposed input: the planner makes it dense first.
  Ref rt{{6, 4}, {}};
  for (int j = 0; j < 6; ++j)
    for (int i = 0; i < 4; ++i) rt.v.push_back(x[i * 6 + j]);
  check_close(kiln::fft::fft(a.T()), ref_fftn(rt, {1}, {4}, false, "backward"));
  // A strided slice: every other column.
  Ref rs{{4, 3}, {}};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; j += 2) rs.v.push_back(x[i * 6 + j]);
  check_close(kiln::fft::fftn(a(kiln::Slice(), kiln::Slice(0, std::nullopt, 2))),
              ref_fftn(rs, {0, 1}, {4, 3}, false, "backward"));
  // An elementwise producer and consumer.
  Array f = kiln::fft::fft2(a * 3.0 + 1.0);
  Ref shifted = r;
  for (auto& v : shifted.v) v = v * 3.0 + 1.0;
  Ref want = ref_fftn(shifted, {0, 1}, {4, 6}, false, "backward");
  check_close(f, want);
  Array mag = kiln::abs(f) * 2;
  auto m = mag.to_vector<double>();
  for (size_t i = 0; i < m.size(); ++i) CHECK(m[i] == doctest::Approx(2 * std::abs(want.v[i])));
}

TEST_CASE("eager mode gives the same results") {
  Shape s{5, 6};
  auto x = complexes(s);
  auto y = reals(s);
  Array lazy = kiln::fft::ifft2(kiln::asarray(x, s), std::vector<int64_t>{7, 4});
  Array lazy_real = kiln::fft::fft2(kiln::asarray(y, s) * 2, std::vector<int64_t>{7, 4});
  kiln::EagerScope eager;
  Array now = kiln::fft::ifft2(kiln::asarray(x, s), std::vector<int64_t>{7, 4});
  check_close(now, lazy);
  check_close(now, ref_fftn(ref_of(x, s), {0, 1}, {7, 4}, true, "backward"));
  Array now_real = kiln::fft::fft2(kiln::asarray(y, s) * 2, std::vector<int64_t>{7, 4});
  check_close(now_real, lazy_real);
}

TEST_CASE("a transform large enough to run threaded, and repeated calls (cached plans)") {
  Shape s{256, 300};
  auto x = complexes(s);
  Array a = kiln::asarray(x, s);
  Ref want = ref_fftn(ref_of(x, s), {0, 1}, {256, 300}, false, "backward");
  for (int rep = 0; rep < 3; ++rep) check_close(kiln::fft::fft2(a), want, 1e-9);
  check_close(kiln::fft::ifft2(kiln::fft::fft2(a)), ref_of(x, s), 1e-9);
  Array r = kiln::asarray(reals(s), s);
  check_close(kiln::fft::irfftn(kiln::fft::rfftn(r), s), r, 1e-9);
}

TEST_CASE("real input to fft2 and fftn, large enough to run threaded (and expand in parallel)") {
  Shape s{256, 300};
  auto x = reals(s, 3);
  Array a = kiln::asarray(x, s);
  check_close(kiln::fft::fft2(a), ref_fftn(ref_of(x, s), {0, 1}, {256, 300}, false, "backward"),
              1e-9);
  Array f32 = a.astype(DType::Float32);
  Array f = kiln::fft::fftn(f32, std::nullopt, std::nullopt, "ortho");
  CHECK(f.dtype() == DType::Complex64);
  check_close(f, ref_fftn(ref_of(f32.to_vector<double>(), s), {0, 1}, {256, 300}, false, "ortho"),
              1e-5);
  // Halved axis 0: lines along it are strided.
  check_close(kiln::fft::fft(a, std::nullopt, 0),
              ref_fftn(ref_of(x, s), {0}, {256}, false, "backward"), 1e-9);
}

TEST_CASE("single precision, threaded") {
  Shape s{256, 300};
  auto x = complexes(s);
  Array a = kiln::asarray(x, s).astype(DType::Complex64);
  Array f = kiln::fft::fft2(a, std::nullopt, {-2, -1}, "ortho");
  CHECK(f.dtype() == DType::Complex64);
  check_close(f, ref_fftn(ref_of(x, s), {0, 1}, {256, 300}, false, "ortho"), 1e-5);
  Array r = kiln::asarray(reals(s), s).astype(DType::Float32);
  Array back = kiln::fft::irfftn(kiln::fft::rfftn(r), s);
  CHECK(back.dtype() == DType::Float32);
  check_close(back, r, 1e-5);
}

TEST_CASE("more distinct transforms than the plan cache holds, then the first ones again") {
  for (int pass = 0; pass < 2; ++pass)
    for (int64_t n = 1; n <= 80; n += pass ? 9 : 1) {
      CAPTURE(n);
      Shape s{2, n};
      auto x = complexes(s, static_cast<unsigned>(n));
      check_close(kiln::fft::fft(kiln::asarray(x, s)),
                  ref_fftn(ref_of(x, s), {1}, {n}, false, "backward"));
    }
}

TEST_CASE("empty batches and zero-length inputs padded by n") {
  Array e = kiln::zeros({0, 4});
  Array f = kiln::fft::fft(e);
  CHECK(f.shape() == Shape{0, 4});
  CHECK(f.to_vector<cd>().empty());
  CHECK(kiln::fft::rfft(e).shape() == Shape{0, 3});
  Array p = kiln::fft::fft(kiln::zeros({0}), 4);
  check_close(p, Ref{{4}, std::vector<cd>(4)});
}

// ---- errors ----------------------------------------------------------------------------------
TEST_CASE("bad arguments throw the documented errors") {
  Shape s{3, 4};
  Array a = kiln::asarray(reals(s), s);
  Array c = a.astype(DType::Complex128);
  using namespace kiln::fft;
  CHECK_THROWS_AS(fft(a, std::nullopt, -1, "Ortho"), kiln::Error);
  CHECK_THROWS_WITH_AS(fftn(a, std::nullopt, std::nullopt, "none"),
                       doctest::Contains("\"backward\""), kiln::Error);
  CHECK_THROWS_AS(fft(a, std::nullopt, 2), kiln::ShapeError);
  CHECK_THROWS_AS(fft(a, std::nullopt, -3), kiln::ShapeError);
  CHECK_THROWS_AS(fft2(kiln::asarray(reals({5}), {5})), kiln::ShapeError);
  CHECK_THROWS_AS(fftn(a, std::nullopt, std::vector<int>{0, -2}), kiln::ShapeError);  // repeated
  CHECK_THROWS_AS(fft(a, 0), kiln::ShapeError);
  CHECK_THROWS_AS(ifft(a, -4), kiln::ShapeError);
  CHECK_THROWS_AS(fftn(a, std::vector<int64_t>{3, 0}), kiln::ShapeError);
  CHECK_THROWS_AS(fftn(a, std::vector<int64_t>{3}, std::vector<int>{0, 1}), kiln::ShapeError);
  CHECK_THROWS_AS(fftn(a, std::vector<int64_t>{2, 2, 2}), kiln::ShapeError);
  CHECK_THROWS_AS(fft2(a, std::vector<int64_t>{2, 2, 2}), kiln::ShapeError);
  CHECK_THROWS_AS(fft(kiln::zeros({}), std::nullopt), kiln::ShapeError);  // 0-d has no axis
  CHECK_THROWS_AS(fft(kiln::zeros({2, 0})), kiln::ShapeError);            // zero-length axis
  CHECK_THROWS_WITH_AS(rfft(c), doctest::Contains("complex128"), kiln::DTypeError);
  CHECK_THROWS_AS(rfftn(c.astype(DType::Complex64)), kiln::DTypeError);
  CHECK_THROWS_AS(irfft(kiln::zeros({3, 1}, DType::Complex128)), kiln::ShapeError);  // n = 0
  CHECK_THROWS_AS(rfftn(a, std::nullopt, std::vector<int>{}), kiln::ShapeError);
  CHECK_THROWS_AS(fft(Array{}), kiln::Error);
}
