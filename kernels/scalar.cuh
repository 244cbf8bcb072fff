// NumPy's value semantics that the device and the host must agree on bit for bit, written once:
// NVRTC compiles this into every kernel (as "kiln/scalar.cuh", through types.cuh) and the C++
// compiler into the host executor (src/host/column_ops.cpp, src/host/convert.hpp). Integer
// arithmetic that wraps, integer powers, float to integer conversion, NaN-propagating
// minimum and maximum of real values. Plain C++ with no headers, so both sides can take it.
#pragma once

#ifdef __CUDACC__
#define KILN_SCALAR_FN __host__ __device__ __forceinline__
#else
#define KILN_SCALAR_FN inline
#endif

// In kiln::scalar, so that on the host kiln::maximum stays the public function of arrays;
// kernels/types.cuh brings these into namespace kiln, where generated kernels call them.
namespace kiln::scalar {

typedef long long i64;
typedef unsigned long long u64;

// Integer arithmetic wraps, as NumPy's does (through unsigned types: defined behaviour).
template <class T>
KILN_SCALAR_FN T wrap_add(T a, T b) {
  return (T)((u64)a + (u64)b);
}
template <class T>
KILN_SCALAR_FN T wrap_sub(T a, T b) {
  return (T)((u64)a - (u64)b);
}
template <class T>
KILN_SCALAR_FN T wrap_mul(T a, T b) {
  return (T)((u64)a * (u64)b);
}
template <class T>
KILN_SCALAR_FN T wrap_neg(T a) {
  return (T)(0ull - (u64)a);
}
// abs(INT_MIN) stays INT_MIN, as in NumPy.
template <class T>
KILN_SCALAR_FN T int_abs(T a) {
  return a < 0 ? wrap_neg(a) : a;
}
// NumPy's integer power: wraps; a negative exponent gives 0 except for bases 1 and -1 (NumPy
// refuses negative scalar exponents before this is reached; arrays of them come here).
template <class T>
KILN_SCALAR_FN T int_pow(T base, T exp) {
  if (exp < 0) return base == 1 ? 1 : base == -1 ? ((exp & 1) ? -1 : 1) : 0;
  u64 result = 1, b = (u64)base;
  for (u64 e = (u64)exp; e; e >>= 1, b *= b)
    if (e & 1) result *= b;
  return (T)result;
}

// Float to integer as NumPy on x86: out of range and NaN give the minimum integer.
template <class T, class F>
KILN_SCALAR_FN T float_to_int(F v) {
  const F lo = (F)(T)((u64)1 << (sizeof(T) * 8 - 1));
  return (v >= lo && v < -lo) ? (T)v : (T)((u64)1 << (sizeof(T) * 8 - 1));
}

// NaN-propagating minimum and maximum of real values (NumPy's minimum/maximum): the first NaN
// wins; between equal values (+0 and -0) the first operand.
template <class T>
KILN_SCALAR_FN T maximum(T a, T b) {
  return a != a ? a : b != b ? b : (a < b ? b : a);
}
template <class T>
KILN_SCALAR_FN T minimum(T a, T b) {
  return a != a ? a : b != b ? b : (b < a ? b : a);
}
template <class T>
KILN_SCALAR_FN bool is_nan(T v) {
  return v != v;
}

}  // namespace kiln::scalar
