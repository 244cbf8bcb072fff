// Every elementwise operation against NumPy, on the host: the values (and dtypes) of each op on
// each dtype it accepts, for inputs with edge values (signed zeros, NaN, infinities, integer
// wraparound, complex numbers with NaN/inf parts), arrays with weak scalars, broadcasting and
// compound expressions; every case in lazy and in eager mode, which must agree bit for bit.
//
// The expected results are in tests/data/elementwise/cases.txt, written by
// tests/data/make_elementwise_fixtures.py (see its docstring for the format and for the few
// places where kiln's documented dtype differs from NumPy 1.24).
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "graph/op_table.hpp"
#include "kiln/array.hpp"

using kiln::Array;
using kiln::DType;
using kiln::Operand;
using kiln::Scalar;
using kiln::Shape;

namespace {

// ---- fixtures ----------------------------------------------------------------------------

DType parse_dtype(const std::string& s) {
  for (DType t : kiln::kAllDTypes)
    if (s == kiln::dtype_name(t)) return t;
  throw std::runtime_error("fixture: unknown dtype " + s);
}

Shape parse_shape(const std::string& s) {
  Shape shape;
  if (s == "0d") return shape;
  std::stringstream ss(s);
  for (std::string d; std::getline(ss, d, 'x');) shape.push_back(std::stoll(d));
  return shape;
}

// Typed values, stored as the dtype's bytes.
struct Values {
  DType dtype = DType::Bool;
  Shape shape;
  std::vector<unsigned char> bytes;
};

// float16 and bfloat16, which the checks compare through their float values.
template <class T>
constexpr bool is_half_v = std::is_same_v<T, kiln::float16> || std::is_same_v<T, kiln::bfloat16>;

template <class T>
T parse_real(const std::string& tok) {
  if constexpr (is_half_v<T>)
    return T(std::strtod(tok.c_str(), nullptr));  // NumPy's shortest repr reads back exactly
  else if constexpr (std::is_same_v<T, bool>)
    return tok == "1";
  else if constexpr (std::is_unsigned_v<T>)
    return static_cast<T>(std::stoull(tok));
  else if constexpr (std::is_integral_v<T>)
    return static_cast<T>(std::stoll(tok));
  else if constexpr (std::is_same_v<T, float>)
    return std::strtof(tok.c_str(), nullptr);
  else
    return std::strtod(tok.c_str(), nullptr);
}

Values parse_values(std::istream& in, const std::string& dtype, const std::string& shape) {
  Values v{parse_dtype(dtype), parse_shape(shape), {}};
  int64_t n = kiln::shape_size(v.shape);
  v.bytes.resize(static_cast<size_t>(n * kiln::itemsize(v.dtype)));
  kiln::visit_dtype(v.dtype, [&](auto z) {
    using T = decltype(z);
    for (int64_t i = 0; i < n; ++i) {
      std::string a, b;
      T x;
      in >> a;
      if constexpr (std::is_same_v<T, std::complex<float>> ||
                    std::is_same_v<T, std::complex<double>>) {
        in >> b;
        using R = typename T::value_type;
        x = T(parse_real<R>(a), parse_real<R>(b));
      } else {
        x = parse_real<T>(a);
      }
      if (!in) throw std::runtime_error("fixture: too few values");
      std::memcpy(v.bytes.data() + i * sizeof(T), &x, sizeof(T));
    }
  });
  return v;
}

// An argument of a case: an input array (by name) or a Python scalar.
struct Arg {
  std::string input;  // empty for a scalar
  Scalar scalar;
  std::string text;
};

Arg parse_arg(const std::string& tok) {
  Arg a;
  a.text = tok;
  if (tok[0] == '@') {
    a.input = tok.substr(1);
    return a;
  }
  std::vector<std::string> parts;
  std::stringstream ss(tok);
  for (std::string p; std::getline(ss, p, ':');) parts.push_back(p);
  if (parts[0] == "b")
    a.scalar = Scalar(parts[1] == "1");
  else if (parts[0] == "i")
    a.scalar = Scalar(static_cast<int64_t>(std::stoll(parts[1])));
  else if (parts[0] == "f")
    a.scalar = Scalar(std::strtod(parts[1].c_str(), nullptr));
  else if (parts[0] == "c")
    a.scalar = Scalar(std::complex<double>(std::strtod(parts[1].c_str(), nullptr),
                                           std::strtod(parts[2].c_str(), nullptr)));
  else
    throw std::runtime_error("fixture: bad argument " + tok);
  return a;
}

struct Case {
  std::string name, op;
  bool signed_zero = true;
  bool error = false;  // NumPy raises TypeError: kiln must throw DTypeError
  std::vector<Arg> args;
  Values expected;
};

struct Fixtures {
  std::map<std::string, Values> inputs;
  std::vector<Case> cases;
};

const Fixtures& fixtures() {
  static const Fixtures f = [] {
    Fixtures f;
    std::string path = std::string(KILN_TEST_DATA) + "/elementwise/cases.txt";
    std::ifstream file(path);
    if (!file) throw std::runtime_error("cannot open " + path);
    for (std::string line; std::getline(file, line);) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream in(line);
      std::string kind, name, dtype, shape;
      in >> kind >> name;
      if (kind == "input") {
        in >> dtype >> shape;
        f.inputs[name] = parse_values(in, dtype, shape);
        continue;
      }
      Case c;
      c.name = name;
      c.error = kind == "error";
      int nargs = 0, signed_zero = 0;
      in >> c.op;
      if (!c.error) in >> signed_zero;
      c.signed_zero = signed_zero != 0;
      in >> nargs;
      for (int i = 0; i < nargs; ++i) {
        std::string tok;
        in >> tok;
        c.args.push_back(parse_arg(tok));
      }
      if (!c.error) {
        in >> dtype >> shape;
        c.expected = parse_values(in, dtype, shape);
      }
      std::string rest;
      if (!in || (in >> rest)) throw std::runtime_error("fixture: bad line for " + name);
      f.cases.push_back(std::move(c));
    }
    return f;
  }();
  return f;
}

// ---- building the kiln expression ------------------------------------------------------------

// Both operands as Array or Scalar, for the operator overloads.
template <class F>
Array binary(const Operand& a, const Operand& b, F f) {
  return std::visit(
      [&](const auto& x, const auto& y) -> Array {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, Scalar> &&
                      std::is_same_v<std::decay_t<decltype(y)>, Scalar>)
          throw std::runtime_error("fixture: an operator needs an array operand");
        else
          return f(x, y);
      },
      a, b);
}

const Array& array(const Operand& o) {
  if (auto* a = std::get_if<Array>(&o)) return *a;
  throw std::runtime_error("fixture: this operation needs an array argument");
}

