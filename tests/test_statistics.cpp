// Statistics (kiln/statistics.hpp) and numpy.fft's frequency helpers against NumPy's answers in
// tests/data/statistics.txt, written by tests/data/make_statistics_fixtures.py (the file's first
// line records the NumPy version). Every case checks dtype, shape and values, or that kiln throws
// where NumPy raises; GPU cases run the same fixtures on a GPU and compare with the host.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <fstream>
#include <functional>
#include <kiln/kiln.hpp>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "support/fixture_cases.hpp"
#include "support/gpu.hpp"

namespace {

using kiln::Array;
using kiln::DType;
using kiln::Shape;
using cd = std::complex<double>;

using Values = fixtures::Values<cd>;
using Case = fixtures::Case<cd>;

const std::vector<Case>& cases() {
  static const std::vector<Case> all = fixtures::read_cases<cd>(
      KILN_TEST_DATA "/statistics.txt", "tests/data/make_statistics_fixtures.py");
  return all;
}

using fixtures::kw;
using fixtures::make_array;
kiln::AxesArg axes_of(const Case& c) { return fixtures::axes(c); }
double num(const Case& c, const std::string& k, double dflt) {
  auto s = kw(c, k);
  return s && *s != "none" ? std::stod(*s) : dflt;
}
bool flag(const Case& c, const std::string& k, bool dflt = false) { return num(c, k, dflt) != 0; }

// kiln's function for the case, on inputs already on a device.
std::vector<Array> call(const Case& c, const std::vector<Array>& in, kiln::Device d) {
  const std::string& f = c.func;
  auto axes = axes_of(c);
  bool keep = flag(c, "keepdims");
  double ddof = num(c, "ddof", 0);
  std::optional<Array> second = in.size() > 1 ? std::optional<Array>(in[1]) : std::nullopt;
  if (f == "var") return {kiln::var(in[0], axes, ddof, keep)};
  if (f == "std") return {kiln::std(in[0], axes, ddof, keep)};
  if (f == "nanvar") return {kiln::nanvar(in[0], axes, ddof, keep)};
  if (f == "nanstd") return {kiln::nanstd(in[0], axes, ddof, keep)};
  if (f == "nansum") return {kiln::nansum(in[0], axes, keep)};
  if (f == "nanprod") return {kiln::nanprod(in[0], axes, keep)};
  if (f == "nanmean") return {kiln::nanmean(in[0], axes, keep)};
  if (f == "nanmax") return {kiln::nanmax(in[0], axes, keep)};
  if (f == "nanmin") return {kiln::nanmin(in[0], axes, keep)};
  if (f == "count_nonzero") return {kiln::count_nonzero(in[0], axes, keep)};
  if (f == "ptp") return {kiln::ptp(in[0], axes, keep)};
  if (f == "nanargmax" || f == "nanargmin") {
    auto s = kw(c, "axis");
    std::optional<int> axis;
    if (s && *s != "none") axis = std::stoi(*s);
    return {f == "nanargmax" ? kiln::nanargmax(in[0], axis, keep)
                             : kiln::nanargmin(in[0], axis, keep)};
  }
  if (f == "average") {
    if (flag(c, "returned")) {
      auto [avg, scl] = kiln::average_returned(in[0], axes, second, keep);
      return {avg, scl};
    }
    return {kiln::average(in[0], axes, second, keep)};
  }
  if (f == "cov") {
    auto s = kw(c, "ddof");
    std::optional<double> dd;
    if (s) dd = std::stod(*s);
    return {kiln::cov(in[0], flag(c, "rowvar", true), flag(c, "bias"), dd)};
  }
  if (f == "corrcoef") return {kiln::corrcoef(in[0], flag(c, "rowvar", true))};
  if (f == "histogram") {
    std::optional<std::pair<double, double>> range;
    if (auto s = kw(c, "range")) {
      auto comma = s->find(',');
      range = std::make_pair(std::stod(s->substr(0, comma)), std::stod(s->substr(comma + 1)));
    }
    auto h = kiln::histogram(in[0], static_cast<int64_t>(num(c, "bins", 10)), range, second,
                             flag(c, "density"));
    return {h.counts, h.edges};
  }
  if (f == "bincount")
    return {kiln::bincount(in[0], second, static_cast<int64_t>(num(c, "minlength", 0)))};
  if (f == "isclose")
    return {kiln::isclose(in[0], in[1], num(c, "rtol", 1e-5), num(c, "atol", 1e-8),
                          flag(c, "equal_nan"))};
  if (f == "fftfreq")
    return {kiln::fft::fftfreq(static_cast<int64_t>(num(c, "n", 0)), num(c, "d", 1), d)};
  if (f == "rfftfreq")
    return {kiln::fft::rfftfreq(static_cast<int64_t>(num(c, "n", 0)), num(c, "d", 1), d)};
  if (f == "fftshift" || f == "ifftshift") {
    kiln::fft::FftAxes ax;
    if (kw(c, "axes")) ax = axes.axes();
    return {f == "fftshift" ? kiln::fft::fftshift(in[0], ax) : kiln::fft::ifftshift(in[0], ax)};
  }
  FAIL("no kiln function for " << f);
  return {};
}

std::vector<Array> run_case(const Case& c, kiln::Device d) {
  std::vector<Array> in;
  for (const auto& x : c.in) in.push_back(make_array(x, d));
  return call(c, in, d);
}

std::vector<cd> values_of(const Array& a) {
  return a.get().astype(DType::Complex128).to_vector<cd>();
}

// Close within a tolerance that depends on the dtype's precision, with NaN and infinities
// matching exactly.
bool close(double got, double want, double tol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::abs(got - want) <= tol * (1 + std::abs(want));
}

void check_against(const Case& c, const std::vector<Array>& got, const std::vector<Values>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    CHECK(got[k].dtype() == want[k].dtype);
    REQUIRE(got[k].shape() == want[k].shape);
    auto g = values_of(got[k]);
    // (float16: NumPy rounds every intermediate to float16, kiln only the result.)
    double tol = want[k].dtype == DType::Float16                                        ? 1e-2
                 : want[k].dtype == DType::Float32 || want[k].dtype == DType::Complex64 ? 2e-5
                                                                                        : 1e-11;
    for (size_t i = 0; i < g.size(); ++i) {
      INFO("output " << k << " element " << i << ": got " << g[i] << ", NumPy " << want[k].v[i]);
      CHECK(close(g[i].real(), want[k].v[i].real(), tol));
      CHECK(close(g[i].imag(), want[k].v[i].imag(), tol));
    }
  }
  (void)c;
}

}  // namespace

