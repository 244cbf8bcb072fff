// Complex numbers on the device with std::complex's layout and NumPy's semantics
// (lexicographic ordering, NaN if either part is NaN).
#pragma once
#include "kiln/types.cuh"

namespace kiln {

template <class T>
struct alignas(2 * sizeof(T)) complex {
  T re, im;
  __device__ complex() : re(0), im(0) {}
  __device__ complex(T r, T i = 0) : re(r), im(i) {}
  template <class U>
  __device__ explicit complex(const complex<U>& o) : re((T)o.re), im((T)o.im) {}
};

template <class T>
__device__ __forceinline__ complex<T> operator+(complex<T> a, complex<T> b) {
  return {a.re + b.re, a.im + b.im};
}
template <class T>
__device__ __forceinline__ complex<T> operator-(complex<T> a, complex<T> b) {
  return {a.re - b.re, a.im - b.im};
}
template <class T>
__device__ __forceinline__ complex<T> operator-(complex<T> a) {
  return {-a.re, -a.im};
}
// Products, quotients and powers are NumPy's, written once in kernels/scalar.cuh for the
// device and the host executor alike.
template <class T>
__device__ __forceinline__ scalar::parts<T> parts_of(complex<T> a) {
  return {a.re, a.im};
}
template <class T>
__device__ __forceinline__ complex<T> of_parts(scalar::parts<T> p) {
  return {p.re, p.im};
}
template <class T>
__device__ __forceinline__ complex<T> operator*(complex<T> a, complex<T> b) {
  return of_parts(scalar::complex_multiply(parts_of(a), parts_of(b)));
}
template <class T>
__device__ complex<T> operator/(complex<T> a, complex<T> b) {
  return of_parts(scalar::complex_divide(parts_of(a), parts_of(b)));
}
template <class T>
__device__ __forceinline__ bool operator==(complex<T> a, complex<T> b) {
  return a.re == b.re && a.im == b.im;
}
template <class T>
__device__ __forceinline__ bool operator!=(complex<T> a, complex<T> b) {
  return !(a == b);
}
template <class T>
__device__ __forceinline__ bool is_nan(complex<T> v);
// A NaN in either part makes every ordering false, as in NumPy.
template <class T>
__device__ __forceinline__ bool operator<(complex<T> a, complex<T> b) {
  if (is_nan(a) || is_nan(b)) return false;
  return a.re < b.re || (a.re == b.re && a.im < b.im);
}
template <class T>
__device__ __forceinline__ bool operator>(complex<T> a, complex<T> b) {
  return b < a;
}
template <class T>
__device__ __forceinline__ bool operator<=(complex<T> a, complex<T> b) {
  return !is_nan(a) && !is_nan(b) && !(b < a);
}
template <class T>
__device__ __forceinline__ bool operator>=(complex<T> a, complex<T> b) {
  return !is_nan(a) && !is_nan(b) && !(a < b);
}
template <class T>
__device__ __forceinline__ bool is_nan(complex<T> v) {
  return v.re != v.re || v.im != v.im;
}
template <class T>
__device__ __forceinline__ complex<T> maximum(complex<T> a, complex<T> b) {
  return is_nan(a) ? a : is_nan(b) ? b : (a < b ? b : a);
}
template <class T>
__device__ __forceinline__ complex<T> minimum(complex<T> a, complex<T> b) {
  return is_nan(a) ? a : is_nan(b) ? b : (b < a ? b : a);
}

template <class T>
__device__ __forceinline__ T abs(complex<T> a) {
  return hypot(a.re, a.im);
}
template <class T>
__device__ __forceinline__ T real(complex<T> a) {
  return a.re;
}
template <class T>
__device__ __forceinline__ T imag(complex<T> a) {
  return a.im;
}
template <class T>
__device__ __forceinline__ complex<T> conj(complex<T> a) {
  return {a.re, -a.im};
}
template <class T>
__device__ complex<T> exp(complex<T> a) {
  T e = ::exp(a.re);
  if (a.im == 0) return {e, a.im};
  return {e * ::cos(a.im), e * ::sin(a.im)};
}
template <class T>
__device__ complex<T> log(complex<T> a) {
  return {::log(abs(a)), ::atan2(a.im, a.re)};
}
template <class T>
__device__ complex<T> sqrt(complex<T> a) {
  // Principal root, computed to avoid cancellation: t = sqrt((|a| + |re|) / 2).
  if (a.re == 0 && a.im == 0) return {0, a.im};
  T t = ::sqrt((abs(a) + ::fabs(a.re)) / 2);
  if (a.re >= 0) return {t, a.im / (2 * t)};
  return {::fabs(a.im) / (2 * t), ::copysign(t, a.im)};
}
template <class T>
__device__ complex<T> sin(complex<T> a) {
  return {::sin(a.re) * ::cosh(a.im), ::cos(a.re) * ::sinh(a.im)};
}
template <class T>
__device__ complex<T> cos(complex<T> a) {
  return {::cos(a.re) * ::cosh(a.im), -::sin(a.re) * ::sinh(a.im)};
}
template <class T>
__device__ complex<T> tanh(complex<T> a) {
  // tanh(x+iy) = (sinh 2x + i sin 2y) / (cosh 2x + cos 2y); for large |x| the limit is +-1.
  if (::fabs(a.re) > 20) return {::copysign(T(1), a.re), 0 * ::sin(2 * a.im)};
  T d = ::cosh(2 * a.re) + ::cos(2 * a.im);
  return {::sinh(2 * a.re) / d, ::sin(2 * a.im) / d};
}
template <class T>
__device__ complex<T> tan(complex<T> a) {
  complex<T> t = tanh(complex<T>(-a.im, a.re));  // tan(z) = -i tanh(iz)
  return {t.im, -t.re};
}
// NumPy's power (kernels/scalar.cuh); where no exact rule applies, exp(b log a).
template <class T>
__device__ complex<T> pow(complex<T> a, complex<T> b) {
  return of_parts(
      scalar::complex_pow(parts_of(a), parts_of(b), [](scalar::parts<T> x, scalar::parts<T> y) {
        return parts_of(exp(of_parts(y) * log(of_parts(x))));
      }));
}

}  // namespace kiln
