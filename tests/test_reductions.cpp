// Reductions against loops written here. NumPy's typing and shape rules (result dtype per input
// dtype, result shape or error per axis subset) come from tests/data/reductions_*.txt, written by
// tests/data/make_reductions_fixtures.py with NumPy 1.24.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <fstream>
#include <kiln/kiln.hpp>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "support/fixture_cases.hpp"

namespace {

using kiln::Array;
using kiln::DType;
using kiln::Shape;
using kiln::Slice;
using cd = std::complex<double>;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

enum class Op { Sum, Prod, Max, Min, Mean, ArgMax, ArgMin, Any, All };
const std::map<std::string, Op> kOps = {
    {"sum", Op::Sum},       {"prod", Op::Prod}, {"max", Op::Max},
    {"min", Op::Min},       {"mean", Op::Mean}, {"argmax", Op::ArgMax},
    {"argmin", Op::ArgMin}, {"any", Op::Any},   {"all", Op::All}};
// (The unsigned types, whose pattern values would wrap, have NumPy value fixtures of their own
// in tests/test_dtypes.cpp.)
// (float16 reduces in float32 and rounds once: the pattern's sums are exact in both, and the
// reference's means round to float16 within its tolerance.)
const DType kDTypes[] = {DType::Bool,    DType::Int8,       DType::Int16,
                         DType::Int32,   DType::Int64,      DType::Float32,
                         DType::Float64, DType::Complex128, DType::Float16};

bool is_arg(Op op) { return op == Op::ArgMax || op == Op::ArgMin; }

// Neumaier's compensated sum: within 2u of the exact sum (plus O(n u^2) sum|x|), whatever the
// order, so it is a reference that a wrongly ordered or lossy reduction cannot match by chance.
double compensated_sum(const std::vector<double>& v) {
  double s = 0, c = 0;
  for (double x : v) {
    double t = s + x;
    c += std::abs(s) >= std::abs(x) ? (s - t) + x : (x - t) + s;
    s = t;
  }
  return s + c;
}

// ---- inputs ------------------------------------------------------------------------------
// Small values whose sums and products are exact in every dtype (powers of 2 and 3), with
// zeros (for any/all and prod) and repeated extremes (ties for argmax/argmin).
double pattern(int64_t i) {
  static const double p[] = {1, -1, 2, 0, -2, 1, 3, -1};
  return p[(i * 5 + 3) % 8];
}

template <class T>
T value_as(int64_t i) {
  if constexpr (std::is_same_v<T, bool>)
    return pattern(i) != 0;
  else if constexpr (std::is_same_v<T, cd>)
    return cd(pattern(i), pattern(3 * i + 1));
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return {static_cast<float>(pattern(i)), static_cast<float>(pattern(3 * i + 1))};
  else
    return static_cast<T>(pattern(i));
}

// The pattern as a kiln array of dtype t (bool arrays from a plain buffer: std::vector<bool>
// has no data()).
Array make_input(DType t, const Shape& s) {
  int64_t n = kiln::shape_size(s);
  return kiln::visit_dtype(t, [&](auto z) {
    using T = decltype(z);
    std::unique_ptr<T[]> buf(new T[n ? n : 1]);
    for (int64_t i = 0; i < n; ++i) buf[i] = value_as<T>(i);
    return kiln::asarray(buf.get(), t, s);
  });
}

// ---- the reference: one pass over the input, row-major, with explicit index arithmetic ----
template <class W>
bool ref_isnan(W v) {
  if constexpr (std::is_same_v<W, cd>)
    return std::isnan(v.real()) || std::isnan(v.imag());
  else if constexpr (std::is_floating_point_v<W>)
    return std::isnan(v);
  else
    return false;
}
template <class W>
bool ref_less(W a, W b) {  // NumPy orders complex numbers lexicographically
  if constexpr (std::is_same_v<W, cd>)
    return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
  else
    return a < b;
}
template <class W>
W ref_add(W a, W b) {
  if constexpr (std::is_same_v<W, int64_t>)  // wraps, as NumPy
    return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  else if constexpr (std::is_same_v<W, bool>)
    return a || b;
  else
    return a + b;
}
template <class W>
W ref_mul(W a, W b) {
  if constexpr (std::is_same_v<W, int64_t>)
    return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  else if constexpr (std::is_same_v<W, bool>)
    return a && b;
  else
    return a * b;
}

template <class W>
struct RefResult {
  std::vector<W> value;
  std::vector<int64_t> index;  // argmax/argmin: position among the reduced elements
};

// Reduces x (row-major, `shape`) over `axes` (non-negative, any order). Results are in
// row-major order of the kept axes.
template <class W>
RefResult<W> ref_reduce(Op op, const std::vector<W>& x, const Shape& shape,
                        const std::vector<int>& axes) {
  const int nd = static_cast<int>(shape.size());
  std::vector<bool> reduced(nd, false);
  for (int a : axes) reduced[a] = true;
  int64_t outputs = 1, count = 1;
  for (int d = 0; d < nd; ++d) (reduced[d] ? count : outputs) *= shape[d];
  std::vector<W> acc(outputs, W{});
  std::vector<int64_t> index(outputs, 0);
  std::vector<bool> set(outputs, false);
  for (int64_t j = 0; j < static_cast<int64_t>(x.size()); ++j) {
    std::vector<int64_t> c(nd);
    for (int64_t d = nd - 1, rem = j; d >= 0; --d) {
      c[d] = rem % shape[d];
      rem /= shape[d];
    }
    int64_t o = 0, r = 0;
    for (int d = 0; d < nd; ++d) {
      if (reduced[d])
        r = r * shape[d] + c[d];
      else
        o = o * shape[d] + c[d];
    }
    const W v = x[j];
    if (!set[o]) {
      acc[o] = v, index[o] = r, set[o] = true;
      continue;
    }
    W cur = acc[o];
    switch (op) {
      case Op::Sum:
      case Op::Mean:
      case Op::Any:
        cur = ref_add(cur, v);
        break;
      case Op::Prod:
      case Op::All:
        cur = ref_mul(cur, v);
        break;
      case Op::Max:
      case Op::ArgMax:
      case Op::Min:
      case Op::ArgMin: {
        bool want_max = op == Op::Max || op == Op::ArgMax;
        bool replace =
            !ref_isnan(cur) && (ref_isnan(v) || (want_max ? ref_less(cur, v) : ref_less(v, cur)));
        if (replace) cur = v, index[o] = r;
        break;
      }
    }
    acc[o] = cur;
  }
  for (int64_t o = 0; o < outputs; ++o) {
    if (!set[o]) acc[o] = op == Op::Prod || op == Op::All ? W(1) : W(0);
    if constexpr (!std::is_same_v<W, bool> && !std::is_same_v<W, int64_t>)
      if (op == Op::Mean) acc[o] = count ? acc[o] / static_cast<double>(count) : W(kNaN);
  }
  return {acc, index};
}

// The input's elements widened to W the way NumPy's reduction sees them.
template <class W>
std::vector<W> widen(DType t, int64_t n) {
  std::vector<W> out(n);
  kiln::visit_dtype(t, [&](auto z) {
    using T = decltype(z);
    for (int64_t i = 0; i < n; ++i) {
      T v = value_as<T>(i);
      if constexpr (std::is_same_v<T, kiln::float16> || std::is_same_v<T, kiln::bfloat16>) {
        out[i] = static_cast<W>(static_cast<double>(v));  // (nonzero -> true for W bool)
      } else if constexpr (std::is_same_v<W, bool>) {
        if constexpr (std::is_same_v<T, cd> || std::is_same_v<T, std::complex<float>>)
          out[i] = v.real() != 0 || v.imag() != 0;
        else
          out[i] = v != T(0);
      } else if constexpr (std::is_same_v<W, cd>) {
        out[i] = cd(v);
      } else if constexpr (std::is_same_v<T, cd> || std::is_same_v<T, std::complex<float>>) {
        FAIL("complex input widened to a real type");
      } else {
        out[i] = static_cast<W>(v);
      }
    }
  });
  return out;
}

template <class W>
std::string str(W v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

template <class W>
bool close(W got, W want, double rtol) {
  if constexpr (std::is_same_v<W, bool> || std::is_same_v<W, int64_t>) {
    (void)rtol;
    return got == want;
  } else {
    if (ref_isnan(want)) return ref_isnan(got);
    return std::abs(got - want) <= rtol * std::abs(want);
  }
}

std::ifstream open_fixture(const std::string& name) {
  std::ifstream in(std::string(KILN_TEST_DATA) + "/" + name);
  REQUIRE_MESSAGE(in.good(), "missing tests/data/" << name << "; run make_reductions_fixtures.py");
  return in;
}

// (op, input dtype) -> NumPy's result dtype.
std::map<std::pair<std::string, DType>, DType> read_dtype_table() {
  auto in = open_fixture("reductions_dtypes.txt");
  std::map<std::pair<std::string, DType>, DType> out;
  std::string op, from, to;
  while (in >> op >> from >> to) out[{op, fixtures::parse_dtype(from)}] = fixtures::parse_dtype(to);
  return out;
}

struct ShapeCase {
  std::string op;
  Shape shape;
  std::optional<std::vector<int>> axes;  // nullopt: every axis (argmax: flattened)
  bool keepdims;
  std::optional<Shape> result;  // nullopt: NumPy raises
  std::string line;
};

std::vector<ShapeCase> read_shape_table() {
  auto in = open_fixture("reductions_shapes.txt");
  std::vector<ShapeCase> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream f(line);
    ShapeCase c;
    c.line = line;
    int nd = 0, keep = 0;
    std::string axes, res;
    f >> c.op >> nd;
    c.shape.resize(nd);
    for (auto& d : c.shape) f >> d;
    f >> axes >> keep >> res;
    c.keepdims = keep != 0;
    if (axes != "none") {
      std::vector<int> ax;
      std::istringstream a(axes);
      for (std::string tok; std::getline(a, tok, ',');) ax.push_back(std::stoi(tok));
      c.axes = ax;
    }
    if (res != "error") {
      Shape s(std::stoi(res));
      for (auto& d : s) f >> d;
      c.result = s;
    }
    REQUIRE_MESSAGE(!f.fail(), "bad fixture line: " << line);
    out.push_back(c);
  }
  return out;
}

Array run_kiln(const std::string& name, const Array& a, const std::optional<std::vector<int>>& axes,
               bool keepdims) {
  Op op = kOps.at(name);
  if (is_arg(op)) {
    std::optional<int> axis;
    if (axes) axis = axes->at(0);
    return op == Op::ArgMax ? kiln::argmax(a, axis, keepdims) : kiln::argmin(a, axis, keepdims);
  }
  kiln::AxesArg ax = axes;  // nullopt: every axis
  switch (op) {
    case Op::Sum:
      return kiln::sum(a, ax, keepdims);
    case Op::Prod:
      return kiln::prod(a, ax, keepdims);
    case Op::Max:
      return kiln::max(a, ax, keepdims);
    case Op::Min:
      return kiln::min(a, ax, keepdims);
    case Op::Mean:
      return kiln::mean(a, ax, keepdims);
    case Op::Any:
      return kiln::any(a, ax, keepdims);
    default:
      return kiln::all(a, ax, keepdims);
  }
}

// Checks the values of `got` (a reduction of make_input(t, shape)) against the reference.
template <class W>
void check_values(Op op, DType t, const Shape& shape, const std::vector<int>& axes,
                  const Array& got) {
  auto ref = ref_reduce(op, widen<W>(t, kiln::shape_size(shape)), shape, axes);
  REQUIRE(got.size() == static_cast<int64_t>(ref.value.size()));
  if (is_arg(op)) {
    CHECK(got.to_vector<int64_t>() == ref.index);
    return;
  }
  auto values = got.to_vector<W>();
  double rtol = got.dtype() == DType::Float16   ? 1e-3  // one rounding to float16
                : got.dtype() == DType::Float32 ? 2e-7
                                                : 1e-13;
  int bad = 0;
  for (size_t i = 0; i < values.size(); ++i)
    if (!close(values[i], ref.value[i], rtol)) {
      if (++bad <= 3)
        FAIL_CHECK("element " << i << ": got " << str(values[i]) << ", want " << str(ref.value[i]));
    }
  CHECK(bad == 0);
}

void check_case(Op op, DType t, const Shape& shape, const std::vector<int>& axes,
                const Array& got) {
  bool cplx = t == DType::Complex128;
  bool ints = kiln::is_integer_or_bool(t);
  if (op == Op::Any || op == Op::All)
    check_values<bool>(op, t, shape, axes, got);
  else if (cplx)
    check_values<cd>(op, t, shape, axes, got);
  else if (ints && op != Op::Mean)
    check_values<int64_t>(op, t, shape, axes, got);
  else
    check_values<double>(op, t, shape, axes, got);
}

std::vector<int> normalized(const std::optional<std::vector<int>>& axes, int nd) {
  std::vector<int> out;
  if (!axes)
    for (int i = 0; i < nd; ++i) out.push_back(i);
  else
    for (int a : *axes) out.push_back(a < 0 ? a + nd : a);
  return out;
}

}  // namespace