// kiln's version of each NumPy function and compound expression of the fixtures.
Array build_op(const std::string& op, const std::vector<Operand>& x) {
  using BinaryFn = std::function<Array(const Operand&, const Operand&)>;
  static const std::map<std::string, BinaryFn> binary_ops = {
      {"add",
       [](auto& a, auto& b) { return binary(a, b, [](auto& u, auto& v) { return u + v; }); }},
      {"subtract",
       [](auto& a, auto& b) { return binary(a, b, [](auto& u, auto& v) { return u - v; }); }},
      {"multiply",
       [](auto& a, auto& b) { return binary(a, b, [](auto& u, auto& v) { return u * v; }); }},
      {"divide",
       [](auto& a, auto& b) { return binary(a, b, [](auto& u, auto& v) { return u / v; }); }},
      {"equal",
       [](auto& a, auto& b) { return binary(a, b, [](auto& u, auto& v) { return u == v; }); }},
      {"not_equal",
       [](auto& a, auto& b) { return binary(a, b, [](auto& u, auto& v) { return u != v; }); }},
      {"less",
       [](auto& a, auto& b) { return binary(a, b, [](auto& u, auto& v) { return u < v; }); }},
      {"less_equal",
       [](auto& a, auto& b) { return binary(a, b, [](auto& u, auto& v) { return u <= v; }); }},
      {"greater",
       [](auto& a, auto& b) { return binary(a, b, [](auto& u, auto& v) { return u > v; }); }},
      {"greater_equal",
       [](auto& a, auto& b) { return binary(a, b, [](auto& u, auto& v) { return u >= v; }); }},
      {"bitwise_and",
       [](auto& a, auto& b) { return binary(a, b, [](auto& u, auto& v) { return u & v; }); }},
      {"bitwise_or",
       [](auto& a, auto& b) { return binary(a, b, [](auto& u, auto& v) { return u | v; }); }},
      {"bitwise_xor",
       [](auto& a, auto& b) { return binary(a, b, [](auto& u, auto& v) { return u ^ v; }); }},
      {"power", [](auto& a, auto& b) { return kiln::pow(a, b); }},
      {"minimum", [](auto& a, auto& b) { return kiln::minimum(a, b); }},
      {"maximum", [](auto& a, auto& b) { return kiln::maximum(a, b); }},
      {"floor_divide", [](auto& a, auto& b) { return kiln::floor_divide(a, b); }},
      {"remainder", [](auto& a, auto& b) { return kiln::remainder(a, b); }},
      {"fmod", [](auto& a, auto& b) { return kiln::fmod(a, b); }},
      {"left_shift", [](auto& a, auto& b) { return kiln::left_shift(a, b); }},
      {"right_shift", [](auto& a, auto& b) { return kiln::right_shift(a, b); }},
      {"logical_and", [](auto& a, auto& b) { return kiln::logical_and(a, b); }},
      {"logical_or", [](auto& a, auto& b) { return kiln::logical_or(a, b); }},
      {"logical_xor", [](auto& a, auto& b) { return kiln::logical_xor(a, b); }},
      {"divmod_quotient", [](auto& a, auto& b) { return kiln::divmod(a, b).first; }},
      {"divmod_remainder", [](auto& a, auto& b) { return kiln::divmod(a, b).second; }},
  // Every Math row of op_table.hpp, by its (NumPy's) name.
#define KILN_TEST_Math(name) {#name, [](auto& a, auto& b) { return kiln::name(a, b); }},
#define KILN_TEST_ROW(Enum, name, cfn, form, complex, heavy) KILN_TEST_##form(name)
#define KILN_TEST_Arith(name)
#define KILN_TEST_Compare(name)
#define KILN_TEST_Bitwise(name)
      KILN_BINARY_OPS(KILN_TEST_ROW)
#undef KILN_TEST_Math
  };
  using UnaryFn = std::function<Array(const Array&)>;
  static const std::map<std::string, UnaryFn> unary_ops = {
      {"negative", [](const Array& a) { return -a; }},
      {"invert", [](const Array& a) { return ~a; }},
      {"absolute", kiln::abs},
      {"sqrt", kiln::sqrt},
      {"exp", kiln::exp},
      {"log", kiln::log},
      {"sin", kiln::sin},
      {"cos", kiln::cos},
      {"tan", kiln::tan},
      {"tanh", kiln::tanh},
      {"real", kiln::real},
      {"imag", kiln::imag},
      {"conj", kiln::conj},
      {"floor", kiln::floor},
      {"ceil", kiln::ceil},
      {"trunc", kiln::trunc},
      {"square", kiln::square},
      {"reciprocal", kiln::reciprocal},
      {"sign", kiln::sign},
      {"isnan", kiln::isnan},
      {"isinf", kiln::isinf},
      {"isfinite", kiln::isfinite},
      {"signbit", kiln::signbit},
      {"logical_not", kiln::logical_not},
      {"degrees", kiln::degrees},
      {"radians", kiln::radians},
      {"angle", [](const Array& a) { return kiln::angle(a); }},
      {"angle_deg", [](const Array& a) { return kiln::angle(a, true); }},
      {"nan_to_num", [](const Array& a) { return kiln::nan_to_num(a); }},
      {"gelu", [](const Array& a) { return kiln::gelu(a); }},
      {"gelu_tanh", [](const Array& a) { return kiln::gelu(a, kiln::GeluApproximate::Tanh); }},
#define KILN_TEST_Math(name) {#name, kiln::name},
#define KILN_TEST_Custom(name)
      KILN_UNARY_OPS(KILN_TEST_ROW)
#undef KILN_TEST_Math
  };
  // The formulas of make_elementwise_fixtures.py's EXPRESSION_FUNCTIONS, in kiln.
  using ExprFn = Array (*)(const Array&, const Array&);
  static const std::map<std::string, ExprFn> expressions = {
      {"expr_trig",
       [](const Array& a, const Array& b) { return kiln::sin(a) * 2 + kiln::cos(b) / 3; }},
      {"expr_poly",
       [](const Array& a, const Array& b) { return (a * b - a) / (b * b + 1) + kiln::abs(a - b); }},
      {"expr_int",
       [](const Array& a, const Array& b) {
         return kiln::where(a > b, a * b - 7, kiln::minimum(a, b) + 3);
       }},
      {"expr_mixed",
       [](const Array& a, const Array& b) { return kiln::sqrt(kiln::abs(a * 2.0)) + b * 2; }},
      {"expr_clip_exp",
       [](const Array& a, const Array& b) { return kiln::exp(kiln::clip(a + b, -3.0, 3.0)) - 1; }},
      {"expr_cmp", [](const Array& a, const Array& b) { return ((a < b) & ~(a == 0)) | (b > 2); }},
      {"expr_i32_f32", [](const Array& a, const Array& b) { return a * b + a; }},
      {"expr_intdiv",
       [](const Array& a, const Array& b) {
         return kiln::floor_divide(a, b) * 3 + (a % b) - kiln::fmod(a, 7) + (a << 2) - (b >> 1);
       }},
      {"expr_ufuncs",
       [](const Array& a, const Array& b) {
         return kiln::sign(a) * kiln::trunc(b) + kiln::round(a, 1) + kiln::degrees(b) -
                kiln::square(a) % 1.5;
       }},
  };
  auto scalar = [](const Operand& o) {
    if (auto* s = std::get_if<Scalar>(&o)) return *s;
    throw std::runtime_error("fixture: this argument must be a scalar");
  };
  if (op == "round" && x.size() == 2)
    return kiln::round(array(x[0]), static_cast<int>(scalar(x[1]).as_int()));
  if (op == "nan_to_num" && x.size() == 4)
    return kiln::nan_to_num(array(x[0]), scalar(x[1]).as_double(), scalar(x[2]).as_double(),
                            scalar(x[3]).as_double());
  if (auto it = binary_ops.find(op); it != binary_ops.end() && x.size() == 2)
    return it->second(x[0], x[1]);
  if (auto it = unary_ops.find(op); it != unary_ops.end() && x.size() == 1)
    return it->second(array(x[0]));
  if (auto it = expressions.find(op); it != expressions.end() && x.size() == 2)
    return it->second(array(x[0]), array(x[1]));
  if (op == "where" && x.size() == 3) return kiln::where(array(x[0]), x[1], x[2]);
  if (op == "clip" && x.size() == 3) return kiln::clip(array(x[0]), x[1], x[2]);
  throw std::runtime_error("fixture: unknown operation " + op);
}

