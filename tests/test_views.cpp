// Views (reshape, transpose, slicing, integer indexing, broadcast_to), alone, composed with each
// other and with elementwise operations, against a strided reference written here with explicit
// index arithmetic. What Python slicing selects comes from tests/data/views_slices.txt, written
// by tests/data/make_views_fixtures.py with NumPy 1.24.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <kiln/kiln.hpp>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "plan/planner.hpp"

namespace {

using kiln::Array;
using kiln::DType;
using kiln::Index;
using kiln::Shape;
using kiln::Slice;
using std::nullopt;
using Opt = std::optional<int64_t>;

// ---- the reference: a strided view over a vector -------------------------------------------
struct Ref {
  std::shared_ptr<const std::vector<double>> data;
  Shape shape;
  std::vector<int64_t> strides;
  int64_t offset = 0;

  static Ref dense(std::vector<double> v, Shape s) {
    std::vector<int64_t> st(s.size());
    int64_t acc = 1;
    for (size_t i = s.size(); i-- > 0;) {
      st[i] = acc;
      acc *= s[i];
    }
    return {std::make_shared<const std::vector<double>>(std::move(v)), std::move(s), st, 0};
  }
  int64_t size() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  // The elements in row-major order: flat index -> coordinates -> memory offset.
  std::vector<double> values() const {
    std::vector<double> out;
    for (int64_t j = 0; j < size(); ++j) {
      int64_t rem = j, off = offset;
      for (size_t d = shape.size(); d-- > 0;) {
        off += (rem % shape[d]) * strides[d];
        rem /= shape[d];
      }
      out.push_back((*data)[off]);
    }
    return out;
  }
  Ref reshape(Shape s) const {  // row-major reinterpretation; one -1 is inferred
    int64_t known = 1;
    for (int64_t d : s)
      if (d != -1) known *= d;
    for (auto& d : s)
      if (d == -1) d = size() / known;
    return dense(values(), s);
  }
  Ref transpose(const std::vector<int>& axes) const {
    Ref r = *this;
    for (size_t i = 0; i < axes.size(); ++i) {
      size_t a = axes[i] < 0 ? axes[i] + shape.size() : axes[i];
      r.shape[i] = shape[a];
      r.strides[i] = strides[a];
    }
    return r;
  }
  // Python's slice semantics (CPython's PySlice_AdjustIndices), written out again here.
  Ref slice(size_t axis, Opt start, Opt stop, int64_t step) const {
    int64_t n = shape[axis];
    int64_t lower = step > 0 ? 0 : -1, upper = step > 0 ? n : n - 1;
    auto adjust = [&](Opt v, int64_t dflt) {
      if (!v) return dflt;
      int64_t x = *v;
      if (x < 0) {
        x += n;
        if (x < lower) x = lower;
      } else if (x > upper) {
        x = upper;
      }
      return x;
    };
    int64_t b = adjust(start, step > 0 ? lower : upper), e = adjust(stop, step > 0 ? upper : lower);
    int64_t len =
        step > 0 ? (b < e ? (e - b - 1) / step + 1 : 0) : (e < b ? (b - e - 1) / -step + 1 : 0);
    Ref r = *this;
    if (len > 0) r.offset += b * strides[axis];
    r.shape[axis] = len;
    r.strides[axis] = strides[axis] * step;
    return r;
  }
  Ref take(size_t axis, int64_t i) const {  // an integer index: drops the axis
    if (i < 0) i += shape[axis];
    Ref r = *this;
    r.offset += i * strides[axis];
    r.shape.erase(r.shape.begin() + axis);
    r.strides.erase(r.strides.begin() + axis);
    return r;
  }
  Ref broadcast_to(const Shape& s) const {
    Ref r = *this;
    size_t lead = s.size() - shape.size();
    r.shape = s;
    r.strides.assign(s.size(), 0);
    for (size_t i = 0; i < shape.size(); ++i)
      r.strides[lead + i] = shape[i] == s[lead + i] ? strides[i] : 0;
    return r;
  }
};

std::vector<double> iota_values(int64_t n, double scale = 1) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>(i) * scale + 0.5;
  return v;
}

