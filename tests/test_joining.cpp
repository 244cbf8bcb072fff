// Joining and reshaping (kiln/joining.hpp) against NumPy's answers in tests/data/joining.txt,
// written by tests/data/make_joining_fixtures.py (the file's first line records the NumPy
// version). Every case checks dtype, shape and values, or that kiln throws ShapeError where NumPy
// raises; then what the functions cost (views write nothing, the fused forms run one kernel), and
// a GPU case runs the same fixtures on a GPU and compares with the host.
// (The fixture reader follows tests/test_statistics.cpp's, whose format the file shares.)
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <kiln/kiln.hpp>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cuda/library.hpp"
#include "graph/node.hpp"
#include "support/fixture_cases.hpp"
#include "support/gpu.hpp"

namespace {

using kiln::_;
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
  if (s == "symmetric") return kiln::PadMode::Symmetric;
  REQUIRE(s == "wrap");
  return kiln::PadMode::Wrap;
}

// The fixture's index text: parts joined by |, "new" for newaxis, "..." for ellipsis, "()" for
// no index at all.
std::vector<kiln::Index> index_of(const std::string& text) {
  std::vector<kiln::Index> idx;
  if (text == "()") return idx;
  std::istringstream is(text);
  std::string p;
  while (std::getline(is, p, '|')) {
    if (p == "new")
      idx.push_back(kiln::newaxis);
    else if (p == "...")
      idx.push_back(kiln::ellipsis);
    else if (p.find(':') != std::string::npos)
      idx.push_back(kiln::Slice(p.c_str()));
    else
      idx.push_back(int64_t{std::stoll(p)});
  }
  return idx;
}