// The case's arguments as fresh kiln arrays (a new copy each call, so a lazy and an eager run
// share no graph node and the hash-consing cannot hand one run the other's result).
std::vector<Operand> operands(const Case& c) {
  std::vector<Operand> ops;
  for (const Arg& a : c.args) {
    if (a.input.empty()) {
      ops.emplace_back(a.scalar);
      continue;
    }
    auto it = fixtures().inputs.find(a.input);
    if (it == fixtures().inputs.end()) throw std::runtime_error("fixture: no input " + a.input);
    const Values& v = it->second;
    ops.emplace_back(kiln::asarray(v.bytes.data(), v.dtype, v.shape));
  }
  return ops;
}

// ---- comparing -------------------------------------------------------------------------------

// Relative tolerance by the precision of the result.
// (float16: NumPy rounds its float32 result, as kiln does, but their float32 functions may
// differ in the last bit, which can move the rounded result by one float16 ulp, 2^-10.)
double rtol(DType t) {
  switch (kiln::real_dtype(t)) {
    case DType::Float16:
      return 1e-3;
    case DType::BFloat16:
      return 8e-3;
    case DType::Float32:
      return 1e-6;
    default:
      return 1e-12;
  }
}

template <class T>
std::string str(T v) {
  std::ostringstream os;
  os.precision(17);
  if constexpr (is_half_v<T>)
    os << static_cast<float>(v);
  else if constexpr (std::is_same_v<T, bool>)
    os << (v ? "True" : "False");
  else if constexpr (std::is_floating_point_v<T>)
    os << v;
  else if constexpr (std::is_integral_v<T>)
    os << +v;
  else
    os << "(" << v.real() << (std::signbit(v.imag()) ? "" : "+") << v.imag() << "j)";
  return os.str();
}

// One real component: NaN matches NaN, infinities match exactly, zeros match in sign when the
// case says it is defined, anything else within rtol * scale.
template <class R>
bool close_real(R got, R want, double tol, double scale, bool signed_zero) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  if (want == 0 && got == 0) return !signed_zero || std::signbit(got) == std::signbit(want);
  return std::abs(static_cast<double>(got) - static_cast<double>(want)) <= tol * scale;
}

// `floor` is the least magnitude errors are relative to: 0 for single operations, whose
// results are within a few ulps of their own value, and 1 for compound expressions, whose
// terms (of magnitude about 1) can cancel to a much smaller result.
template <class T>
bool close(T got, T want, double tol, double floor, bool signed_zero) {
  if constexpr (is_half_v<T>) {
    // rtol's one ulp of the half (see rtol), also where the result is subnormal: its ulp is
    // then the smallest subnormal, which no relative tolerance reaches (gelu of float16's
    // 2^-24 is just above the tie between 0 and 2^-24, where a float32 result rounds either
    // way with its last bit).
    const float g = static_cast<float>(got), w = static_cast<float>(want);
    const float subnormal = std::is_same_v<T, kiln::float16> ? 0x1p-24f : 0x1p-133f;
    return close(g, w, tol, floor, signed_zero) ||
           (!(g == 0 && w == 0) && std::abs(g - w) <= subnormal);
  } else if constexpr (std::is_same_v<T, bool> || std::is_integral_v<T>) {
    return got == want;
  } else if constexpr (std::is_floating_point_v<T>) {
    return close_real(got, want, tol, std::max(std::abs(static_cast<double>(want)), floor),
                      signed_zero);
  } else {
    // Componentwise, each against the magnitude of the whole number (normwise error), taken
    // over the finite parts (a NaN or infinite part is matched exactly on its own).
    auto finite = [](double v) { return std::isfinite(v) ? std::abs(v) : 0.0; };
    double scale = std::max(std::hypot(finite(want.real()), finite(want.imag())), floor);
    return close_real(got.real(), want.real(), tol, scale, signed_zero) &&
           close_real(got.imag(), want.imag(), tol, scale, signed_zero);
  }
}

// Bit-for-bit equality, except that any NaN equals any NaN.
template <class T>
bool identical(T a, T b) {
  if constexpr (is_half_v<T>) {
    return identical(static_cast<float>(a), static_cast<float>(b));
  } else if constexpr (std::is_same_v<T, bool> || std::is_integral_v<T>) {
    return a == b;
  } else if constexpr (std::is_floating_point_v<T>) {
    return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
  } else {
    return identical(a.real(), b.real()) && identical(a.imag(), b.imag());
  }
}

// The elements of input `arg` that produced output element i (when it is not broadcast).
std::string inputs_at(const Case& c, int64_t i) {
  std::string s;
  for (const Arg& a : c.args) {
    if (!s.empty()) s += ", ";
    if (a.input.empty()) {
      s += a.text;
      continue;
    }
    const Values& v = fixtures().inputs.at(a.input);
    if (v.shape != c.expected.shape) {
      s += a.text + "[broadcast]";
      continue;
    }
    kiln::visit_dtype(v.dtype, [&](auto z) {
      using T = decltype(z);
      T x;
      std::memcpy(&x, v.bytes.data() + i * sizeof(T), sizeof(T));
      s += str(x);
    });
  }
  return s;
}

// Checks kiln's result of the case in the current mode against NumPy's. Returns the result's
// elements (as bytes), for the lazy/eager comparison.
std::vector<unsigned char> check_against_numpy(const Case& c, const char* mode) {
  Array r = build_op(c.op, operands(c));
  const Values& want = c.expected;
  std::string call = c.op + "(";
  for (size_t i = 0; i < c.args.size(); ++i) call += (i ? ", " : "") + c.args[i].text;
  call += ")";
  INFO(std::string(mode), " ", c.name, ": ", call);
  CHECK_MESSAGE(r.dtype() == want.dtype, "dtype: kiln ", kiln::dtype_name(r.dtype()), ", NumPy ",
                kiln::dtype_name(want.dtype));
  CHECK_MESSAGE(r.shape() == want.shape, "shape: kiln ", kiln::shape_str(r.shape()), ", NumPy ",
                kiln::shape_str(want.shape));
  if (r.dtype() != want.dtype || r.shape() != want.shape) return {};
  std::vector<unsigned char> bytes;
  double floor = c.op.rfind("expr_", 0) == 0 ? 1.0 : 0.0;
  kiln::visit_dtype(want.dtype, [&](auto z) {
    using T = decltype(z);
    std::vector<T> got = r.template to_vector<T>();
    int64_t n = static_cast<int64_t>(got.size()), bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      T g = got[i], w;
      std::memcpy(&w, want.bytes.data() + i * sizeof(T), sizeof(T));
      if (!close(g, w, rtol(want.dtype), floor, c.signed_zero)) {
        if (++bad <= 5)  // the first few mismatches, each with its inputs
          FAIL_CHECK("element ", i, " of ", n, ": kiln ", str(g), ", NumPy ", str(w),
                     "  (inputs: ", inputs_at(c, i), ")");
      }
      bytes.resize(bytes.size() + sizeof(T));
      std::memcpy(bytes.data() + bytes.size() - sizeof(T), &g, sizeof(T));
    }
    CHECK_MESSAGE(bad == 0, bad, " of ", n, " elements differ from NumPy");
  });
  return bytes;
}