TEST_CASE("every reduction over every axis subset, dtype and shape as NumPy, values as loops") {
  auto dtypes = read_dtype_table();
  auto cases = read_shape_table();
  REQUIRE(dtypes.size() == 9 * 13);
  REQUIRE(cases.size() > 700);
  int checked = 0, errors = 0;
  for (const auto& c : cases) {
    for (DType t : kDTypes) {
      INFO("case: " << c.line << " | dtype " << std::string(kiln::dtype_name(t)));
      Array a = make_input(t, c.shape);
      if (!c.result) {
        CHECK_THROWS_AS(run_kiln(c.op, a, c.axes, c.keepdims), kiln::ShapeError);
        ++errors;
        continue;
      }
      Array r = run_kiln(c.op, a, c.axes, c.keepdims);
      CHECK(r.shape() == *c.result);
      CHECK(r.dtype() == dtypes.at({c.op, t}));
      check_case(kOps.at(c.op), t, c.shape, normalized(c.axes, static_cast<int>(c.shape.size())),
                 r);
      ++checked;
    }
  }
  CHECK(checked > 4000);
  CHECK(errors > 200);
}

TEST_CASE("bad axes are ShapeErrors") {
  Array a = make_input(DType::Float64, {3, 4, 5});
  CHECK_THROWS_AS(kiln::sum(a, {3}), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::sum(a, {-4}), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::sum(a, {1, -2}), kiln::ShapeError);  // the same axis twice
  CHECK_THROWS_AS(kiln::max(a, {0, 0}), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::argmax(a, 3), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::argmin(a, -4), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::argmax(kiln::zeros({0})), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::argmin(kiln::zeros({4, 0}), 1), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::min(kiln::zeros({0}, DType::Int32)), kiln::ShapeError);
}