// x and its reference, built together.
struct Pair {
  Array a;
  Ref r;
};

Pair pair_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  auto v = iota_values(n);
  return {kiln::asarray(v, s), Ref::dense(v, s)};
}

std::string join(const std::vector<double>& v) {
  std::ostringstream os;
  for (size_t i = 0; i < v.size() && i < 40; ++i) os << (i ? " " : "") << v[i];
  if (v.size() > 40) os << " ...";
  return os.str();
}

void check_same(const Array& a, const Ref& r) {
  REQUIRE(a.shape() == r.shape);
  auto got = a.to_vector<double>(), want = r.values();
  INFO("got  " << join(got));
  INFO("want " << join(want));
  CHECK(got == want);
}

std::vector<Index> whole(size_t nd) { return std::vector<Index>(nd, Index(Slice())); }

std::string show(const Shape& s) { return kiln::shape_str(s); }

// ---- a deterministic random generator for view chains -------------------------------------
struct Lcg {
  uint64_t s;
  uint64_t next() {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return s >> 33;
  }
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
};

Opt random_bound(Lcg& g, int64_t n) {
  switch (g.below(8)) {
    case 0:
    case 1:
      return nullopt;
    case 2:
      return g.below(2) ? -n - 3 : n + 2;  // out of range: clamped
    case 3:
      return -1 - g.below(std::max<int64_t>(n, 1));
    default:
      return g.below(n + 1);
  }
}

// Divisors of n (n > 0).
std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> d;
  for (int64_t k = 1; k <= n; ++k)
    if (n % k == 0) d.push_back(k);
  return d;
}