Array update(const Case& c, const Array::At& u, const Array& v) {
  const std::string op = *kw(c, "op");
  if (op == "set") return u.set(v);
  if (op == "add") return u.add(v);
  if (op == "multiply") return u.multiply(v);
  if (op == "min") return u.min(v);
  REQUIRE(op == "max");
  return u.max(v);
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
  if (f == "at") return one(update(c, in[0].at(index_of(*kw(c, "index"))), in[1]));
  if (f == "scatter")  // inputs: x, the values, the index arrays
    return one(update(c, in[0].at(std::vector<Array>(in.begin() + 2, in.end())), in[1]));
  if (f == "take") {
    const std::string m = *kw(c, "mode");
    auto mode = m == "wrap"   ? kiln::TakeMode::Wrap
                : m == "clip" ? kiln::TakeMode::Clip
                              : kiln::TakeMode::Raise;
    return one(kiln::take(in[0], in[1], axis(c), mode));
  }
  if (f == "cumsum") return one(kiln::cumsum(in[0], axis(c)));
  if (f == "cumprod") return one(kiln::cumprod(in[0], axis(c)));
  if (f == "nonzero") return kiln::nonzero(in[0]);
  if (f == "flatnonzero") return one(kiln::flatnonzero(in[0]));
  if (f == "masked") return one(in[0].index(in[1]));
  if (f == "take_along_axis") return one(kiln::take_along_axis(in[0], in[1], axis(c)));
  if (f == "compress") return one(kiln::compress(in[0], in[1], axis(c)));
  if (f == "fancy") return one(in[0].index(std::vector<Array>(in.begin() + 1, in.end())));
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
  int errors = fixtures::check_on_host<kiln::ShapeError>(
      cases(), [](const Case& c) { return run_case(c, kiln::host()); },
      [](const Case& c, const std::vector<Array>& got) { check_against(got, c.out); });
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

// Masks over many tiles of the compress step (8192 entries a tile; 9000007 entries make three
// look-back groups of 512 tiles), with runs of true and false longer than a tile, every row
// width's copy unit, and unaligned (offset) rows; positions and values checked against a direct
// loop over the host's copy of the mask.
GPU_TEST_CASE("boolean masks and nonzero over many tiles on the GPU") {
  for (int64_t n : {int64_t{1}, int64_t{8191}, int64_t{8193}, int64_t{1} << 20, int64_t{3000017},
                    int64_t{9000007}}) {
    INFO("n = " << n);
    Array i = kiln::arange(0, n, 1, DType::Int64, kiln::cuda());
    // True in runs: i % 9973 < 5000, and every 7th entry of the rest.
    Array mask = ((i % 9973) < 5000) | ((i % 7) == 3);
    const std::vector<uint8_t> m = mask.astype(DType::UInt8).to_vector<uint8_t>();
    std::vector<int64_t> want;
    for (int64_t k = 0; k < n; ++k)
      if (m[k]) want.push_back(k);
    CHECK(kiln::flatnonzero(mask).to_vector<int64_t>() == want);
    for (DType t :
         {DType::Int8, DType::Float16, DType::Float32, DType::Float64, DType::Complex128}) {
      INFO("dtype " << kiln::dtype_name(t));
      for (int64_t width : {int64_t{1}, int64_t{3}}) {
        Array x = (kiln::arange(0, n * width, 1, DType::Int64, kiln::cuda()) % 101).astype(t);
        Array got = kiln::masked(x.reshape({n, width}), mask).astype(DType::Float64);
        std::vector<double> expect;
        for (int64_t k : want)
          for (int64_t u = 0; u < width; ++u)
            expect.push_back(static_cast<double>((k * width + u) % 101));
        CHECK(got.to_vector<double>() == expect);
      }
    }
    // Rows starting one element in: the values' buffer is read at an offset.
    Array x = kiln::arange(0, n + 1, 1, DType::Float32, kiln::cuda());
    std::vector<float> shifted;
    for (int64_t k : want) shifted.push_back(static_cast<float>(k + 1));
    CHECK(kiln::masked(x.index({kiln::Slice(1, n + 1)}), mask).to_vector<float>() == shifted);
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

// Index maps (a Remap node) fuse into the kernel that reads them: concatenate of any lengths,
// roll, pad in every mode and fftshift each run one kernel, which writes only the output.
TEST_CASE("concatenate of unequal lengths, roll, pad and fftshift are one kernel each") {
  Array a = kiln::arange(0.0, 2.0).eval();
  Array b = kiln::arange(10.0, 13.0).eval();
  Array c = kiln::concatenate({a + 1, b * 2});
  CHECK(count(kiln::explain({c}), "kernel ") == 1);
  CHECK(kernels_of(c, kiln::asarray(std::vector<double>{1, 2, 20, 22, 24})) == 1);
  CHECK(kernels_of(kiln::roll(b * 2, 1), kiln::asarray(std::vector<double>{24, 20, 22})) == 1);
  CHECK(kernels_of(kiln::roll(b * 2, -7), kiln::asarray(std::vector<double>{22, 24, 20})) == 1);
  // Read by another operation, the index map is still arithmetic on that kernel's loads.
  CHECK(kernels_of(kiln::concatenate({a * 2, b + 1}, 0) * 3,
                   kiln::asarray(std::vector<double>{0, 6, 33, 36, 39})) == 1);
  Array m = kiln::arange(0.0, 6.0).reshape({2, 3}).eval();
  // x + 1 = [[1 2 3] [4 5 6]]; every mode, widths (1, 2) on axis 1 and (1, 0) on axis 0.
  struct Mode {
    kiln::PadMode mode;
    std::vector<double> want;
  };
  std::vector<Mode> modes = {
      {kiln::PadMode::Constant, {9, 9, 9, 9, 9, 9, 9, 1, 2, 3, 9, 9, 9, 4, 5, 6, 9, 9}},
      {kiln::PadMode::Edge, {1, 1, 2, 3, 3, 3, 1, 1, 2, 3, 3, 3, 4, 4, 5, 6, 6, 6}},
      {kiln::PadMode::Wrap, {6, 4, 5, 6, 4, 5, 3, 1, 2, 3, 1, 2, 6, 4, 5, 6, 4, 5}},
      {kiln::PadMode::Reflect, {5, 4, 5, 6, 5, 4, 2, 1, 2, 3, 2, 1, 5, 4, 5, 6, 5, 4}},
      {kiln::PadMode::Symmetric, {1, 1, 2, 3, 3, 2, 1, 1, 2, 3, 3, 2, 4, 4, 5, 6, 6, 5}},
  };
  for (const auto& md : modes) {
    INFO("pad mode " << static_cast<int>(md.mode));
    Array p = kiln::pad(m + 1, {{1, 0}, {1, 2}}, md.mode, 9);
    CHECK(count(kiln::explain({p}), "kernel ") == 1);
    CHECK(kernels_of(p, kiln::asarray(md.want, Shape{3, 6})) == 1);
  }
  // Inside a reduction's kernel and a row-fused one (softmax-like: reduce, then broadcast back).
  Array s = kiln::sum(kiln::concatenate({a + 1, b * 2}));
  CHECK(kernels_of(s, kiln::asarray(std::vector<double>{69}).reshape({})) == 1);
  Array rolled = kiln::roll(m * 2, 1, 1);  // [[4 0 2] [10 6 8]]
  CHECK(kernels_of(kiln::sum(rolled, 1), kiln::asarray(std::vector<double>{6, 24})) == 1);
  CHECK(kiln::array_equal(rolled - kiln::max(rolled, 1, true),
                          kiln::asarray(std::vector<double>{0, -4, -2, 0, -4, -2}, Shape{2, 3})));
  // Raveled (a reshape merging the rolled axes): the coordinates come from the flat position.
  CHECK(kernels_of(kiln::ravel(kiln::roll(m * 2, 1, 1)) + 1,
                   kiln::asarray(std::vector<double>{5, 1, 3, 11, 7, 9})) == 1);
  CHECK(kernels_of(kiln::fft::fftshift(m * 2),
                   kiln::asarray(std::vector<double>{10, 6, 8, 4, 0, 2}, Shape{2, 3})) == 1);
  CHECK(kernels_of(kiln::fft::ifftshift(m * 2),
                   kiln::asarray(std::vector<double>{8, 10, 6, 2, 4, 0}, Shape{2, 3})) == 1);
}

// Slice assignment is one Remap over x and the new values: a Jacobi step reads u in one kernel
// and writes one array, the border copied from u by the same kernel.
TEST_CASE("a Jacobi step with at().set is one kernel writing one array") {
  const int64_t n = 6, m = 7;
  Array u = (kiln::arange(0.0, double(n * m)).reshape({n, m}) * 0.5).eval();
  Array next =
      u.at("1:-1", "1:-1")
          .set((u("1:-1", "2:") + u("1:-1", ":-2") + u("2:", "1:-1") + u(":-2", "1:-1")) * 0.25);
  std::string e = kiln::explain({next});
  INFO(e);
  CHECK(count(e, "kernel ") == 1);
  CHECK(e.find("remap(") != std::string::npos);
  std::vector<double> w(n * m);
  auto U = [&](int64_t i, int64_t j) { return 0.5 * double(i * m + j); };
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j)
      w[i * m + j] = i == 0 || j == 0 || i == n - 1 || j == m - 1
                         ? U(i, j)
                         : (U(i, j + 1) + U(i, j - 1) + U(i + 1, j) + U(i - 1, j)) * 0.25;
  CHECK(kernels_of(next, kiln::asarray(w, Shape{n, m})) == 1);
  // The input is unchanged, and a chain of steps stays one kernel per evaluated step.
  CHECK(kiln::array_equal(u, (kiln::arange(0.0, double(n * m)).reshape({n, m}) * 0.5)));
}

// A loop of lazy steps: the planner writes a step wherever recomputing it in the next would
// cost more (each step reads the last at five offsets), so the work stays linear in the steps;
// the result equals eager evaluation, step by step.
TEST_CASE("twenty lazy Jacobi steps equal eager ones, in at most one kernel a step") {
  auto step = [](const Array& u) {
    return u.at("1:-1", "1:-1")
        .set((u("1:-1", "2:") + u("1:-1", ":-2") + u("2:", "1:-1") + u(":-2", "1:-1")) * 0.25);
  };
  Array u0 = kiln::zeros({9, 11}).at(0, _).set(1.0).eval();
  Array lazy = u0;
  for (int i = 0; i < 20; ++i) lazy = step(lazy);
  kiln::reset_engine_stats();
  lazy.eval();
  CHECK(kiln::engine_stats().kernels <= 20);
  Array eager = u0;
  {
    kiln::EagerScope scope;
    for (int i = 0; i < 20; ++i) eager = step(eager);
  }
  CHECK(kiln::allclose(lazy, eager));
  CHECK(lazy(0, 3).item<double>() == 1.0);
  CHECK(lazy(1, 5).item<double>() > 0.25);
}

TEST_CASE("at(): operations, casting and the boolean-mask idiom") {
  Array x = kiln::arange(int64_t{0}, int64_t{6}).eval();
  // A scalar set casts to x's dtype as NumPy's x[i] = 2.7 (truncating into int64).
  CHECK(kiln::array_equal(x.at("1:3").set(2.7),
                          kiln::asarray(std::vector<int64_t>{0, 2, 2, 3, 4, 5})));
  CHECK(x.at(0).set(2.7).dtype() == DType::Int64);
  // add of a float into an integer array breaks NumPy's same_kind rule, as x[i] += 0.5 does.
  CHECK_THROWS_AS(x.at(_).add(0.5), kiln::DTypeError);
  CHECK_THROWS_AS(x.at(1).multiply(kiln::ones({1})), kiln::DTypeError);
  CHECK(kiln::array_equal(x.at("::2").add(10),
                          kiln::asarray(std::vector<int64_t>{10, 1, 12, 3, 14, 5})));
  CHECK_THROWS_AS(x.at(6).set(1), kiln::ShapeError);
  if (kiln::cuda_available())  // values on another device need an explicit copy, as elsewhere
    CHECK_THROWS_AS(x.at(0).set(kiln::asarray(x, kiln::cuda())(0)), kiln::DeviceError);
  // A boolean mask update is where(mask, new, x), which fuses the same way.
  Array y = kiln::where(x % 2 == 0, x * 10, x);
  CHECK(kernels_of(y, kiln::asarray(std::vector<int64_t>{0, 1, 20, 3, 40, 5})) == 1);
}

TEST_CASE("take gathers in the kernel that reads it, checking the indices there") {
  Array x = kiln::arange(0.0, 12.0).reshape({3, 4}).eval();
  Array i = kiln::asarray(std::vector<int64_t>{2, 0}).eval();
  // x * 2 taken at columns (i + 1) mod 4 = {3, 1}: the indices' expression fuses too.
  Array t = kiln::take(x * 2, i + 1, 1, kiln::TakeMode::Wrap);
  CHECK(count(kiln::explain({t}), "kernel ") == 1);
  CHECK(kernels_of(t, kiln::asarray(std::vector<double>{6, 2, 14, 10, 22, 18}, Shape{3, 2})) == 1);
  // NumPy's x[i] with an integer array is take along axis 0; a negative index counts from the end.
  Array rows = x.index(kiln::asarray(std::vector<int64_t>{-1, 0}));
  CHECK(kiln::array_equal(
      rows, kiln::asarray(std::vector<double>{8, 9, 10, 11, 0, 1, 2, 3}, Shape{2, 4})));
  CHECK_THROWS_AS(kiln::take(x, kiln::asarray(std::vector<int64_t>{3}), 0).eval(),
                  kiln::ShapeError);
  CHECK_THROWS_AS(kiln::take(x, kiln::asarray(std::vector<double>{1}), 0), kiln::DTypeError);
}

namespace {

// take in Raise mode on device d: nothing runs when it is called; the evaluation of a result
// that reads an index outside [-n, n) throws ShapeError naming it and stores none of its
// results; indices in range, negative ones too, gather what NumPy's take gives.
void check_take_raise(kiln::Device d) {
  Array x = kiln::asarray(std::vector<double>{10, 11, 12, 13, 14}, Shape{5}, d).eval();
  auto ints = [&](std::vector<int64_t> v) { return kiln::asarray(v, Shape{(int64_t)v.size()}, d); };
  kiln::reset_engine_stats();
  Array bad = kiln::take(x * 2, ints({1, 9, -7, 5, -6}) + 0, 0);  // a lazy index expression
  CHECK(kiln::engine_stats().plans == 0);  // nothing evaluated by take itself
  // The lowest index below the range is named, else the highest above it (as a range check
  // of every index would): -7 here, 9 once the negative ones are in range.
  auto message = [](const Array& a) {
    try {
      a.eval();
    } catch (const kiln::ShapeError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message(bad) ==
        "take: index -7 is out of bounds for axis 0 with size 5; use kiln::TakeMode::Wrap or "
        "Clip to map it into range");
  CHECK(message(kiln::take(x, ints({4, 9, -5, 5}), 0)).find("take: index 9 is out") == 0);
  // Evaluated beside a good result in one plan: neither is stored, so evaluating the good one
  // again runs a plan.
  Array good = x + 1;
  CHECK_THROWS_AS(kiln::eval({good, bad}), kiln::ShapeError);
  kiln::reset_engine_stats();
  CHECK(good.to_vector<double>() == std::vector<double>{11, 12, 13, 14, 15});
  CHECK(kiln::engine_stats().plans == 1);
  // The check runs inside the kernel that reads the gather: one kernel for a sum of it, and
  // it still throws when the gather is folded into a reduction.
  Array ok = kiln::take(x, ints({-1, 0, 2, -5}), 0);
  kiln::reset_engine_stats();
  CHECK(kiln::sum(ok).item<double>() == 14 + 10 + 12 + 10);
  CHECK(kiln::engine_stats().kernels == 1);
  CHECK_THROWS_AS(kiln::sum(kiln::take(x, ints({0, 5}), 0)).eval(), kiln::ShapeError);
  // Along an inner axis, the indices varying along the row (the host tabulates such maps).
  Array m = kiln::arange(0.0, 400.0, 1.0, DType::Float64, d).reshape({2, 200});
  std::vector<int64_t> cols(200);
  for (int64_t k = 0; k < 200; ++k) cols[k] = 199 - k;
  CHECK(kiln::take(m, ints(cols), 1).to_vector<double>() == kiln::flip(m, 1).to_vector<double>());
  cols[150] = 200;
  CHECK(message(kiln::take(m, ints(cols), 1)).find("take: index 200 is out of bounds for axis 1") ==
        0);
  // Eager: take itself evaluates, so it throws at the call.
  {
    kiln::EagerScope eager;
    CHECK_THROWS_AS(kiln::take(x, ints({5}), 0), kiln::ShapeError);
  }
  // An empty result reads nothing: no error, as NumPy's.
  CHECK(kiln::take(kiln::zeros({0, 3}, DType::Float64, d), ints({7}), 1).size() == 0);
}

}  // namespace

TEST_CASE(
    "take's Raise: checked in the gathering kernel, at evaluation; a failure stores nothing") {
  check_take_raise(kiln::host());
}

GPU_TEST_CASE("take's Raise on the GPU: checked in the gathering kernel, as on the host") {
  check_take_raise(kiln::cuda());
}

namespace {

// take in Raise mode leaves out the range check (the gather clamps, which changes no index in
// range) only for indices whose range kiln knows from how they were made and that lies in
// [0, n): randint(0, n), argsort along n, argmax and argmin along n, an integer arange inside
// the axis, flatnonzero of a mask of n, views and value-keeping casts of these; never for
// others. The values are the
// gather NumPy's take gives, worked out here from the indices' own values.
void check_take_known_range(kiln::Device d) {
  namespace graph = kiln::graph;
  Array x = kiln::arange(100.0, 110.0, 1.0, DType::Float64, d).eval();  // 10 elements
  kiln::random::Generator g(5, d);
  auto mode_of = [](const Array& y) {
    const graph::Node* n = graph::below_reshapes(y.node().get());
    REQUIRE(n->kind == graph::OpKind::Remap);
    return n->attr<graph::RemapAttrs>().axes[0].mode;
  };
  auto expect = [&](const Array& idx) {
    std::vector<double> out;
    for (int64_t i : idx.astype(DType::Int64).to_vector<int64_t>())
      out.push_back(100.0 + static_cast<double>(i < 0 ? i + 10 : i));
    return out;
  };
  const Array unchecked[] = {
      g.randint(0, 10, {300}, DType::Int64).eval(),  // evaluated: the draw's bounds stay
      g.randint(3, 7, {40}, DType::Int32),
      g.randint(0, 10, {6, 5}, DType::Int16).T(),  // a cast of an int32 draw, then a view
      kiln::argsort(kiln::sin(kiln::arange(0.0, 10.0, 1.0, DType::Float64, d))),
      kiln::arange(9, -1, -1, DType::Int64, d),
      kiln::flatnonzero(kiln::arange(0.0, 10.0, 1.0, DType::Float64, d) > 4.5),
      kiln::argmax(kiln::cos(kiln::arange(0.0, 30.0, 1.0, DType::Float64, d)).reshape({3, 10}), -1),
      kiln::argmin(kiln::cos(kiln::arange(0.0, 10.0, 1.0, DType::Float64, d))),  // flattened
  };
  for (size_t i = 0; i < std::size(unchecked); ++i) {
    INFO("unchecked " << i);
    Array y = kiln::take(x, unchecked[i]);
    CHECK(mode_of(y) == graph::IndexMode::Clamp);
    CHECK(y.to_vector<double>() == expect(unchecked[i]));
  }
  const Array checked[] = {
      g.randint(0, 11, {20}, DType::Int64),  // 10 may come: out of range
      g.randint(-1, 5, {20}, DType::Int64),  // -1: in range for Raise, clamped by Clip
      kiln::arange(0, 11, 1, DType::Int64, d),
      g.randint(0, 10, {20}, DType::Int16).eval(),  // an evaluated cast: its history is gone
      kiln::asarray(std::vector<int64_t>{0, 9, 3}, Shape{3}, d),
      kiln::argsort(kiln::arange(0.0, 12.0, 1.0, DType::Float64, d)),  // positions up to 11
      kiln::argmax(kiln::arange(0.0, 24.0, 1.0, DType::Float64, d).reshape({2, 12}), 1),
      kiln::argmax(kiln::arange(0.0, 22.0, 1.0, DType::Float64, d).reshape({11, 2}), 0).eval(),
  };
  for (size_t i = 0; i < std::size(checked); ++i) {
    INFO("checked " << i);
    CHECK(mode_of(kiln::take(x, checked[i])) == graph::IndexMode::Raise);
  }
  CHECK(kiln::take(x, checked[1]).to_vector<double>() == expect(checked[1]));
  CHECK_THROWS_AS(kiln::take(x, checked[2]).eval(), kiln::ShapeError);  // 10 is read
  // Wrap asked for stays Wrap.
  CHECK(mode_of(kiln::take(x, unchecked[0], 0, kiln::TakeMode::Wrap)) == graph::IndexMode::Wrap);
  // take_along_axis checks its indices when called (an evaluation of any(out of range)), except
  // those known in range: argsort's along either axis of m sorts m, and nothing runs at the call.
  Array m = kiln::sin(kiln::arange(0.0, 12.0, 1.0, DType::Float64, d)).reshape({3, 4}).eval();
  for (int ax : {0, 1}) {
    INFO("axis " << ax);
    kiln::reset_engine_stats();
    Array sorted = kiln::take_along_axis(m, kiln::argsort(m, ax), ax);
    CHECK(kiln::engine_stats().plans == 0);
    CHECK(sorted.to_vector<double>() == kiln::sort(m, ax).to_vector<double>());
    kiln::reset_engine_stats();
    Array top = kiln::take_along_axis(m, kiln::argmax(m, ax, true), ax);
    CHECK(kiln::engine_stats().plans == 0);
    CHECK(top.to_vector<double>() == kiln::max(m, ax, true).to_vector<double>());
  }
  Array order = kiln::argsort(m, 1).eval() + 0;  // the same positions, computed: checked
  kiln::reset_engine_stats();
  Array picked = kiln::take_along_axis(m, order, 1);
  CHECK(kiln::engine_stats().plans == 1);
  CHECK(picked.to_vector<double>() == kiln::sort(m, 1).to_vector<double>());
}

}  // namespace

TEST_CASE("take's Raise leaves out the check for indices known to be in range, and only then") {
  check_take_known_range(kiln::host());
}

GPU_TEST_CASE("take's Raise on the GPU leaves out the check for indices known to be in range") {
  check_take_known_range(kiln::cuda());
}

TEST_CASE("integer arrays on several axes gather in one kernel, their indices checked first") {
  Array x = kiln::arange(0.0, 24.0).reshape({2, 3, 4}).eval();
  Array i = kiln::asarray(std::vector<int64_t>{1, 0}),
        j = kiln::asarray(std::vector<int64_t>{-1, 1});
  // x[i, j] * 2: rows (1, 2) and (0, 1) of the last axis, doubled, in one kernel.
  Array y = x.index({i, j}) * 2;
  CHECK(count(kiln::explain({y}), "kernel ") == 1);
  CHECK(kernels_of(y, kiln::asarray(std::vector<double>{40, 42, 44, 46, 8, 10, 12, 14},
                                    Shape{2, 4})) == 1);
  CHECK_THROWS_AS(x.index({i, kiln::asarray(std::vector<int64_t>{3, 0})}), kiln::ShapeError);
  CHECK_THROWS_AS(x.index({i, kiln::asarray(std::vector<double>{1, 0})}), kiln::DTypeError);
  CHECK(kiln::array_equal(x.index({}), x));  // no index at all: x, as x.index(std::vector<Index>{})
}

TEST_CASE("at() with index arrays scatters: repeated indices accumulate, the last set wins") {
  Array x = kiln::arange(0.0, 6.0).reshape({3, 2}).eval();
  Array i = kiln::asarray(std::vector<int64_t>{0, 2, 0, -3});
  // Rows 0 (three times, -3 is row 0) and 2: numpy.add.at by hand.
  CHECK(kiln::array_equal(x.at(i).add(1.0),
                          kiln::asarray(std::vector<double>{3, 4, 2, 3, 5, 6}, Shape{3, 2})));
  Array v = kiln::asarray(std::vector<double>{1, 2, 3, 4}).reshape({4, 1});
  CHECK(kiln::array_equal(x.at(i).set(v),
                          kiln::asarray(std::vector<double>{4, 4, 2, 3, 2, 2}, Shape{3, 2})));
  CHECK(kiln::array_equal(x.at({i, kiln::asarray(std::vector<int64_t>{1, 0, 1, 1})}).multiply(3),
                          kiln::asarray(std::vector<double>{0, 27, 2, 3, 12, 5}, Shape{3, 2})));
  // The positions and values are written by a kernel, then the scatter step runs, and what reads
  // its result is a kernel of its own.
  Array y = x.at(i).add(v) * 2;
  std::string e = kiln::explain({y});
  INFO(e);
  CHECK(e.find("scatter (add)") != std::string::npos);
  CHECK(kiln::to_dot({y}).find("scatter add") != std::string::npos);
  CHECK(
      kiln::array_equal(y, kiln::asarray(std::vector<double>{16, 18, 4, 6, 12, 14}, Shape{3, 2})));
  // No index selected: x itself.
  CHECK(kiln::array_equal(x.at(kiln::asarray(std::vector<int64_t>{})).add(1.0), x));
}

TEST_CASE("selections evaluate their count and refuse what NumPy 2 refuses") {
  Array x = kiln::asarray(std::vector<double>{0, 2, 0, 5, 7});
  auto nz = kiln::nonzero(x);
  REQUIRE(nz.size() == 1);
  CHECK(kiln::array_equal(nz[0], kiln::asarray(std::vector<int64_t>{1, 3, 4})));
  // Empty results keep NumPy's shapes: rows of no values, no rows, no true entry.
  Array mask = x != 0.0;
  CHECK(kiln::masked(kiln::zeros({5, 0}), mask).shape() == kiln::Shape{3, 0});
  CHECK(kiln::masked(kiln::zeros({0, 2}), kiln::ones({0}, DType::Bool)).shape() ==
        kiln::Shape{0, 2});
  CHECK(kiln::masked(kiln::ones({5, 2}), x > 9.0).shape() == kiln::Shape{0, 2});
  CHECK(kiln::flatnonzero(x > 9.0).shape() == kiln::Shape{0});
  CHECK_THROWS_AS(kiln::nonzero(kiln::full({}, 1.0)), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::masked(x, kiln::asarray(std::vector<int64_t>{1})), kiln::DTypeError);
  CHECK_THROWS_AS(
      kiln::compress(kiln::asarray(std::vector<bool>{false, false, false, false, false, true}), x),
      kiln::ShapeError);
  CHECK_THROWS_AS(kiln::compress(kiln::ones({2, 2}, DType::Bool), x), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::masked(x, kiln::ones({4}, DType::Bool)), kiln::ShapeError);
  Array m = kiln::zeros({2, 3});
  Array i = kiln::zeros({2, 1}, DType::Int64);
  CHECK_THROWS_AS(kiln::take_along_axis(m, i.reshape({-1}), 1), kiln::ShapeError);  // ranks
  CHECK_THROWS_AS(kiln::take_along_axis(m, i, std::nullopt), kiln::ShapeError);     // not 1-d
  CHECK_THROWS_AS(kiln::take_along_axis(m, i.astype(DType::Float64), 1), kiln::DTypeError);
  // A cumulative sum of an array in memory is a scan step in the plan; of an elementwise
  // expression, a kernel computing the expression as it scans (tests/test_scan_fusion.cpp).
  // Complex sums on their parts.
  std::string e = kiln::explain({kiln::cumsum(x)});
  INFO(e);
  CHECK(e.find("scan (cumsum)") != std::string::npos);
  std::string fused = kiln::explain({kiln::cumsum(x * 2)});
  INFO(fused);
  CHECK(fused.find("cumsum (scan) of mul(in0, s0) fused") != std::string::npos);
  Array c = kiln::asarray(std::vector<std::complex<double>>{{1, 2}, {3, -1}, {0, 1}});
  CHECK(kiln::array_equal(
      kiln::cumsum(c), kiln::asarray(std::vector<std::complex<double>>{{1, 2}, {4, 1}, {4, 2}})));
  CHECK(kiln::array_equal(
      kiln::cumprod(c), kiln::asarray(std::vector<std::complex<double>>{{1, 2}, {5, 5}, {-5, 5}})));
}

TEST_CASE("x[mask] reads x in place, and a computed mask is written once") {
  Array x = kiln::arange(0.0, 24.0).eval();
  Array m = (x > 20.0).eval();
  kiln::reset_engine_stats();
  // masked() views x as rows of one: the compress step reads x's buffer, no copy of it.
  Array high = kiln::masked(x, m).eval();
  CHECK(kiln::engine_stats().kernels == 1);  // the count
  CHECK(kiln::engine_stats().library_calls == 1);
  CHECK(kiln::array_equal(high, kiln::asarray(std::vector<double>{21, 22, 23})));
  // A mask computed from row sums: the sums, the mask of them (written once, not computed again
  // for the count), its count, then the compress step, whose output is the result's shape
  // (no copy to reshape it).
  Array rows = x.reshape({4, 6});
  Array sums = kiln::sum(rows, {1});  // 15, 51, 87, 123
  kiln::reset_engine_stats();
  Array picked = kiln::masked(rows, ((sums > 40.0) & (sums < 70.0)) | (sums > 100.0)).eval();
  CHECK(kiln::engine_stats().kernels == 3);
  CHECK(kiln::engine_stats().library_calls == 1);
  CHECK(kiln::array_equal(
      picked, kiln::asarray(std::vector<double>{6, 7, 8, 9, 10, 11, 18, 19, 20, 21, 22, 23})
                  .reshape({2, 6})));
}

TEST_CASE("the scatter and scan kernels compile with NVRTC") {
  // One dtype of each path through kernels/scatter.cuh and scan.cuh (1-, 2-, 4-, 8- and 16-byte
  // words, bool, narrow integers on words of their own, the halves' one-instruction adds, floats,
  // complex; the GPU suite compiles the rest as it runs them): CI compiles on two cores, and each
  // kernel is an NVRTC call.
  const DType some[] = {DType::Bool,    DType::Int8,      DType::UInt16,
                        DType::Float16, DType::BFloat16,  DType::Float32,
                        DType::Float64, DType::Complex64, DType::Complex128};
  auto names = kiln::gpu::compile_scatter_helpers("sm_90", some);
  // Every operation, less min and max of the two complex dtypes and complex128's multiply, the
  // set's two claim kernels, the packed set's two kernels for each dtype of at most 4 bytes,
  // the gather of a set's values for each wider one, and for int8 and uint16 the widened add,
  // multiply, min and max with their widen and narrow passes.
  CHECK(names.size() == 5 * std::size(some) - 5 + 2 + 2 * 6 + 3 + 6 * 2);
  for (const char* n :
       {"kiln_scatter_claim", "kiln_scatter_add_f32", "kiln_scatter_max_u16",
        "kiln_scatter_multiply_c64", "kiln_scatter_add_c128", "kiln_scatter_set_b",
        "kiln_scatter_set_packed_f32", "kiln_scatter_unpack_b", "kiln_scatter_set_packed_i8",
        "kiln_scatter_add_f16", "kiln_scatter_add_bf16", "kiln_scatter_widened_add_i8",
        "kiln_scatter_widened_multiply_u16", "kiln_scatter_widen_i8", "kiln_scatter_narrow_u16",
        "kiln_scatter_claim_index", "kiln_scatter_gather_set_c128"})
    CHECK(std::find(names.begin(), names.end(), n) != names.end());
  auto scans = kiln::gpu::compile_scan_helpers("sm_90", some);
  CHECK(scans.size() == 4 * (std::size(some) - 1));  // 2 kernels x 2 ops, none for bool
  auto compress = kiln::gpu::compile_compress_helpers("sm_90");
  CHECK(compress.size() == 6);  // positions, and rows in 16-, 8-, 4-, 2- and 1-byte units
  CHECK(std::find(compress.begin(), compress.end(), "kiln_compress_positions") != compress.end());
}

TEST_CASE("scatter refuses what it cannot do, saying why") {
  Array x = kiln::zeros({4}, DType::Int32);
  Array i = kiln::asarray(std::vector<int64_t>{1, 1});
  CHECK_THROWS_AS(x.at(i).add(0.5), kiln::DTypeError);  // float into int: same_kind
  CHECK_THROWS_AS(x.at(i).add(kiln::asarray(std::vector<double>{1, 2})), kiln::DTypeError);
  // A 1-d x's scatter checks its indices as it runs: the evaluation throws.
  CHECK_THROWS_AS(x.at(kiln::asarray(std::vector<int64_t>{4})).add(1).eval(), kiln::ShapeError);
  CHECK_THROWS_AS(x.at(kiln::asarray(std::vector<double>{1})).add(1), kiln::DTypeError);
  CHECK_THROWS_AS(kiln::zeros({4}, DType::UInt8).at(i).add(300), kiln::DTypeError);
  Array c = kiln::zeros({4}, DType::Complex64);
  CHECK_THROWS_AS(c.at(i).min(1.0), kiln::DTypeError);
  CHECK(kiln::array_equal(
      c.at(i).add(std::complex<float>(1, 2)),
      kiln::asarray(std::vector<std::complex<float>>{{0, 0}, {2, 4}, {0, 0}, {0, 0}})));
  CHECK(kiln::array_equal(x, kiln::zeros({4}, DType::Int32)));  // x is untouched throughout
}

// NumPy 1.24, by hand: np.minimum.at(np.zeros(4, np.uint16), [0, 1], np.int16(-1)) compares in
// int32, so -1 wins and wraps to 65535; np.maximum.at of int64 300 into an int8 100 stores 300
// wrapped to 44 (cast first, 300 would be 44 and lose to 100). (Found by the fuzzer's scatter
// ops, seed 5997.)
TEST_CASE("scatter min and max compare in the promoted dtype, then store the winner cast") {
  Array i = kiln::asarray(std::vector<int64_t>{0, 1});
  Array u = kiln::zeros({4}, DType::UInt16).at(i).min(kiln::asarray(std::vector<int16_t>{-1, 5}));
  CHECK(u.dtype() == DType::UInt16);
  CHECK(u.to_vector<int64_t>() == std::vector<int64_t>{65535, 0, 0, 0});
  Array s =
      kiln::full({2}, 100, DType::Int8).at(i).max(kiln::asarray(std::vector<int64_t>{300, 50}));
  CHECK(s.dtype() == DType::Int8);
  CHECK(s.to_vector<int64_t>() == std::vector<int64_t>{44, 100});
}

// NumPy (1.24, checked by hand): a[[1]] = 1j raises TypeError for float and integer arrays, and
// so does a[1:3] = 1j; a bool array takes the value's truth; a complex array (not a scalar)
// casts with a ComplexWarning. (Found by the fuzzer's scatter ops.)
TEST_CASE("at().set of a complex scalar into a real array is refused, as NumPy's x[i] = v") {
  const std::complex<double> v(-0.5, 1.0);
  Array i = kiln::asarray(std::vector<int64_t>{1});
  for (DType t : {DType::Float16, DType::Float64, DType::Int32}) {
    INFO(kiln::dtype_name(t));
    Array x = kiln::zeros({4}, t);
    CHECK_THROWS_AS(x.at(i).set(v), kiln::DTypeError);
    CHECK_THROWS_AS(x.at(kiln::Slice(1, 3)).set(v), kiln::DTypeError);
  }
  Array b = kiln::zeros({4}, DType::Bool).at(i).set(v);
  CHECK(b.to_vector<bool>() == std::vector<bool>{false, true, false, false});
  Array c = kiln::zeros({2}, DType::Complex128).at(i).set(v);
  CHECK(c.to_vector<std::complex<double>>()[1] == v);
}

TEST_CASE("explain and to_dot show an index map as a gather") {
  Array x = kiln::arange(0.0, 5.0).eval();
  Array r = kiln::roll(x * 2, 2);
  std::string e = kiln::explain({r});
  INFO(e);
  CHECK(e.find("gather") != std::string::npos);
  CHECK(kiln::to_dot({r}).find("gather") != std::string::npos);
  CHECK(kernels_of(r, kiln::asarray(std::vector<double>{6, 8, 0, 2, 4})) == 1);
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

// ---- NumPy's advanced indexing: arrays mixed with integers, slices, newaxis and ellipsis ----

namespace {

using kiln::Ellipsis;
using kiln::newaxis;
using kiln::Slice;

// The cases of tests/data/advanced_index_cases.py, as kiln calls on the same arrays on device d.
std::map<std::string, std::function<Array()>> advanced_cases(kiln::Device d) {
  auto ints = [d](std::vector<int64_t> v, Shape s) { return kiln::asarray(v, s, d); };
  Array x = kiln::arange(0, 60, 1, DType::Int64, d).reshape({5, 3, 4});
  Array x4 = kiln::arange(0, 120, 1, DType::Int64, d).reshape({2, 3, 4, 5});
  Array i5 = ints({4, 0, -1}, {3}), i3 = ints({0, 2, 1}, {3}), j3 = ints({3, 0, 1}, {3});
  Array jj = ints({0, 1, 2, 3}, {2, 2}), j5 = ints({4, 0, 3}, {3}), col = ints({0, 3}, {2, 1});
  Array k = ints({1, 2, 0}, {3}).astype(DType::Int32), bad = ints({0, 3}, {2});
  Array m = kiln::asarray(std::vector<bool>{true, false, true, false, false, true, true, false,
                                            true, false, false, true},
                          {3, 4}, d);
  Array m1 = kiln::asarray(std::vector<bool>{true, false, true}, {3}, d);
  const kiln::Ellipsis etc{};
  return {
      {"x[:,i3,j3]", [=] { return x(_, i3, j3); }},
      {"x[i5,:,j3]", [=] { return x(i5, _, j3); }},
      {"x[1,:,j3]", [=] { return x(1, _, j3); }},
      {"x[:,1,j3]", [=] { return x(_, 1, j3); }},
      {"x[None,i5,1:3]", [=] { return x(newaxis, i5, "1:3"); }},
      {"x[i5,None,j3]", [=] { return x(i5, newaxis, j3); }},
      {"x[...,j3]", [=] { return x(etc, j3); }},
      {"x[i5,...,j3]", [=] { return x(i5, etc, j3); }},
      {"x[jj,:,::2]", [=] { return x(jj, _, "::2"); }},
      {"x[:,m]", [=] { return x(_, m); }},
      {"x[1:4,m1,::-2]", [=] { return x("1:4", m1, "::-2"); }},
      {"x4[:,i3,:,j5]", [=] { return x4(_, i3, _, j5); }},
      {"x4[0,...,k]", [=] { return x4(0, etc, k); }},
      {"x4[:,:,col,k]",
       [=] {
         return x4.advanced_index({_, _, col, k});
       }},
      {"x4[1,i3,2,k]", [=] { return x4(1, i3, 2, k); }},
      {"x[:,bad]", [=] { return x(_, bad); }},
      {"x[i5,jj]", [=] { return x(i5, jj); }},
  };
}

void check_advanced_indexing(kiln::Device d) {
  const std::string dir = "/tmp/kiln_advanced_index_" + std::to_string(getpid());
  REQUIRE_MESSAGE(std::system((std::string(KILN_PYTHON) + " " + KILN_TEST_DATA +
                               "/advanced_index_cases.py " + dir)
                                  .c_str()) == 0,
                  "tests/data/advanced_index_cases.py needs python3-numpy");
  std::ifstream in(dir + "/advanced_index.txt");
  auto cases = advanced_cases(d);
  size_t seen = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::string name, first;
    ls >> name >> first;
    INFO(name);
    REQUIRE(cases.count(name) == 1);
    ++seen;
    if (first == "error") {  // NumPy's IndexError: out of range, or shapes that do not broadcast
      CHECK_THROWS_AS(cases[name]().eval(), kiln::ShapeError);
      continue;
    }
    Shape shape(std::stoul(first));
    for (auto& e : shape) ls >> e;
    int64_t count = 0;
    ls >> count;
    std::vector<int64_t> want(static_cast<size_t>(count));
    for (auto& v : want) ls >> v;
    Array got = cases[name]();
    CHECK(got.device() == d);
    CHECK(got.shape() == shape);
    CHECK(got.to_vector<int64_t>() == want);
  }
  CHECK(seen == cases.size());
  std::filesystem::remove_all(dir);
}

}  // namespace

TEST_CASE("advanced indexing: arrays mixed with slices, integers, newaxis and ellipsis, as NumPy") {
  check_advanced_indexing(kiln::host());
}

GPU_TEST_CASE("advanced indexing on the GPU, as NumPy") { check_advanced_indexing(kiln::cuda()); }

TEST_CASE("advanced indexing: errors say what was wrong") {
  Array x = kiln::arange(0, 24, 1, DType::Int64).reshape({2, 3, 4});
  Array i = kiln::asarray(std::vector<int64_t>{0, 1});
  const kiln::Ellipsis etc{};
  CHECK_THROWS_AS(x(etc, i, etc), kiln::ShapeError);  // two ellipses
  CHECK_THROWS_AS(x(i, _, _, i), kiln::ShapeError);   // four indices for three axes
  CHECK_THROWS_AS(x(_, kiln::asarray(std::vector<double>{0.0, 1.0})), kiln::DTypeError);
  // Without an array among them the entries index as index() does.
  CHECK(kiln::array_equal(x.advanced_index({1, _, Slice(0, 2)}), x(1, _, "0:2")));
}

// As NumPy, and as the header says: the index arrays are checked at the call (not when the
// result is evaluated), and the axis named is the array's own, however the entries around it
// (slices, new axes, an ellipsis) move it. Messages from NumPy 1.24 ("index 4 is out of bounds
// for axis 1 with size 4").
TEST_CASE("advanced indexing: an index out of range throws at the call, naming its own axis") {
  Array a = kiln::arange(0, 12, 1, DType::Int64).reshape({3, 4});
  Array four = kiln::asarray(std::vector<int64_t>{4}),
        five = kiln::asarray(std::vector<int64_t>{5});
  const kiln::Ellipsis etc{};
  auto says = [](auto&& f, const std::string& text) {
    try {
      f();  // no eval(): the call itself must throw
      FAIL("no error at the call: " << text);
    } catch (const kiln::ShapeError& e) {
      CHECK(std::string(e.what()) == "index: " + text);
    }
  };
  says([&] { a(_, four); }, "index 4 is out of bounds for axis 1 with size 4");
  says([&] { a(kiln::NewAxis{}, _, four); }, "index 4 is out of bounds for axis 1 with size 4");
  says([&] { a(etc, four); }, "index 4 is out of bounds for axis 1 with size 4");
  says([&] { a(five, _); }, "index 5 is out of bounds for axis 0 with size 3");
  says([&] { a(0, four); }, "index 4 is out of bounds for axis 1 with size 4");
  says([&] { a.index(std::vector<Array>{five}); },
       "index 5 is out of bounds for axis 0 with size 3");
  CHECK(a(_, kiln::asarray(std::vector<int64_t>{3, -1})).to_vector<int64_t>() ==
        std::vector<int64_t>{3, 3, 7, 7, 11, 11});
}

// NumPy: "boolean index did not match indexed array along dimension 0; dimension is 2 but
// corresponding boolean dimension is 3". Before, a mask whose true entries fell inside the axis
// selected quietly, and one past it failed as a take with advice about take's modes.
TEST_CASE("advanced indexing: a bool index must have the shape of the axes it selects from") {
  Array a = kiln::arange(0, 6, 1, DType::Int64).reshape({2, 3});
  auto mask = [](std::vector<bool> m) { return kiln::asarray(m); };
  const kiln::Ellipsis etc{};
  auto refused = [](auto&& f, const std::string& says) {
    try {
      f();
      FAIL("no error: " << says);
    } catch (const kiln::ShapeError& e) {
      CHECK_MESSAGE(std::string(e.what()).find(says) != std::string::npos, e.what());
    }
  };
  refused([&] { a(mask({true, false, false})); }, "along axis 0 (3 against 2)");
  refused([&] { a(mask({true})); }, "along axis 0 (1 against 2)");
  refused([&] { a(_, mask({true, false, false, false})); }, "along axis 1 (4 against 3)");
  refused(
      [&] {
        a(mask({true, false, true, false}).reshape({2, 2}));
      },
      "along axis 1 (2 against 3)");
  refused([&] { a(etc, mask({true, false})); }, "of shape (2,) does not match");
  refused([&] { a.advanced_index({mask({true, false, true})}); }, "a mask needs the shape");
  // Masks of the right shape, after slices, ellipses and new axes, select as NumPy does.
  CHECK(kiln::array_equal(a(mask({false, true})), a(Slice(1, 2))));
  CHECK(kiln::array_equal(a(etc, mask({true, false, true})),
                          kiln::asarray(std::vector<int64_t>{0, 2, 3, 5}).reshape({2, 2})));
  CHECK(kiln::array_equal(a(kiln::NewAxis{}, mask({false, true})),
                          a(Slice(1, 2)).reshape({1, 1, 3})));
  CHECK(kiln::array_equal(a(mask({true, false, true, false, true, true}).reshape({2, 3})),
                          kiln::asarray(std::vector<int64_t>{0, 2, 4, 5})));
}
