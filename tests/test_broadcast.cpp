// Broadcasting: every pair and every triple (in where) from a set of shapes (size-1 dims, rank
// mismatch, zero-size dims, rank 0) against NumPy's shapes and values (tests/data/
// broadcast_cases.txt, written by tests/data/make_broadcast_fixtures.py with NumPy 1.24),
// incompatible shapes, whose ShapeError names both shapes, and rank 8 (the limit) and rank 9
// (an error), whose expected values come from index arithmetic written here.
#include <doctest/doctest.h>

#include <cstdint>
#include <fstream>
#include <kiln/kiln.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

using kiln::Array;
using kiln::DType;
using kiln::Shape;

int64_t size_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// The element of `v` (row-major, shape `s`) that output coordinate `c` (of rank >= s) reads.
double read_broadcast(const std::vector<double>& v, const Shape& s, const std::vector<int64_t>& c) {
  int64_t off = 0;
  size_t lead = c.size() - s.size();
  for (size_t i = 0; i < s.size(); ++i) off = off * s[i] + (s[i] == 1 ? 0 : c[lead + i]);
  return v[off];
}

std::vector<int64_t> coords(int64_t flat, const Shape& s) {
  std::vector<int64_t> c(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    c[d] = flat % s[d];
    flat /= s[d];
  }
  return c;
}

std::vector<double> values_for(const Shape& s, double base) {
  std::vector<double> v(size_of(s));
  for (size_t i = 0; i < v.size(); ++i) v[i] = base + static_cast<double>(i);
  return v;
}

bool mentions(const std::string& msg, const Shape& s) {
  return msg.find(kiln::shape_str(s)) != std::string::npos;
}

// Runs f, expects a ShapeError, and returns its message.
template <class F>
std::string shape_error(F f) {
  try {
    f();
  } catch (const kiln::ShapeError& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL_CHECK("wrong exception type: " << e.what());
    return "";
  }
  FAIL_CHECK("no exception");
  return "";
}

// One line of broadcast_cases.txt: a * 10 + b for a pair (a from 0.5, b from 1000, counting up
// in row-major order), or where(c, x, y) for a triple (c true where the index % 3 != 1).
struct NumpyCase {
  std::string kind;             // "pair" or "where"
  std::vector<Shape> shapes;    // SA SB, or SC SX SY
  std::optional<Shape> result;  // empty: NumPy raised
  bool broadcast_to = false;    // pair: np.broadcast_to(a, SB) works
  std::vector<double> values;   // NumPy's result, row-major
};

Shape parse_shape(const std::string& text) {  // "[2,0,3]", "[]"
  Shape s;
  std::istringstream in(text.substr(1, text.size() - 2));
  for (std::string d; std::getline(in, d, ',');) s.push_back(std::stoll(d));
  return s;
}

NumpyCase parse_case(const std::string& line) {
  std::istringstream in(line);
  NumpyCase c;
  std::string word;
  in >> c.kind;
  for (int i = 0; i < (c.kind == "pair" ? 2 : 3) && in >> word; ++i)
    c.shapes.push_back(parse_shape(word));
  in >> word;
  if (word != "error") c.result = parse_shape(word);
  if (c.kind == "pair") in >> c.broadcast_to;
  size_t n = 0;
  in >> n;
  c.values.resize(n);
  for (double& v : c.values) in >> v;
  REQUIRE_MESSAGE(!in.fail(), "bad line in broadcast_cases.txt: " << line);
  return c;
}

std::vector<NumpyCase> numpy_cases(const std::string& kind) {
  std::ifstream in(std::string(KILN_TEST_DATA) + "/broadcast_cases.txt");
  REQUIRE_MESSAGE(in.good(),
                  "missing tests/data/broadcast_cases.txt; run make_broadcast_fixtures.py");
  std::vector<NumpyCase> out;
  for (std::string line; std::getline(in, line);)
    if (line.rfind(kind + " ", 0) == 0) out.push_back(parse_case(line));
  return out;
}

std::string shapes_str(const std::vector<Shape>& shapes) {
  std::string out;
  for (const auto& s : shapes) out += kiln::shape_str(s) + " ";
  return out;
}

}  // namespace