// One random view or elementwise step applied to both kiln and the reference.
std::string random_step(Lcg& g, Pair& p) {
  const Shape& s = p.r.shape;
  const size_t nd = s.size();
  switch (g.below(8)) {
    case 0: {  // transpose: a random permutation, sometimes the default
      if (g.below(3) == 0) {
        std::vector<int> rev(nd);
        std::iota(rev.rbegin(), rev.rend(), 0);
        p = {p.a.T(), p.r.transpose(rev)};
        return "T()";
      }
      std::vector<int> perm(nd);
      std::iota(perm.begin(), perm.end(), 0);
      for (size_t i = nd; i > 1; --i)
        std::swap(perm[i - 1], perm[g.below(static_cast<int64_t>(i))]);
      if (nd > 0 && g.below(2)) perm[0] -= static_cast<int>(nd);  // a negative axis
      p = {p.a.transpose(perm), p.r.transpose(perm)};
      return "transpose";
    }
    case 1:
    case 2: {  // a slice on every axis
      auto idx = whole(nd);
      Ref r = p.r;
      for (size_t ax = 0; ax < nd; ++ax) {
        if (g.below(2)) continue;
        static const int64_t steps[] = {1, 2, 3, -1, -2};
        int64_t step = steps[g.below(5)];
        Opt b = random_bound(g, s[ax]), e = random_bound(g, s[ax]);
        if (b && e && (*b < 0) == (*e < 0) && (*e - *b) * step < 0) std::swap(b, e);
        idx[ax] = Slice(b, e, step);
        r = r.slice(ax, b, e, step);
      }
      p = {p.a.index(idx), r};
      return "slice";
    }
    case 3: {  // an integer index drops an axis
      if (nd < 2) return "";
      size_t ax = g.below(static_cast<int64_t>(nd));
      if (s[ax] == 0) return "";
      int64_t i = g.below(s[ax]);
      if (g.below(2)) i -= s[ax];  // negative index
      auto idx = whole(ax + 1);
      idx[ax] = i;
      p = {p.a.index(idx), p.r.take(ax, i)};
      return "index";
    }
    case 4: {  // reshape: merge two neighbouring axes, split one, or flatten with -1
      Shape to = s;
      int64_t kind = g.below(3);
      if (kind == 0 && nd >= 2) {
        size_t ax = g.below(static_cast<int64_t>(nd - 1));
        to[ax] *= to[ax + 1];
        to.erase(to.begin() + ax + 1);
        if (g.below(2)) to[g.below(static_cast<int64_t>(to.size()))] = -1;
      } else if (kind == 1 && nd >= 1 && nd < 7) {
        size_t ax = g.below(static_cast<int64_t>(nd));
        if (s[ax] == 0) return "";
        auto ds = divisors(s[ax]);
        int64_t k = ds[g.below(static_cast<int64_t>(ds.size()))];
        to[ax] = s[ax] / k;
        to.insert(to.begin() + ax + 1, g.below(2) ? -1 : k);
      } else {
        to = {-1};
      }
      if (to.size() > 1 && std::count(to.begin(), to.end(), 0) > 0 &&
          std::count(to.begin(), to.end(), -1) > 0)
        return "";  // -1 with a zero dimension is ambiguous (an error, tested elsewhere)
      p = {p.a.reshape(to), p.r.reshape(to)};
      return "reshape " + show(to);
    }
    case 5: {  // broadcast: a new leading axis, or a size-1 axis stretched
      if (nd >= 7 || p.r.size() > 2000) return "";
      Shape to = s;
      auto one = std::find(to.begin(), to.end(), 1);
      if (one != to.end() && g.below(2))
        *one = 3;
      else
        to.insert(to.begin(), 2);
      p = {p.a.broadcast_to(to), p.r.broadcast_to(to)};
      return "broadcast_to " + show(to);
    }
    case 6: {  // elementwise on the view: exact in float64
      std::vector<double> v = p.r.values();
      for (double& x : v) x = x * 2 - 1;
      p = {p.a * 2 - 1, Ref::dense(v, s)};
      return "x*2-1";
    }
    default: {  // the view combined with its own reversal along axis 0
      if (nd == 0) return "";
      auto idx = whole(1);
      idx[0] = Slice(nullopt, nullopt, -1);
      Ref rev = p.r.slice(0, nullopt, nullopt, -1);
      std::vector<double> x = p.r.values(), y = rev.values();
      for (size_t i = 0; i < x.size(); ++i) x[i] = x[i] + 3 * y[i];
      p = {p.a + p.a.index(idx) * 3, Ref::dense(x, s)};
      return "x+3*x[::-1]";
    }
  }
}

struct SliceCase {
  int64_t n;
  Opt start, stop;
  std::optional<int64_t> step;
  int64_t count, first;
};

std::vector<SliceCase> read_slices() {
  std::ifstream in(std::string(KILN_TEST_DATA) + "/views_slices.txt");
  REQUIRE_MESSAGE(in.good(), "missing tests/data/views_slices.txt; run make_views_fixtures.py");
  auto opt = [](const std::string& s) -> Opt {
    if (s == "none") return nullopt;
    return std::stoll(s);
  };
  std::vector<SliceCase> out;
  std::string b, e, st;
  SliceCase c{};
  while (in >> c.n >> b >> e >> st >> c.count >> c.first) {
    c.start = opt(b);
    c.stop = opt(e);
    c.step = opt(st);
    out.push_back(c);
  }
  return out;
}

}  // namespace

