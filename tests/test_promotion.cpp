// kiln's dtype promotion against NumPy's (NumPy 2 rules: Python scalars are weak, NEP 50).
//
// tests/data/promotion.txt holds NumPy's result dtypes, written by
// tests/data/make_elementwise_fixtures.py with NumPy 1.24 in its "weak" promotion state: the
// result_type of every pair of dtypes, the dtype of every binary operator on every pair of
// array dtypes and on every dtype with every kind of Python scalar, of the unary functions
// and of the reductions; "error" where NumPy raises TypeError (kiln throws DTypeError).
// Where kiln documents another dtype than NumPy 1.24, the test says so and asserts kiln's.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/array.hpp"

using kiln::Array;
using kiln::DType;
using kiln::Scalar;

namespace {

std::vector<std::vector<std::string>> records(const std::string& kind) {
  std::string path = std::string(KILN_TEST_DATA) + "/promotion.txt";
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot open " + path);
  std::vector<std::vector<std::string>> out;
  for (std::string line; std::getline(file, line);) {
    std::istringstream in(line);
    std::vector<std::string> toks;
    for (std::string t; in >> t;) toks.push_back(t);
    if (!toks.empty() && toks[0] == kind) out.emplace_back(toks.begin() + 1, toks.end());
  }
  return out;
}

DType dtype(const std::string& s) {
  for (DType t : kiln::kAllDTypes)
    if (s == kiln::dtype_name(t)) return t;
  throw std::runtime_error("promotion.txt: unknown dtype " + s);
}

std::string name(DType t) { return kiln::dtype_name(t); }

// A small array of dtype t with nonzero values (so that division and log are ordinary).
Array sample(DType t) { return kiln::ones({3}, t); }

Scalar weak_scalar(const std::string& kind) {
  if (kind == "bool") return Scalar(true);
  if (kind == "int") return Scalar(1);
  if (kind == "float") return Scalar(1.0);
  if (kind == "complex") return Scalar(std::complex<double>(0, 1));
  throw std::runtime_error("promotion.txt: unknown scalar kind " + kind);
}

// A binary operator on two arrays, on an array and a scalar, and on a scalar and an array.
struct BinaryOp {
  std::function<Array(const Array&, const Array&)> arrays;
  std::function<Array(const Array&, Scalar)> right;
  std::function<Array(Scalar, const Array&)> left;
};

template <class F>
BinaryOp make_op(F f) {
  return {[f](const Array& a, const Array& b) { return f(a, b); },
          [f](const Array& a, Scalar b) { return f(a, b); },
          [f](Scalar a, const Array& b) { return f(a, b); }};
}

const std::map<std::string, BinaryOp>& binary_ops() {
  static const std::map<std::string, BinaryOp> ops = {
      {"+", make_op([](const auto& a, const auto& b) { return a + b; })},
      {"-", make_op([](const auto& a, const auto& b) { return a - b; })},
      {"*", make_op([](const auto& a, const auto& b) { return a * b; })},
      {"/", make_op([](const auto& a, const auto& b) { return a / b; })},
      {"&", make_op([](const auto& a, const auto& b) { return a & b; })},
      {"|", make_op([](const auto& a, const auto& b) { return a | b; })},
      {"^", make_op([](const auto& a, const auto& b) { return a ^ b; })},
      {"==", make_op([](const auto& a, const auto& b) { return a == b; })},
      {"!=", make_op([](const auto& a, const auto& b) { return a != b; })},
      {"<", make_op([](const auto& a, const auto& b) { return a < b; })},
      {"<=", make_op([](const auto& a, const auto& b) { return a <= b; })},
      {">", make_op([](const auto& a, const auto& b) { return a > b; })},
      {">=", make_op([](const auto& a, const auto& b) { return a >= b; })},
  };
  return ops;
}

// The result dtype of f(), or "error" for a DTypeError. The result is also evaluated, so each
// dtype combination runs through the host executor once.
std::string result_of(const std::function<Array()>& f) {
  try {
    Array r = f();
    r.eval();
    return name(r.dtype());
  } catch (const kiln::DTypeError&) {
    return "error";
  }
}

}  // namespace