TEST_CASE("reductions of 0-d arrays") {
  Array s = kiln::asarray(std::vector<double>{2.5}, Shape{});
  CHECK(kiln::sum(s).shape() == Shape{});
  CHECK(kiln::sum(s).item<double>() == 2.5);
  CHECK(kiln::max(s, {}, true).shape() == Shape{});
  CHECK(kiln::argmax(s).item<int64_t>() == 0);
  CHECK(kiln::argmax(s, std::nullopt, true).shape() == Shape{});
  CHECK(kiln::mean(s).item<double>() == 2.5);
  CHECK(kiln::all(s).item<bool>());
}

TEST_CASE("empty reductions: identities, NaN mean, errors for max/min") {
  for (DType t : kDTypes) {
    INFO("dtype " << std::string(kiln::dtype_name(t)));
    Array e = kiln::zeros({0}, t);
    CHECK(kiln::sum(e).item<cd>() == cd(0));
    CHECK(kiln::prod(e).item<cd>() == cd(1));
    CHECK(std::isnan(kiln::mean(e).item<cd>().real()));
    CHECK(kiln::any(e).item<bool>() == false);
    CHECK(kiln::all(e).item<bool>() == true);
    CHECK_THROWS_AS(kiln::max(e), kiln::ShapeError);
    CHECK_THROWS_AS(kiln::min(e), kiln::ShapeError);
    CHECK_THROWS_AS(kiln::argmax(e), kiln::ShapeError);
  }
  // An empty axis reduced into a non-empty result.
  Array e = kiln::zeros({3, 0, 2}, DType::Int32);
  CHECK(kiln::sum(e, {1}).to_vector<int64_t>() == std::vector<int64_t>(6, 0));
  CHECK(kiln::prod(e, {1}, true).shape() == Shape{3, 1, 2});
  CHECK(kiln::prod(e, {1}).to_vector<int64_t>() == std::vector<int64_t>(6, 1));
  auto m = kiln::mean(e, {-2}).to_vector<double>();
  REQUIRE(m.size() == 6);
  for (double v : m) CHECK(std::isnan(v));
  CHECK_THROWS_AS(kiln::max(e, {1}), kiln::ShapeError);
  // A non-empty axis of an empty array: an empty result, not an error.
  CHECK(kiln::max(e, {0, 2}).shape() == Shape{0});
  CHECK(kiln::max(e, {0}).size() == 0);
  CHECK(kiln::argmin(e, 2).shape() == Shape{3, 0});
  // The message says what is wrong.
  try {
    kiln::max(e, {1});
    FAIL("no exception");
  } catch (const kiln::ShapeError& err) {
    CHECK(std::string(err.what()).find("(3, 0, 2)") != std::string::npos);
  }
}

