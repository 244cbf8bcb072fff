// The GPU's random steps in one pass: each thread computes Philox4x32-10 blocks in registers
// and maps their words (kiln/random.hpp's mappings) straight into the output, which is written
// once; no word ever goes through memory.
//
// The stream is cuRAND's Philox4_32_10 in LEGACY ordering, which lays it out as if 2^16
// threads each ran their own subsequence and took turns block by block: word x of a seed's stream
// (x counted from the start of the stream, the generator offset included) is lane x % 4 of the
// Philox4x32-10 block of b = x / 4 with
//   key     = (low 32 bits of seed, high 32 bits of seed)
//   counter = (low 32 bits of b >> 16, high 32 bits of b >> 16, b & 0xFFFF, 0),
// i.e. subsequence b mod 2^16 (counter word 2), step b / 2^16 of it (counter words 0-1).
// philox_block below computes exactly that block, so a word costs no state and no memory:
// tests/test_philox.cpp checks it against curandGenerate word for word.
//
// Layout of a step. A step reads the words [off, off + K*units) of the stream: unit u (an
// element, or a pair of elements for Box-Muller normals) reads the K words starting at
// off + K*u (K = 1, 2 or 4, which divides 4) and gives E = 1 or 2 elements, E*u and E*u + 1.
// A thread owns one Philox block at a time: it writes the units whose first word lies in its
// block. When off % K != 0 the last unit of a block also needs the first off % K words of the
// next block; in that case a warp computes 32 consecutive blocks but owns only the first 31,
// and lane l takes the words it lacks from lane l + 1 by shuffle (so each block is computed
// once, plus one block in 32 twice).
//
// Everything here is plain C++ as well: without __CUDACC__ it compiles on the host, where the
// host executor (src/host/random.cpp) computes the same blocks (kLanes at a time) and maps them
// with these very units (Randint, Uniform, Normal), and a test without a GPU runs what a thread
// runs (write_block, one call per Philox block) and compares it with the host executor. The kernels
// are compiled with --fmad=false, so nothing is contracted, and randint, uniform and the
// word-to-[0, 1) maps are bit-identical. Normal samples go through log, sqrt, sin and cos: sqrt is
// correctly rounded on both sides, CUDA's log/sin/cos are within 1-2 ulp where glibc's are within 1
// ulp, so a sample differs from the host's by a few ulps of max(|sample|, std)
// (tests/test_gpu_random.cpp reports the largest difference it saw and fails past 16 ulps of
// |sample| + 9 std).
//
// Reaches NVRTC as "kiln/random.cuh" with no include path: only built-in functions.
#pragma once

#ifdef __CUDACC__
#define KILN_RNG_FN __host__ __device__ __forceinline__
#define KILN_RNG_UNROLL _Pragma("unroll")
#else
#include <math.h>  // ::fmaf and friends, the names both sides call
#ifdef __AVX2__
#include <immintrin.h>
#endif
#define KILN_RNG_FN inline
#define KILN_RNG_UNROLL
#endif