TEST_CASE("promote_types matches np.result_type for every pair of dtypes") {
  auto pairs = records("pair");
  CHECK(pairs.size() == std::size(kiln::kAllDTypes) * std::size(kiln::kAllDTypes));
  for (const auto& r : pairs) {
    INFO("np.result_type(", r[0], ", ", r[1], ") = ", r[2]);
    CHECK(name(kiln::promote_types(dtype(r[0]), dtype(r[1]))) == r[2]);
  }
}

TEST_CASE("binary operators on two arrays give NumPy's dtype (or DTypeError)") {
  auto recs = records("binop");
  CHECK(recs.size() ==
        binary_ops().size() * std::size(kiln::kAllDTypes) * std::size(kiln::kAllDTypes));
  for (const auto& r : recs) {
    const auto& op = binary_ops().at(r[0]);
    DType a = dtype(r[1]), b = dtype(r[2]);
    INFO("(", r[1], " array) ", r[0], " (", r[2], " array): NumPy gives ", r[3]);
    CHECK(result_of([&] { return op.arrays(sample(a), sample(b)); }) == r[3]);
  }
}

TEST_CASE("array with a weak Python-style scalar gives NumPy 2's dtype, on either side") {
  auto recs = records("weak");
  CHECK(recs.size() == binary_ops().size() * std::size(kiln::kAllDTypes) * 4);
  for (const auto& r : recs) {
    const auto& op = binary_ops().at(r[0]);
    DType a = dtype(r[1]);
    Scalar s = weak_scalar(r[2]);
    INFO("(", r[1], " array) ", r[0], " (Python ", r[2], "): NumPy gives ", r[3]);
    CHECK(result_of([&] { return op.right(sample(a), s); }) == r[3]);
    CHECK(result_of([&] { return op.left(s, sample(a)); }) == r[3]);
  }
}

TEST_CASE("unary functions give NumPy's dtype (float16 for bool, int8 and uint8, as NumPy)") {
  using Fn = std::function<Array(const Array&)>;
  static const std::map<std::string, Fn> fns = {
      {"sqrt", kiln::sqrt},
      {"exp", kiln::exp},
      {"log", kiln::log},
      {"sin", kiln::sin},
      {"cos", kiln::cos},
      {"tan", kiln::tan},
      {"tanh", kiln::tanh},
      {"abs", kiln::abs},
      {"neg", [](const Array& a) { return -a; }},
      {"real", kiln::real},
      {"imag", kiln::imag},
      {"conj", kiln::conj},
      {"invert", [](const Array& a) { return ~a; }},
  };
  auto recs = records("unary");
  CHECK(recs.size() == fns.size() * std::size(kiln::kAllDTypes));
  for (const auto& r : recs) {
    Fn f = fns.at(r[0]);
    DType a = dtype(r[1]);
    std::string want = r[2];
    // kiln's documented differences:
    if (want == "int8" && a == DType::Bool) {
      // NumPy's conjugate of bool gives int8; kiln's conj of a non-complex array is the array.
      REQUIRE(r[0] == "conj");
      want = "bool";
    }
    INFO(r[0], "(", r[1], " array): NumPy gives ", r[2], ", kiln documents ", want);
    CHECK(result_of([&] { return f(sample(a)); }) == want);
  }
}

TEST_CASE("sqrt, exp and sin of bool, int8 and uint8 are float16, as NumPy") {
  // By hand: NumPy's smallest float that holds every value (8 bits fit float16's 11).
  CHECK(kiln::float_dtype(DType::Bool) == DType::Float16);
  CHECK(kiln::float_dtype(DType::Int8) == DType::Float16);
  CHECK(kiln::float_dtype(DType::Int16) == DType::Float32);
  for (auto f : {kiln::sqrt, kiln::exp, kiln::sin})
    CHECK(f(sample(DType::Bool)).dtype() == DType::Float16);
  CHECK(kiln::float_dtype(DType::Int32) == DType::Float64);
  CHECK(kiln::float_dtype(DType::Int64) == DType::Float64);
}

