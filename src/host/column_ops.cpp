#include "host/column_ops.hpp"

#include <Eigen/Core>
#include <cmath>
#include <stdexcept>

#include "host/convert.hpp"

namespace kiln::cpu {
namespace {

using graph::BinaryOp;
using graph::UnaryOp;

template <class T>
using Col = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <class T>
using CCol = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

template <class T, class F>
void map1(const void* a, void* out, int64_t n, F f) {
  auto* x = static_cast<const T*>(a);
  auto* r = static_cast<std::invoke_result_t<F, T>*>(out);
  for (int64_t i = 0; i < n; ++i) r[i] = f(x[i]);
}

template <class T, class F>
void map2(const void* a, const void* b, void* out, int64_t n, F f) {
  auto* x = static_cast<const T*>(a);
  auto* y = static_cast<const T*>(b);
  auto* r = static_cast<std::invoke_result_t<F, T, T>*>(out);
  for (int64_t i = 0; i < n; ++i) r[i] = f(x[i], y[i]);
}

// Integer arithmetic wraps around, as NumPy's does; unsigned arithmetic makes that defined.
template <class T>
using U = std::make_unsigned_t<T>;

template <class T>
bool is_nan(T v) {
  if constexpr (is_complex_v<T>) return std::isnan(v.real()) || std::isnan(v.imag());
  else if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  else return false;
}

// NumPy orders complex numbers lexicographically (real part, then imaginary part).
template <class T>
bool less(T a, T b) {
  if constexpr (is_complex_v<T>)
    return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
  else return a < b;
}

template <class T>
T int_pow(T base, T exp) {
  if (exp < 0) return base == 1 ? 1 : base == -1 ? (exp % 2 ? -1 : 1) : 0;
  U<T> result = 1, b = static_cast<U<T>>(base);
  for (auto e = static_cast<U<T>>(exp); e; e >>= 1, b *= b)
    if (e & 1) result *= b;
  return static_cast<T>(result);
}

template <class T>
void float_unary(UnaryOp op, const void* a, void* out, int64_t n) {
  CCol<T> x(static_cast<const T*>(a), n);
  Col<T> r(static_cast<T*>(out), n);
  switch (op) {
    case UnaryOp::Sqrt: r = x.sqrt(); return;
    case UnaryOp::Exp: r = x.exp(); return;
    case UnaryOp::Log: r = x.log(); return;
    case UnaryOp::Sin: r = x.sin(); return;
    case UnaryOp::Cos: r = x.cos(); return;
    case UnaryOp::Tan: return map1<T>(a, out, n, [](T v) { return std::tan(v); });
    case UnaryOp::Tanh: r = x.tanh(); return;
    default: break;
  }
  if constexpr (!is_complex_v<T>) {
    if (op == UnaryOp::Floor) return void(r = x.floor());
    if (op == UnaryOp::Ceil) return void(r = x.ceil());
  }
  throw std::logic_error("host: unary op not defined for this dtype");
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
    if (op == UnaryOp::Neg)
      return map1<T>(a, out, n, [](T v) { return static_cast<T>(U<T>(0) - U<T>(v)); });
    if (op == UnaryOp::Not) return map1<T>(a, out, n, [](T v) { return static_cast<T>(~v); });
    if (op == UnaryOp::Abs)  // abs(INT_MIN) stays INT_MIN, as in NumPy
      return map1<T>(a, out, n, [](T v) { return v < 0 ? static_cast<T>(U<T>(0) - U<T>(v)) : v; });
  } else {
    if (op == UnaryOp::Neg) return map1<T>(a, out, n, [](T v) { return -v; });
    if (op == UnaryOp::Abs) return map1<T>(a, out, n, [](T v) { return std::abs(v); });
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
      case BinaryOp::Add: return map2<T>(a, b, out, n, [](T x, T y) { return T(U<T>(x) + U<T>(y)); });
      case BinaryOp::Sub: return map2<T>(a, b, out, n, [](T x, T y) { return T(U<T>(x) - U<T>(y)); });
      case BinaryOp::Mul: return map2<T>(a, b, out, n, [](T x, T y) { return T(U<T>(x) * U<T>(y)); });
      case BinaryOp::Pow: return map2<T>(a, b, out, n, int_pow<T>);
      case BinaryOp::Minimum: return map2<T>(a, b, out, n, [](T x, T y) { return std::min(x, y); });
      case BinaryOp::Maximum: return map2<T>(a, b, out, n, [](T x, T y) { return std::max(x, y); });
      case BinaryOp::And: return map2<T>(a, b, out, n, [](T x, T y) { return T(x & y); });
      case BinaryOp::Or: return map2<T>(a, b, out, n, [](T x, T y) { return T(x | y); });
      case BinaryOp::Xor: return map2<T>(a, b, out, n, [](T x, T y) { return T(x ^ y); });
      default: break;
    }
  } else {
    CCol<T> x(static_cast<const T*>(a), n), y(static_cast<const T*>(b), n);
    Col<T> r(static_cast<T*>(out), n);
    switch (op) {
      case BinaryOp::Add: r = x + y; return;
      case BinaryOp::Sub: r = x - y; return;
      case BinaryOp::Mul: r = x * y; return;
      case BinaryOp::Div: r = x / y; return;
      case BinaryOp::Pow: return map2<T>(a, b, out, n, [](T u, T v) { return T(std::pow(u, v)); });
      case BinaryOp::Minimum:
      case BinaryOp::Maximum: {
        bool mx = op == BinaryOp::Maximum;
        // NaN wins, as in NumPy's minimum/maximum.
        return map2<T>(a, b, out, n, [mx](T u, T v) {
          if (is_nan(u)) return u;
          if (is_nan(v)) return v;
          return less(u, v) == mx ? v : u;
        });
      }
      default: break;
    }
  }
  throw std::logic_error("host: binary op not defined for this dtype");
}

