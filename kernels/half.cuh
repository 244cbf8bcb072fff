// float16 and bfloat16: conversions to and from float32 (and float64 to float16), written once
// on the bits. NVRTC compiles this into every kernel (as "kiln/half.cuh", through types.cuh)
// and the C++ compiler into the host executor and kiln::float16 / kiln::bfloat16
// (src/host/convert.hpp, src/graph/half.cpp), so a value rounds to the same bits on both sides.
// No cuda_fp16.h: NVRTC gets no include path, and host code must not need the CUDA toolkit.
//
// Rounding is IEEE's round to nearest, ties to even, with subnormals kept (not flushed), values
// past the largest finite one going to infinity, and the sign of zero kept. NaN: float16 keeps
// the top of the payload as NumPy's npy_floatbits_to_halfbits does (a payload that would vanish
// becomes 1, so a NaN stays a NaN); bfloat16 gives the quiet NaN 0x7fc0 with the sign, as
// Eigen's bfloat16 (which ml_dtypes uses) does.
#pragma once

#ifdef __CUDACC__
#define KILN_HALF_FN __host__ __device__ __forceinline__
#else
#define KILN_HALF_FN inline
#endif

namespace kiln::scalar {

typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64b;

KILN_HALF_FN u32 bits_of(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  return __builtin_bit_cast(u32, f);
#endif
}
KILN_HALF_FN float float_of(u32 b) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(b);
#else
  return __builtin_bit_cast(float, b);
#endif
}
KILN_HALF_FN u64b bits_of(double d) {
#ifdef __CUDA_ARCH__
  return (u64b)__double_as_longlong(d);
#else
  return __builtin_bit_cast(u64b, d);
#endif
}

// The magnitude bits `a` (sign removed) shifted right by `s` bits, rounded to nearest even.
template <class U>
KILN_HALF_FN U shift_round_even(U a, unsigned s) {
  const U r = a >> s, rem = a & ((U(1) << s) - 1), half = U(1) << (s - 1);
  return (rem > half || (rem == half && (r & 1))) ? U(r + 1) : r;
}

// A float16 NaN keeping the top of a wider NaN's payload (one that would vanish becomes 1).
KILN_HALF_FN u16 half_nan_bits(u32 sign, u32 payload) {
  return (u16)(sign | 0x7c00u | (payload ? payload : 1u));
}

#ifdef __CUDA_ARCH__
// On the GPU one cvt instruction rounds exactly as the recipes below (IEEE, to nearest even,
// subnormals kept); only a NaN's payload needs the recipe, picked by a select. The branches of
// the recipes, inlined into every conversion of a kernel, made NVVM duplicate code along every
// path: a float16 `where` chain took 210 s to compile into 3 MiB of SASS.
KILN_HALF_FN u16 float_to_half_bits(float x) {
  u16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
  const u32 f = bits_of(x), a = f & 0x7fffffffu;
  return a > 0x7f800000u ? half_nan_bits((f >> 16) & 0x8000u, (a & 0x7fffffu) >> 13) : h;
}
KILN_HALF_FN u16 double_to_half_bits(double x) {
  u16 h;
  asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h) : "d"(x));
  const u64b d = bits_of(x), a = d & 0x7fffffffffffffffull;
  return a > 0x7ff0000000000000ull
             ? half_nan_bits((u32)(d >> 48) & 0x8000u, (u32)((a & 0xfffffffffffffull) >> 42))
             : h;
}
KILN_HALF_FN float half_bits_to_float(u16 h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  const u32 nan = ((u32)(h & 0x8000u) << 16) | 0x7f800000u | ((u32)(h & 0x3ffu) << 13);
  return (h & 0x7fffu) > 0x7c00u ? float_of(nan) : f;
}
#else
// float32 -> float16. The float's exponent (bias 127) rebiases to 15; 13 mantissa bits go.
KILN_HALF_FN u16 float_to_half_bits(float x) {
  const u32 f = bits_of(x), sign = (f >> 16) & 0x8000u, a = f & 0x7fffffffu;
  if (a >= 0x7f800000u) {  // infinity or NaN
    if (a == 0x7f800000u) return (u16)(sign | 0x7c00u);
    return half_nan_bits(sign, (a & 0x7fffffu) >> 13);
  }
  if (a >= 0x47800000u) return (u16)(sign | 0x7c00u);           // 2^16 and up: infinity
  if (a <= 0x33000000u) return (u16)sign;                       // up to 2^-25 (a tie): zero
  if (a < 0x38800000u) {                                        // below 2^-14: a subnormal float16
    const u32 m = (a & 0x7fffffu) | 0x800000u;                  // value m * 2^(e - 150)
    return (u16)(sign | shift_round_even(m, 126 - (a >> 23)));  // in units of 2^-24
  }
  // Rounding up may carry into the exponent, and from 65520 on into infinity (0x7c00).
  return (u16)(sign | shift_round_even(a - 0x38000000u, 13));
}

