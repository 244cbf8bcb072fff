#include "host/reduce.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "host/convert.hpp"

namespace kiln::cpu {
namespace {

using graph::ReduceOp;

template <class T>
T& val(Accumulator& a) {
  return *reinterpret_cast<T*>(a.value);
}
template <class T>
const T& val(const Accumulator& a) {
  return *reinterpret_cast<const T*>(a.value);
}

// Does candidate c replace current m? NaN wins and stays (NumPy propagates it; argmax
// reports the first NaN).
template <class T>
bool better(ReduceOp op, T c, T m) {
  if (is_nan(m)) return false;
  if (is_nan(c)) return true;
  bool want_max = op == ReduceOp::Max || op == ReduceOp::ArgMax;
  return want_max ? less(m, c) : less(c, m);
}

template <class T>
T add(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return T(std::make_unsigned_t<T>(a) + std::make_unsigned_t<T>(b));  // wraps, as NumPy
  else
    return a + b;
}
template <class T>
T mul(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a && b;
  else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return T(std::make_unsigned_t<T>(a) * std::make_unsigned_t<T>(b));
  else
    return a * b;
}

template <class T>
void combine(ReduceOp op, T v, int64_t index, Accumulator& acc) {
  T& a = val<T>(acc);
  if (!acc.set) {
    a = v;
    acc.index = index;
    acc.set = true;
    return;
  }
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Mean:
      a = add(a, v);
      break;
    case ReduceOp::Prod:
      a = mul(a, v);
      break;
    case ReduceOp::Any:  // inputs are bool: the builder casts them
      if constexpr (std::is_same_v<T, bool>) a = a || v;
      break;
    case ReduceOp::All:
      if constexpr (std::is_same_v<T, bool>) a = a && v;
      break;
    default:
      if (better(op, v, a)) a = v, acc.index = index;
  }
}

// Sums (or multiplies) x[0..n) in an order that depends only on n, never on the address:
// Eigen's sum() and prod() of a vector peel to an aligned start, so the same values at another
// address gave other bits (eager and fused results differed). Element i goes to lane
// i % kLanes; Eigen reduces the kLanes x m matrix row-wise (vectorised, unaligned loads), then
// the tail joins the first lanes and the lanes combine pairwise.
template <bool kProd, class T>
T ordered_fold(const T* x, int64_t n) {
  constexpr int kLanes = 256 / sizeof(T);
  auto f = [](T a, T b) { return kProd ? a * b : a + b; };
  const int64_t m = n / kLanes;
  if (m == 0) {
    T r = x[0];
    for (int64_t i = 1; i < n; ++i) r = f(r, x[i]);
    return r;
  }
  Eigen::Map<const Eigen::Array<T, kLanes, Eigen::Dynamic>> cols(x, kLanes, m);
  Eigen::Array<T, kLanes, 1> lane;
  if constexpr (kProd)
    lane = cols.rowwise().prod();
  else
    lane = cols.rowwise().sum();
  for (int64_t k = 0; m * kLanes + k < n; ++k) lane[k] = f(lane[k], x[m * kLanes + k]);
  for (int w = kLanes / 2; w > 0; w /= 2)
    for (int k = 0; k < w; ++k) lane[k] = f(lane[k], lane[k + w]);
  return lane[0];
}

// The reduction of one contiguous segment, vectorised where Eigen can.
template <class T>
void fold_typed(ReduceOp op, const T* x, int64_t n, int64_t first, Accumulator& acc) {
  if (n == 0) return;
  using Col = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
  if constexpr (std::is_floating_point_v<T> || is_complex_v<T>) {
    if (op == ReduceOp::Sum || op == ReduceOp::Mean)
      return combine(op, ordered_fold<false>(x, n), first, acc);
    if (op == ReduceOp::Prod) return combine(op, ordered_fold<true>(x, n), first, acc);
  }
  if constexpr (std::is_same_v<T, bool>) {
    if (op == ReduceOp::Any) return combine(op, Col(x, n).any(), first, acc);
    if (op == ReduceOp::All) return combine(op, Col(x, n).all(), first, acc);
  }
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // Integer sums and products wrap, so they are associative, and a minimum or maximum is
    // one of the values whatever the order: the segment's result first, in loops GCC
    // vectorises, then combined, gives the element-by-element fold's value.
    auto segment = [&](auto f) {
      T r = x[0];
      for (int64_t i = 1; i < n; ++i) r = f(r, x[i]);
      combine(op, r, first, acc);
    };
    switch (op) {
      case ReduceOp::Sum:
      case ReduceOp::Mean:
        return segment([](T a, T b) { return add(a, b); });
      case ReduceOp::Prod:
        return segment([](T a, T b) { return mul(a, b); });
      case ReduceOp::Min:
        return segment([](T a, T b) { return std::min(a, b); });
      case ReduceOp::Max:
        return segment([](T a, T b) { return std::max(a, b); });
      default:
        break;
    }
  }
  for (int64_t i = 0; i < n; ++i) combine(op, x[i], first + i, acc);
}

}  // namespace

// float16 and bfloat16 accumulate in float32 (graph::accumulation_dtype): folds never see them.
[[noreturn]] void half_fold() {
  throw std::logic_error("host: a fold of float16/bfloat16 (kiln bug: they accumulate in float32)");
}

void fold(ReduceOp op, DType t, const void* values, int64_t n, int64_t first, Accumulator& acc) {
  visit_dtype(t, [&](auto z) {
    using T = decltype(z);
    if constexpr (is_half_v<T>)
      half_fold();
    else
      fold_typed<T>(op, static_cast<const T*>(values), n, first, acc);
  });
}

void merge(ReduceOp op, DType t, const Accumulator& later, Accumulator& acc) {
  if (!later.set) return;
  visit_dtype(t, [&](auto z) {
    using T = decltype(z);
    if constexpr (is_half_v<T>)
      half_fold();
    else
      combine(op, val<T>(later), later.index, acc);
  });
}

void finish(ReduceOp op, DType t, const Accumulator& acc, int64_t count, void* out) {
  if (op == ReduceOp::ArgMax || op == ReduceOp::ArgMin) {
    *static_cast<int64_t*>(out) = acc.index;
    return;
  }
  visit_dtype(t, [&](auto z) {
    using T = decltype(z);
    if constexpr (is_half_v<T>) half_fold();
    T r = acc.set ? val<T>(acc) : T{};
    if constexpr (!is_half_v<T>)
      if (!acc.set && (op == ReduceOp::Prod || op == ReduceOp::All)) r = T(1);
    if constexpr (std::is_floating_point_v<T>) {
      if (op == ReduceOp::Mean)
        r = count ? r / static_cast<T>(count) : std::numeric_limits<T>::quiet_NaN();
    } else if constexpr (is_complex_v<T>) {
      // Divided by the count as a complex number (NumPy's true_divide, which multiplies by
      // 1 / count, as the GPU's MeanOp: kernels/scalar.cuh): an infinite part makes the other
      // one NaN, and an empty mean is NaN + NaNj.
      using R = typename T::value_type;
      if (op == ReduceOp::Mean) {
        auto q = scalar::complex_divide<R>({r.real(), r.imag()}, {static_cast<R>(count), 0});
        r = T(q.re, q.im);
      }
    }
    *static_cast<T*>(out) = r;
  });
}

}  // namespace kiln::cpu
