// Joining and reshaping (kiln/joining.hpp) against NumPy's answers in tests/data/joining.txt,
// written by tests/data/make_joining_fixtures.py (the file's first line records the NumPy
// version). Every case checks dtype, shape and values, or that kiln throws ShapeError where NumPy
// raises; then what the functions cost (views write nothing, the fused forms run one kernel), and
// a GPU case runs the same fixtures on a GPU and compares with the host.
// (The fixture reader follows tests/test_statistics.cpp's, whose format the file shares.)
#include <doctest/doctest.h>

#include <fstream>
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

using Values = fixtures::Values<double>;
using Case = fixtures::Case<double>;

const std::vector<Case>& cases() {
  static const std::vector<Case> all = fixtures::read_cases<double>(
      KILN_TEST_DATA "/joining.txt", "tests/data/make_joining_fixtures.py");
  return all;
}

using fixtures::kw;
using fixtures::make_array;

std::vector<int64_t> list(const Case& c, const std::string& k) {
  std::vector<int64_t> r;
  std::istringstream is(kw(c, k).value_or(""));
  std::string t;
  while (std::getline(is, t, ',')) r.push_back(std::stoll(t));
  return r;
}
kiln::Axes axes(const Case& c, const std::string& k) {
  kiln::Axes r;
  for (int64_t v : list(c, k)) r.push_back(static_cast<int>(v));
  return r;
}
kiln::AxesArg axes_arg(const Case& c) { return fixtures::axes(c); }
std::optional<int> axis(const Case& c, const std::string& k = "axis") {
  if (auto s = kw(c, k)) return std::stoi(*s);
  return std::nullopt;
}
int64_t num(const Case& c, const std::string& k) { return std::stoll(kw(c, k).value()); }

kiln::PadMode pad_mode(const std::string& s) {
  if (s == "constant") return kiln::PadMode::Constant;
  if (s == "edge") return kiln::PadMode::Edge;
  if (s == "reflect") return kiln::PadMode::Reflect;
  REQUIRE(s == "wrap");
  return kiln::PadMode::Wrap;
}

std::vector<Array> call(const Case& c, const std::vector<Array>& in, kiln::Device d) {
  const std::string& f = c.func;
  auto one = [&](Array a) { return std::vector<Array>{a}; };
  if (f == "squeeze") return one(kiln::squeeze(in[0], axes_arg(c)));
  if (f == "expand_dims") return one(kiln::expand_dims(in[0], axes(c, "axes")));
  if (f == "swapaxes")
    return one(
        kiln::swapaxes(in[0], static_cast<int>(num(c, "a1")), static_cast<int>(num(c, "a2"))));
  if (f == "moveaxis") return one(kiln::moveaxis(in[0], axes(c, "src"), axes(c, "dst")));
  if (f == "ravel") return one(kiln::ravel(in[0]));
  if (f == "flip") return one(kiln::flip(in[0], axes_arg(c)));
  if (f == "tril") return one(kiln::tril(in[0], num(c, "k")));
  if (f == "triu") return one(kiln::triu(in[0], num(c, "k")));
  if (f == "diag") return one(kiln::diag(in[0], num(c, "k")));
  if (f == "tile") return one(kiln::tile(in[0], list(c, "reps")));
  if (f == "repeat") return one(kiln::repeat(in[0], num(c, "repeats"), axis(c)));
  if (f == "roll") {
    if (kw(c, "shift")->find(',') != std::string::npos)
      return one(kiln::roll(in[0], list(c, "shift"), axes(c, "axis")));
    return one(kiln::roll(in[0], num(c, "shift"), axis(c)));
  }
  if (f == "pad") {
    auto w = list(c, "width");
    std::vector<std::pair<int64_t, int64_t>> widths;
    for (size_t i = 0; i + 1 < w.size(); i += 2) widths.push_back({w[i], w[i + 1]});
    return one(kiln::pad(in[0], widths, pad_mode(*kw(c, "mode")), num(c, "value")));
  }
  if (f == "eye") {
    std::optional<int64_t> m;
    if (kw(c, "m")) m = num(c, "m");
    return one(kiln::eye(num(c, "n"), m, num(c, "k"), DType::Float64, d));
  }
  if (f == "meshgrid") return kiln::meshgrid(in, *kw(c, "indexing"));
  if (f == "concatenate") return one(kiln::concatenate(in, c.kw.count("axis") ? axis(c) : 0));
  if (f == "stack") return one(kiln::stack(in, axis(c).value()));
  if (f == "hstack") return one(kiln::hstack(in));
  if (f == "vstack") return one(kiln::vstack(in));
  FAIL("no kiln function for " << f);
  return {};
}