// float64 -> float16 directly, as NumPy's npy_doublebits_to_halfbits (through float32 would
// round twice).
KILN_HALF_FN u16 double_to_half_bits(double x) {
  const u64b d = bits_of(x), a = d & 0x7fffffffffffffffull;
  const u32 sign = (u32)(d >> 48) & 0x8000u;
  if (a >= 0x7ff0000000000000ull) {
    if (a == 0x7ff0000000000000ull) return (u16)(sign | 0x7c00u);
    return half_nan_bits(sign, (u32)((a & 0xfffffffffffffull) >> 42));
  }
  if (a >= 0x40f0000000000000ull) return (u16)(sign | 0x7c00u);     // 2^16 and up
  if (a <= 0x3e60000000000000ull) return (u16)sign;                 // up to 2^-25
  if (a < 0x3f10000000000000ull) {                                  // below 2^-14
    const u64b m = (a & 0xfffffffffffffull) | 0x10000000000000ull;  // m * 2^(e - 1075)
    return (u16)(sign | (u32)shift_round_even(m, (unsigned)(1051 - (a >> 52))));
  }
  return (u16)(sign | (u32)shift_round_even(a - (1008ull << 52), 42));
}

// float16 -> float32, exact.
KILN_HALF_FN float half_bits_to_float(u16 h) {
  const u32 sign = (u32)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu;
  u32 m = h & 0x3ffu;
  if (e == 0x1f) return float_of(sign | 0x7f800000u | (m << 13));  // infinity, NaN
  if (e == 0) {
    if (m == 0) return float_of(sign);
    u32 k = 0;  // a subnormal: normalise it, m * 2^-24 = 1.f * 2^(-14 - k)
    while (!(m & 0x400u)) {
      m <<= 1;
      ++k;
    }
    return float_of(sign | ((113u - k) << 23) | ((m & 0x3ffu) << 13));
  }
  return float_of(sign | ((e + 112u) << 23) | (m << 13));
}

#endif

// float32 -> bfloat16: the top 16 bits, rounded to nearest even on the 16 dropped (a carry
// runs into the exponent, and past the largest finite value into infinity).
KILN_HALF_FN u16 float_to_bfloat16_bits(float x) {
  const u32 f = bits_of(x);
  if ((f & 0x7fffffffu) > 0x7f800000u) return (u16)((f >> 16) & 0x8000u) | 0x7fc0u;
  return (u16)((f + 0x7fffu + ((f >> 16) & 1u)) >> 16);
}

// bfloat16 -> float32, exact.
KILN_HALF_FN float bfloat16_bits_to_float(u16 b) { return float_of((u32)b << 16); }

}  // namespace kiln::scalar

#ifdef __CUDACC__
namespace kiln {

// The storage of the two 16-bit dtypes in kernels: generated code loads them into float
// registers and converts a float back only where a value is stored (src/plan/lower.cpp),
// so kernels read and write these through the conversions below and never do arithmetic on
// them. A reduction's last step assigns its float result to its output (reduction.cuh's
// `out[o] = Op::finish(...)`), which rounds once there. (The host's types are kiln/half.hpp's,
// which have the same layout.)
struct float16 {
  unsigned short bits;
  __device__ float16& operator=(float x) {
    bits = scalar::float_to_half_bits(x);
    return *this;
  }
};
struct bfloat16 {
  unsigned short bits;
  __device__ bfloat16& operator=(float x) {
    bits = scalar::float_to_bfloat16_bits(x);
    return *this;
  }
};

KILN_HALF_FN float to_float(float16 h) { return scalar::half_bits_to_float(h.bits); }
KILN_HALF_FN float to_float(bfloat16 h) { return scalar::bfloat16_bits_to_float(h.bits); }
KILN_HALF_FN float16 to_float16(float x) { return {scalar::float_to_half_bits(x)}; }
KILN_HALF_FN float16 to_float16(double x) { return {scalar::double_to_half_bits(x)}; }
// float64 goes through float32 first, as Eigen's (and so ml_dtypes') bfloat16 does.
KILN_HALF_FN bfloat16 to_bfloat16(float x) { return {scalar::float_to_bfloat16_bits(x)}; }

}  // namespace kiln
#endif
