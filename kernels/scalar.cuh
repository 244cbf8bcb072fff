// NumPy's value semantics that the device and the host must agree on bit for bit, written once:
// NVRTC compiles this into every kernel (as "kiln/scalar.cuh", through types.cuh) and the C++
// compiler into the host executor (src/host/column_ops.cpp, src/host/convert.hpp). Integer
// arithmetic that wraps, integer powers, floor division, remainders and shifts, float to
// integer conversion, NumPy's floor division and remainder of floats, NaN-propagating
// minimum and maximum of real values, complex division and power; and gelu's formulas (whose
// erfc and exp are each side's own). Plain C++ that needs only the C math functions NVRTC has
// built in, so both sides can take it.
#pragma once

#ifdef __CUDACC__
#define KILN_SCALAR_FN __host__ __device__ __forceinline__
// Integer division and remainder branch (zero and -1 divisors, the sign fix-up, the division's
// own fast path). Inlined into a chain of them, as the index maps of pad, roll and tile are,
// NVVM duplicates the code along every path: a 4-d reflect pad took 126 s to compile into 1.3 MiB
// of SASS. Called instead, the same kernel compiles in 0.2 s.
#define KILN_OUTLINED_FN __host__ __device__ __noinline__
#else
#include <math.h>  // ::fabs, the name NVRTC has built in
#define KILN_SCALAR_FN inline
#define KILN_OUTLINED_FN inline
#endif

// In kiln::scalar, so that on the host kiln::maximum stays the public function of arrays;
// kernels/types.cuh brings these into namespace kiln, where generated kernels call them.
namespace kiln::scalar {

typedef long long i64;
typedef unsigned long long u64;

// Whether an integer type is signed (no <type_traits> under NVRTC).
template <class T>
KILN_SCALAR_FN constexpr bool is_signed_int() {
  return (T)-1 < (T)0;
}
// b == -1 for a signed type; an unsigned one has no -1 (its all-ones value is an ordinary
// divisor).
template <class T>
KILN_SCALAR_FN bool is_minus_one(T b) {
  return is_signed_int<T>() && b == (T)-1;
}
template <class T>
KILN_SCALAR_FN bool is_negative(T a) {
  return is_signed_int<T>() && a < (T)0;
}

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
  return is_negative(a) ? wrap_neg(a) : a;
}
// NumPy's integer power: wraps; a negative exponent gives 0 except for bases 1 and -1 (NumPy
// refuses negative scalar exponents before this is reached; arrays of them come here).
template <class T>
KILN_SCALAR_FN T int_pow(T base, T exp) {
  if (is_negative(exp)) return base == 1 ? 1 : is_minus_one(base) ? ((exp & 1) ? -1 : 1) : 0;
  u64 result = 1, b = (u64)base;
  for (u64 e = (u64)exp; e; e >>= 1, b *= b)
    if (e & 1) result *= b;
  return (T)result;
}

// NumPy's integer floor division, remainder (the sign of the divisor, as Python's %) and fmod
// (the sign of the dividend, as C's %). A zero divisor gives 0, as NumPy does (with a warning
// kiln does not give); MIN // -1 wraps to MIN, and MIN % -1 is 0, where C's / and % would trap.
template <class T>
KILN_OUTLINED_FN T int_floor_divide(T a, T b) {
  if (b == 0) return 0;
  if (is_minus_one(b)) return wrap_neg(a);
  T q = (T)(a / b);
  return ((T)(a % b) != 0 && is_negative(a) != is_negative(b)) ? (T)(q - 1) : q;
}
template <class T>
KILN_OUTLINED_FN T int_remainder(T a, T b) {
  if (b == 0 || is_minus_one(b)) return 0;
  T r = (T)(a % b);
  return (r != 0 && is_negative(r) != is_negative(b)) ? (T)(r + b) : r;
}
template <class T>
KILN_OUTLINED_FN T int_fmod(T a, T b) {
  return (b == 0 || is_minus_one(b)) ? (T)0 : (T)(a % b);
}

// NumPy's shifts: a shift by the width of the type or more (or by a negative amount) gives 0,
// or -1 for a right shift of a negative number, where C++'s << and >> are undefined.
template <class T>
KILN_SCALAR_FN T shift_left(T a, T b) {
  return (u64)b < sizeof(T) * 8 ? (T)((u64)a << b) : (T)0;
}
template <class T>
KILN_SCALAR_FN T shift_right(T a, T b) {
  return (u64)b < sizeof(T) * 8 ? (T)(a >> b) : (T)(is_negative(a) ? -1 : 0);
}