void run_case(const Case& c) {
  if (c.error) {
    INFO(c.name, ": NumPy raises TypeError, kiln must throw DTypeError");
    {
      kiln::set_mode(kiln::Mode::Lazy);
      CHECK_THROWS_AS(build_op(c.op, operands(c)), kiln::DTypeError);
    }
    kiln::EagerScope eager;
    CHECK_THROWS_AS(build_op(c.op, operands(c)), kiln::DTypeError);
    return;
  }
  kiln::set_mode(kiln::Mode::Lazy);
  auto lazy = check_against_numpy(c, "lazy");
  std::vector<unsigned char> eager;
  {
    kiln::EagerScope scope;
    eager = check_against_numpy(c, "eager");
  }
  if (lazy.empty() || eager.size() != lazy.size()) return;
  kiln::visit_dtype(c.expected.dtype, [&](auto z) {
    using T = decltype(z);
    size_t n = lazy.size() / sizeof(T), bad = 0;
    for (size_t i = 0; i < n; ++i) {
      T l, e;
      std::memcpy(&l, lazy.data() + i * sizeof(T), sizeof(T));
      std::memcpy(&e, eager.data() + i * sizeof(T), sizeof(T));
      // A half rounds where it is stored: eager rounds every step, a fused kernel once at its
      // end (README, dtypes), so the two may differ by the rounding of the steps.
      bool same = is_half_v<T> ? close(l, e, rtol(c.expected.dtype), 0, false) : identical(l, e);
      if (!same && ++bad <= 3)
        FAIL_CHECK(c.name, ": element ", i, " lazy ", str(l), " != eager ", str(e));
    }
  });
}

// The case names' prefixes, one per op (the test cases below run them by group).
const std::vector<std::string> kPrefixes = {
    "add/",
    "subtract/",
    "multiply/",
    "divide/",
    "equal/",
    "not_equal/",
    "less/",
    "less_equal/",
    "greater/",
    "greater_equal/",
    "bitwise_and/",
    "bitwise_or/",
    "bitwise_xor/",
    "invert/",
    "negative/",
    "absolute/",
    "sqrt/",
    "exp/",
    "log/",
    "sin/",
    "cos/",
    "tan/",
    "tanh/",
    "power/",
    "minimum/",
    "maximum/",
    "where/",
    "clip/",
    "real/",
    "imag/",
    "conj/",
    "floor/",
    "ceil/",
    "expr/",
    "floor_divide/",
    "remainder/",
    "fmod/",
    "left_shift/",
    "right_shift/",
    "logical_and/",
    "logical_or/",
    "logical_xor/",
    "logical_not/",
    "divmod_quotient/",
    "divmod_remainder/",
    "trunc/",
    "round/",
    "square/",
    "reciprocal/",
    "sign/",
    "isnan/",
    "isinf/",
    "isfinite/",
    "signbit/",
    "degrees/",
    "radians/",
    "angle/",
    "angle_deg/",
    "nan_to_num/",
    "gelu/",
    "gelu_tanh/",
#define KILN_TEST_Math(name) #name "/",
    KILN_UNARY_OPS(KILN_TEST_ROW) KILN_BINARY_OPS(KILN_TEST_ROW)
#undef KILN_TEST_Math
};

// Runs the fixture cases whose name starts with one of the prefixes; returns how many.
int run_cases(const std::vector<std::string>& prefixes, bool errors = false) {
  int count = 0;
  for (const Case& c : fixtures().cases) {
    bool match = false;
    for (const auto& p : prefixes) match = match || c.name.rfind(p, 0) == 0;
    if (!match || c.error != errors) continue;
    run_case(c);
    ++count;
  }
  MESSAGE(count, " cases");
  return count;
}

}  // namespace

TEST_CASE("fixtures are complete") {
  const Fixtures& f = fixtures();
  int errors = 0;
  std::map<std::string, int> per_op;
  for (const Case& c : f.cases) {
    errors += c.error;
    per_op[c.op]++;
  }
  MESSAGE(f.cases.size(), " cases (", errors, " NumPy TypeErrors) over ", per_op.size(),
          " operations, ", f.inputs.size(), " inputs");
  // Every operation of the brief has cases.
  for (const char* op : {"add",
                         "subtract",
                         "multiply",
                         "divide",
                         "equal",
                         "not_equal",
                         "less",
                         "less_equal",
                         "greater",
                         "greater_equal",
                         "bitwise_and",
                         "bitwise_or",
                         "bitwise_xor",
                         "negative",
                         "invert",
                         "absolute",
                         "sqrt",
                         "exp",
                         "log",
                         "sin",
                         "cos",
                         "tan",
                         "tanh",
                         "power",
                         "minimum",
                         "maximum",
                         "where",
                         "clip",
                         "real",
                         "imag",
                         "conj",
                         "floor",
                         "ceil",
                         "floor_divide",
                         "remainder",
                         "fmod",
                         "left_shift",
                         "right_shift",
                         "logical_and",
                         "logical_or",
                         "logical_xor",
                         "logical_not",
                         "divmod_quotient",
                         "divmod_remainder",
                         "trunc",
                         "round",
                         "square",
                         "reciprocal",
                         "sign",
                         "isnan",
                         "isinf",
                         "isfinite",
                         "signbit",
                         "degrees",
                         "radians",
                         "angle",
                         "angle_deg",
                         "nan_to_num",
                         "gelu",
                         "gelu_tanh",
#define KILN_TEST_Math(name) #name,
                         KILN_UNARY_OPS(KILN_TEST_ROW) KILN_BINARY_OPS(KILN_TEST_ROW)
#undef KILN_TEST_Math
       }) {
    INFO(op);
    CHECK(per_op[op] > 0);
  }
  CHECK(f.cases.size() > 600);
  // Every case belongs to one of the groups the test cases below run.
  for (const Case& c : f.cases) {
    bool known = false;
    for (const auto& p : kPrefixes) known = known || c.name.rfind(p, 0) == 0;
    INFO(c.name);
    CHECK(known);
  }
}

TEST_CASE("arithmetic operators against NumPy") {
  CHECK(run_cases({"add/", "subtract/", "multiply/", "divide/"}) > 0);
}

TEST_CASE("comparisons against NumPy") {
  CHECK(run_cases({"equal/", "not_equal/", "less/", "less_equal/", "greater/", "greater_equal/"}) >
        0);
}

TEST_CASE("bitwise operators against NumPy") {
  CHECK(run_cases({"bitwise_and/", "bitwise_or/", "bitwise_xor/", "invert/"}) > 0);
}

TEST_CASE("negative and absolute against NumPy") {
  CHECK(run_cases({"negative/", "absolute/"}) > 0);
}

TEST_CASE("transcendental functions against NumPy") {
  CHECK(run_cases({"sqrt/", "exp/", "log/", "sin/", "cos/", "tan/", "tanh/"}) > 0);
}

TEST_CASE("every Math row of op_table.hpp against NumPy (log1p, expm1, arctan2, hypot, ...)") {
  std::vector<std::string> prefixes;
#define KILN_TEST_Math(name) prefixes.push_back(#name "/");
  KILN_UNARY_OPS(KILN_TEST_ROW)
  KILN_BINARY_OPS(KILN_TEST_ROW)
#undef KILN_TEST_Math
  CHECK(prefixes.size() >= 11);
  CHECK(run_cases(prefixes) > 0);
}