TEST_CASE("slicing selects what NumPy selects, out-of-range bounds clamped") {
  auto cases = read_slices();
  REQUIRE(cases.size() == 960);
  int nonempty = 0;
  for (const auto& c : cases) {
    int64_t step = c.step.value_or(1);
    INFO("n=" << c.n << " start=" << (c.start ? std::to_string(*c.start) : "none")
              << " stop=" << (c.stop ? std::to_string(*c.stop) : "none") << " step=" << step);
    std::vector<int64_t> want;
    for (int64_t k = 0; k < c.count; ++k) want.push_back(c.first + k * step);
    Slice sl(c.start, c.stop, step);
    if (!c.step) sl = Slice(c.start, c.stop);  // the default step
    // 1-d.
    Array a = kiln::arange(c.n);
    Array v = a(sl);
    REQUIRE(v.shape() == Shape{c.count});
    CHECK(v.to_vector<int64_t>() == want);
    // The same slice on the middle axis of a 3-d array, from memory, and fused with an op.
    auto p = pair_of({2, c.n, 3});
    Array m = p.a(Slice(), sl);
    check_same(m, p.r.slice(1, c.start, c.stop, step));
    auto plus = (p.a(1, sl, Slice(nullopt, nullopt, -1)) + 1).to_vector<double>();
    auto ref =
        p.r.take(0, 1).slice(0, c.start, c.stop, step).slice(1, nullopt, nullopt, -1).values();
    for (double& x : ref) x += 1;
    CHECK(plus == ref);
    nonempty += c.count > 0;
  }
  CHECK(nonempty > 200);
}

TEST_CASE("slicing errors and integer indices") {
  auto p = pair_of({3, 4, 5});
  CHECK_THROWS_AS(p.a(Slice(0, 2, 0)), kiln::ShapeError);
  CHECK_THROWS_AS(p.a(3), kiln::ShapeError);
  CHECK_THROWS_AS(p.a(-4), kiln::ShapeError);
  CHECK_THROWS_AS(p.a(0, 4), kiln::ShapeError);
  CHECK_THROWS_AS(p.a(0, 0, 0, 0), kiln::ShapeError);  // too many indices
  try {
    p.a(Slice(), 7);
    FAIL("no exception");
  } catch (const kiln::ShapeError& e) {
    std::string msg = e.what();
    CHECK(msg.find("7") != std::string::npos);
    CHECK(msg.find("axis 1") != std::string::npos);
  }
  // Integers drop their axis; negative integers count from the end; missing trailing axes
  // are whole.
  check_same(p.a(1), p.r.take(0, 1));
  check_same(p.a(-1, 2), p.r.take(0, 2).take(0, 2));
  check_same(p.a(Slice(), -1), p.r.take(1, 3));
  check_same(p.a(2, Slice(1, nullopt, 2), -5), p.r.take(0, 2).slice(0, 1, nullopt, 2).take(1, 0));
  Array scalar = p.a(1, 2, 3);
  CHECK(scalar.shape() == Shape{});
  CHECK(scalar.item<double>() == (1 * 20 + 2 * 5 + 3) + 0.5);
  CHECK(p.a().shape() == Shape{3, 4, 5});
  // Slices of size 0 are fine, and further slicing of them too.
  Array empty = p.a(Slice(2, 1));
  CHECK(empty.shape() == Shape{0, 4, 5});
  CHECK(empty(Slice(nullopt, nullopt, -1), 1).shape() == Shape{0, 5});
  CHECK(empty.to_vector<double>().empty());
}

