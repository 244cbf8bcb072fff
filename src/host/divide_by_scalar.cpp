#include "host/divide_by_scalar.hpp"

#include <cmath>
#include <type_traits>

#include "../../kernels/scalar.cuh"

namespace kiln::cpu {
namespace {

// Below 2^51 in magnitude, x * fl(1 / d) is within 2^-52 |x / d| < 1 / (2 |d|) of x / d (two
// roundings of 2^-53 each), while a quotient that is not an integer lies at least 1 / |d| from
// the integers: its floor is right. An integer quotient k may come out one ulp low (49 *
// fl(1 / 49) is 0.9999999999999999), so floor gives k - 1 and the remainder |d|: one step up
// mends it.
constexpr int64_t kExact = int64_t{1} << 51;

template <class T>
void divide(graph::BinaryOp op, const T* a, T divisor, T* out, int64_t n) {
  const auto d = static_cast<int64_t>(divisor);
  const double inv = 1.0 / static_cast<double>(d);
  const bool remainder = op == graph::BinaryOp::Remainder;
  for (int64_t k = 0; k < n; ++k) {
    const auto x = static_cast<int64_t>(a[k]);
    bool wide = false;  // only 64-bit dtypes hold such values (a uint64 past 2^63 too)
    if constexpr (sizeof(T) == 8)
      wide = std::is_unsigned_v<T> ? static_cast<uint64_t>(a[k]) >= uint64_t(kExact)
                                   : x >= kExact || x <= -kExact;
    if (wide) {
      out[k] = remainder ? scalar::int_remainder<T>(a[k], divisor)
                         : scalar::int_floor_divide<T>(a[k], divisor);
      continue;
    }
    auto q = static_cast<int64_t>(std::floor(static_cast<double>(x) * inv));
    int64_t r = x - q * d;  // NumPy's remainder: the divisor's sign, |r| < |d|
    if (r == d) ++q, r = 0;
    out[k] = static_cast<T>(remainder ? r : q);
  }
}

}  // namespace

bool divide_by_scalar(graph::BinaryOp op, DType t, const void* a, const void* b, void* out,
                      int64_t n) {
  if (op != graph::BinaryOp::FloorDivide && op != graph::BinaryOp::Remainder) return false;
  bool done = false;
  visit_dtype(t, [&](auto z) {
    using T = decltype(z);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const T d = *static_cast<const T*>(b);
      // 0 and -1 are NumPy's special cases (0, and MIN // -1 wrapping): the general loop's.
      if (d == 0 || scalar::is_minus_one(d)) return;
      if constexpr (std::is_unsigned_v<T>) {
        if (static_cast<uint64_t>(d) >= static_cast<uint64_t>(kExact)) return;
      } else if (static_cast<int64_t>(d) >= kExact || static_cast<int64_t>(d) <= -kExact) {
        return;
      }
      divide(op, static_cast<const T*>(a), d, static_cast<T*>(out), n);
      done = true;
    }
  });
  return done;
}

}  // namespace kiln::cpu