TEST_CASE("power against NumPy") { CHECK(run_cases({"power/"}) > 0); }

TEST_CASE("minimum and maximum against NumPy (NaN propagates)") {
  CHECK(run_cases({"minimum/", "maximum/"}) > 0);
}

TEST_CASE("where and clip against NumPy") { CHECK(run_cases({"where/", "clip/"}) > 0); }

TEST_CASE("real, imag, conj, floor, ceil against NumPy") {
  CHECK(run_cases({"real/", "imag/", "conj/", "floor/", "ceil/"}) > 0);
}

TEST_CASE("floor_divide, remainder, fmod, divmod and shifts against NumPy") {
  CHECK(run_cases({"floor_divide/", "remainder/", "fmod/", "divmod_quotient/", "divmod_remainder/",
                   "left_shift/", "right_shift/"}) > 0);
}

TEST_CASE("trunc, round (decimals) and rint against NumPy") {
  CHECK(run_cases({"trunc/", "round/", "rint/"}) > 0);
}

TEST_CASE("isnan, isinf, isfinite, signbit and the logical functions against NumPy") {
  CHECK(run_cases({"isnan/", "isinf/", "isfinite/", "signbit/", "logical_and/", "logical_or/",
                   "logical_xor/", "logical_not/"}) > 0);
}

TEST_CASE("square, reciprocal, sign, angle, degrees, radians, nan_to_num against NumPy") {
  CHECK(run_cases({"square/", "reciprocal/", "sign/", "angle/", "angle_deg/", "degrees/",
                   "radians/", "nan_to_num/"}) > 0);
}

TEST_CASE("gelu and gelu(tanh) against the float64 formulas of the fixtures") {
  CHECK(run_cases({"gelu/", "gelu_tanh/"}) > 0);
}

TEST_CASE("broadcasting compound expressions against NumPy, lazy (fused) and eager") {
  CHECK(run_cases({"expr/"}) > 0);
}

TEST_CASE("operations NumPy rejects throw DTypeError") {
  CHECK(run_cases({""}, /*errors=*/true) > 0);
}

// The operators and aliases the fixtures reach through the named functions. Expected values
// are Python's (and NumPy's) rules: % takes the divisor's sign, >> of a negative number
// floors, a shift by the width of the type or more gives 0 (or -1).
TEST_CASE("operators %, << and >>, mod and divmod, with scalars on either side") {
  Array a = kiln::asarray(std::vector<int64_t>{7, -7, 7, -7});
  Array b = kiln::asarray(std::vector<int64_t>{3, 3, -3, -3});
  using V = std::vector<int64_t>;
  CHECK((a % b).to_vector<int64_t>() == V{1, 2, -2, -1});
  CHECK(kiln::mod(a, b).to_vector<int64_t>() == V{1, 2, -2, -1});
  CHECK((10 % b).to_vector<int64_t>() == V{1, 1, -2, -2});
  auto [q, r] = kiln::divmod(a, b);
  kiln::eval({q, r});
  CHECK(q.to_vector<int64_t>() == V{2, -3, -3, 2});
  CHECK(r.to_vector<int64_t>() == V{1, 2, -2, -1});
  CHECK((a >> 1).to_vector<int64_t>() == V{3, -4, 3, -4});
  const int64_t p62 = int64_t{1} << 62;  // 7 * 2^62 and -7 * 2^62, wrapped to 64 bits
  CHECK((a << 62).to_vector<int64_t>() == V{-p62, p62, -p62, p62});
  CHECK((a >> 64).to_vector<int64_t>() == V{0, -1, 0, -1});
  CHECK((1 << b).to_vector<int64_t>() == V{8, 8, 0, 0});
  Array f = kiln::asarray(std::vector<double>{5.5, -5.5});
  CHECK((f % 2).to_vector<double>() == std::vector<double>{1.5, 0.5});
  CHECK(kiln::fmod(f, 2).to_vector<double>() == std::vector<double>{1.5, -1.5});
  CHECK_THROWS_AS(f << 1, kiln::DTypeError);
  CHECK_THROWS_AS(kiln::asarray(std::vector<std::complex<double>>{{1, 1}}) % 2, kiln::DTypeError);
  // The stream operator is still the printer.
  std::ostringstream os;
  os << b;
  CHECK(os.str() == "array([ 3,  3, -3, -3])");
}

// Not in the fixtures: NumPy raises ValueError for negative integer powers of integers.
TEST_CASE("integer to a negative scalar power throws DTypeError") {
  Array a = kiln::asarray(std::vector<int32_t>{1, 2, 3});
  CHECK_THROWS_AS(kiln::pow(a, -1), kiln::DTypeError);
  CHECK_THROWS_AS(kiln::pow(a.astype(DType::Int64), -2), kiln::DTypeError);
  // A float exponent makes the result float64 (weak float scalar), which is allowed.
  Array r = kiln::pow(a, -1.0);
  CHECK(r.dtype() == DType::Float64);
  CHECK(r.to_vector<double>() == std::vector<double>{1.0, 0.5, 1.0 / 3.0});
}

namespace {

// gelu's two formulas in long double: x Phi(x) with Phi(x) = erfc(-x / sqrt 2) / 2, and the
// tanh form 0.5 x (1 + tanh z) as x / (1 + exp(-2z)) (no cancellation where it is tiny).
long double gelu_formula(long double x, bool tanh_form) {
  if (!tanh_form) return x * erfcl(-x / sqrtl(2.0L)) / 2;
  const long double pi = 3.141592653589793238462643383279502884L;
  return x / (1 + expl(-2 * sqrtl(2 / pi) * (x + 0.044715L * x * x * x)));
}

}  // namespace

// Densely, down to results of 1e-36 (float32) and 1e-300 (float64), the farther tail included:
// the float32 forms correct the rounding of their argument, which erfc and exp magnify by 2u^2
// and |w| (uncorrected: 195 ulps at x = -13), and as PyTorch writes them (1 + erf, 1 + tanh)
// they cancel to -0 from x = -6 on. float64's argument rounds, magnified the same way: 2.3e-13
// relative at most with glibc.
TEST_CASE("gelu: within a few ulps of its formulas in long double, float32 and float64") {
  for (DType t : {DType::Float32, DType::Float64})
    for (bool tanh_form : {false, true}) {
      const bool single = t == DType::Float32;
      INFO((std::string(kiln::dtype_name(t)) + (tanh_form ? " tanh" : " erf")));
      // Past these the results are below the cut-off, or exactly x.
      Array x = kiln::linspace(single ? -14.0 : -40.0, single ? 12.0 : 40.0, 400001, true, t);
      Array y =
          kiln::gelu(x, tanh_form ? kiln::GeluApproximate::Tanh : kiln::GeluApproximate::None);
      auto xs = x.astype(DType::Float64).to_vector<double>();
      auto ys = y.astype(DType::Float64).to_vector<double>();
      double worst_ulps = 0, worst_rel = 0, at = 0;
      int counted = 0;
      for (size_t i = 0; i < xs.size(); ++i) {
        const long double want = gelu_formula(xs[i], tanh_form);
        if (fabsl(want) < (single ? 1e-36L : 1e-300L)) continue;
        ++counted;
        const double err = static_cast<double>(fabsl(ys[i] - want));
        const double ulps =
            err / std::ldexp(1.0, std::ilogb(static_cast<double>(want)) - (single ? 23 : 52));
        if (ulps > worst_ulps) worst_ulps = ulps, at = xs[i];
        worst_rel = std::max(worst_rel, err / static_cast<double>(fabsl(want)));
      }
      INFO("worst " << worst_ulps << " ulps (relative " << worst_rel << ") at x = " << at);
      CHECK(counted > 200000);
      if (single) CHECK(worst_ulps <= 8);
      CHECK(worst_rel <= (single ? 1e-6 : 1e-12));
    }
}