TEST_CASE("floor and ceil keep integer and bool dtypes (NumPy >= 2.3), reject complex") {
  // By hand: NumPy 1.24 returns float64 (float16 for bool) here; NumPy 2.3 keeps the dtype,
  // and kiln follows 2.3. Floats keep their dtype in both.
  for (auto f : {kiln::floor, kiln::ceil}) {
    for (DType t : kiln::kAllDTypes) {
      if (kiln::is_complex(t)) continue;
      INFO(name(t));
      CHECK(result_of([&] { return f(sample(t)); }) == name(t));
    }
    CHECK_THROWS_AS(f(sample(DType::Complex64)), kiln::DTypeError);
    CHECK_THROWS_AS(f(sample(DType::Complex128)), kiln::DTypeError);
  }
}

TEST_CASE("true division of integers and bools is float64") {
  for (DType a : kiln::kAllDTypes)
    for (DType b : kiln::kAllDTypes) {
      if (!kiln::is_integer_or_bool(a) || !kiln::is_integer_or_bool(b)) continue;
      INFO(name(a), " / ", name(b));
      CHECK((sample(a) / sample(b)).dtype() == DType::Float64);
    }
  CHECK((sample(DType::Int32) / 2).dtype() == DType::Float64);
  CHECK((2 / sample(DType::Int32)).dtype() == DType::Float64);
  CHECK((sample(DType::Float32) / 2).dtype() == DType::Float32);
  // The values: 7 / 2 = 3.5 and 1 / 0 = inf, as NumPy.
  Array q =
      kiln::asarray(std::vector<int32_t>{7, 1, -1}) / kiln::asarray(std::vector<int32_t>{2, 0, 0});
  auto v = q.to_vector<double>();
  CHECK(v[0] == 3.5);
  CHECK(v[1] == std::numeric_limits<double>::infinity());
  CHECK(v[2] == -std::numeric_limits<double>::infinity());
}

TEST_CASE("abs of complex is real") {
  CHECK(kiln::abs(sample(DType::Complex64)).dtype() == DType::Float32);
  CHECK(kiln::abs(sample(DType::Complex128)).dtype() == DType::Float64);
  CHECK(kiln::real(sample(DType::Complex64)).dtype() == DType::Float32);
  CHECK(kiln::imag(sample(DType::Complex128)).dtype() == DType::Float64);
}

TEST_CASE("reductions give NumPy's dtype") {
  using Fn = Array (*)(const Array&, kiln::AxesArg, bool);
  static const std::map<std::string, Fn> fns = {
      {"sum", kiln::sum}, {"prod", kiln::prod}, {"mean", kiln::mean},
      {"max", kiln::max}, {"min", kiln::min},
  };
  auto recs = records("reduce");
  CHECK(recs.size() == fns.size() * std::size(kiln::kAllDTypes));
  for (const auto& r : recs) {
    Fn f = fns.at(r[0]);
    DType a = dtype(r[1]);
    INFO(r[0], "(", r[1], " array): NumPy gives ", r[2]);
    CHECK(result_of([&] { return f(sample(a), {}, false); }) == r[2]);
  }
  // By hand, the rules of the brief: sum/prod of bool and int32 accumulate in int64, the mean
  // of integers is float64.
  CHECK(kiln::sum(sample(DType::Bool)).dtype() == DType::Int64);
  CHECK(kiln::sum(sample(DType::Int32)).dtype() == DType::Int64);
  CHECK(kiln::prod(sample(DType::Int32)).dtype() == DType::Int64);
  CHECK(kiln::mean(sample(DType::Int32)).dtype() == DType::Float64);
  CHECK(kiln::mean(sample(DType::Bool)).dtype() == DType::Float64);
  // int32 sums do not wrap at 2^31 (they are int64): 3 * 2^30 = 3221225472.
  Array big = kiln::full({3}, 1 << 30, DType::Int32);
  CHECK(kiln::sum(big).item<int64_t>() == 3221225472LL);
}

