#include "host/column_ops.hpp"

// GCC 12 reports its own AVX-512 intrinsics' deliberate "undefined" registers as used
// uninitialized once Eigen's vectorised sin/cos are inlined into fixed-size blocks.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <Eigen/Core>
#pragma GCC diagnostic pop
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "../../kernels/scalar.cuh"  // NumPy's scalar semantics, as the kernels have them
#include "host/convert.hpp"
#include "host/half_columns.hpp"

namespace kiln::cpu {
namespace {

using graph::BinaryOp;
using graph::UnaryOp;

template <class T>
using Col = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <class T>
using CCol = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

// Operands of type T: bool ones are read as bytes and tested (kiln's bools are 0 or 1), since
// GCC vectorises no loop that loads a bool (a cast of a mask to int64 ran element by element).
template <class T>
using Stored = std::conditional_t<std::is_same_v<T, bool>, unsigned char, T>;
template <class T>
T value_of(Stored<T> v) {
  if constexpr (std::is_same_v<T, bool>)
    return v != 0;
  else
    return v;
}

template <class T, class F>
void map1(const void* a, void* out, int64_t n, F f) {
  auto* x = static_cast<const Stored<T>*>(a);
  auto* r = static_cast<std::invoke_result_t<F, T>*>(out);
  for (int64_t i = 0; i < n; ++i) r[i] = f(value_of<T>(x[i]));
}

template <class T, class F>
void map2(const void* a, const void* b, void* out, int64_t n, F f) {
  auto* x = static_cast<const Stored<T>*>(a);
  auto* y = static_cast<const Stored<T>*>(b);
  auto* r = static_cast<std::invoke_result_t<F, T, T>*>(out);
  for (int64_t i = 0; i < n; ++i) r[i] = f(value_of<T>(x[i]), value_of<T>(y[i]));
}

// NumPy's complex product, division and power, as the kernels compute them (kernels/scalar.cuh,
// on the parts).
template <class T>
scalar::parts<typename T::value_type> parts_of(T a) {
  return {a.real(), a.imag()};
}
template <class T>
T complex_multiply(T a, T b) {
  auto r = scalar::complex_multiply(parts_of(a), parts_of(b));
  return T(r.re, r.im);
}
template <class T>
T complex_divide(T a, T b) {
  auto r = scalar::complex_divide(parts_of(a), parts_of(b));
  return T(r.re, r.im);
}
// Where no exact rule applies, the C library's cpow, as NumPy's npy_cpow.
template <class T>
T complex_pow(T a, T b) {
  using P = scalar::parts<typename T::value_type>;
  auto r = scalar::complex_pow(parts_of(a), parts_of(b), [](P x, P y) {
    return parts_of(std::pow(T(x.re, x.im), T(y.re, y.im)));
  });
  return T(r.re, r.im);
}

// Eigen's vectorised exp clamps its argument near the underflow limit, and its log treats
// subnormal inputs as the smallest normal number: redo those (rare) elements with libm.
template <class T>
void fix_subnormal_range(UnaryOp op, const T* x, T* r, int64_t n) {
  constexpr T tiny = std::numeric_limits<T>::min();
  const T exp_lo = std::log(tiny);  // below it, exp(x) is subnormal or zero
  int64_t count = 0;                // vectorised scans: fixes are rare
  if (op == UnaryOp::Exp)
    for (int64_t i = 0; i < n; ++i) count += x[i] < exp_lo;
  else
    for (int64_t i = 0; i < n; ++i) count += (x[i] > 0) & (x[i] < tiny);
  if (count == 0) return;
  for (int64_t i = 0; i < n; ++i) {
    if (op == UnaryOp::Exp && x[i] < exp_lo) r[i] = std::exp(x[i]);
    if (op == UnaryOp::Log && x[i] > 0 && x[i] < tiny) r[i] = std::log(x[i]);
  }
}

// Applies f, an Eigen expression of one column, to fixed-size blocks evaluated into aligned
// storage, so that every element goes through Eigen's vectorised functions. On a plain column
// Eigen hands the unaligned ends to the scalar std:: functions, whose results can differ in
// the last bit: an element's result would depend on its address, and eager and fused
// evaluation (or a slice and the whole array) would disagree.
template <class T, class F>
void blocked(const void* a, void* out, int64_t n, F f) {
  constexpr int64_t kBlock = 64;
  using Block = Eigen::Array<T, kBlock, 1>;
  const T* x = static_cast<const T*>(a);
  T* r = static_cast<T*>(out);
  Block res;
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    res = f(Eigen::Map<const Block>(x + i));
    Eigen::Map<Block>(r + i) = res;
  }
  if (i < n) {  // the ragged end, padded with zeros
    Block in = Block::Zero();
    std::copy(x + i, x + n, in.data());
    res = f(in);
    std::copy(res.data(), res.data() + (n - i), r + i);
  }
}

// The Math ops of graph/op_table.hpp, element by element through std::cfn: every op's
// default, which float_unary and arithmetic override where Eigen vectorises an op or the C++
// library's complex function is not NumPy's.
#define KILN_HOST_Custom(Enum, cfn, complex)
#define KILN_HOST_Arith(Enum, cfn, complex)
#define KILN_HOST_Compare(Enum, cfn, complex)
#define KILN_HOST_Bitwise(Enum, cfn, complex)
#define KILN_HOST_UNARY_Math(Enum, cfn, complex)                                  \
  case UnaryOp::Enum:                                                             \
    if constexpr (!is_complex_v<T> || (complex))                                  \
      return map1<T>(a, out, n, [](T v) { return static_cast<T>(std::cfn(v)); }); \
    break;
#define KILN_HOST_UNARY(Enum, name, cfn, form, complex, heavy) \
  KILN_HOST_UNARY_##form(Enum, cfn, complex)
#define KILN_HOST_UNARY_Custom KILN_HOST_Custom
#define KILN_HOST_BINARY_Math(Enum, cfn, complex)                                            \
  case BinaryOp::Enum:                                                                       \
    if constexpr (!is_complex_v<T> || (complex))                                             \
      return map2<T>(a, b, out, n, [](T u, T v) { return static_cast<T>(std::cfn(u, v)); }); \
    break;
#define KILN_HOST_BINARY(Enum, name, cfn, form, complex, heavy) \
  KILN_HOST_BINARY_##form(Enum, cfn, complex)
#define KILN_HOST_BINARY_Arith KILN_HOST_Arith
#define KILN_HOST_BINARY_Compare KILN_HOST_Compare
#define KILN_HOST_BINARY_Bitwise KILN_HOST_Bitwise

template <class T>
void std_math_unary(UnaryOp op, const void* a, void* out, int64_t n) {
  switch (op) {
    KILN_UNARY_OPS(KILN_HOST_UNARY)
    default:
      break;
  }
  throw std::logic_error(std::string("host: no ") + graph::op_name(op) + " for this dtype");
}

template <class T>
void std_math_binary(BinaryOp op, const void* a, const void* b, void* out, int64_t n) {
  switch (op) {
    KILN_BINARY_OPS(KILN_HOST_BINARY)
    default:
      break;
  }
  throw std::logic_error(std::string("host: no ") + graph::op_name(op) + " for this dtype");
}

template <class T>
void float_unary(UnaryOp op, const void* a, void* out, int64_t n) {
  switch (op) {
    case UnaryOp::Sqrt:
      // The C library's sqrt: correctly rounded for real numbers, as IEEE, NumPy and CUDA are
      // (Eigen's vectorised sqrt is an approximation that is off by an ulp for a third of all
      // floats, flushes subnormals to zero and turns -0 into +0), and for complex numbers
      // with C99's branch cut (Eigen's is on the wrong side for a -0 or infinite imaginary part).
      return map1<T>(a, out, n, [](T v) { return std::sqrt(v); });
    case UnaryOp::Exp:
    case UnaryOp::Log:
      if (op == UnaryOp::Exp)
        blocked<T>(a, out, n, [](const auto& x) { return x.exp(); });
      else
        blocked<T>(a, out, n, [](const auto& x) { return x.log(); });
      if constexpr (!is_complex_v<T>)
        fix_subnormal_range(op, static_cast<const T*>(a), static_cast<T*>(out), n);
      return;
    case UnaryOp::Sin:
      return blocked<T>(a, out, n, [](const auto& x) { return x.sin(); });
    case UnaryOp::Cos:
      return blocked<T>(a, out, n, [](const auto& x) { return x.cos(); });
    case UnaryOp::Tan:
      return map1<T>(a, out, n, [](T v) { return std::tan(v); });
    case UnaryOp::Tanh:
      return blocked<T>(a, out, n, [](const auto& x) { return x.tanh(); });
    default:
      break;
  }
  if constexpr (!is_complex_v<T>) {
    CCol<T> x(static_cast<const T*>(a), n);
    Col<T> r(static_cast<T*>(out), n);
    if (op == UnaryOp::Floor) return void(r = x.floor());
    if (op == UnaryOp::Ceil) return void(r = x.ceil());
  }
  std_math_unary<T>(op, a, out, n);
}

template <class T>
void typed_unary(UnaryOp op, const void* a, void* out, int64_t n) {
  if constexpr (is_complex_v<T>) {
    using R = typename T::value_type;
    if (op == UnaryOp::Abs) return map1<T>(a, out, n, [](T v) { return std::abs(v); });
    if (op == UnaryOp::Real) return map1<T>(a, out, n, [](T v) { return v.real(); });
    if (op == UnaryOp::Imag) return map1<T>(a, out, n, [](T v) { return v.imag(); });
    if (op == UnaryOp::Conj) return map1<T>(a, out, n, [](T v) { return std::conj(v); });
    if (op == UnaryOp::Neg) return map1<T>(a, out, n, [](T v) { return -v; });
    (void)sizeof(R);
    return float_unary<T>(op, a, out, n);
  } else if constexpr (std::is_same_v<T, bool>) {
    if (op == UnaryOp::Not) return map1<T>(a, out, n, [](bool v) { return !v; });
    if (op == UnaryOp::Abs) return map1<T>(a, out, n, [](bool v) { return v; });
  } else if constexpr (std::is_integral_v<T>) {
    if (op == UnaryOp::Neg) return map1<T>(a, out, n, scalar::wrap_neg<T>);
    if (op == UnaryOp::Not) return map1<T>(a, out, n, [](T v) { return static_cast<T>(~v); });
    if (op == UnaryOp::Abs) return map1<T>(a, out, n, scalar::int_abs<T>);
  } else {
    if (op == UnaryOp::Neg) return map1<T>(a, out, n, [](T v) { return -v; });
    if (op == UnaryOp::Abs) return map1<T>(a, out, n, [](T v) { return std::abs(v); });
    // kernels/scalar.cuh's, as the kernels' (the builder gives them real floats only)
    if (op == UnaryOp::Gelu) return map1<T>(a, out, n, [](T v) { return scalar::gelu(v); });
    if (op == UnaryOp::GeluTanh)
      return map1<T>(a, out, n, [](T v) { return scalar::gelu_tanh(v); });
    return float_unary<T>(op, a, out, n);
  }
  throw std::logic_error("host: unary op not defined for this dtype");
}

template <class T>
void arithmetic(BinaryOp op, const void* a, const void* b, void* out, int64_t n) {
  if constexpr (std::is_same_v<T, bool>) {
    if (op == BinaryOp::Add || op == BinaryOp::Or || op == BinaryOp::Maximum)
      return map2<T>(a, b, out, n, [](bool x, bool y) { return x || y; });
    if (op == BinaryOp::Mul || op == BinaryOp::And || op == BinaryOp::Minimum)
      return map2<T>(a, b, out, n, [](bool x, bool y) { return x && y; });
    if (op == BinaryOp::Xor) return map2<T>(a, b, out, n, [](bool x, bool y) { return x != y; });
  } else if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case BinaryOp::Add:
        return map2<T>(a, b, out, n, scalar::wrap_add<T>);
      case BinaryOp::Sub:
        return map2<T>(a, b, out, n, scalar::wrap_sub<T>);
      case BinaryOp::Mul:
        return map2<T>(a, b, out, n, scalar::wrap_mul<T>);
      case BinaryOp::Pow:
        return map2<T>(a, b, out, n, scalar::int_pow<T>);
      case BinaryOp::Minimum:
        return map2<T>(a, b, out, n, [](T x, T y) { return std::min(x, y); });
      case BinaryOp::Maximum:
        return map2<T>(a, b, out, n, [](T x, T y) { return std::max(x, y); });
      case BinaryOp::And:
        return map2<T>(a, b, out, n, [](T x, T y) { return T(x & y); });
      case BinaryOp::Or:
        return map2<T>(a, b, out, n, [](T x, T y) { return T(x | y); });
      case BinaryOp::Xor:
        return map2<T>(a, b, out, n, [](T x, T y) { return T(x ^ y); });
      case BinaryOp::FloorDivide:
        return map2<T>(a, b, out, n, scalar::int_floor_divide<T>);
      case BinaryOp::Remainder:
        return map2<T>(a, b, out, n, scalar::int_remainder<T>);
      case BinaryOp::Fmod:
        return map2<T>(a, b, out, n, scalar::int_fmod<T>);
      case BinaryOp::LeftShift:
        return map2<T>(a, b, out, n, scalar::shift_left<T>);
      case BinaryOp::RightShift:
        return map2<T>(a, b, out, n, scalar::shift_right<T>);
      default:
        break;
    }
  } else {
    CCol<T> x(static_cast<const T*>(a), n), y(static_cast<const T*>(b), n);
    Col<T> r(static_cast<T*>(out), n);
    switch (op) {
      case BinaryOp::Add:
        r = x + y;
        return;
      case BinaryOp::Sub:
        r = x - y;
        return;
      case BinaryOp::Mul:
        // Eigen's scalar path (the unaligned ends) multiplies complex numbers with C99's
        // infinity recovery, its vectorised one as NumPy does: take NumPy's everywhere.
        if constexpr (is_complex_v<T>)
          return map2<T>(a, b, out, n, complex_multiply<T>);
        else
          r = x * y;
        return;
      case BinaryOp::Div:
        if constexpr (is_complex_v<T>)
          return map2<T>(a, b, out, n, complex_divide<T>);
        else
          r = x / y;
        return;
      case BinaryOp::Pow:
        if constexpr (is_complex_v<T>)
          return map2<T>(a, b, out, n, complex_pow<T>);
        else
          return map2<T>(a, b, out, n, [](T u, T v) { return T(std::pow(u, v)); });
      case BinaryOp::Minimum:
      case BinaryOp::Maximum: {
        bool mx = op == BinaryOp::Maximum;
        if constexpr (!is_complex_v<T>)  // NaN wins, as in NumPy's minimum/maximum
          return map2<T>(a, b, out, n, mx ? scalar::maximum<T> : scalar::minimum<T>);
        return map2<T>(a, b, out, n, [mx](T u, T v) {  // lexicographic, as kernels/complex.cuh
          if (is_nan(u)) return u;
          if (is_nan(v)) return v;
          return less(u, v) == mx ? v : u;
        });
      }
      case BinaryOp::FloorDivide:
      case BinaryOp::Remainder:
      case BinaryOp::Fmod:
        if constexpr (!is_complex_v<T>) {  // kernels/scalar.cuh's NumPy rules; fmod is exact
          if (op == BinaryOp::FloorDivide)
            return map2<T>(a, b, out, n, scalar::float_floor_divide<T>);
          if (op == BinaryOp::Remainder) return map2<T>(a, b, out, n, scalar::float_remainder<T>);
          return map2<T>(a, b, out, n, [](T u, T v) { return T(std::fmod(u, v)); });
        }
        break;
      default:
        return std_math_binary<T>(op, a, b, out, n);
    }
  }
  throw std::logic_error("host: binary op not defined for this dtype");
}