TEST_CASE(
    "every pair of shapes: broadcast shape and values as NumPy, or a ShapeError naming both") {
  auto cases = numpy_cases("pair");
  REQUIRE(cases.size() == 17 * 17);
  int ok = 0, errors = 0;
  for (const NumpyCase& c : cases) {
    const Shape &sa = c.shapes[0], &sb = c.shapes[1];
    INFO("shapes " << shapes_str(c.shapes));
    Array a = kiln::asarray(values_for(sa, 0.5), sa), b = kiln::asarray(values_for(sb, 1000), sb);
    if (c.broadcast_to)
      CHECK(a.broadcast_to(sb).shape() == sb);
    else
      CHECK_THROWS_AS(a.broadcast_to(sb), kiln::ShapeError);
    if (!c.result) {
      std::string msg = shape_error([&] { return a * 10 + b; });
      CHECK(mentions(msg, sa));
      CHECK(mentions(msg, sb));
      msg = shape_error([&] { return b < a; });
      CHECK(mentions(msg, sa));
      CHECK(mentions(msg, sb));
      CHECK_THROWS_AS(kiln::maximum(a, b), kiln::ShapeError);
      ++errors;
      continue;
    }
    Array r = a * 10 + b;
    REQUIRE(r.shape() == *c.result);
    CHECK(r.to_vector<double>() == c.values);
    // Symmetric, and comparisons and mixed dtypes broadcast the same way.
    CHECK((b + a * 10).to_vector<double>() == c.values);
    Array lt = a.astype(DType::Int32) < b.astype(DType::Float32);
    CHECK(lt.shape() == *c.result);
    CHECK(kiln::all(lt).item<bool>());  // every a (< 1000) is below every b (>= 1000)
    // broadcast_to the common shape gives the same elements.
    CHECK((a.broadcast_to(*c.result) * 10 + b.broadcast_to(*c.result)).to_vector<double>() ==
          c.values);
    ++ok;
  }
  CHECK(ok > 200);  // the fixture's mix: most pairs broadcast, dozens do not
  CHECK(errors > 40);
}

TEST_CASE("every triple of shapes in where: shape and values as NumPy, or a ShapeError") {
  auto cases = numpy_cases("where");
  REQUIRE(cases.size() == 8 * 8 * 8);
  int ok = 0, errors = 0;
  for (const NumpyCase& c : cases) {
    const Shape &sc = c.shapes[0], &sx = c.shapes[1], &sy = c.shapes[2];
    INFO("shapes " << shapes_str(c.shapes));
    std::vector<double> flags(size_of(sc));
    for (size_t i = 0; i < flags.size(); ++i) flags[i] = i % 3 != 1;
    Array cond = kiln::asarray(flags, sc) != 0.0;
    Array x = kiln::asarray(values_for(sx, 0.5), sx), y = kiln::asarray(values_for(sy, 1000), sy);
    if (!c.result) {
      CHECK_THROWS_AS(kiln::where(cond, x, y), kiln::ShapeError);
      ++errors;
      continue;
    }
    Array w = kiln::where(cond, x, y);
    REQUIRE(w.shape() == *c.result);
    CHECK(w.to_vector<double>() == c.values);
    ++ok;
  }
  CHECK(ok > 200);
  CHECK(errors > 100);
}

TEST_CASE("three-way broadcasting in where and clip") {
  const bool conds[] = {true, false, true};
  Array cond = kiln::asarray(conds, DType::Bool, {3, 1, 1});
  auto vx = values_for({1, 4, 1}, 0), vy = values_for({5}, 100);
  Array x = kiln::asarray(vx, {1, 4, 1}), y = kiln::asarray(vy, {5});
  Array w = kiln::where(cond, x, y);
  REQUIRE(w.shape() == Shape{3, 4, 5});
  auto got = w.to_vector<double>();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 5; ++k) CHECK(got[(i * 4 + j) * 5 + k] == (conds[i] ? vx[j] : vy[k]));
  // A scalar operand does not change the shape; a 0-d array neither.
  CHECK(kiln::where(cond, 1.0, y).shape() == Shape{3, 1, 5});
  Array zero_d = kiln::asarray(std::vector<double>{7}, Shape{});
  CHECK(kiln::where(cond, zero_d, 2.0).shape() == Shape{3, 1, 1});
  // clip with array bounds of other shapes.
  Array lo = kiln::asarray<double>({1, 2}),
        hi = kiln::asarray(std::vector<double>{2, 3, 4}, {3, 1});
  Array c = kiln::clip(kiln::asarray<double>({0, 5}), lo, hi);
  REQUIRE(c.shape() == Shape{3, 2});
  CHECK(c.to_vector<double>() == std::vector<double>{1, 2, 1, 3, 1, 4});
  std::string msg = shape_error([&] { return kiln::where(cond, x, kiln::zeros({2, 1, 1})); });
  CHECK(mentions(msg, {2, 1, 1}));
  CHECK_THROWS_AS(kiln::clip(kiln::zeros({4}), lo, 1.0), kiln::ShapeError);
}