std::vector<Array> run_case(const Case& c, kiln::Device d) {
  std::vector<Array> in;
  for (const auto& x : c.in) in.push_back(make_array(x, d));
  return call(c, in, d);
}

void check_against(const std::vector<Array>& got, const std::vector<Values>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    CHECK(got[k].dtype() == want[k].dtype);
    REQUIRE(got[k].shape() == want[k].shape);
    // Every value here is exact in float64 (small integers and halves).
    auto g = got[k].get().to_vector<double>();
    REQUIRE(g.size() == want[k].v.size());
    for (size_t i = 0; i < g.size(); ++i) {
      INFO("output " << k << " element " << i);
      CHECK(g[i] == want[k].v[i]);
    }
  }
}

}  // namespace

TEST_CASE("joining and reshaping match NumPy's fixtures on the host") {
  REQUIRE(cases().size() > 500);
  int errors = 0;
  for (const Case& c : cases()) {
    INFO("case " << c.name);
    if (c.error) {
      ++errors;
      CHECK_THROWS_AS(
          {
            auto r = run_case(c, kiln::host());
            for (auto& a : r) a.eval();
          },
          kiln::ShapeError);
      continue;
    }
    try {
      check_against(run_case(c, kiln::host()), c.out);
    } catch (const std::exception& e) {
      FAIL_CHECK("threw " << e.what());
    }
  }
  CHECK(errors > 50);
}

GPU_TEST_CASE("joining and reshaping on the GPU match the host") {
  for (const Case& c : cases()) {
    if (c.error) continue;
    INFO("case " << c.name);
    auto host = run_case(c, kiln::host());
    auto gpu = run_case(c, kiln::cuda());
    std::vector<Values> want;
    for (const Array& h : host) {
      auto v = h.to_vector<double>();
      want.push_back({h.dtype(), h.shape(), v});
    }
    for (const Array& g : gpu) CHECK(g.device() == kiln::cuda());
    check_against(gpu, want);
  }
}

namespace {

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// The kernels evaluating `r` runs, checking its values against `want` (a direct formula).
int64_t kernels_of(const Array& r, const Array& want) {
  kiln::reset_engine_stats();
  r.eval();
  int64_t k = kiln::engine_stats().kernels;
  CHECK(kiln::array_equal(r, want));
  return k;
}

}  // namespace

TEST_CASE("views write nothing: a chain of them folds into the one kernel that reads them") {
  Array x = kiln::arange(0.0, 24.0).reshape({2, 1, 3, 4}).eval();
  Array v = kiln::flip(kiln::moveaxis(kiln::squeeze(kiln::expand_dims(x, 0), {0, 2}), 0, -1), 1);
  CHECK(v.shape() == Shape{3, 4, 2});
  // v[i, j, k] = x[k, 0, i, 3 - j]
  Array want = kiln::asarray(
      [&] {
        std::vector<double> w;
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 4; ++j)
            for (int k = 0; k < 2; ++k) w.push_back(k * 12 + i * 4 + (3 - j) + 1);
        return w;
      }(),
      Shape{3, 4, 2});
  CHECK(kernels_of(v + 1, want) == 1);
  CHECK(count(kiln::explain({kiln::swapaxes(x, 0, -1)}), "kernel ") <= 1);
}