template <class T>
void comparison(BinaryOp op, const void* a, const void* b, void* out, int64_t n) {
  switch (op) {
    case BinaryOp::Eq:
      return map2<T>(a, b, out, n, [](T x, T y) { return x == y; });
    case BinaryOp::Ne:
      return map2<T>(a, b, out, n, [](T x, T y) { return x != y; });
    case BinaryOp::Lt:
      return map2<T>(a, b, out, n, [](T x, T y) { return less(x, y); });
    case BinaryOp::Gt:
      return map2<T>(a, b, out, n, [](T x, T y) { return less(y, x); });
    // x <= y is "not y < x" only without NaN; NaN compares false everywhere.
    case BinaryOp::Le:
      return map2<T>(a, b, out, n,
                     [](T x, T y) { return !is_nan(x) && !is_nan(y) && !less(y, x); });
    case BinaryOp::Ge:
      return map2<T>(a, b, out, n,
                     [](T x, T y) { return !is_nan(x) && !is_nan(y) && !less(x, y); });
    default:
      throw std::logic_error("host: not a comparison");
  }
}

}  // namespace

void fill_column(DType t, const Scalar& v, void* out, int64_t n) {
  visit_dtype(t, [&](auto z) {
    using T = decltype(z);
    T value = v.as<T>();
    auto* r = static_cast<T*>(out);
    std::fill(r, r + n, value);
  });
}