template <class T>
void comparison(BinaryOp op, const void* a, const void* b, void* out, int64_t n) {
  switch (op) {
    case BinaryOp::Eq: return map2<T>(a, b, out, n, [](T x, T y) { return x == y; });
    case BinaryOp::Ne: return map2<T>(a, b, out, n, [](T x, T y) { return x != y; });
    case BinaryOp::Lt: return map2<T>(a, b, out, n, [](T x, T y) { return less(x, y); });
    case BinaryOp::Gt: return map2<T>(a, b, out, n, [](T x, T y) { return less(y, x); });
    // x <= y is "not y < x" only without NaN; NaN compares false everywhere.
    case BinaryOp::Le:
      return map2<T>(a, b, out, n, [](T x, T y) { return !is_nan(x) && !is_nan(y) && !less(y, x); });
    case BinaryOp::Ge:
      return map2<T>(a, b, out, n, [](T x, T y) { return !is_nan(x) && !is_nan(y) && !less(x, y); });
    default: throw std::logic_error("host: not a comparison");
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
  visit_dtype(from, [&](auto f) {
    visit_dtype(to, [&](auto t) {
      using F = decltype(f);
      using T = decltype(t);
      map1<F>(a, out, n, [](F v) { return convert<T>(v); });
    });
  });
}

void unary_column(UnaryOp op, DType in, const void* a, void* out, int64_t n) {
  visit_dtype(in, [&](auto z) { typed_unary<decltype(z)>(op, a, out, n); });
}

void binary_column(BinaryOp op, DType t, const void* a, const void* b, void* out, int64_t n) {
  visit_dtype(t, [&](auto z) {
    using T = decltype(z);
    if (graph::is_comparison(op)) comparison<T>(op, a, b, out, n);
    else arithmetic<T>(op, a, b, out, n);
  });
}

void where_column(DType t, const bool* cond, const void* x, const void* y, void* out, int64_t n) {
  visit_dtype(t, [&](auto z) {
    using T = decltype(z);
    auto* xs = static_cast<const T*>(x);
    auto* ys = static_cast<const T*>(y);
    auto* r = static_cast<T*>(out);
    for (int64_t i = 0; i < n; ++i) r[i] = cond[i] ? xs[i] : ys[i];
  });
}

}  // namespace kiln::cpu