TEST_CASE("gelu: special values, halves through float32, and dtypes it refuses") {
  const double inf = std::numeric_limits<double>::infinity();
  for (auto mode : {kiln::GeluApproximate::None, kiln::GeluApproximate::Tanh})
    for (DType t : {DType::Float32, DType::Float64}) {
      INFO(std::string(kiln::dtype_name(t)));
      auto v =
          kiln::gelu(kiln::asarray(std::vector<double>{inf, -inf, NAN, 0.0, -0.0, -1e30}).astype(t),
                     mode)
              .astype(DType::Float64)
              .to_vector<double>();
      CHECK(v[0] == inf);
      CHECK(std::isnan(v[1]));  // -inf times a Phi of 0, as PyTorch's formula gives
      CHECK(std::isnan(v[2]));
      CHECK((v[3] == 0 && !std::signbit(v[3])));
      CHECK((v[4] == 0 && std::signbit(v[4])));
      CHECK((v[5] == 0 && std::signbit(v[5])));
    }
  // float16 and bfloat16 compute in float32 and round once, whether the kernel is fused or not.
  for (DType t : {DType::Float16, DType::BFloat16})
    for (auto mode : {kiln::GeluApproximate::None, kiln::GeluApproximate::Tanh}) {
      INFO(std::string(kiln::dtype_name(t)));
      Array x = kiln::linspace(-9.0, 9.0, 1001, true, DType::Float32).astype(t).eval();
      auto as_floats = [](const Array& a) { return a.astype(DType::Float32).to_vector<float>(); };
      Array y = kiln::gelu(x, mode);
      CHECK(y.dtype() == t);
      auto want = as_floats(kiln::gelu(x.astype(DType::Float32), mode).eval().astype(t));
      std::vector<float> eager;
      {
        kiln::EagerScope scope;
        eager = as_floats(kiln::gelu(x, mode));
      }
      auto got = as_floats(y), xs = as_floats(x);
      for (size_t i = 0, bad = 0; i < xs.size(); ++i)
        if ((got[i] != want[i] || eager[i] != want[i]) && bad++ < 3)
          FAIL_CHECK("gelu(" << xs[i] << ") = " << got[i] << " (eager " << eager[i]
                             << "), float32's rounded " << want[i]);
    }
  for (DType t : kiln::kAllDTypes) {
    if (kiln::is_floating(t)) continue;
    INFO(std::string(kiln::dtype_name(t)));
    Array x = kiln::zeros({3}, t);
    try {
      kiln::gelu(x);
      FAIL("no DTypeError");
    } catch (const kiln::DTypeError& e) {
      CHECK(std::string(e.what()).find(std::string("got ") + kiln::dtype_name(t)) !=
            std::string::npos);
      CHECK(std::string(e.what()).find("astype") != std::string::npos);
    }
    CHECK_THROWS_AS(kiln::gelu(x, kiln::GeluApproximate::Tanh), kiln::DTypeError);
  }
}

// NumPy's complex division (Smith's, multiplying by 1 / d), power (repeated multiplication
// for integer exponents) and mean (the sum times 1 / n), to the bit: kernels/scalar.cuh, which
// the host and the GPU share. NumPy 1.24 gave each value; every one differs in the last bit
// from another formula (dividing by d, exp(n log z), dividing each part by n).
TEST_CASE("complex division, integer powers and means round as NumPy's") {
  using C = std::complex<double>;
  auto one = [](C z) { return kiln::asarray(std::vector<C>{z}); };
  auto same = [](C got, C want) {
    INFO(str(got), " vs NumPy's ", str(want));
    CHECK(identical(got, want));
  };
  // |re| >= |im| of the divisor, then |re| < |im|.
  same((one({-0x1.5820c49ba5e35p+3, -0x1.d49ba5e353f7dp+1}) /
        one({-0x1.e6b851eb851ecp+3, -0x1.4a1cac083126fp+3}))
           .item<C>(),
       {0x1.3131bcf5fe8fdp-1, -0x1.4f07ba6c3e7adp-3});
  same((one({-0x1.d189374bc6a7fp+1, -0x1.fbb645a1cac08p+2}) /
        one({0x1.ec8b439581062p-2, 0x1.571a9fbe76c8bp+3}))
           .item<C>(),
       {-0x1.81d568701ca00p-1, 0x1.38bb7a0b3d15ep-2});
  using C32 = std::complex<float>;
  Array q32 = kiln::asarray(std::vector<C32>{{-0x1.8d4fe0p-2f, 0x1.cfdf3cp-1f}}) /
              kiln::asarray(std::vector<C32>{{-0x1.87b646p+3f, -0x1.e9374cp+1f}});
  CHECK(identical(q32.item<C32>(), C32(0x1.0066a6p-7f, -0x1.392aa0p-4f)));
  // z ** n for n = 2, 3, 5 and -3.
  struct Power {
    C z;
    double n;
    C want;
  };
  for (const Power& p : {Power{{-0x1.d76c8b4395810p+1, -0x1.e147ae147ae14p-2},
                               2,
                               {0x1.aafeae5bc87dap+3, 0x1.bb2378ab0c889p+1}},
                         Power{{-0x1.447ae147ae148p+1, 0x1.1604189374bc7p-1},
                               3,
                               {-0x1.c18a79b0f0f93p+3, 0x1.49dceafbfba85p+3}},
                         Power{{0x1.4189374bc6a7fp-2, -0x1.7ef9db22d0e56p-2},
                               5,
                               {-0x1.386cc51926de8p-7, 0x1.ab5893a96cf17p-6}},
                         Power{{-0x1.422d0e5604189p+2, -0x1.13b645a1cac08p+0},
                               -3,
                               {-0x1.8381c98b761c9p-8, 0x1.1be802f407257p-8}}}) {
    INFO("n = ", p.n);
    same(kiln::pow(one(p.z), one({p.n, 0})).item<C>(), p.want);
  }
  // np.mean([-4.67+0.51j, -0.89-9.8j, 0.88+0.61j]).
  Array v = kiln::asarray(std::vector<C>{{-4.67, 0.51}, {-0.89, -9.8}, {0.88, 0.61}});
  same(kiln::mean(v).item<C>(), {-0x1.8f5c28f5c28f5p+0, -0x1.7258bf258bf26p+1});
}