TEST_CASE("statistics match NumPy's fixtures on the host") {
  REQUIRE(cases().size() > 500);
  int errors = fixtures::check_on_host<kiln::Error>(
      cases(), [](const Case& c) { return run_case(c, kiln::host()); },
      [](const Case& c, const std::vector<Array>& got) { check_against(c, got, c.out); });
  CHECK(errors > 20);
}

// The planner fuses x - mean and the square into the second reduction's prologue, so the
// deviations are never written: x is read twice, and what else moves is a row's worth. (The
// division and sqrt after the sum are a third, small kernel: the planner does not fuse
// elementwise work after a reduction today.)
TEST_CASE("statistics fuse: std reads x twice and writes no deviations") {
  Array x = kiln::random::Generator(3).uniform(0, 1, {64, 100});
  x.eval();
  kiln::reset_engine_stats();
  kiln::std(x, {1}).eval();
  auto st = kiln::engine_stats();
  CHECK(st.kernels == 3);
  CHECK(st.bytes_moved < x.nbytes() * 5 / 2);
  CHECK(st.bytes_moved >= x.nbytes() * 2);
}

TEST_CASE("allclose is all(isclose)") {
  Array a = kiln::asarray(std::vector<double>{1.0, 2.0, NAN});
  Array b = kiln::asarray(std::vector<double>{1.0, 2.0 + 1e-9, NAN});
  CHECK_FALSE(kiln::allclose(a, b));
  CHECK(kiln::allclose(a, b, 1e-5, 1e-8, true));
}

TEST_CASE("fftshift after ifftshift is the identity, along any axes") {
  Array a = kiln::arange(0, 3 * 5 * 4).reshape({3, 5, 4});
  for (kiln::fft::FftAxes ax : {kiln::fft::FftAxes{}, kiln::fft::FftAxes{std::vector<int>{1}},
                                kiln::fft::FftAxes{std::vector<int>{0, 2}}})
    CHECK(kiln::array_equal(kiln::fft::fftshift(kiln::fft::ifftshift(a, ax), ax), a));
}

// The shifts of lazy expressions and of views equal the same expressions of the shifted buffer
// (which the fixtures check against NumPy).
TEST_CASE("fftshift of an expression and of a transposed view") {
  Array a = kiln::arange(0.0, 15.0).reshape({3, 5});
  Array lazy = kiln::fft::fftshift(a * 2 + 1);
  CHECK(kiln::array_equal(lazy, kiln::fft::fftshift(a) * 2 + 1));
  CHECK(kiln::array_equal(kiln::fft::ifftshift(a.T(), std::vector<int>{0}),
                          kiln::fft::ifftshift(a, std::vector<int>{1}).T()));
  Array spectrum = kiln::fft::fft(a);
  CHECK(kiln::allclose(kiln::fft::fftshift(spectrum), kiln::fft::fftshift(spectrum.eval())));
}

GPU_TEST_CASE("statistics on the GPU match the host") {
  for (const Case& c : cases()) {
    if (c.error) continue;
    INFO("case " << c.name);
    auto host = run_case(c, kiln::host());
    auto gpu = run_case(c, kiln::cuda());
    REQUIRE(gpu.size() == host.size());
    std::vector<Values> want;
    for (const Array& h : host) {
      CHECK(h.device() == kiln::host());
      want.push_back({h.dtype(), h.shape(), values_of(h)});
    }
    for (const Array& g : gpu) CHECK(g.device() == kiln::cuda());
    check_against(c, gpu, want);
  }
}