// NumPy's floor division and remainder of real floats (npy_divmod): from fmod, the quotient
// snapped to an integer and the remainder given the divisor's sign, zeros signed as Python's.
// Exact operations only (fmod, subtraction, division, floor), so both executors round alike.
template <class R>
KILN_SCALAR_FN R float_divmod(R a, R b, R* modulus) {
  R mod = ::fmod(a, b);
  if (!b) {
    *modulus = mod;
    return a / b;
  }
  R div = (a - mod) / b;
  if (mod) {
    if ((b < 0) != (mod < 0)) {
      mod += b;
      div -= R(1);
    }
  } else {
    mod = ::copysign(R(0), b);
  }
  R floordiv;
  if (div) {
    floordiv = ::floor(div);
    if (div - floordiv > R(0.5)) floordiv += R(1);
  } else {
    floordiv = ::copysign(R(0), a / b);
  }
  *modulus = mod;
  return floordiv;
}
template <class R>
KILN_SCALAR_FN R float_floor_divide(R a, R b) {
  R mod;
  return float_divmod(a, b, &mod);
}
template <class R>
KILN_SCALAR_FN R float_remainder(R a, R b) {
  R mod;
  float_divmod(a, b, &mod);
  return mod;
}

// Float to integer as NumPy on x86, whose casts are C casts that GCC compiles to cvttsd2si:
// int32 and int64 take the value truncated when it is in range and otherwise (NaN too) the
// minimum integer; 8- and 16-bit integers keep the low bits of that int32 result (300.0 to
// uint8 is 44, -1.0 is 255), uint32 the low bits of the int64 one; uint64 converts values
// from 2^63 up as v - 2^63 with the top bit set again.
// (NumPy's own uint32 result outside [-2^31, 2^32), and for NaN, depends on where the element
// sits: its vectorised loop gives 0 or 2^31, its scalar one the low bits as here.)
template <class S, class F>
KILN_SCALAR_FN S float_to_signed(F v) {
  const F lo = (F)(S)((u64)1 << (sizeof(S) * 8 - 1));
  return (v >= lo && v < -lo) ? (S)v : (S)((u64)1 << (sizeof(S) * 8 - 1));
}
template <class T, class F>
KILN_SCALAR_FN T float_to_int(F v) {
  if (sizeof(T) < 4 || (sizeof(T) == 4 && is_signed_int<T>())) return (T)float_to_signed<int>(v);
  if (sizeof(T) == 4 || is_signed_int<T>()) return (T)float_to_signed<i64>(v);
  const F two63 = (F)9223372036854775808.0;
  if (v >= two63) return (T)((u64)float_to_signed<i64>(v - two63) ^ ((u64)1 << 63));
  return (T)(u64)float_to_signed<i64>(v);
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

// ---- complex division and power ----------------------------------------------------------
// On the parts, so that the device's kiln::complex (kernels/complex.cuh) and the host's
// std::complex (src/host/column_ops.cpp) share them. Both sides compile without contracting
// products into FMAs, so these round identically.
template <class R>
struct parts {
  R re, im;
};

// The schoolbook product (NumPy's, and kiln::complex's operator*).
template <class R>
KILN_SCALAR_FN parts<R> complex_multiply(parts<R> a, parts<R> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

// NumPy's complex division (Smith's method, as npy_cdiv): neither overflows for large parts
// nor turns division by zero or by infinity into NaN; a zero divisor gives inf or NaN parts.
template <class R>
KILN_SCALAR_FN parts<R> complex_divide(parts<R> a, parts<R> b) {
  const R abs_re = ::fabs(b.re), abs_im = ::fabs(b.im);
  if (abs_re >= abs_im) {
    if (abs_re == 0 && abs_im == 0) return {a.re / abs_re, a.im / abs_re};
    const R rat = b.im / b.re, scl = R(1) / (b.re + b.im * rat);
    return {(a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl};
  }
  const R rat = b.re / b.im, scl = R(1) / (b.im + b.re * rat);
  return {(a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl};
}

// The positive quiet NaN (NumPy's): 0/0 would give the platform's default NaN, whose sign
// differs between x86 and the GPU.
template <class R>
KILN_SCALAR_FN R quiet_nan() {
#ifdef __CUDA_ARCH__
  return (R)__longlong_as_double(0x7ff8000000000000LL);
#else
  return (R)__builtin_nan("");
#endif
}

// NumPy's complex power (npy_cpow): x**0 is 1, 0**y is 0 (y real and positive) or NaN, and
// integer exponents below 100 in magnitude multiply (exact where exp(y log x) is not).
// `general(a, b)` computes the remaining cases: the platform's exp(b log a) (the C library's
// cpow on the host, as NumPy; kernels/complex.cuh's exp and log on the device), whose last bits
// differ between the two as real exp and log do.
template <class R, class General>
KILN_SCALAR_FN parts<R> complex_pow(parts<R> a, parts<R> b, General general) {
  if (b.re == 0 && b.im == 0) return {1, 0};
  if (a.re == 0 && a.im == 0) {
    if (b.re > 0 && b.im == 0) return {0, 0};
    return {quiet_nan<R>(), quiet_nan<R>()};
  }
  const int n = b.im == 0 && b.re > -100 && b.re < 100 ? (int)b.re : 0;
  if (n == 0 || (R)n != b.re) return general(a, b);  // not an integer (0 returned above)
  if (n == 1) return a;
  if (n == 2) return complex_multiply(a, a);
  if (n == 3) return complex_multiply(a, complex_multiply(a, a));
  parts<R> result = {1, 0}, p = a;
  for (int e = n < 0 ? -n : n;; e >>= 1) {
    if (e & 1) result = complex_multiply(result, p);
    if (e <= 1) break;
    p = complex_multiply(p, p);
  }
  return n < 0 ? complex_divide(parts<R>{1, 0}, result) : result;
}

// take's range check (its default mode, NumPy's 'raise'): an index v outside [-n, n) is folded
// by maximum into one of two words that start at zero, so the device can fold with atomicMax
// and the host with a loop, and zero means none: below_word keeps the lowest index under the
// range, above_word the highest over it (src/runtime/run_plan.cpp reads them back after the
// plan and reports the lowest, else the highest, as a range check of all indices would).
KILN_SCALAR_FN u64 below_word(i64 v) { return (u64)(-(v + 1)) + 1; }  // v < 0
KILN_SCALAR_FN u64 above_word(i64 v) { return (u64)v + 1; }           // v >= 0
// The word an index out of range folds into (0: below, 1: above) and its value there.
KILN_SCALAR_FN int range_word_index(i64 v) { return v < 0 ? 0 : 1; }
KILN_SCALAR_FN u64 range_word(i64 v) { return v < 0 ? below_word(v) : above_word(v); }
KILN_SCALAR_FN i64 below_index(u64 w) { return -(i64)(w - 1) - 1; }
KILN_SCALAR_FN i64 above_index(u64 w) { return (i64)(w - 1); }

// ---- GELU ----------------------------------------------------------------------------------
// kiln::gelu: x Phi(x), Phi the standard normal distribution function (0.5 (1 + erf(x/sqrt 2))),
// and PyTorch's tanh approximation 0.5 x (1 + tanh(z)), z = sqrt(2/pi) (x + 0.044715 x^3).
// Written as the same functions without the cancellation of 1 + erf and 1 + tanh, which lose
// every digit as the result nears 0 (x well below 0: PyTorch's float32 gelu(-6) is -0, not
// -5.9e-9): Phi(x) is erfc(-x/sqrt 2) / 2, and 0.5 (1 + tanh z) is 1 / (1 + exp(-2z)). What is
// left is the rounding of the argument, which erfc and exp magnify by its size (erfc's relative
// error is 2u^2 times u's, exp's |w| times w's). float64 affords it (3e-13 relative at most
// against a long double reference); float32 does not (3e-6 at x = -7), so it forms the
// argument in double and corrects for its rounding to first order (hi + lo, lo under half an
// ulp of hi): 4 ulps at most down to results of 1e-36 (below, Phi itself is subnormal). The
// argument is clamped where the function is flat (erfc(+-42) and exp(-200) are 2 or 0 in
// float32), so no infinity reaches the correction; -inf gives NaN, as x * 0 in PyTorch's
// formula.
KILN_SCALAR_FN double gelu(double x) { return x * (0.5 * ::erfc(x * -0.70710678118654752440)); }
KILN_SCALAR_FN float gelu(float x) {
  const double u = ::fmin(::fmax((double)x, -60.0), 60.0) * -0.70710678118654752440;
  const float hi = (float)u, lo = (float)(u - (double)hi);
  // erfc(hi + lo) = erfc(hi) - lo 2/sqrt(pi) exp(-hi^2), halved: 1/sqrt(pi) = 0.5641895835...
  return x * (0.5f * ::erfcf(hi) - lo * 0.56418958354775628695f * ::expf(-hi * hi));
}
KILN_SCALAR_FN double gelu_tanh(double x) {
  return x / (1.0 + ::exp(-1.5957691216057307117 * (x + 0.044715 * x * x * x)));
}
KILN_SCALAR_FN float gelu_tanh(float x) {
  const double v = x;  // -2z: -2 sqrt(2/pi) = -1.5957691216...
  const double w =
      ::fmin(::fmax(-1.5957691216057307117 * (v + 0.044715 * v * v * v), -200.0), 200.0);
  const float hi = (float)w, lo = (float)(w - (double)hi);
  return x / (1.0f + ::expf(hi) * (1.0f + lo));  // exp(hi + lo) = exp(hi) (1 + lo)
}

}  // namespace kiln::scalar