TEST_CASE("NaN propagates through max/min; argmax/argmin report the first NaN") {
  Array x = kiln::asarray<double>({1, kNaN, 5, kNaN, -3});
  CHECK(std::isnan(kiln::max(x).item<double>()));
  CHECK(std::isnan(kiln::min(x).item<double>()));
  CHECK(kiln::argmax(x).item<int64_t>() == 1);
  CHECK(kiln::argmin(x).item<int64_t>() == 1);
  // Along an axis: only rows with a NaN are NaN.
  std::vector<float> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  v[5] = std::numeric_limits<float>::quiet_NaN();
  v[7] = std::numeric_limits<float>::quiet_NaN();
  v[11] = -std::numeric_limits<float>::infinity();
  Array m = kiln::asarray(v, {3, 4});  // rows: {1 2 3 4} {5 nan 7 nan} {9 10 11 -inf}
  auto mx = kiln::max(m, {1}).to_vector<float>();
  CHECK(mx[0] == 4);
  CHECK(std::isnan(mx[1]));
  CHECK(mx[2] == 11);
  auto mn = kiln::min(m, {-1}).to_vector<float>();
  CHECK(mn[0] == 1);
  CHECK(std::isnan(mn[1]));
  CHECK(mn[2] == -std::numeric_limits<float>::infinity());
  CHECK(kiln::argmax(m, 1).to_vector<int64_t>() == std::vector<int64_t>{3, 1, 2});
  CHECK(kiln::argmin(m, 1).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 3});
  // Along axis 0: columns 1 and 3 hold a NaN.
  CHECK(kiln::argmax(m, 0).to_vector<int64_t>() == std::vector<int64_t>{2, 1, 2, 1});
  auto c0 = kiln::max(m, {0}).to_vector<float>();
  CHECK(c0[0] == 9);
  CHECK(std::isnan(c0[1]));
  CHECK(c0[2] == 11);
  CHECK(std::isnan(c0[3]));
  // Sums and means propagate NaN; any() counts NaN as true.
  CHECK(std::isnan(kiln::sum(m).item<float>()));
  CHECK(kiln::any(kiln::asarray<double>({0, kNaN})).item<bool>());
  // Complex: a NaN in either part counts.
  Array z = kiln::asarray(std::vector<cd>{{1, 0}, {0, kNaN}, {5, 5}});
  CHECK(kiln::argmax(z).item<int64_t>() == 1);
  CHECK(std::isnan(kiln::max(z).item<cd>().imag()));
}