namespace kiln::rng {

typedef unsigned long long u64;

// ---- Philox4x32-10 ------------------------------------------------------------------------

// hi:lo = a * b.
KILN_RNG_FN void mul_hilo32(unsigned a, unsigned b, unsigned* hi, unsigned* lo) {
#ifdef __CUDA_ARCH__
  *hi = __umulhi(a, b);
  *lo = a * b;
#else
  u64 p = static_cast<u64>(a) * b;
  *hi = static_cast<unsigned>(p >> 32);
  *lo = static_cast<unsigned>(p);
#endif
}

#ifndef __CUDACC__
// The host's blocks, kLanes at a time: one Philox per lane of a vector of words (GCC's vector
// extensions, which the compiler maps to the CPU's vector instructions).
inline constexpr int kLanes = 8;
typedef unsigned lanes_u32 __attribute__((vector_size(4 * kLanes)));
typedef u64 lanes_u64 __attribute__((vector_size(4 * kLanes)));

// The 32 x 32 -> 64-bit products of b with every lane of a, split into high and low words: the
// even lanes multiply in place as 64-bit lanes, the odd ones shifted down to them.
inline void mul_hilo32(unsigned b, lanes_u32 a, lanes_u32* hi, lanes_u32* lo) {
  const lanes_u64 low_half = (lanes_u64{} + 0xFFFFFFFFull);
#ifdef __AVX2__
  // vpmuludq, one instruction for the widening products; GCC writes the plain 64-bit products
  // below as vpmullq (three on AVX-512, a long sequence on AVX2), which made Philox the
  // larger part of a host draw.
  const __m256i bb = _mm256_set1_epi32(static_cast<int>(b));
  const lanes_u64 even = (lanes_u64)_mm256_mul_epu32((__m256i)a, bb);
  const lanes_u64 odd = (lanes_u64)_mm256_mul_epu32(_mm256_srli_epi64((__m256i)a, 32), bb);
#else
  const lanes_u64 even = ((lanes_u64)a & low_half) * b;
  const lanes_u64 odd = ((lanes_u64)a >> 32) * b;
#endif
  *lo = a * b;
  const lanes_u64 high = (even >> 32) | (odd & ~low_half);
  *hi = (lanes_u32)high;
}

#endif

// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC11) of the
// counter c under the key (k0, k1), in place: ten rounds, the key bumped by the Weyl constants
// between rounds. The same function as cuRAND's curand_Philox4x32_10. W is a word (what a GPU
// thread runs) or, on the host, a vector of words: several counters, one per lane, at once.
template <class W>
KILN_RNG_FN void philox4x32_10(W c[4], unsigned k0, unsigned k1) {
  KILN_RNG_UNROLL
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    W hi0, lo0, hi1, lo1;
    mul_hilo32(0xD2511F53u, c[0], &hi0, &lo0);
    mul_hilo32(0xCD9E8D57u, c[2], &hi1, &lo1);
    const W c1 = c[1], c3 = c[3];
    c[0] = hi1 ^ c1 ^ k0;
    c[1] = lo1;
    c[2] = hi0 ^ c3 ^ k1;
    c[3] = lo0;
  }
}

// The counter of block b (see the top of this file for the layout).
KILN_RNG_FN void block_counter(u64 b, unsigned c[4]) {
  const u64 step = b >> 16;
  c[0] = static_cast<unsigned>(step);
  c[1] = static_cast<unsigned>(step >> 32);
  c[2] = static_cast<unsigned>(b & 0xFFFF);
  c[3] = 0;
}

// Words 4b .. 4b+3 of the stream of `seed`.
KILN_RNG_FN void philox_block(u64 seed, u64 b, unsigned w[4]) {
  block_counter(b, w);
  philox4x32_10(w, static_cast<unsigned>(seed), static_cast<unsigned>(seed >> 32));
}

#ifndef __CUDACC__
// Words of blocks first .. first + kLanes - 1 of the stream of `seed`, block first + l in w[l].
inline void philox_blocks(u64 seed, u64 first, unsigned (&w)[kLanes][4]) {
  lanes_u32 c[4];
  for (int l = 0; l < kLanes; ++l) {
    unsigned one[4];
    block_counter(first + l, one);
    for (int i = 0; i < 4; ++i) c[i][l] = one[i];
  }
  philox4x32_10(c, static_cast<unsigned>(seed), static_cast<unsigned>(seed >> 32));
  for (int l = 0; l < kLanes; ++l)
    for (int i = 0; i < 4; ++i) w[l][i] = c[i][l];
}
#endif

// ---- words to values (kiln/random.hpp defines these) ---------------------------------------

