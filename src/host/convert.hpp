// Value conversion with NumPy's casting rules, defined for every input (C++ leaves
// float-to-int overflow undefined; NumPy on x86 gives the minimum integer).
#pragma once
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>

#include "../../kernels/half.cuh"
#include "../../kernels/scalar.cuh"
#include "kiln/half.hpp"

namespace kiln::cpu {

// float16 and bfloat16, which the executor only converts (src/plan/lower.cpp computes them in
// float32), through kernels/half.cuh's conversions, as kernels convert.
template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;

template <class T>
struct is_complex_t : std::false_type {};
template <class T>
struct is_complex_t<std::complex<T>> : std::true_type {};
template <class T>
inline constexpr bool is_complex_v = is_complex_t<T>::value;

template <class T>
bool is_nan(T v) {
  if constexpr (is_complex_v<T>)
    return std::isnan(v.real()) || std::isnan(v.imag());
  else if constexpr (std::is_floating_point_v<T>)
    return std::isnan(v);
  else
    return false;
}

// NumPy orders complex numbers lexicographically (real part, then imaginary part); a NaN in
// either part of either number makes the comparison false, as it does for real numbers.
template <class T>
bool less(T a, T b) {
  if constexpr (is_complex_v<T>)
    return !is_nan(a) && !is_nan(b) &&
           (a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag()));
  else
    return a < b;
}

template <class To, class From>
To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<From, float16>) {
    return convert<To>(scalar::half_bits_to_float(v.bits));
  } else if constexpr (std::is_same_v<From, bfloat16>) {
    return convert<To>(scalar::bfloat16_bits_to_float(v.bits));
  } else if constexpr (is_half_v<To> && is_complex_v<From>) {
    return convert<To>(v.real());
  } else if constexpr (std::is_same_v<To, float16>) {
    return float16::from_bits(std::is_same_v<From, double>
                                  ? scalar::double_to_half_bits(static_cast<double>(v))
                                  : scalar::float_to_half_bits(static_cast<float>(v)));
  } else if constexpr (std::is_same_v<To, bfloat16>) {
    return bfloat16::from_bits(scalar::float_to_bfloat16_bits(static_cast<float>(v)));
  } else if constexpr (is_complex_v<From> && std::is_same_v<To, bool>) {
    return v.real() != 0 || v.imag() != 0;  // non-zero in either part, as NumPy
  } else if constexpr (is_complex_v<From> && !is_complex_v<To>) {
    return convert<To>(v.real());  // NumPy drops the imaginary part (with a warning)
  } else if constexpr (is_complex_v<To>) {
    if constexpr (is_complex_v<From>)
      return To(v);
    else
      return To(static_cast<typename To::value_type>(v), 0);
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    return scalar::float_to_int<To>(v);  // as kernels convert (kernels/scalar.cuh)
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace kiln::cpu