TEST_CASE("argmax/argmin ties give the first index; complex order is lexicographic") {
  CHECK(kiln::argmax(kiln::asarray<int64_t>({1, 7, 3, 7, 7})).item<int64_t>() == 1);
  CHECK(kiln::argmin(kiln::asarray<int32_t>({4, 0, 0, 9, 0})).item<int64_t>() == 1);
  CHECK(kiln::argmax(kiln::zeros({100}, DType::Float32)).item<int64_t>() == 0);
  const bool bools[] = {false, true, false, true};
  CHECK(kiln::argmax(kiln::asarray(bools, DType::Bool, {4})).item<int64_t>() == 1);
  CHECK(kiln::argmin(kiln::asarray(bools, DType::Bool, {4})).item<int64_t>() == 0);
  Array z = kiln::asarray(std::vector<cd>{{1, 5}, {2, -1}, {2, 3}, {2, 3}, {-1, 9}});
  CHECK(kiln::argmax(z).item<int64_t>() == 2);
  CHECK(kiln::argmin(z).item<int64_t>() == 4);
  CHECK(kiln::max(z).item<cd>() == cd(2, 3));
  CHECK(kiln::min(z).item<cd>() == cd(-1, 9));
  // Flattened argmax with keepdims keeps every axis as 1, as NumPy.
  Array a = kiln::asarray(std::vector<int64_t>{0, 5, 5, 1, 5, 0}, {2, 3});
  CHECK(kiln::argmax(a).item<int64_t>() == 1);
  CHECK(kiln::argmax(a, std::nullopt, true).shape() == Shape{1, 1});
  CHECK(kiln::argmax(a, 0).to_vector<int64_t>() == std::vector<int64_t>{1, 0, 0});
  CHECK(kiln::argmax(a, -1, true).to_vector<int64_t>() == std::vector<int64_t>{1, 1});
}

TEST_CASE("any/all of complex input test both parts") {
  Array z = kiln::asarray(std::vector<cd>{{0, 0}, {0, 1}});
  CHECK(kiln::any(z).item<bool>());  // 1j is non-zero
  CHECK(!kiln::all(z).item<bool>());
  CHECK(kiln::all(z(Slice(1, std::nullopt))).item<bool>());
  CHECK(kiln::any(z, {0}, true).shape() == Shape{1});
}

TEST_CASE("integer sums wrap like NumPy's and accumulate int32 in int64") {
  const int64_t big = std::numeric_limits<int64_t>::max();
  CHECK(kiln::sum(kiln::asarray<int64_t>({big, 1})).item<int64_t>() ==
        std::numeric_limits<int64_t>::min());
  // int32 accumulates in int64: no wrap at 2^31.
  Array a = kiln::full({4}, 2000000000, DType::Int32);
  CHECK(kiln::sum(a).dtype() == DType::Int64);
  CHECK(kiln::sum(a).item<int64_t>() == 8000000000LL);
  CHECK(kiln::prod(kiln::full({3}, 100000, DType::Int32)).item<int64_t>() == 1000000000000000LL);
  // bool sums count.
  Array b = kiln::arange(10) < 7;
  CHECK(kiln::sum(b).item<int64_t>() == 7);
  CHECK(kiln::mean(b).item<double>() == doctest::Approx(0.7));
}