TEST_CASE("weak scalars by hand: the array's precision wins within a kind") {
  Array f32 = sample(DType::Float32), i32 = sample(DType::Int32), b = sample(DType::Bool);
  CHECK((f32 * 2.0).dtype() == DType::Float32);
  CHECK((f32 + 1e300).dtype() == DType::Float32);  // NumPy 2: float32 (the value becomes inf)
  CHECK((i32 + 1).dtype() == DType::Int32);
  CHECK((i32 + 2.5).dtype() == DType::Float64);
  CHECK((b + 1).dtype() == DType::Int64);
  CHECK((b + true).dtype() == DType::Bool);
  CHECK((f32 * std::complex<double>(0, 1)).dtype() == DType::Complex64);
  CHECK((i32 * std::complex<double>(0, 1)).dtype() == DType::Complex128);
  CHECK((i32 < 2.5).dtype() == DType::Bool);
  CHECK(kiln::pow(i32, 2).dtype() == DType::Int32);
  CHECK(kiln::maximum(f32, 1).dtype() == DType::Float32);
  CHECK(kiln::where(b, i32, 2.5).dtype() == DType::Float64);
  CHECK(kiln::where(b, f32, 2).dtype() == DType::Float32);
  CHECK(kiln::clip(i32, 0, 10).dtype() == DType::Int32);
  CHECK(kiln::clip(i32, 0, 2.5).dtype() == DType::Float64);
  // NEP 50 for three operands: the arrays promote together, then the weak scalar; pairwise
  // (maximum, then minimum) would give int64, float64, complex128. Found by the fuzzer's oracle.
  CHECK(kiln::clip(b, 0, i32).dtype() == DType::Int32);
  CHECK(kiln::clip(b, 0.5, f32).dtype() == DType::Float32);
  CHECK(kiln::clip(b, 0, f32.astype(DType::Complex64)).dtype() == DType::Complex64);
  auto v = kiln::clip(b, 0, i32).to_vector<int32_t>();
  auto bv = b.to_vector<bool>();
  auto iv = i32.to_vector<int32_t>();
  for (size_t k = 0; k < v.size(); ++k) CHECK(v[k] == std::min<int32_t>(bv[k] ? 1 : 0, iv[k]));
}

TEST_CASE("casting a 0-d constant converts its value, as casting an array does") {
  // NumPy: np.exp(np.float32(-4.5).astype(np.int32)) == exp(-4); the fuzzer found kiln reading
  // -4.5 (the constant's value kept, only its dtype changed).
  using kiln::DType;
  CHECK(kiln::exp(kiln::full({}, -4.5, DType::Float32).astype(DType::Int32)).item<double>() ==
        doctest::Approx(std::exp(-4.0)).epsilon(1e-12));
  CHECK((kiln::full({}, 2.75, DType::Float64).astype(DType::Int64) * 1.0).item<double>() == 2.0);
  CHECK((kiln::full({}, 3e9, DType::Float64).astype(DType::Int32) * 1.0).item<double>() ==
        -2147483648.0);  // out of range: the minimum integer, as kiln's casts
  CHECK((kiln::full({}, 0.5, DType::Float64).astype(DType::Bool) * 1).item<int64_t>() == 1);
  CHECK((kiln::full({}, 7, DType::Int64).astype(DType::Bool) * 1).item<int64_t>() == 1);
  CHECK(
      kiln::real(
          kiln::full({}, std::complex<double>(2.5, -1), DType::Complex128).astype(DType::Float32) *
          2)
          .item<double>() == 5.0);
}