TEST_CASE("rank 0 arrays broadcast with everything, including empty arrays") {
  Array s = kiln::asarray(std::vector<int64_t>{5}, Shape{});
  CHECK((s + s).shape() == Shape{});
  CHECK((s + s).item<int64_t>() == 10);
  CHECK((s * kiln::arange(3)).to_vector<int64_t>() == std::vector<int64_t>{0, 5, 10});
  CHECK((kiln::zeros({0, 2}, DType::Int64) + s).shape() == Shape{0, 2});
  CHECK((s - kiln::zeros({0}, DType::Int64)).to_vector<int64_t>().empty());
  CHECK(s.broadcast_to({2, 0}).shape() == Shape{2, 0});
  CHECK((s > 4).item<bool>());
}

TEST_CASE("zero-size dimensions: 0 with 1 gives 0, 0 with n>1 is an error") {
  Array z = kiln::zeros({0, 3});
  CHECK((z + kiln::ones({1, 3})).shape() == Shape{0, 3});
  CHECK((z + kiln::ones({3})).shape() == Shape{0, 3});
  CHECK((kiln::zeros({2, 0}) * kiln::ones({2, 1})).shape() == Shape{2, 0});
  CHECK((kiln::zeros({4, 1, 0}) + kiln::ones({5, 1})).shape() == Shape{4, 5, 0});
  CHECK(kiln::sum(z + 1).item<double>() == 0);
  std::string msg = shape_error([&] { return z + kiln::ones({2, 3}); });
  CHECK(mentions(msg, {0, 3}));
  CHECK(mentions(msg, {2, 3}));
  CHECK_THROWS_AS(kiln::zeros({0}) + kiln::ones({2}), kiln::ShapeError);
}

TEST_CASE("rank 8 is the limit; rank 9 is a ShapeError everywhere a shape is made") {
  const Shape a8 = {2, 1, 2, 1, 2, 1, 2, 1}, b8 = {1, 2, 1, 2, 1, 2, 1, 2};
  auto va = values_for(a8, 0), vb = values_for(b8, 0);
  Array a = kiln::asarray(va, a8), b = kiln::asarray(vb, b8);
  Array r = a * 100 + b;
  const Shape r8(8, 2);
  REQUIRE(r.shape() == r8);
  auto got = r.to_vector<double>();
  int bad = 0;
  for (int64_t j = 0; j < 256; ++j) {
    auto c = coords(j, r8);
    bad += got[j] != read_broadcast(va, a8, c) * 100 + read_broadcast(vb, b8, c);
  }
  CHECK(bad == 0);
  // A rank-8 transpose, slice and reduction of the broadcast result.
  Array t = r.T()(kiln::Slice(std::nullopt, std::nullopt, -1));
  CHECK(t.shape() == r8);
  CHECK(kiln::sum(t).item<double>() == doctest::Approx(kiln::sum(r).item<double>()));
  CHECK(kiln::sum(r, {0, 2, 4, 6}).shape() == Shape{2, 2, 2, 2});
  // Lower ranks broadcast against rank 8.
  CHECK((r + kiln::ones({2})).shape() == r8);
  CHECK((kiln::ones({2, 1, 2}) + r).shape() == r8);

  const Shape s9(9, 1);
  std::vector<double> one = {1};
  CHECK_THROWS_AS(kiln::asarray(one, s9), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::zeros(s9), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::full(s9, 1.0), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::ones({1}).reshape(s9), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::ones({1}).broadcast_to(s9), kiln::ShapeError);
  CHECK_THROWS_AS(r.broadcast_to({1, 2, 2, 2, 2, 2, 2, 2, 2}), kiln::ShapeError);
  std::string msg = shape_error([&] { return kiln::zeros(s9); });
  CHECK(msg.find('8') != std::string::npos);  // says what the limit is
}

TEST_CASE("broadcasting large operands across many parts") {
  const int64_t n = 1500;
  Array col = kiln::arange(0, n, 1, DType::Float64).reshape({n, 1});
  Array row = kiln::arange(0, n, 1, DType::Float64).reshape({1, n});
  Array p = col * row;  // 2.25 million elements, every part reading both operands with stride 0
  const double s = static_cast<double>(n) * (n - 1) / 2;
  CHECK(kiln::sum(p).item<double>() == s * s);
  auto v = (col - row).to_vector<double>();
  REQUIRE(v.size() == static_cast<size_t>(n * n));
  bool ok = true;
  for (int64_t i = 0; i < n; i += 7)
    for (int64_t j = 0; j < n; j += 11) ok &= v[i * n + j] == static_cast<double>(i - j);
  CHECK(ok);
}