TEST_CASE("reductions of views: transposed, sliced, broadcast inputs") {
  const Shape s{4, 5, 6};
  std::vector<double> x(120);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37 * static_cast<double>(i)) * 10;
  Array a = kiln::asarray(x, s);
  auto at = [&](int64_t i, int64_t j, int64_t k) { return x[(i * 5 + j) * 6 + k]; };

  SUBCASE("transpose") {  // t[k][j][i] = a[i][j][k]; sum over the new axis 1 (j)
    auto got = kiln::sum(a.transpose({2, 1, 0}), {1}).to_vector<double>();
    REQUIRE(got.size() == 24);
    for (int k = 0; k < 6; ++k)
      for (int i = 0; i < 4; ++i) {
        double want = 0;
        for (int j = 0; j < 5; ++j) want += at(i, j, k);
        CHECK(got[k * 4 + i] == doctest::Approx(want).epsilon(1e-12));
      }
    // argmax along a transposed axis counts positions in the view.
    auto am = kiln::argmax(a.T(), 0).to_vector<int64_t>();  // over k, for each (j, i)
    for (int j = 0; j < 5; ++j)
      for (int i = 0; i < 4; ++i) {
        int64_t best = 0;
        for (int k = 1; k < 6; ++k)
          if (at(i, j, k) > at(i, j, best)) best = k;
        CHECK(am[j * 4 + i] == best);
      }
  }
  SUBCASE("reversed and stepped slices") {
    // v[i][j][k] = a[3 - i][1 + 2j][5 - 2k], shape (4, 2, 3)
    Array v = a(Slice(std::nullopt, std::nullopt, -1), Slice(1, std::nullopt, 2),
                Slice(std::nullopt, std::nullopt, -2));
    REQUIRE(v.shape() == Shape{4, 2, 3});
    auto mx = kiln::max(v, {0, 2}, true).to_vector<double>();
    auto am = kiln::argmin(v, 0).to_vector<int64_t>();
    REQUIRE(mx.size() == 2);
    for (int j = 0; j < 2; ++j) {
      double want = -1e300;
      for (int i = 0; i < 4; ++i)
        for (int k = 0; k < 3; ++k) want = std::max(want, at(3 - i, 1 + 2 * j, 5 - 2 * k));
      CHECK(mx[j] == want);
      for (int k = 0; k < 3; ++k) {
        int64_t best = 0;
        for (int i = 1; i < 4; ++i)
          if (at(3 - i, 1 + 2 * j, 5 - 2 * k) < at(3 - best, 1 + 2 * j, 5 - 2 * k)) best = i;
        CHECK(am[j * 3 + k] == best);
      }
    }
  }
  SUBCASE("an integer index and a broadcast") {
    Array row = a(2, Slice(), 4);  // a[2, :, 4], shape (5,)
    CHECK(kiln::sum(row).item<double>() ==
          doctest::Approx(at(2, 0, 4) + at(2, 1, 4) + at(2, 2, 4) + at(2, 3, 4) + at(2, 4, 4))
              .epsilon(1e-12));
    Array b = row.broadcast_to({3, 5});
    auto m = kiln::mean(b, {0}).to_vector<double>();
    for (int j = 0; j < 5; ++j) CHECK(m[j] == doctest::Approx(at(2, j, 4)).epsilon(1e-12));
    CHECK(kiln::sum(b).item<double>() == doctest::Approx(3 * kiln::sum(row).item<double>()));
  }
  SUBCASE("reshape of a transpose (not a view: materialised first)") {
    Array r = a.T().reshape({-1, 4});  // rows of T flattened: (6*5, 4)
    auto got = kiln::sum(r, {0}).to_vector<double>();
    for (int i = 0; i < 4; ++i) {
      double want = 0;
      for (int j = 0; j < 5; ++j)
        for (int k = 0; k < 6; ++k) want += at(i, j, k);
      CHECK(got[i] == doctest::Approx(want).epsilon(1e-12));
    }
  }
}