TEST_CASE("errors: bool subtraction and negation, out-of-bounds scalars, bitwise on floats") {
  Array b = sample(DType::Bool);
  CHECK_THROWS_AS(b - b, kiln::DTypeError);
  CHECK_THROWS_AS(b - true, kiln::DTypeError);
  CHECK_THROWS_AS(-b, kiln::DTypeError);
  // NumPy 2: "Python integer 1099511627776 out of bounds for int32" (OverflowError).
  Array i32 = sample(DType::Int32);
  int64_t two40 = int64_t{1} << 40;
  CHECK_THROWS_AS(i32 + two40, kiln::DTypeError);
  CHECK_THROWS_AS(two40 * i32, kiln::DTypeError);
  // A comparison with it is answered, as NumPy 2 answers it (gh-24915): i32 == 2^40 nowhere.
  CHECK_FALSE(kiln::any(i32 == two40).item<bool>());
  CHECK(kiln::all(i32 < two40).item<bool>());
  CHECK_THROWS_AS(kiln::maximum(i32, -two40), kiln::DTypeError);
  CHECK_THROWS_AS(kiln::where(sample(DType::Bool), i32, two40), kiln::DTypeError);
  // The limits themselves fit.
  CHECK((i32 + int64_t{2147483647}).dtype() == DType::Int32);
  CHECK((i32 + int64_t{-2147483648LL}).dtype() == DType::Int32);
  CHECK_THROWS_AS(i32 + int64_t{2147483648LL}, kiln::DTypeError);
  // int64 holds it.
  CHECK((sample(DType::Int64) + two40).dtype() == DType::Int64);
  for (DType t : {DType::Float32, DType::Float64, DType::Complex64, DType::Complex128}) {
    INFO(name(t));
    Array x = sample(t);
    CHECK_THROWS_AS(x & x, kiln::DTypeError);
    CHECK_THROWS_AS(x | 1, kiln::DTypeError);
    CHECK_THROWS_AS(true ^ x, kiln::DTypeError);
    CHECK_THROWS_AS(~x, kiln::DTypeError);
  }
  CHECK_THROWS_AS(i32 & 1.0, kiln::DTypeError);  // a float scalar makes it float64
}

TEST_CASE("full takes its fill value's own dtype: a float is float32, a double float64") {
  CHECK(kiln::full({3}, 0.1f).dtype() == DType::Float32);
  CHECK(kiln::full({3}, 0.1f).dtype() == kiln::asarray({0.1f}).dtype());
  CHECK(kiln::full({3}, 0.1).dtype() == DType::Float64);
  CHECK(kiln::full({3}, 7).dtype() == DType::Int64);
  CHECK(kiln::full({3}, true).dtype() == DType::Bool);
  CHECK(kiln::full({2}, std::complex<float>(1, 2)).dtype() == DType::Complex64);
  CHECK(kiln::full({2}, std::complex<double>(1, 2)).dtype() == DType::Complex128);
  CHECK(kiln::full({3}, 0.1f).to_vector<float>() == std::vector<float>(3, 0.1f));
  // Beside an array a scalar is weak whatever its C++ type: int32 + 2.5f is float64, as NumPy's
  // int32 array + Python float.
  Array i = kiln::asarray(std::vector<int32_t>{1});
  CHECK((i + 2.5f).dtype() == DType::Float64);
  CHECK((kiln::asarray({1.0}) * 2.0f).dtype() == DType::Float64);
}

TEST_CASE("integer arrays to negative integer array powers: 0, but 1 and -1 keep their powers") {
  // The documented deviation (array.hpp, pow): NumPy raises ValueError, which kiln cannot know
  // before the kernel runs. 1/2 truncates to 0; 1 and -1 are their own reciprocals.
  Array a = kiln::asarray(std::vector<int64_t>{2, 1, -1, -1, 0, 3});
  Array b = kiln::asarray(std::vector<int64_t>{-1, -3, -3, -2, 2, 2});
  CHECK(kiln::pow(a, b).to_vector<int64_t>() == std::vector<int64_t>{0, 1, -1, 1, 0, 9});
  CHECK_THROWS_AS(kiln::pow(a, -1), kiln::DTypeError);  // a scalar exponent is seen at once
}
