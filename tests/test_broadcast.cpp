// Broadcasting: every pair from a set of shapes (size-1 dims, rank mismatch, zero-size dims,
// rank 0), rank 8 (the limit) and rank 9 (an error), and incompatible shapes, whose ShapeError
// names both shapes. Expected values come from index arithmetic written here.
#include <doctest/doctest.h>

#include <cstdint>
#include <kiln/kiln.hpp>
#include <optional>
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

// NumPy's rule, restated: align on the right; each pair of dimensions must match or one be 1.
std::optional<Shape> ref_broadcast(const std::vector<Shape>& shapes) {
  size_t nd = 0;
  for (const auto& s : shapes) nd = std::max(nd, s.size());
  Shape out(nd, 1);
  for (const auto& s : shapes)
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[nd - s.size() + i];
      if (s[i] == o || s[i] == 1) continue;
      if (o != 1) return std::nullopt;
      o = s[i];
    }
  return out;
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

const std::vector<Shape> kShapes = {{},     {1},       {3},       {1, 3},       {2, 1},
                                    {2, 3}, {4, 2, 3}, {4, 1, 1}, {1, 2, 1},    {0},
                                    {0, 3}, {2, 0, 1}, {1, 0},    {3, 1, 2, 1}, {5, 1, 1, 3}};

}  // namespace

TEST_CASE("every pair of shapes: broadcast result as NumPy, or a ShapeError naming both") {
  int ok = 0, errors = 0;
  for (const Shape& sa : kShapes)
    for (const Shape& sb : kShapes) {
      INFO("shapes " << kiln::shape_str(sa) << " and " << kiln::shape_str(sb));
      auto va = values_for(sa, 0.5), vb = values_for(sb, 1000);
      Array a = kiln::asarray(va, sa), b = kiln::asarray(vb, sb);
      auto want_shape = ref_broadcast({sa, sb});
      if (!want_shape) {
        std::string msg = shape_error([&] { return a * 10 + b; });
        CHECK(mentions(msg, sa));
        CHECK(mentions(msg, sb));
        msg = shape_error([&] { return b < a; });
        CHECK(mentions(msg, sa));
        CHECK(mentions(msg, sb));
        CHECK_THROWS_AS(kiln::maximum(a, b), kiln::ShapeError);
        CHECK_THROWS_AS(a.broadcast_to(sb), kiln::ShapeError);
        ++errors;
        continue;
      }
      Array r = a * 10 + b;
      REQUIRE(r.shape() == *want_shape);
      auto got = r.to_vector<double>();
      REQUIRE(static_cast<int64_t>(got.size()) == size_of(*want_shape));
      int bad = 0;
      for (int64_t j = 0; j < size_of(*want_shape); ++j) {
        auto c = coords(j, *want_shape);
        bad += got[j] != read_broadcast(va, sa, c) * 10 + read_broadcast(vb, sb, c);
      }
      CHECK(bad == 0);
      // Symmetric, and comparisons and mixed dtypes broadcast the same way.
      CHECK((b + a * 10).to_vector<double>() == got);
      Array lt = a.astype(DType::Int32) < b.astype(DType::Float32);
      CHECK(lt.shape() == *want_shape);
      CHECK(kiln::all(lt).item<bool>());  // every a (< 1000) is below every b (>= 1000)
      // broadcast_to the common shape gives the same elements.
      CHECK((a.broadcast_to(*want_shape) * 10 + b.broadcast_to(*want_shape)).to_vector<double>() ==
            got);
      ++ok;
    }
  CHECK(ok > 100);
  CHECK(errors > 40);
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
