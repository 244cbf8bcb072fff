// The word -> value mappings of kiln/random.hpp, for the GPU's random steps. cuRAND's device
// generator writes the step's Philox words (curandGenerate, LEGACY ordering: the same words as
// the host generator), then one of the kernels below turns them into the output dtype.
//
// The per-element functions are also plain C++: without __CUDACC__ they compile on the host,
// so a test without a GPU checks them against the host executor (src/host/random.cpp). Each is
// written as the host writes it, operation for operation: the kernels are compiled with
// --fmad=false, so nothing is contracted, and integer, uniform and the word-to-[0, 1) maps are
// bit-identical. Normal samples go through log, sqrt, sin and cos: sqrt is correctly rounded on
// both sides, CUDA's log/sin/cos are within 1-2 ulp where glibc's are within 1 ulp, so a sample
// differs from the host's by a few ulps of max(|sample|, std) (tests/test_gpu_random.cpp
// reports the largest difference it saw and fails past 16 ulps of |sample| + 9 std).
//
// Reaches NVRTC as "kiln/random.cuh" with no include path: only built-in math functions.
#pragma once

#ifdef __CUDACC__
#define KILN_RNG_FN __device__ __forceinline__
#else
#define KILN_RNG_FN inline
#endif

namespace kiln::rng {

typedef unsigned long long u64;

// The high 64 bits of the 128-bit product a * b.
KILN_RNG_FN u64 mul_hi64(u64 a, u64 b) {
#ifdef __CUDACC__
  return __umul64hi(a, b);
#else
  return static_cast<u64>((static_cast<unsigned __int128>(a) * b) >> 64);
#endif
}

// Two consecutive words as one 64-bit number, the first word low.
KILN_RNG_FN u64 load64(const unsigned* w) { return w[0] | static_cast<u64>(w[1]) << 32; }

// Float math by dtype, spelled with the C names so that host and NVRTC call the same
// functions the host executor's std:: overloads call.
KILN_RNG_FN float fma_of(float a, float b, float c) { return ::fmaf(a, b, c); }
KILN_RNG_FN double fma_of(double a, double b, double c) { return ::fma(a, b, c); }
KILN_RNG_FN float log_of(float x) { return ::logf(x); }
KILN_RNG_FN double log_of(double x) { return ::log(x); }
KILN_RNG_FN float sqrt_of(float x) { return ::sqrtf(x); }
KILN_RNG_FN double sqrt_of(double x) { return ::sqrt(x); }
KILN_RNG_FN float sin_of(float x) { return ::sinf(x); }
KILN_RNG_FN double sin_of(double x) { return ::sin(x); }
KILN_RNG_FN float cos_of(float x) { return ::cosf(x); }
KILN_RNG_FN double cos_of(double x) { return ::cos(x); }

// Words per element of a float dtype (k), pi in it, and the maps from an element's words to
// [0, 1) and (0, 1]; every product and sum here is exact.
template <class T>
struct unit;
template <>
struct unit<float> {
  static constexpr int k = 1;
  static constexpr float pi = 3.14159265358979323846f;
  static KILN_RNG_FN float closed_open(const unsigned* w) {
    return static_cast<float>(w[0] >> 8) * 0x1p-24f;
  }
  static KILN_RNG_FN float open_closed(const unsigned* w) {
    return ::fmaf(static_cast<float>(w[0]), 0x1p-32f, 0x1p-33f);
  }
};
template <>
struct unit<double> {
  static constexpr int k = 2;
  static constexpr double pi = 3.14159265358979323846;
  static KILN_RNG_FN double closed_open(const unsigned* w) {
    return static_cast<double>(load64(w) >> 11) * 0x1p-53;
  }
  static KILN_RNG_FN double open_closed(const unsigned* w) {
    return ::fma(static_cast<double>(load64(w) >> 11), 0x1p-53, 0x1p-54);
  }
};

// randint: one word per element up to a range of 2^16, else two; a multiply-shift maps them
// to [0, range). The sum wraps like the host's uint64 arithmetic and lands in [low, high).
KILN_RNG_FN long long randint_value(const unsigned* w, long long i, u64 low, u64 range) {
  u64 step = range <= (1ull << 16) ? (static_cast<u64>(w[i]) * range) >> 32
                                   : mul_hi64(load64(w + 2 * i), range);
  return static_cast<long long>(low + step);
}

// uniform: span = hi - lo and below_hi (the largest T below hi) come precomputed from the host,
// which replaces a value that rounded up to hi by below_hi.
template <class T>
KILN_RNG_FN T uniform_value(const unsigned* w, long long i, T lo, T span, T hi, T below_hi) {
  T v = fma_of(span, unit<T>::closed_open(w + unit<T>::k * i), lo);
  return v < hi ? v : below_hi;
}

// normal: Box-Muller on pair j's 2k words, both samples scaled; z1 is the odd element's.
template <class T>
KILN_RNG_FN void normal_pair(const unsigned* w, long long j, T mean, T sd, T* z0, T* z1) {
  const unsigned* p = w + 2 * unit<T>::k * j;
  T u = unit<T>::open_closed(p), t = unit<T>::closed_open(p + unit<T>::k);
  T rad = sqrt_of(T(-2) * log_of(u)), angle = T(2) * unit<T>::pi * t;
  *z0 = fma_of(sd, rad * cos_of(angle), mean);
  *z1 = fma_of(sd, rad * sin_of(angle), mean);
}

#ifdef __CUDACC__
// Grid-stride loops. `w` may be `out` itself (the words of an element, or of a pair, are that
// element's or pair's own bytes): each thread reads all its words before it writes, and no
// other thread touches them, so the pointers are deliberately not __restrict__.
__device__ __forceinline__ long long first_index() {
  return static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ long long grid_stride() {
  return static_cast<long long>(gridDim.x) * blockDim.x;
}

template <class T>
__device__ void randint_loop(const unsigned* w, T* out, long long n, u64 low, u64 range) {
  for (long long i = first_index(); i < n; i += grid_stride())
    out[i] = static_cast<T>(randint_value(w, i, low, range));
}

template <class T>
__device__ void uniform_loop(const unsigned* w, T* out, long long n, T lo, T span, T hi,
                             T below_hi) {
  for (long long i = first_index(); i < n; i += grid_stride())
    out[i] = uniform_value(w, i, lo, span, hi, below_hi);
}

// One thread per pair; an odd n writes only the first sample of its last pair.
template <class T>
__device__ void normal_loop(const unsigned* w, T* out, long long n, T mean, T sd) {
  for (long long j = first_index(); 2 * j < n; j += grid_stride()) {
    T z0, z1;
    normal_pair(w, j, mean, sd, &z0, &z1);
    out[2 * j] = z0;
    if (2 * j + 1 < n) out[2 * j + 1] = z1;
  }
}
#endif

}  // namespace kiln::rng

#ifdef __CUDACC__
// The entry points, one per (distribution, dtype); kiln::gpu::run_random launches one per step.
extern "C" __global__ void __launch_bounds__(256)
    k_random_randint_i32(const unsigned* w, int* out, long long n, unsigned long long low,
                         unsigned long long range) {
  kiln::rng::randint_loop(w, out, n, low, range);
}
extern "C" __global__ void __launch_bounds__(256)
    k_random_randint_i64(const unsigned* w, long long* out, long long n, unsigned long long low,
                         unsigned long long range) {
  kiln::rng::randint_loop(w, out, n, low, range);
}
extern "C" __global__ void __launch_bounds__(256)
    k_random_uniform_f32(const unsigned* w, float* out, long long n, float lo, float span, float hi,
                         float below_hi) {
  kiln::rng::uniform_loop(w, out, n, lo, span, hi, below_hi);
}
extern "C" __global__ void __launch_bounds__(256)
    k_random_uniform_f64(const unsigned* w, double* out, long long n, double lo, double span,
                         double hi, double below_hi) {
  kiln::rng::uniform_loop(w, out, n, lo, span, hi, below_hi);
}
extern "C" __global__ void __launch_bounds__(256)
    k_random_normal_f32(const unsigned* w, float* out, long long n, float mean, float sd) {
  kiln::rng::normal_loop(w, out, n, mean, sd);
}
extern "C" __global__ void __launch_bounds__(256)
    k_random_normal_f64(const unsigned* w, double* out, long long n, double mean, double sd) {
  kiln::rng::normal_loop(w, out, n, mean, sd);
}
#endif