TEST_CASE("reshape: values, -1, errors") {
  auto p = pair_of({2, 3, 4});
  check_same(p.a.reshape({6, 4}), p.r.reshape({6, 4}));
  check_same(p.a.reshape({-1}), p.r.reshape({24}));
  check_same(p.a.reshape({4, -1}), p.r.reshape({4, 6}));
  check_same(p.a.reshape({1, 2, 1, -1, 3, 1}), p.r.reshape({1, 2, 1, 4, 3, 1}));
  CHECK(p.a.reshape({-1, 4}).shape() == Shape{6, 4});
  CHECK(p.a.reshape({2, 3, 4}).node() == p.a.node());  // same shape: the same array
  CHECK(kiln::asarray(std::vector<double>{7}, Shape{}).reshape({1, 1}).shape() == Shape{1, 1});
  CHECK(kiln::arange(1).reshape({}).shape() == Shape{});
  // Empty arrays.
  CHECK(kiln::zeros({0, 3}).reshape({-1}).shape() == Shape{0});
  CHECK(kiln::zeros({0, 3}).reshape({3, -1}).shape() == Shape{3, 0});
  CHECK(kiln::zeros({0, 3}).reshape({5, 0, 7}).shape() == Shape{5, 0, 7});
  // Errors, each a ShapeError.
  CHECK_THROWS_AS(p.a.reshape({5, 5}), kiln::ShapeError);
  CHECK_THROWS_AS(p.a.reshape({-1, -1}), kiln::ShapeError);
  CHECK_THROWS_AS(p.a.reshape({-1, 5}), kiln::ShapeError);
  CHECK_THROWS_AS(p.a.reshape({-2, -12}), kiln::ShapeError);
  CHECK_THROWS_AS(p.a.reshape({-1, 0}), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::zeros({0, 3}).reshape({0, -1}), kiln::ShapeError);
  CHECK_THROWS_AS(p.a.reshape({1, 1, 1, 1, 1, 1, 2, 3, 4}), kiln::ShapeError);  // rank 9
  try {
    p.a.reshape({5, 5});
    FAIL("no exception");
  } catch (const kiln::ShapeError& e) {
    std::string msg = e.what();
    CHECK(msg.find("24") != std::string::npos);
    CHECK(msg.find("(5, 5)") != std::string::npos);
  }
}

TEST_CASE("transpose and T(): values, axes, errors") {
  auto p = pair_of({2, 3, 4});
  check_same(p.a.transpose(), p.r.transpose({2, 1, 0}));
  check_same(p.a.T(), p.r.transpose({2, 1, 0}));
  check_same(p.a.transpose({1, 0, 2}), p.r.transpose({1, 0, 2}));
  check_same(p.a.transpose({-1, 0, -2}), p.r.transpose({2, 0, 1}));
  check_same(p.a.transpose({2, 0, 1}).transpose({2, 0, 1}), p.r.transpose({1, 2, 0}));
  CHECK(p.a.transpose({0, 1, 2}).node() == p.a.node());
  CHECK(p.a.T().T().to_vector<double>() == p.r.values());
  auto v = pair_of({5});
  CHECK(v.a.T().to_vector<double>() == v.r.values());
  Array s = kiln::asarray(std::vector<double>{3}, Shape{});
  CHECK(s.T().shape() == Shape{});
  CHECK(s.T().item<double>() == 3);
  CHECK_THROWS_AS(p.a.transpose({0, 1}), kiln::ShapeError);
  CHECK_THROWS_AS(p.a.transpose({0, 1, 2, 3}), kiln::ShapeError);
  CHECK_THROWS_AS(p.a.transpose({0, 0, 1}), kiln::ShapeError);
  CHECK_THROWS_AS(p.a.transpose({0, -3, 1}), kiln::ShapeError);  // -3 is axis 0 again
  CHECK_THROWS_AS(p.a.transpose({0, 1, 3}), kiln::ShapeError);
  CHECK_THROWS_AS(p.a.transpose({-4, 1, 2}), kiln::ShapeError);
}

