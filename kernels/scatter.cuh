// Scatter updates, x.at(integer arrays).set / add / multiply / min / max: NumPy's x[i] = v and
// ufunc.at, where an index that repeats applies every one of its updates. What one update does
// to an element is written once, below, for the host executor (which applies the updates in
// order, as NumPy) and the device (which applies them atomically, in any order). A set whose
// index repeats keeps the last update on both: on the device each position keeps the largest
// number of the updates that land on it (set_packed, claim_index; claim_last where there are
// 2^32 updates or more), and only that update's value is written.
#pragma once

#ifdef __CUDACC__
#include "kiln/complex.cuh"
#include "kiln/elementwise.cuh"
#else
#include "scalar.cuh"
#endif

namespace kiln::scatter {

// The order of graph::ScatterOp.
enum Op : int { Set, Add, Multiply, Min, Max };

// bool and integer types, told apart without <type_traits> (which NVRTC lacks).
template <class T>
KILN_SCALAR_FN constexpr bool is_bool() {
  return (T)2 == (T)1;
}
template <class T>
KILN_SCALAR_FN constexpr bool is_integer() {
  return !is_bool<T>() && (T)0.5 == (T)0;
}

// One update of a real (bool, integer or float) element: NumPy's add (logical or for bool,
// wrapping for integers), multiply (logical and, wrapping), and its NaN-propagating minimum and
// maximum, old value first.
template <int OP, class T>
KILN_SCALAR_FN T apply(T old, T v) {
  if constexpr (OP == Set) {
    return v;
  } else if constexpr (OP == Add) {
    if constexpr (is_bool<T>())
      return old || v;
    else if constexpr (is_integer<T>())
      return scalar::wrap_add(old, v);
    else
      return old + v;
  } else if constexpr (OP == Multiply) {
    if constexpr (is_bool<T>())
      return old && v;
    else if constexpr (is_integer<T>())
      return scalar::wrap_mul(old, v);
    else
      return old * v;
  } else if constexpr (OP == Min) {
    return scalar::minimum(old, v);
  } else {
    return scalar::maximum(old, v);
  }
}

// One update of a complex element, on its parts (the host's std::complex and the device's
// kiln::complex alike): add, NumPy's schoolbook product, or set. The API refuses min and max.
template <int OP, class R>
KILN_SCALAR_FN scalar::parts<R> apply_parts(scalar::parts<R> old, scalar::parts<R> v) {
  if constexpr (OP == Add) return {old.re + v.re, old.im + v.im};
  if constexpr (OP == Multiply) return scalar::complex_multiply(old, v);
  return v;
}

#ifdef __CUDACC__

template <int OP, class R>
__device__ __forceinline__ complex<R> apply(complex<R> old, complex<R> v) {
  return of_parts(apply_parts<OP>(parts_of(old), parts_of(v)));
}

// float16 and bfloat16: each update in float32, rounded once to the half (as kiln computes the
// halves; src/host/scatter.cpp does the same through kernels/half.cuh).
template <int OP>
__device__ __forceinline__ float16 apply(float16 old, float16 v) {
  return to_float16(apply<OP>(to_float(old), to_float(v)));
}
template <int OP>
__device__ __forceinline__ bfloat16 apply(bfloat16 old, bfloat16 v) {
  return to_bfloat16(apply<OP>(to_float(old), to_float(v)));
}

// The machine word an element of T lives in, and where: 1- and 2-byte elements update their
// aligned 4-byte word, the other bytes kept.
template <int N>
struct word;
template <>
struct word<1> {
  typedef unsigned int type;
};
template <>
struct word<2> {
  typedef unsigned int type;
};
template <>
struct word<4> {
  typedef unsigned int type;
};
template <>
struct word<8> {
  typedef unsigned long long type;
};

// Whether T is bool, for any T (is_bool above needs T to convert from an int).
template <class T>
struct bool_type {
  static constexpr bool value = false;
};
template <>
struct bool_type<bool> {
  static constexpr bool value = true;
};

// out[0] = apply(out[0], v), atomically, through compare-and-swap on the word that holds it. A
// bool needs none: or (add, max) and and (multiply, min) touch only its byte of the word.
template <int OP, class T>
__device__ __forceinline__ void atomic_apply(T* out, T v) {
  typedef typename word<sizeof(T)>::type W;
  const unsigned long long address = (unsigned long long)out;
  W* w = (W*)(address & ~(unsigned long long)(sizeof(W) - 1));
  const int shift = (int)(address & (sizeof(W) - 1)) * 8;
  if constexpr (bool_type<T>::value && OP != Set) {
    if ((OP == Add || OP == Max) && v) atomicOr(w, W(1) << shift);
    if ((OP == Multiply || OP == Min) && !v) atomicAnd(w, ~(W(0xff) << shift));
    return;
  }
  W seen = *w, assumed;
  do {
    assumed = seen;
    T old;
    if constexpr (sizeof(T) < sizeof(W)) {
      W bits = (assumed >> shift) & ((W(1) << (sizeof(T) * 8)) - 1);
      memcpy(&old, &bits, sizeof(T));
    } else {
      memcpy(&old, &assumed, sizeof(T));
    }
    T updated = apply<OP>(old, v);
    W next;
    if constexpr (sizeof(T) < sizeof(W)) {
      W bits = 0;
      memcpy(&bits, &updated, sizeof(T));
      const W mask = ((W(1) << (sizeof(T) * 8)) - 1) << shift;
      next = (assumed & ~mask) | (bits << shift);
    } else {
      memcpy(&next, &updated, sizeof(T));
    }
    if (next == assumed) return;  // nothing to change (a min that keeps the old value)
    seen = atomicCAS(w, assumed, next);
  } while (seen != assumed);
}

// Additions the hardware does in one instruction, in any order (float sums then round in the
// order the updates arrive: the result may differ from the host's in the last bits).
__device__ __forceinline__ void atomic_add(float* p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(double* p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(int* p, int v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(unsigned int* p, unsigned int v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(long long* p, long long v) {
  atomicAdd((unsigned long long*)p, (unsigned long long)v);  // two's complement: wraps alike
}
__device__ __forceinline__ void atomic_add(unsigned long long* p, unsigned long long v) {
  atomicAdd(p, v);
}
template <class R>
__device__ __forceinline__ void atomic_add(complex<R>* p, complex<R> v) {
  atomic_add(&p->re, v.re);  // the parts add independently
  atomic_add(&p->im, v.im);
}
// The halves' additions in one instruction where the GPU has it (float16 from sm_70, bfloat16
// from sm_90): the exact sum rounded once to the half, as apply<Add> rounds it. Through
// compare-and-swap, 2^26 float16 adds into 2^12 positions took 22 ms on an H200.
__device__ __forceinline__ void atomic_add(float16* p, float16 v) {
#if __CUDA_ARCH__ >= 700
  asm volatile("red.add.noftz.f16 [%0], %1;" ::"l"(p), "h"(v.bits) : "memory");
#else
  atomic_apply<Add>(p, v);
#endif
}
__device__ __forceinline__ void atomic_add(bfloat16* p, bfloat16 v) {
#if __CUDA_ARCH__ >= 900
  asm volatile("red.add.noftz.bf16 [%0], %1;" ::"l"(p), "h"(v.bits) : "memory");
#else
  atomic_apply<Add>(p, v);
#endif
}
template <class T>
__device__ __forceinline__ void atomic_add(T* p, T v) {
  atomic_apply<Add>(p, v);
}

// Where update k lands: with a length of -1, positions[k] as it is, a negative one an update
// left out (compress: a value the mask drops); otherwise (plan::ScatterStep::indices)
// positions[k] is an index into a 1-d output of `length` elements, a negative one counted from
// the end, and one still outside [0, length) is left out (for_each_update reports it).
__device__ __forceinline__ long long landing(const long long* positions, long long k,
                                             long long length) {
  const long long p = positions[k];
  if (length < 0) return p;
  const long long i = p < 0 ? p + length : p;
  return i < length ? i : -1;
}

// f(k, p) for every update k < count of this thread's grid-stride share, p where it lands
// (above); an update left out is skipped, and with a length (indices) it is an index out of
// range, folded into the two words at `check` (kiln::RangeCheck, zeroed before the launch; null
// where nothing is checked).
template <class F>
__device__ __forceinline__ void for_each_update(const long long* positions, long long count,
                                                long long length, unsigned long long* check,
                                                F&& f) {
  RangeCheck range(check);
  for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < count;
       k += (long long)gridDim.x * blockDim.x) {
    const long long p = landing(positions, k, length);
    if (p >= 0)
      f(k, p);
    else
      range.note(length >= 0, positions[k]);
  }
}

// Set: the last update of each position (largest k) claims it, so the result is the one NumPy
// gives whatever order the threads run in. claims[] starts at -1 for every position. (scatter()
// reports the indices out of range.)
__device__ __forceinline__ void claim_last(long long* claims, const long long* positions,
                                           long long count, long long length) {
  for_each_update(positions, count, length, nullptr,
                  [&](long long k, long long p) { atomicMax(&claims[p], k); });
}

// out[p] = op(out[p], values[k * stride]) for every update k, p where it lands (stride 0: one
// value for every update). out already holds x. For Set, `claims` is claim_last's table, or null
// where every update stores the same value (then whichever stores last leaves what the last
// update would).
template <int OP, class T>
__device__ __forceinline__ void scatter(T* out, const long long* positions, const T* values,
                                        long long stride, long long count, const long long* claims,
                                        long long length, unsigned long long* check) {
  for_each_update(positions, count, length, check, [&](long long k, long long p) {
    const T v = values[k * stride];
    if constexpr (OP == Set) {
      if (!claims || claims[p] == k) out[p] = v;
    } else if constexpr (OP == Add) {
      atomic_add(out + p, v);
    } else {
      atomic_apply<OP>(out + p, v);
    }
  });
}

// Add, multiply, min and max of 1- and 2-byte integers, on words of their own: widen gives each
// element a 32-bit word (sign- or zero-extended), scatter_widened updates the words with the
// hardware's 32-bit atomics, and narrow keeps each word's low bits, which are the narrow
// result (sums and products wrap alike modulo 2^32 and 2^8 or 2^16; the extended values order
// as the narrow ones). In place, an update's compare-and-swap on the word its element shares
// with three neighbours retries whenever any of them changes: 2^26 int8 adds into 2^12
// positions took 766 ms on an H200, float32's atomicAdd 2.1 ms.
template <class T>
__device__ __forceinline__ void widen(int* words, const T* x, long long n) {
  strided_loop(n, [&](long long i) { words[i] = (int)x[i]; });
}
template <int OP, class T>
__device__ __forceinline__ void scatter_widened(int* words, const long long* positions,
                                                const T* values, long long stride, long long count,
                                                long long length, unsigned long long* check) {
  static_assert(is_integer<T>() && sizeof(T) < 4 && OP != Set, "narrow integers' updates");
  for_each_update(positions, count, length, check, [&](long long k, long long p) {
    const int v = (int)values[k * stride];
    if constexpr (OP == Add) {
      atomicAdd((unsigned int*)(words + p), (unsigned int)v);  // wraps, as the narrow sum
    } else if constexpr (OP == Min) {
      atomicMin(words + p, v);
    } else if constexpr (OP == Max) {
      atomicMax(words + p, v);
    } else {
      atomic_apply<Multiply>((unsigned int*)(words + p), (unsigned int)v);
    }
  });
}
template <class T>
__device__ __forceinline__ void narrow(T* out, const int* words, long long n) {
  strided_loop(n, [&](long long i) { out[i] = (T)words[i]; });
}

// Set of values of at most 4 bytes, in one pass over the updates: update k offers
// (k + 1) << 32 | its value's bits to its position's word with one atomicMax, so each word ends
// holding the last update's value (the largest k), as claim_last and scatter leave it while
// reading the positions twice and the claims once more. words[] starts at 0 (no update);
// unpack_set then writes the output. count stays below 2^32 - 1.
template <class T>
__device__ __forceinline__ void set_packed(unsigned long long* words, const long long* positions,
                                           const T* values, long long stride, long long count,
                                           long long length, unsigned long long* check) {
  static_assert(sizeof(T) <= 4, "a packed set holds the value in the word's low 32 bits");
  for_each_update(positions, count, length, check, [&](long long k, long long p) {
    const T v = values[k * stride];
    unsigned int bits = 0;
    memcpy(&bits, &v, sizeof(T));
    atomicMax(words + p, ((unsigned long long)(k + 1) << 32) | bits);
  });
}

// Set of wider values (8 and 16 bytes) in one pass over the updates: update k offers k + 1 to
// its position's 32-bit word with one atomicMax, so each word ends holding the number of its
// last update, and gather_set writes the output reading that update's value. claim_last and
// scatter read the positions twice, then the 64-bit claims at random: 2^26 float64 updates
// into 2^24 positions took 5.8 ms on an H200 that way, where torch's index_put (which keeps no
// particular update) took 4.0. words[] starts at 0 (no update); count stays below 2^32 - 1.
__device__ __forceinline__ void claim_index(unsigned int* words, const long long* positions,
                                            long long count, long long length,
                                            unsigned long long* check) {
  for_each_update(positions, count, length, check,
                  [&](long long k, long long p) { atomicMax(words + p, (unsigned int)(k + 1)); });
}
template <class T>
__device__ __forceinline__ void gather_set(T* out, const T* x, const unsigned int* words,
                                           const T* values, long long stride, long long n) {
  strided_loop(n, [&](long long i) {
    const unsigned int w = words[i];
    out[i] = w ? values[(long long)(w - 1) * stride] : x[i];
  });
}

// out[i] = the value word i holds, or x[i] where no update landed (set_packed).
template <class T>
__device__ __forceinline__ void unpack_set(T* out, const T* x, const unsigned long long* words,
                                           long long n) {
  strided_loop(n, [&](long long i) {
    const unsigned long long w = words[i];
    if (w) {
      const unsigned int bits = (unsigned int)w;
      T v;
      memcpy(&v, &bits, sizeof(T));
      out[i] = v;
    } else {
      out[i] = x[i];
    }
  });
}

#endif  // __CUDACC__

}  // namespace kiln::scatter