TEST_CASE("reductions of elementwise expressions (fused prologue)") {
  const int64_t n = 3000, m = 7;
  std::vector<double> a(n * m), b(n * m);
  for (int64_t i = 0; i < n * m; ++i) {
    a[i] = std::cos(0.01 * static_cast<double>(i));
    b[i] = static_cast<double>(i % 13) - 6;
  }
  Array A = kiln::asarray(a, {n, m}), B = kiln::asarray(b, {n, m});
  double want = 0;
  for (int64_t i = 0; i < n * m; ++i) want += a[i] * b[i] + 1;
  CHECK(kiln::sum(A * B + 1).item<double>() == doctest::Approx(want).epsilon(1e-12));

  auto cols = kiln::mean(A * 2 - B, {0}).to_vector<double>();
  for (int64_t j = 0; j < m; ++j) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += a[i * m + j] * 2 - b[i * m + j];
    CHECK(cols[j] == doctest::Approx(s / n).epsilon(1e-12));
  }
  auto am = kiln::argmax(A - B, 1).to_vector<int64_t>();
  auto mx = kiln::max(kiln::abs(A * B), {1}).to_vector<double>();
  for (int64_t i = 0; i < n; ++i) {
    int64_t best = 0;
    double mv = 0;
    for (int64_t j = 0; j < m; ++j) {
      if (a[i * m + j] - b[i * m + j] > a[i * m + best] - b[i * m + best]) best = j;
      mv = std::max(mv, std::abs(a[i * m + j] * b[i * m + j]));
    }
    CHECK(am[i] == best);
    CHECK(mx[i] == mv);
  }
  // A reduction of a reduction.
  double best = -1e300;
  for (int64_t i = 0; i < n; ++i) {
    double row = 0;
    for (int64_t j = 0; j < m; ++j) row += a[i * m + j] * b[i * m + j];
    best = std::max(best, row);
  }
  CHECK(kiln::max(kiln::sum(A * B, {1})).item<double>() == doctest::Approx(best).epsilon(1e-12));
  // A cast in the prologue: float32 inputs summed as float32, int32 comparisons counted.
  Array f = A.astype(DType::Float32);
  CHECK(kiln::sum(f * f).dtype() == DType::Float32);
  CHECK(kiln::sum(f * f).item<double>() ==
        doctest::Approx(kiln::sum(A * A).item<double>()).epsilon(1e-5));
  int64_t positive = 0;
  for (double v : b) positive += v > 0;
  CHECK(kiln::sum(B > 0).item<int64_t>() == positive);
  CHECK(kiln::sum(B.astype(DType::Int32) > 0, {0, 1}).item<int64_t>() == positive);
}

TEST_CASE("large reductions use the multi-part path and match closed forms") {
  const int64_t n = 10'000'000;
  const double dn = static_cast<double>(n);
  // A lazy arange fuses into the reduction; partial sums of integers are exact in float64.
  Array x = kiln::arange(0, n, 1, DType::Float64);
  CHECK(kiln::sum(x).item<double>() == dn * (dn - 1) / 2);
  CHECK(kiln::mean(x).item<double>() == (dn - 1) / 2);
  CHECK(kiln::max(x).item<double>() == dn - 1);
  CHECK(kiln::argmax(x).item<int64_t>() == n - 1);
  CHECK(kiln::argmin(x).item<int64_t>() == 0);
  CHECK(kiln::sum(x * x).item<double>() ==
        doctest::Approx(dn * (dn - 1) * (2 * dn - 1) / 6).epsilon(1e-12));

  // From memory, with ties and NaNs placed in different parts.
  std::vector<double> v(n, 1.0);
  v[5'000'000] = 7;
  v[9'000'001] = 7;
  v[123] = -2;
  v[8'765'432] = -2;
  Array a = kiln::asarray(v);
  CHECK(kiln::argmax(a).item<int64_t>() == 5'000'000);
  CHECK(kiln::argmin(a).item<int64_t>() == 123);
  CHECK(kiln::sum(a).item<double>() == dn - 4 + 14 - 4);
  v[7'000'000] = kNaN;
  v[9'999'999] = kNaN;
  Array an = kiln::asarray(v);
  CHECK(kiln::argmax(an).item<int64_t>() == 7'000'000);
  CHECK(kiln::argmin(an).item<int64_t>() == 7'000'000);
  CHECK(std::isnan(kiln::max(an).item<double>()));

  // Many outputs, each folded across part boundaries.
  Array m = x.reshape({1000, 10000});
  auto rows = kiln::sum(m, {1}).to_vector<double>();
  REQUIRE(rows.size() == 1000);
  bool rows_ok = true;
  for (int64_t i = 0; i < 1000; ++i)
    rows_ok &= rows[i] == 10000.0 * (i * 10000.0) + 10000.0 * 9999.0 / 2;
  CHECK(rows_ok);
  auto cols = kiln::sum(m, {0}).to_vector<double>();
  REQUIRE(cols.size() == 10000);
  bool cols_ok = true;
  for (int64_t j = 0; j < 10000; ++j)
    cols_ok &= cols[j] == 1000.0 * j + 10000.0 * (1000.0 * 999.0 / 2);
  CHECK(cols_ok);
  auto amax = kiln::argmax(m.T(), 1).to_vector<int64_t>();  // along the original axis 0
  bool amax_ok = true;
  for (int64_t v2 : amax) amax_ok &= v2 == 999;
  CHECK(amax_ok);

  // int64 counting over 10^7 elements.
  CHECK(kiln::sum(kiln::arange(n) >= 0).item<int64_t>() == n);
}