// An element's result must not depend on where it sits in memory or in a chunk: the same
// values at shifted positions (slices of one array) give the same bits. (Eigen evaluates the
// unaligned ends of a column with scalar std:: functions and the middle with its vectorised
// ones, which can differ in the last bit; eager and fused evaluation would then disagree.)
TEST_CASE("function results do not depend on the element's position") {
  for (DType t : {DType::Float32, DType::Float64, DType::Complex64, DType::Complex128}) {
    Array x = kiln::linspace(0.05, 40.0, 300, true, t);
    if (kiln::is_complex(t)) x = x + x * Scalar(std::complex<double>(0, 0.125));
    // Every unary Math row of graph/op_table.hpp that takes t.
    std::vector<std::pair<const char*, std::function<Array(const Array&)>>> fns;
#define KILN_POS_ROW(Enum, name, cfn, form, complex, heavy) KILN_POS_##form(name, complex)
#define KILN_POS_Custom(name, complex)
#define KILN_POS_Math(name, complex) \
  if (!kiln::is_complex(t) || (complex)) fns.push_back({#name, kiln::name});
    KILN_UNARY_OPS(KILN_POS_ROW)
    for (auto [name, f] : fns) {
      Array whole = f(x).eval();
      for (int64_t k = 1; k <= 16; ++k) {
        INFO(std::string(kiln::dtype_name(t)), " ", std::string(name), " of x[", k, ":] vs ",
             std::string(name), "(x)[", k, ":]");
        Array shifted = f(x(kiln::Slice(k, std::nullopt)));
        CHECK(kiln::array_equal(shifted, whole(kiln::Slice(k, std::nullopt)), /*equal_nan=*/true));
      }
    }
  }
}

// ---- allclose and array_equal, on which every GPU check rests ------------------------------
// Expected answers are derived by hand from NumPy's rule, |a - b| <= atol + rtol * |b|
// (asymmetric: |b|, not |a|), and were checked against NumPy 1.24. Values sit well clear of
// rounding at the boundary (many ulps), so "just inside" and "just outside" are exact claims.

TEST_CASE("allclose: just inside rtol and atol is true, just outside is false") {
  using V = std::vector<double>;
  auto close = [](const V& a, const V& b, double rtol, double atol) {
    return kiln::allclose(kiln::asarray(a), kiln::asarray(b), rtol, atol);
  };
  // float64, rtol alone: the tolerance at b = 1000 is 0.01.
  CHECK(close({1000.0099}, {1000}, 1e-5, 0));
  CHECK_FALSE(close({1000.0101}, {1000}, 1e-5, 0));
  CHECK_FALSE(close({999.9899}, {1000}, 1e-5, 0));
  // atol alone decides at b = 0 (the defaults: rtol 1e-5, atol 1e-8).
  CHECK(kiln::allclose(kiln::asarray(V{0.9e-8, -0.9e-8}), kiln::asarray(V{0, 0})));
  CHECK_FALSE(kiln::allclose(kiln::asarray(V{1.1e-8}), kiln::asarray(V{0})));
  // Both add up: 0.01 + 0.005 at b = 1000.
  CHECK(close({1000.0149}, {1000}, 1e-5, 0.005));
  CHECK_FALSE(close({1000.0151}, {1000}, 1e-5, 0.005));
  // Asymmetric: the tolerance scales with |b|, so swapping the arguments changes the answer.
  CHECK(close({100}, {111}, 0.1, 0));        // 11 <= 11.1
  CHECK_FALSE(close({111}, {100}, 0.1, 0));  // 11 > 10
  // One element outside among a thousand inside makes the whole answer false.
  V b(1000), a(1000);
  for (int i = 0; i < 1000; ++i) b[i] = 1 + i, a[i] = b[i] * (1 + 0.9e-5);
  CHECK(close(a, b, 1e-5, 0));
  a[617] = b[617] * (1 + 1.1e-5);
  CHECK_FALSE(close(a, b, 1e-5, 0));
}

TEST_CASE("allclose: float32 and complex just inside and just outside") {
  // float32, computed in float32 as in NumPy: 1000 + 2^-7 and 1000 + 2^-6 are exact, 128 and
  // 256 ulps from 1000, either side of the tolerance 0.01.
  auto f32 = [](float v) { return kiln::asarray(std::vector<float>{v}); };
  CHECK(f32(1000.0078125f).dtype() == DType::Float32);
  CHECK(kiln::allclose(f32(1000.0078125f), f32(1000), 1e-5, 0));
  CHECK_FALSE(kiln::allclose(f32(1000.015625f), f32(1000), 1e-5, 0));
  // complex128: |a - b| is the modulus, so each part within the tolerance is not enough.
  using C = std::complex<double>;
  auto c128 = [](C v) { return kiln::asarray(std::vector<C>{v}); };
  CHECK(kiln::allclose(c128({1000.006, 0.006}), c128(1000), 1e-5, 0));        // |d| = 0.0085
  CHECK_FALSE(kiln::allclose(c128({1000.008, 0.008}), c128(1000), 1e-5, 0));  // |d| = 0.0113
  // ... and |b| is the modulus too: at b = 600 + 800i the tolerance is 0.01, not 0.006.
  CHECK(kiln::allclose(c128({600.007, 800}), c128({600, 800}), 1e-5, 0));
  CHECK_FALSE(kiln::allclose(c128({600.011, 800}), c128({600, 800}), 1e-5, 0));
  // complex64.
  using C32 = std::complex<float>;
  auto c64 = [](C32 v) { return kiln::asarray(std::vector<C32>{v}); };
  CHECK(kiln::allclose(c64({1000, 0.0078125f}), c64(1000), 1e-5, 0));
  CHECK_FALSE(kiln::allclose(c64({1000, 0.015625f}), c64(1000), 1e-5, 0));
}

TEST_CASE("allclose and array_equal: NaN only with equal_nan, infinities only when equal") {
  const double nan = std::nan(""), inf = INFINITY;
  auto arr = [](std::vector<double> v) { return kiln::asarray(v); };
  CHECK_FALSE(kiln::allclose(arr({nan, 1}), arr({nan, 1})));
  CHECK(kiln::allclose(arr({nan, 1}), arr({nan, 1}), 1e-5, 1e-8, true));
  CHECK_FALSE(kiln::allclose(arr({nan}), arr({1}), 1e-5, 1e-8, true));
  CHECK_FALSE(kiln::allclose(arr({1}), arr({nan}), 1e-5, 1e-8, true));
  CHECK(kiln::allclose(arr({inf, -inf}), arr({inf, -inf})));
  CHECK_FALSE(kiln::allclose(arr({inf}), arr({1e308})));
  CHECK_FALSE(kiln::array_equal(arr({1, nan}), arr({1, nan})));
  CHECK(kiln::array_equal(arr({1, nan}), arr({1, nan}), true));
  CHECK_FALSE(kiln::array_equal(arr({1, nan}), arr({1, 2}), true));
  CHECK(kiln::array_equal(arr({inf, -inf}), arr({inf, -inf})));
  CHECK_FALSE(kiln::array_equal(arr({inf}), arr({-inf})));
}

// NumPy compares non-finite elements with ==: with b = inf a tolerance would be inf, and a GPU
// result of 1.0 where the host has inf would pass allclose(gpu, host).
TEST_CASE("allclose: an infinity in b is close only to the same infinity") {
  const double inf = INFINITY;
  auto arr = [](std::vector<double> v) { return kiln::asarray(v); };
  CHECK_FALSE(kiln::allclose(arr({1}), arr({inf})));
  CHECK_FALSE(kiln::allclose(arr({-inf}), arr({inf})));
  CHECK_FALSE(kiln::allclose(arr({1e308}), arr({inf}), 1.0, 0));
  CHECK(kiln::allclose(arr({inf, -inf, 1}), arr({inf, -inf, 1})));
  // Complex: an infinite part makes b non-finite; only the same value is close to it.
  using C = std::complex<double>;
  auto carr = [](std::vector<C> v) { return kiln::asarray(v); };
  CHECK_FALSE(kiln::allclose(carr({C(1, 0)}), carr({C(inf, 0)})));
  CHECK(kiln::allclose(carr({C(inf, 1)}), carr({C(inf, 1)})));
  CHECK(kiln::allclose(carr({C(1, 1)}), carr({C(1, 1 + 1e-12)})));
}

TEST_CASE("allclose broadcasts as NumPy; array_equal needs equal shapes") {
  Array ones23 = kiln::ones({2, 3});
  CHECK(kiln::allclose(ones23, kiln::ones({3})));
  CHECK(kiln::allclose(kiln::ones({3}), ones23));
  CHECK(kiln::allclose(ones23, kiln::asarray(std::vector<double>{1}, Shape{})));
  CHECK_FALSE(kiln::allclose(ones23, kiln::asarray<double>({1, 1, 1.001})));
  CHECK_THROWS_AS(kiln::allclose(kiln::ones({2}), kiln::ones({3})), kiln::ShapeError);
  // array_equal does not broadcast: other shapes are simply not equal.
  CHECK_FALSE(kiln::array_equal(ones23, kiln::ones({3})));
  CHECK_FALSE(kiln::array_equal(kiln::ones({2}), kiln::ones({3})));
  CHECK_FALSE(kiln::array_equal(kiln::ones({1, 3}), kiln::ones({3})));
  CHECK(kiln::array_equal(ones23, kiln::ones({2, 3})));
}

TEST_CASE("array_equal: one differing element; integers and bools") {
  std::vector<double> v(5000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<double>(i));
  Array a = kiln::asarray(v);
  CHECK(kiln::array_equal(a, kiln::asarray(v)));
  v[4321] = std::nextafter(v[4321], 2.0);  // one ulp
  CHECK_FALSE(kiln::array_equal(a, kiln::asarray(v)));
  CHECK(kiln::allclose(a, kiln::asarray(v)));  // yet close
  // int64 compared as integers: 2^53 + 1 and 2^53 are one float64 but not one int64.
  const int64_t big = int64_t{1} << 53;
  Array i = kiln::asarray(std::vector<int64_t>{big + 1, -7});
  CHECK(kiln::array_equal(i, kiln::asarray(std::vector<int64_t>{big + 1, -7})));
  CHECK_FALSE(kiln::array_equal(i, kiln::asarray(std::vector<int64_t>{big, -7})));
  CHECK_FALSE(kiln::array_equal(i, kiln::asarray(std::vector<int64_t>{big + 1, -8})));
  // allclose on integers goes through float64, as NumPy: 10^6 and 10^6 + 1 are within rtol.
  auto i32 = [](int32_t x) { return kiln::asarray(std::vector<int32_t>{x}); };
  CHECK(kiln::allclose(i32(1000000), i32(1000001)));
  CHECK_FALSE(kiln::allclose(i32(0), i32(1)));
  CHECK_FALSE(kiln::allclose(i32(1000000), i32(1000011)));  // 11 > 10.00011
  // Bools.
  const bool tf[] = {true, false}, tt[] = {true, true};
  Array b1 = kiln::asarray(tf, DType::Bool, {2}), b2 = kiln::asarray(tt, DType::Bool, {2});
  CHECK(kiln::array_equal(b1, kiln::asarray(tf, DType::Bool, {2})));
  CHECK_FALSE(kiln::array_equal(b1, b2));
  CHECK(kiln::allclose(b1, kiln::asarray(tf, DType::Bool, {2})));
  CHECK_FALSE(kiln::allclose(b1, b2));
}

namespace {

// Python's floor division and remainder in 128 bits, then wrapped to T: the reference for
// integer division by one scalar (the host divides through a double reciprocal,
// src/host/divide_by_scalar.cpp, which must not be off by one anywhere).
template <class T>
std::pair<T, T> python_divmod(T a, T d) {
  const __int128 x = a, y = d;
  __int128 q = x / y;
  if (x % y != 0 && ((x < 0) != (y < 0))) --q;
  return {static_cast<T>(static_cast<unsigned __int128>(q)),
          static_cast<T>(static_cast<unsigned __int128>(x - q * y))};
}

template <class T>
void check_division_by_scalars() {
  using L = std::numeric_limits<T>;
  std::vector<T> x;
  const T lo = L::min(), hi = L::max();
  for (T v : {lo, T(lo + 1), T(-1), T(0), T(1), T(2), T(6), T(7), T(8), T(hi - 1), hi})
    x.push_back(v);
  for (long double m : {1e3L, 3e9L, 0x1p51L, 0x1p52L, 0x1p53L, 0x1p62L, 0x1p63L})
    for (int s : {-1, 1})
      for (int e : {-1, 0, 1})
        if (long double v = s * m + e; v >= lo && v <= hi) x.push_back(static_cast<T>(v));
  for (int k = 0; k < 200; ++k) x.push_back(static_cast<T>(int64_t(0x9E3779B97F4A7C15ull * k)));
  // Every divisor up to 100 (49 * fl(1 / 49) rounds below 1), and large ones.
  std::vector<int64_t> divisors = {1000003,
                                   2147483647,
                                   (int64_t{1} << 40) + 1,
                                   (int64_t{1} << 51) - 1,
                                   int64_t{1} << 51,
                                   int64_t{1} << 52,
                                   INT64_MAX};
  for (int64_t d = 1; d <= 100; ++d) divisors.push_back(d);
  if constexpr (std::is_signed_v<T>)
    for (int64_t d :
         std::initializer_list<int64_t>{-2, -3, -7, -49, -1000003, -(int64_t{1} << 40) - 1,
                                        -(int64_t{1} << 51) + 1, INT64_MIN})
      divisors.push_back(d);
  for (int64_t d64 : divisors) {
    // The divisor's multiples and their neighbours, where a reciprocal rounds either way.
    std::vector<T> xs = x;
    for (__int128 k : std::initializer_list<__int128>{1, 3, 5, 1000, 123456789, (1 << 20) + 1,
                                                      2147483647, (int64_t{1} << 40) + 7})
      for (int sign : {-1, 1})
        for (int e : {-1, 0, 1})
          if (__int128 v = sign * k * d64 + e; v >= lo && v <= hi) xs.push_back(static_cast<T>(v));
    Array a = kiln::asarray(xs);
    const bool fits = d64 < 0 ? std::is_signed_v<T> && d64 >= static_cast<int64_t>(lo)
                              : static_cast<uint64_t>(d64) <= static_cast<uint64_t>(hi);
    if (!fits) continue;
    const T d = static_cast<T>(d64);
    INFO(kiln::dtype_name(a.dtype()), " by ", d64);
    auto q = kiln::floor_divide(a, Scalar(d64)).to_vector<T>();
    auto r = (a % Scalar(d64)).to_vector<T>();
    REQUIRE(q.size() == xs.size());
    for (size_t i = 0; i < xs.size(); ++i) {
      auto [wq, wr] = python_divmod(xs[i], d);
      INFO("x = ", int64_t(xs[i]), " (", uint64_t(xs[i]), ")");
      CHECK(q[i] == wq);
      CHECK(r[i] == wr);
    }
  }
}

}  // namespace

TEST_CASE("integer floor division and remainder by a scalar are Python's, at every extreme") {
  check_division_by_scalars<int8_t>();
  check_division_by_scalars<int16_t>();
  check_division_by_scalars<int32_t>();
  check_division_by_scalars<int64_t>();
  check_division_by_scalars<uint8_t>();
  check_division_by_scalars<uint16_t>();
  check_division_by_scalars<uint32_t>();
  check_division_by_scalars<uint64_t>();
}