TEST_CASE("broadcast_to: values, zero-size, errors naming both shapes") {
  auto v = pair_of({3});
  check_same(v.a.broadcast_to({2, 3}), v.r.broadcast_to({2, 3}));
  check_same(v.a.broadcast_to({2, 1, 3}), v.r.broadcast_to({2, 1, 3}));
  auto c = pair_of({3, 1});
  check_same(c.a.broadcast_to({2, 3, 4}), c.r.broadcast_to({2, 3, 4}));
  check_same(c.a.broadcast_to({3, 4}).T(), c.r.broadcast_to({3, 4}).transpose({1, 0}));
  Array s = kiln::asarray(std::vector<double>{1.5}, Shape{});
  CHECK(s.broadcast_to({2, 2}).to_vector<double>() == std::vector<double>(4, 1.5));
  CHECK(c.a.broadcast_to({3, 0}).shape() == Shape{3, 0});
  CHECK(c.a.broadcast_to({3, 0}).to_vector<double>().empty());
  CHECK(c.a.broadcast_to({3, 1}).node() == c.a.node());
  CHECK_THROWS_AS(v.a.broadcast_to({4}), kiln::ShapeError);
  CHECK_THROWS_AS(v.a.broadcast_to({0}), kiln::ShapeError);
  CHECK_THROWS_AS(c.a.broadcast_to({3}), kiln::ShapeError);  // fewer dimensions
  CHECK_THROWS_AS(v.a.broadcast_to({1, 1, 1, 1, 1, 1, 1, 1, 3}), kiln::ShapeError);  // rank 9
  CHECK_THROWS_AS(v.a.broadcast_to({-1, 3}), kiln::ShapeError);
  try {
    v.a.broadcast_to({2, 4});
    FAIL("no exception");
  } catch (const kiln::ShapeError& e) {
    std::string msg = e.what();
    CHECK(msg.find("(3,)") != std::string::npos);
    CHECK(msg.find("(2, 4)") != std::string::npos);
  }
}

TEST_CASE("views composed with each other and with elementwise operations") {
  // x[i][j][k] = 24i + 4j + k + 0.5 ... built from a reshape of a 1-d array.
  auto flat = pair_of({24});
  Array x = flat.a.reshape({2, 3, 4});
  auto at = [](int64_t i, int64_t j, int64_t k) { return 12.0 * i + 4.0 * j + k + 0.5; };

  SUBCASE("transpose of a slice of a reshape") {
    Array v = x(Slice(nullopt, nullopt, -1), Slice(1, nullopt), Slice(nullopt, nullopt, 2)).T();
    REQUIRE(v.shape() == Shape{2, 2, 2});  // [k'][j'][i'] = x[1 - i'][1 + j'][2k']
    auto got = v.to_vector<double>();
    for (int k = 0; k < 2; ++k)
      for (int j = 0; j < 2; ++j)
        for (int i = 0; i < 2; ++i) CHECK(got[(k * 2 + j) * 2 + i] == at(1 - i, 1 + j, 2 * k));
  }
  SUBCASE("different views of one array in one expression") {
    // y[a][b] = 10 * x[1 - ... ]: x.transpose(2,0,1)[::-1, 1] is (4,3): [a][b] = x[1][b][3-a]
    // x[0].T() is (4,3): [a][b] = x[0][b][a]
    Array y = x.transpose({2, 0, 1})(Slice(nullopt, nullopt, -1), 1) * 10 + x(0).T();
    REQUIRE(y.shape() == Shape{4, 3});
    auto got = y.to_vector<double>();
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 3; ++b) CHECK(got[a * 3 + b] == 10 * at(1, b, 3 - a) + at(0, b, a));
  }
  SUBCASE("views of elementwise results") {
    Array e = (x * 2 + 1).transpose({1, 2, 0})(Slice(nullopt, nullopt, 2), -1);  // (2, 2)
    REQUIRE(e.shape() == Shape{2, 2});
    auto got = e.to_vector<double>();
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < 2; ++i) CHECK(got[j * 2 + i] == 2 * at(i, 2 * j, 3) + 1);
  }
  SUBCASE("a broadcast row added to a transposed slice") {
    Array row = flat.a(Slice(0, 3));  // 0.5 1.5 2.5, broadcast along 4 rows
    Array z = x(1).T() - row;         // (4, 3): [k][j] = x[1][j][k] - row[j]
    auto got = z.to_vector<double>();
    for (int k = 0; k < 4; ++k)
      for (int j = 0; j < 3; ++j) CHECK(got[k * 3 + j] == at(1, j, k) - (j + 0.5));
  }
}