TEST_CASE("a large sum whose rounding depends on the order is accurate and reproducible") {
  // The integer values above sum exactly in any order, so they cannot show a lost or
  // mis-rounded partial sum. These (1 + 1/k, none exact in binary) round differently in
  // every order; the reference is a compensated sum, and any order of n - 1 additions is within
  // (n - 1) u sum|x| of it (Higham, Accuracy and Stability, 4.2), so a dropped element (>= 1)
  // or a part accumulated in float32 (relative error ~1e-7) is far outside the bound.
  const int64_t n = 10'000'000;
  std::vector<double> w(n);
  for (int64_t i = 0; i < n; ++i) w[i] = 1.0 + 1.0 / static_cast<double>(3 + i % 1009);
  const double want = compensated_sum(w);
  double forward = 0, backward = 0;
  for (double x : w) forward += x;
  for (auto it = w.rbegin(); it != w.rend(); ++it) backward += *it;
  REQUIRE(forward != backward);  // the data does depend on the order

  Array a = kiln::asarray(w);
  const double got = kiln::sum(a).item<double>();
  const double bound = static_cast<double>(n - 1) * 0x1p-53 * want;  // every w[i] > 0
  CHECK(std::abs(got - want) <= bound);
  CHECK(kiln::sum(a).item<double>() == got);  // the same bits every time, whatever the threads
  CHECK(kiln::mean(a).item<double>() == doctest::Approx(want / static_cast<double>(n)));
  // Each of 1000 rows, folded across parts, against its own reference.
  auto rows = kiln::sum(a.reshape({1000, 10000}), {1}).to_vector<double>();
  REQUIRE(rows.size() == 1000);
  int bad = 0;
  for (int64_t r = 0; r < 1000; ++r) {
    std::vector<double> row(w.begin() + r * 10000, w.begin() + (r + 1) * 10000);
    double ref = compensated_sum(row);
    bad += std::abs(rows[r] - ref) > 9999 * 0x1p-53 * ref;
  }
  CHECK(bad == 0);
}

TEST_CASE("axes: none given reduces every axis, an empty list none (NumPy's axis=()), an int one") {
  Array x = kiln::asarray(std::vector<int32_t>{1, -2, 3, 0, 5, 6}, {2, 3});
  // axis=(): each value in the reduction's dtype, as NumPy (int32 sums in int64, means float64,
  // any/all bool); shape kept whatever keepdims says.
  Array s = kiln::sum(x, kiln::Axes{});
  CHECK(s.dtype() == DType::Int64);
  CHECK(s.shape() == Shape{2, 3});
  CHECK(s.to_vector<int64_t>() == std::vector<int64_t>{1, -2, 3, 0, 5, 6});
  CHECK(kiln::mean(x, kiln::Axes{}, true).dtype() == DType::Float64);
  CHECK(kiln::max(x, kiln::Axes{}).dtype() == DType::Int32);
  Array any = kiln::any(x, kiln::Axes{});
  CHECK(any.dtype() == DType::Bool);
  CHECK(any.to_vector<bool>() == std::vector<bool>{true, true, true, false, true, true});
  // No axes given: every axis.
  CHECK(kiln::sum(x).shape() == Shape{});
  CHECK(kiln::sum(x, {}).item<int64_t>() == 13);
  // A plain int is one axis, a negative one counted from the end.
  CHECK(kiln::sum(x, 0).to_vector<int64_t>() == std::vector<int64_t>{1, 3, 9});
  CHECK(kiln::sum(x, -1, true).shape() == Shape{2, 1});
  CHECK(kiln::sum(x, -1, true).to_vector<int64_t>() == std::vector<int64_t>{2, 11});
  CHECK(kiln::max(x, {0, 1}).item<int32_t>() == 6);
}

// The host sums columns row by row (src/host/fused.cpp, TiledColumnSums) but must fold each
// column in the order a contiguous row is folded (ordered_fold): the same bits as summing the
// rows of the materialised transpose. Shapes cross the fold's 1024-value chunks and leave
// columns past the last whole block of 2 KB; the last has a batch axis in front.
TEST_CASE("column sums on the host give a materialised transpose's row sums, bit for bit") {
  struct Layout {
    Shape shape;
    DType t;
  };
  for (const Layout& l : {Layout{{3001, 1100}, DType::Float32}, Layout{{2500, 600}, DType::Float64},
                          Layout{{3, 1500, 530}, DType::Float32}}) {
    INFO(kiln::shape_str(l.shape) << " " << std::string(kiln::dtype_name(l.t)));
    kiln::random::Generator g(17);
    Array x = g.uniform(-1, 1, l.shape, l.t).eval();
    const int down = x.ndim() - 2;
    std::vector<int> swap(x.ndim());
    for (int d = 0; d < x.ndim(); ++d) swap[d] = d;
    std::swap(swap[down], swap[down + 1]);
    Array rows = (x.transpose(swap) * 1).eval();  // each column now a contiguous row
    CHECK(kiln::array_equal(kiln::sum(x, {down}), kiln::sum(rows, {down + 1})));
    CHECK(kiln::array_equal(kiln::mean(x, {down}), kiln::mean(rows, {down + 1})));
  }
}