void cast_column(DType from, DType to, const void* a, void* out, int64_t n) {
  if (cast_half_column(from, to, a, out, n)) return;
  visit_dtype(from, [&](auto f) {
    visit_dtype(to, [&](auto t) {
      using F = decltype(f);
      using T = decltype(t);
      map1<F>(a, out, n, [](F v) { return convert<T>(v); });
    });
  });
}

// float16 and bfloat16 values are computed in float32 (src/plan/lower.cpp widens them):
// operations never see them.
[[noreturn]] void half_operand() {
  throw std::logic_error(
      "host: an operation on float16/bfloat16 storage (kiln bug: lowering "
      "computes them in float32)");
}

void unary_column(UnaryOp op, DType in, const void* a, void* out, int64_t n) {
  visit_dtype(in, [&](auto z) {
    if constexpr (is_half_v<decltype(z)>)
      half_operand();
    else
      typed_unary<decltype(z)>(op, a, out, n);
  });
}

void binary_column(BinaryOp op, DType t, const void* a, const void* b, void* out, int64_t n) {
  visit_dtype(t, [&](auto z) {
    using T = decltype(z);
    if constexpr (is_half_v<T>)
      half_operand();
    else if (graph::is_comparison(op))
      comparison<T>(op, a, b, out, n);
    else
      arithmetic<T>(op, a, b, out, n);
  });
}

void where_column(DType t, const bool* cond, const void* x, const void* y, void* out, int64_t n) {
  visit_dtype(t, [&](auto z) {
    using T = decltype(z);
    auto* xs = static_cast<const T*>(x);
    auto* ys = static_cast<const T*>(y);
    auto* r = static_cast<T*>(out);
    // Both values read first, the condition as bytes: so GCC vectorises the select (it does
    // not vectorise a conditional load, nor a bool's test).
    const auto* c = reinterpret_cast<const unsigned char*>(cond);
    for (int64_t i = 0; i < n; ++i) {
      const T x = xs[i], y = ys[i];
      r[i] = c[i] ? x : y;
    }
  });
}

}  // namespace kiln::cpu
