#include "host/half_columns.hpp"

#include "host/convert.hpp"

#if defined(__F16C__) && defined(__AVX2__)
#include <immintrin.h>
#define KILN_HOST_F16C 1
#endif

namespace kiln::cpu {

#ifdef KILN_HOST_F16C
namespace {

using scalar::u16;

// The hardware rounds as the recipes do (to nearest even, subnormals kept, overflow to
// infinity; the immediate rounding ignores MXCSR) but quiets a NaN's payload: lanes holding a
// NaN take the recipe's bits instead (rare, so one branch per eight values).
constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

template <class From>
void fix_nans(int mask, const From* a, u16* out) {
  for (; mask; mask &= mask - 1) {
    int k = __builtin_ctz(mask);
    out[k] = convert<float16>(a[k]).bits;
  }
}

// float64 -> float32 rounded to odd: toward zero, then the last bit set where that was inexact.
// Rounding this to float16's 11 bits gives the direct rounding's bits (the float keeps 13 bits
// more, so no tie is made or hidden), where float32 rounded to nearest would round twice.
// _mm256_cvtpd_ps rounds as MXCSR says; whichever neighbour it picks, the one nearer zero is
// the result stepped down one unit in magnitude when it came out larger (infinity steps down
// to the largest float, so values past it still round to float16's infinity).
__m128 to_float_odd(__m256d d) {
  const __m128 f = _mm256_cvtpd_ps(d);
  const __m256d back = _mm256_cvtps_pd(f),
                abs = _mm256_castsi256_pd(_mm256_set1_epi64x(~(1ll << 63)));
  const __m256d larger = _mm256_cmp_pd(_mm256_and_pd(back, abs), _mm256_and_pd(d, abs), _CMP_GT_OQ);
  const __m256d inexact = _mm256_cmp_pd(back, d, _CMP_NEQ_UQ);
  // The 64-bit lane masks as 32-bit ones (their low halves).
  const __m256i low = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  auto narrow = [&](__m256d m) {
    return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(m), low));
  };
  __m128i bits = _mm_add_epi32(_mm_castps_si128(f), narrow(larger));  // -1 where larger
  bits = _mm_or_si128(bits, _mm_and_si128(narrow(inexact), _mm_set1_epi32(1)));
  return _mm_castsi128_ps(bits);
}

void float_to_half(const float* a, u16* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 x = _mm256_loadu_ps(a + i);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvtps_ph(x, kNearest));
    if (int nan = _mm256_movemask_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q)))
      fix_nans(nan, a + i, out + i);
  }
  for (; i < n; ++i) out[i] = scalar::float_to_half_bits(a[i]);
}

void double_to_half(const double* a, u16* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256d lo = _mm256_loadu_pd(a + i), hi = _mm256_loadu_pd(a + i + 4);
    __m256 f = _mm256_set_m128(to_float_odd(hi), to_float_odd(lo));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvtps_ph(f, kNearest));
    int nan = _mm256_movemask_pd(_mm256_cmp_pd(lo, lo, _CMP_UNORD_Q)) |
              _mm256_movemask_pd(_mm256_cmp_pd(hi, hi, _CMP_UNORD_Q)) << 4;
    if (nan) fix_nans(nan, a + i, out + i);
  }
  for (; i < n; ++i) out[i] = scalar::double_to_half_bits(a[i]);
}

// float16 -> float32 is exact; a NaN keeps its payload unquieted, as the recipe does.
__m256 half_to_float8(const u16* h) {
  __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h));
  __m256 f = _mm256_cvtph_ps(bits);
  if (_mm256_movemask_ps(_mm256_cmp_ps(f, f, _CMP_UNORD_Q)) == 0) return f;
  alignas(32) float v[8];
  _mm256_store_ps(v, f);
  for (int k = 0; k < 8; ++k) v[k] = scalar::half_bits_to_float(h[k]);
  return _mm256_load_ps(v);
}

template <class To>
void half_to(const u16* h, To* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 f = half_to_float8(h + i);
    if constexpr (std::is_same_v<To, float>) {
      _mm256_storeu_ps(out + i, f);
    } else {  // widened as the recipe's float is (a NaN quieted by the hardware alike)
      _mm256_storeu_pd(out + i, _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
      _mm256_storeu_pd(out + i + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)));
    }
  }
  for (; i < n; ++i) out[i] = convert<To>(float16::from_bits(h[i]));
}

}  // namespace
#endif

bool cast_half_column(DType from, DType to, const void* a, void* out, int64_t n) {
#ifdef KILN_HOST_F16C
  auto* h = static_cast<u16*>(out);
  if (to == DType::Float16 && from == DType::Float32)
    return float_to_half(static_cast<const float*>(a), h, n), true;
  if (to == DType::Float16 && from == DType::Float64)
    return double_to_half(static_cast<const double*>(a), h, n), true;
  if (from == DType::Float16 && to == DType::Float32)
    return half_to(static_cast<const u16*>(a), static_cast<float*>(out), n), true;
  if (from == DType::Float16 && to == DType::Float64)
    return half_to(static_cast<const u16*>(a), static_cast<double*>(out), n), true;
#else
  (void)from, (void)to, (void)a, (void)out, (void)n;
#endif
  return false;
}

}  // namespace kiln::cpu