// The high 64 bits of the 128-bit product a * b.
KILN_RNG_FN u64 mul_hi64(u64 a, u64 b) {
#ifdef __CUDA_ARCH__
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

// randint from an element's K words: one word up to a range of 2^16, else two; a
// multiply-shift maps them to [0, range). The sum wraps like the host's uint64 arithmetic and
// lands in [low, high).
template <int K>
KILN_RNG_FN long long randint_value(const unsigned* w, u64 low, u64 range) {
  // With one word the range is at most 2^16, so a 32 x 32 -> 64-bit product (one multiply on
  // the GPU) is exact.
  u64 step = K == 1 ? (static_cast<u64>(w[0]) * static_cast<unsigned>(range)) >> 32
                    : mul_hi64(load64(w), range);
  return static_cast<long long>(low + step);
}

// uniform: span = hi - lo and below_hi (the largest T below hi) come precomputed from the host,
// which replaces a value that rounded up to hi by below_hi.
template <class T>
KILN_RNG_FN T uniform_value(const unsigned* w, T lo, T span, T hi, T below_hi) {
  T v = fma_of(span, unit<T>::closed_open(w), lo);
  return v < hi ? v : below_hi;
}

// normal: Box-Muller on a pair's 2k words, both samples scaled; z1 is the odd element's.
template <class T>
KILN_RNG_FN void normal_pair(const unsigned* w, T mean, T sd, T* z0, T* z1) {
  T u = unit<T>::open_closed(w), t = unit<T>::closed_open(w + unit<T>::k);
  T rad = sqrt_of(T(-2) * log_of(u)), angle = T(2) * unit<T>::pi * t;
  *z0 = fma_of(sd, rad * cos_of(angle), mean);
  *z1 = fma_of(sd, rad * sin_of(angle), mean);
}

// ---- the distributions as units: K words in, E values out ---------------------------------

template <class T, int WordsPerElement>
struct Randint {
  typedef T value_type;
  static constexpr int K = WordsPerElement, E = 1;
  u64 low, range;
  KILN_RNG_FN void operator()(const unsigned* w, T* v) const {
    v[0] = static_cast<T>(randint_value<K>(w, low, range));
  }
};

template <class T>
struct Uniform {
  typedef T value_type;
  static constexpr int K = unit<T>::k, E = 1;
  T lo, span, hi, below_hi;
  KILN_RNG_FN void operator()(const unsigned* w, T* v) const {
    v[0] = uniform_value(w, lo, span, hi, below_hi);
  }
};

template <class T>
struct Normal {
  typedef T value_type;
  static constexpr int K = 2 * unit<T>::k, E = 2;
  T mean, sd;
  KILN_RNG_FN void operator()(const unsigned* w, T* v) const { normal_pair(w, mean, sd, v, v + 1); }
};

// ---- one Philox block of a step ------------------------------------------------------------

// Units that start in one block.
template <class D>
inline constexpr int kUnitsPerBlock = 4 / D::K;

// Elements in a step of n elements, counted in whole units (an odd-sized normal step still
// reads its last pair whole), and the Philox blocks those words touch from off / 4 on.
template <class D>
KILN_RNG_FN u64 units_of(long long n) {
  return D::E == 2 ? (static_cast<u64>(n) + 1) / 2 : static_cast<u64>(n);
}
template <class D>
KILN_RNG_FN u64 blocks_of(long long n, u64 off) {
  return ((off & 3) + units_of<D>(n) * D::K + 3) / 4;
}

// The element written by lane 0 of v in block `rel` (counted from the step's first block,
// off / 4): negative in the first block when the step starts inside it.
template <class D>
KILN_RNG_FN long long first_element(u64 off, u64 rel) {
  // Word offset of the block's first unit from the step's start: 4 rel - off % 4 rounded up
  // to a multiple of K (off % K is the lane of the block's first unit).
  long long d = static_cast<long long>(4 * rel) - static_cast<long long>(off & 3) +
                static_cast<long long>(off % D::K);
  return d / D::K * D::E;
}

// ws[i + shift] for shift = off % K in [0, K): picked by selects, so that ws is only ever
// indexed by constants and stays in registers (an indexed array would go to local memory).
// A few selects per word cost little beside the ten Philox rounds, and one code path for
// every shift keeps the kernels (and their NVRTC compile) small.
template <int K>
KILN_RNG_FN unsigned shifted_word(const unsigned* ws, unsigned shift, int i) {
  unsigned w = ws[i];
  KILN_RNG_UNROLL
  for (int t = 1; t < K; ++t) w = shift == static_cast<unsigned>(t) ? ws[i + t] : w;
  return w;
}

// ws holds the block's 4 words, then the first K - 1 words of the next block; shift = off % K
// is the lane of the block's first unit. v gets the values of the units that start in the
// block, in element order.
template <class D>
KILN_RNG_FN void block_values(const D& d, const unsigned* ws, unsigned shift,
                              typename D::value_type* v) {
  KILN_RNG_UNROLL
  for (int j = 0; j < kUnitsPerBlock<D>; ++j) {
    unsigned w[D::K];
    KILN_RNG_UNROLL
    for (int i = 0; i < D::K; ++i) w[i] = shifted_word<D::K>(ws, shift, D::K * j + i);
    d(w, v + D::E * j);
  }
}

#ifdef __CUDA_ARCH__
// 16 or 8 bytes in one store; p is aligned to that size. __stwb (an ordinary write-back store)
// rather than a store through a vector pointer: NVVM splits the latter into scalar stores when
// the scalar edge path beside it stores the same values.
__device__ __forceinline__ void store_vec(float* p, const float* v) {
  __stwb(reinterpret_cast<float4*>(p), make_float4(v[0], v[1], v[2], v[3]));
}
__device__ __forceinline__ void store_vec(double* p, const double* v) {
  __stwb(reinterpret_cast<double2*>(p), make_double2(v[0], v[1]));
}
__device__ __forceinline__ void store_vec(long long* p, const long long* v) {
  __stwb(reinterpret_cast<longlong2*>(p), make_longlong2(v[0], v[1]));
}
__device__ __forceinline__ void store_vec(int* p, const int* v, int count) {
  if (count == 4)
    __stwb(reinterpret_cast<int4*>(p), make_int4(v[0], v[1], v[2], v[3]));
  else
    __stwb(reinterpret_cast<int2*>(p), make_int2(v[0], v[1]));
}
template <class T>
__device__ __forceinline__ void store_vec(T* p, const T* v, int) {
  store_vec(p, v);
}
#endif

// Computes and writes the elements of the units that start in block rel, from ws as above.
// `vec`: the block's elements may go out in aligned vector stores when they all lie inside the
// output (the step starts on a block boundary and out is 16-byte aligned); on the host it
// changes nothing.
template <class D>
KILN_RNG_FN void write_block(const D& d, typename D::value_type* out, long long n, u64 off, u64 rel,
                             const unsigned* ws, bool vec) {
  typedef typename D::value_type T;
  constexpr int P = kUnitsPerBlock<D> * D::E;  // elements per block
  T v[P];
  block_values(d, ws, static_cast<unsigned>(off % D::K), v);
  const long long e0 = first_element<D>(off, rel);
#ifdef __CUDA_ARCH__
  if (vec && e0 + P <= n) {
    // Chunks of 16 bytes (or one of 8: two int32 of a two-word randint).
    constexpr int per_vector = static_cast<int>(16 / sizeof(T));
    constexpr int per_store = per_vector < P ? per_vector : P;
    KILN_RNG_UNROLL
    for (int c = 0; c < P; c += per_store) store_vec(out + e0 + c, v + c, per_store);
    return;
  }
#else
  (void)vec;
#endif
  KILN_RNG_UNROLL
  for (int q = 0; q < P; ++q)
    if (e0 + q >= 0 && e0 + q < n) out[e0 + q] = v[q];
}

// Blocks a warp owns per pass: all 32 it computes, or 31 when units straddle blocks and the
// last lane's block only lends its first words to lane 30.
template <class D>
KILN_RNG_FN unsigned owned_per_warp(u64 off) {
  return off % D::K != 0 ? 31 : 32;
}

#ifdef __CUDACC__
// The step's blocks, a warp at a time (see the top of this file). The loop condition depends
// only on the warp, so every lane reaches each shuffle.
template <class D>
__device__ void run(const D& d, typename D::value_type* out, long long n, u64 seed, u64 off) {
  const bool vec = (off & 3) == 0 && (reinterpret_cast<u64>(out) & 15) == 0;
  const unsigned owned = owned_per_warp<D>(off);
  const u64 blocks = blocks_of<D>(n, off), base = off >> 2;
  const unsigned lane = threadIdx.x & 31;
  const u64 warp = (static_cast<u64>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const u64 warps = (static_cast<u64>(gridDim.x) * blockDim.x) >> 5;
  for (u64 first = warp * owned; first < blocks; first += warps * owned) {
    const u64 rel = first + lane;
    unsigned ws[4 + D::K - 1];
    philox_block(seed, base + rel, ws);
    KILN_RNG_UNROLL
    for (int j = 4; j < 4 + D::K - 1; ++j) ws[j] = __shfl_down_sync(0xffffffffu, ws[j - 4], 1);
    if (lane < owned && rel < blocks) write_block(d, out, n, off, rel, ws, vec);
  }
}

template <class T>
__device__ void randint(T* out, long long n, u64 seed, u64 off, u64 low, u64 range) {
  if (range <= (1ull << 16))
    run(Randint<T, 1>{low, range}, out, n, seed, off);
  else
    run(Randint<T, 2>{low, range}, out, n, seed, off);
}
#endif

}  // namespace kiln::rng

#ifdef __CUDACC__
// The entry points, one per (distribution, dtype); kiln::gpu::run_random launches one per step
// with at least one warp per 31 of the step's Philox blocks (any grid is correct).
extern "C" __global__ void __launch_bounds__(256)
    k_random_randint_i32(int* out, long long n, unsigned long long seed, unsigned long long off,
                         unsigned long long low, unsigned long long range) {
  kiln::rng::randint(out, n, seed, off, low, range);
}
extern "C" __global__ void __launch_bounds__(256)
    k_random_randint_i64(long long* out, long long n, unsigned long long seed,
                         unsigned long long off, unsigned long long low, unsigned long long range) {
  kiln::rng::randint(out, n, seed, off, low, range);
}
extern "C" __global__ void __launch_bounds__(256)
    k_random_uniform_f32(float* out, long long n, unsigned long long seed, unsigned long long off,
                         float lo, float span, float hi, float below_hi) {
  kiln::rng::run(kiln::rng::Uniform<float>{lo, span, hi, below_hi}, out, n, seed, off);
}
extern "C" __global__ void __launch_bounds__(256)
    k_random_uniform_f64(double* out, long long n, unsigned long long seed, unsigned long long off,
                         double lo, double span, double hi, double below_hi) {
  kiln::rng::run(kiln::rng::Uniform<double>{lo, span, hi, below_hi}, out, n, seed, off);
}
extern "C" __global__ void __launch_bounds__(256)
    k_random_normal_f32(float* out, long long n, unsigned long long seed, unsigned long long off,
                        float mean, float sd) {
  kiln::rng::run(kiln::rng::Normal<float>{mean, sd}, out, n, seed, off);
}
extern "C" __global__ void __launch_bounds__(256)
    k_random_normal_f64(double* out, long long n, unsigned long long seed, unsigned long long off,
                        double mean, double sd) {
  kiln::rng::run(kiln::rng::Normal<double>{mean, sd}, out, n, seed, off);
}
#endif