TEST_CASE("reshape of non-contiguous views materialises, with the right values") {
  auto p = pair_of({3, 4});
  check_same(p.a.T().reshape({-1}), p.r.transpose({1, 0}).reshape({12}));
  check_same(p.a.T().reshape({2, 6}), p.r.transpose({1, 0}).reshape({2, 6}));
  check_same(p.a(Slice(), Slice(nullopt, nullopt, 2)).reshape({6}),
             p.r.slice(1, nullopt, nullopt, 2).reshape({6}));
  check_same(p.a(Slice(nullopt, nullopt, -1)).reshape({4, 3}),
             p.r.slice(0, nullopt, nullopt, -1).reshape({4, 3}));
  check_same(p.a(1).broadcast_to({2, 4}).reshape({8}),
             p.r.take(0, 1).broadcast_to({2, 4}).reshape({8}));
  check_same((p.a.T() * 3).reshape({6, 2}).T(), Ref::dense(
                                                    [&] {
                                                      auto v = p.r.transpose({1, 0}).values();
                                                      for (double& x : v) x *= 3;
                                                      return v;
                                                    }(),
                                                    {6, 2})
                                                    .transpose({1, 0}));
  // The same on a lazy arange (an Iota leaf), which has no memory until materialised.
  Array ar = kiln::arange(12).reshape({3, 4});
  CHECK(ar.T().reshape({-1}).to_vector<int64_t>() ==
        std::vector<int64_t>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  CHECK(ar(Slice(nullopt, nullopt, -2), Slice(1, nullopt, 2)).reshape({4}).to_vector<int64_t>() ==
        std::vector<int64_t>{9, 11, 1, 3});
  // Views that stay views: splitting a contiguous axis of a slice.
  check_same(p.a(Slice(1, 3)).reshape({2, 2, 2}), p.r.slice(0, 1, 3, 1).reshape({2, 2, 2}));
  // A square transpose flattened and reshaped back to its own shape: the second reshape's
  // group must read the first from memory (a planner regression: this used to loop forever).
  auto q = pair_of({3, 3});
  Array b = q.a.T().reshape({9}).reshape({3, 3});
  check_same(b, q.r.transpose({1, 0}).reshape({9}).reshape({3, 3}));
  Array t = (q.a + 1).T();
  Array b2 = t.reshape({9}).reshape({3, 3});
  kiln::eval({t, b2});
  auto tv = q.r.transpose({1, 0}).values();
  for (double& x : tv) x += 1;
  CHECK(t.to_vector<double>() == tv);
  CHECK(b2.to_vector<double>() == tv);
}

TEST_CASE("views are index maps: composed into one strided access, no copy step") {
  auto p = pair_of({3, 4});
  Array v = p.a.T()(Slice(nullopt, nullopt, -1)) + 1;  // [i][j] = a[j][3 - i] + 1
  auto plan = kiln::plan::make_plan({v.node()});
  REQUIRE(plan.steps.size() == 1);
  auto* k = std::get_if<kiln::plan::KernelStep>(&plan.steps[0]);
  REQUIRE(k != nullptr);
  REQUIRE(k->group.accesses.size() == 1);
  CHECK(k->group.accesses[0].offset == 3);
  CHECK(k->group.accesses[0].strides == std::vector<int64_t>{-1, 4});
  // A broadcast reads with stride 0.
  Array b = p.a(1).broadcast_to({2, 4}) * 2;
  auto plan_b = kiln::plan::make_plan({b.node()});
  REQUIRE(plan_b.steps.size() == 1);
  k = std::get_if<kiln::plan::KernelStep>(&plan_b.steps[0]);
  REQUIRE(k != nullptr);
  CHECK(k->group.accesses[0].offset == 4);
  CHECK(k->group.accesses[0].strides == std::vector<int64_t>{0, 1});
}

TEST_CASE("random chains of views and elementwise operations match the reference") {
  Lcg g{12345};
  const Shape starts[] = {{2, 3, 4}, {6, 5}, {4, 1, 3, 2}, {60}, {3, 0, 2}, {1, 1, 5, 1}};
  int chains = 0, steps = 0, nonempty = 0;
  for (int c = 0; c < 400; ++c) {
    auto p = pair_of(starts[c % 6]);
    std::string trail = show(p.r.shape);
    const int len = 1 + static_cast<int>(g.below(7));
    for (int k = 0; k < len; ++k) {
      std::string what = random_step(g, p);
      if (what.empty()) continue;
      trail += " -> " + what + " " + show(p.r.shape);
      ++steps;
      if (g.below(5) == 0) p.a.eval();  // sometimes continue from an evaluated result
    }
    INFO("chain " << c << ": " << trail);
    check_same(p.a, p.r);
    ++chains;
    nonempty += p.r.size() > 0;
  }
  CHECK(chains == 400);
  CHECK(steps > 1000);
  CHECK(nonempty > 200);
}

TEST_CASE("newaxis, ellipsis, _ and NumPy's slice text select what NumPy selects") {
  using kiln::_;
  using kiln::ellipsis;
  using kiln::newaxis;
  Array x = kiln::arange(24).reshape({2, 3, 4});  // x[i, j, k] = 12 i + 4 j + k
  CHECK(x(newaxis).shape() == Shape{1, 2, 3, 4});
  CHECK(x(ellipsis, newaxis).shape() == Shape{2, 3, 4, 1});
  Array a = x(_, newaxis, 1);  // x[:, None, 1]
  CHECK(a.shape() == Shape{2, 1, 4});
  CHECK(a.to_vector<int64_t>() == std::vector<int64_t>{4, 5, 6, 7, 16, 17, 18, 19});
  Array b = x(ellipsis, 0);  // x[..., 0]
  CHECK(b.shape() == Shape{2, 3});
  CHECK(b.to_vector<int64_t>() == std::vector<int64_t>{0, 4, 8, 12, 16, 20});
  CHECK(x(0, ellipsis).shape() == Shape{3, 4});
  CHECK(x(1, ellipsis, 2).to_vector<int64_t>() == std::vector<int64_t>{14, 18, 22});
  Array c = x("1:", "::2", -1);  // x[1:, ::2, -1]
  CHECK(c.shape() == Shape{1, 2});
  CHECK(c.to_vector<int64_t>() == std::vector<int64_t>{15, 23});
  Array d = x(_, "::-1", 0);  // x[:, ::-1, 0]
  CHECK(d.to_vector<int64_t>() == std::vector<int64_t>{8, 4, 0, 20, 16, 12});
  CHECK(x(_, " 1 : -1 ").shape() == Shape{2, 1, 4});  // spaces as Python allows
  CHECK((x(_, "0:2", newaxis) * 2).shape() == Shape{2, 2, 1, 4});
  // Bad input says what NumPy's syntax is.
  CHECK_THROWS_WITH_AS(x(ellipsis, 0, ellipsis), doctest::Contains("single ellipsis"),
                       kiln::ShapeError);
  CHECK_THROWS_WITH_AS(x(ellipsis, 0, 0, 0, 0), doctest::Contains("too many indices"),
                       kiln::ShapeError);
  CHECK_THROWS_WITH_AS(x("1:2:3:4"), doctest::Contains("start:stop:step"), kiln::ShapeError);
  CHECK_THROWS_AS(x("a:b"), kiln::ShapeError);
  CHECK_THROWS_AS(x("5"), kiln::ShapeError);  // an integer index is an integer, not text
  CHECK_THROWS_AS(x("1:2x"), kiln::ShapeError);
}
