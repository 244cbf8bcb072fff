// kiln::elementwise: a user expression's value converted to the output dtype with astype's
// rules, whatever C++ type the expression has: float to integer as NumPy (out of range and NaN
// give the minimum integer) instead of C's undefined behaviour, complex to real keeps the real
// part, anything to bool is "nonzero". Included only by kernels with a user expression.
#pragma once
#include "kiln/complex.cuh"
#include "kiln/types.cuh"

namespace kiln {

// Integer outputs (int, long long).
template <class T>
struct user_out {
  template <class E>
  __device__ static T from(E v) {
    return (T)v;
  }
  __device__ static T from(float v) { return float_to_int<T>(v); }
  __device__ static T from(double v) { return float_to_int<T>(v); }
  template <class U>
  __device__ static T from(complex<U> v) {
    return from(v.re);
  }
};

template <class T>
struct user_real_out {
  template <class E>
  __device__ static T from(E v) {
    return (T)v;
  }
  template <class U>
  __device__ static T from(complex<U> v) {
    return (T)v.re;
  }
};
template <>
struct user_out<float> : user_real_out<float> {};
template <>
struct user_out<double> : user_real_out<double> {};

template <>
struct user_out<bool> {
  template <class E>
  __device__ static bool from(E v) {
    return v != 0;
  }
  template <class U>
  __device__ static bool from(complex<U> v) {
    return v.re != 0 || v.im != 0;
  }
};

template <class U>
struct user_out<complex<U> > {
  template <class E>
  __device__ static complex<U> from(E v) {
    return complex<U>((U)v, (U)0);
  }
  template <class W>
  __device__ static complex<U> from(complex<W> v) {
    return complex<U>(v);
  }
};

template <class T, class E>
__device__ __forceinline__ T user_result(const E& v) {
  return user_out<T>::from(v);
}

}  // namespace kiln