TEST_CASE("concatenate of two lazy expressions of equal length is one kernel") {
  Array a = kiln::arange(0.0, 6.0).reshape({2, 3}).eval();
  Array b = kiln::arange(10.0, 16.0).reshape({2, 3}).eval();
  Array c = kiln::concatenate({a * 2, b + 1});
  CHECK(count(kiln::explain({c}), "kernel ") == 1);
  Array want =
      kiln::asarray(std::vector<double>{0, 2, 4, 6, 8, 10, 11, 12, 13, 14, 15, 16}, Shape{4, 3});
  CHECK(kernels_of(c, want) == 1);
  // Along the last axis and stacked: one kernel each, too.
  Array h = kiln::concatenate({a * 2, b + 1}, -1);
  CHECK(kernels_of(h, kiln::asarray(std::vector<double>{0, 2, 4, 11, 12, 13, 6, 8, 10, 14, 15, 16},
                                    Shape{2, 6})) == 1);
  CHECK(kernels_of(kiln::stack({a * 2, b + 1}, 1),
                   kiln::asarray(std::vector<double>{0, 2, 4, 11, 12, 13, 6, 8, 10, 14, 15, 16},
                                 Shape{2, 2, 3})) == 1);
}

TEST_CASE("eye, tril and triu are one kernel each, from an iota mask") {
  Array m = kiln::arange(1.0, 10.0).reshape({3, 3}).eval();
  CHECK(kernels_of(
            kiln::tril(m * 2),
            kiln::asarray(std::vector<double>{2, 0, 0, 8, 10, 0, 14, 16, 18}, Shape{3, 3})) == 1);
  CHECK(kernels_of(kiln::triu(m, 1), kiln::asarray(std::vector<double>{0, 2, 3, 0, 0, 6, 0, 0, 0},
                                                   Shape{3, 3})) == 1);
  CHECK(kernels_of(kiln::eye(2, 3, 1),
                   kiln::asarray(std::vector<double>{0, 1, 0, 0, 0, 1}, Shape{2, 3})) == 1);
}

// What the header documents for inputs of unequal lengths: one tiling kernel per input that
// wraps, then one selecting kernel.
TEST_CASE("concatenate of unequal lengths, roll: the documented intermediates") {
  Array a = kiln::arange(0.0, 2.0).eval();
  Array b = kiln::arange(10.0, 13.0).eval();
  Array c = kiln::concatenate({a + 1, b * 2});
  CHECK(kernels_of(c, kiln::asarray(std::vector<double>{1, 2, 20, 22, 24})) <= 3);
  Array r = kiln::roll(b * 2, 1);
  CHECK(kernels_of(r, kiln::asarray(std::vector<double>{24, 20, 22})) <= 2);
}

TEST_CASE("bad input says what was wrong") {
  Array a = kiln::zeros({2, 3});
  auto message = [](auto f) {
    try {
      f();
    } catch (const kiln::ShapeError& e) {
      return std::string(e.what());
    }
    return std::string("no ShapeError");
  };
  CHECK(message([&] { kiln::squeeze(a, 0); }).find("length 2") != std::string::npos);
  CHECK(message([&] {
          kiln::concatenate({a, kiln::zeros({3, 3})}, 1);
        }).find("(3, 3)") != std::string::npos);
  CHECK(message([&] { kiln::concatenate({}); }).find("at least one") != std::string::npos);
  CHECK(message([&] { kiln::pad(a, -1); }).find("negative") != std::string::npos);
  CHECK(message([&] {
          kiln::pad(kiln::zeros({0, 2}), 1, kiln::PadMode::Edge);
        }).find("empty") != std::string::npos);
  CHECK(message([&] { kiln::moveaxis(a, {0, 1}, {0}); }).find("destination") != std::string::npos);
}
