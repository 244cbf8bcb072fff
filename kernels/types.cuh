// Scalar types, NumPy's value semantics on the device, and index helpers. Every generated
// kernel includes this (through elementwise.cuh or reduction.cuh).
#pragma once

#include "kiln/half.cuh"
#include "kiln/scalar.cuh"

namespace kiln {

// NumPy's value semantics shared with the host executor (kernels/scalar.cuh).
using scalar::float_floor_divide;
using scalar::float_remainder;
using scalar::float_to_int;
using scalar::gelu;
using scalar::gelu_tanh;
using scalar::i64;
using scalar::int_abs;
using scalar::int_floor_divide;
using scalar::int_fmod;
using scalar::int_pow;
using scalar::int_remainder;
using scalar::is_nan;
using scalar::maximum;
using scalar::minimum;
using scalar::shift_left;
using scalar::shift_right;
using scalar::u64;
using scalar::wrap_add;
using scalar::wrap_mul;
using scalar::wrap_neg;
using scalar::wrap_sub;

// Lanes tag: how many consecutive elements one call of a generated body handles.
template <int V>
struct lanes {
  static constexpr int value = V;
};

// A V-element vector for 16-byte loads and stores.
template <class T, int V>
struct alignas(sizeof(T) * V) vec {
  T v[V];
  __device__ T& operator[](int i) { return v[i]; }
  __device__ const T& operator[](int i) const { return v[i]; }
};

template <int V, class T>
__device__ __forceinline__ vec<T, V> load(const T* p) {
  return *reinterpret_cast<const vec<T, V>*>(p);
}
// A 16-byte load that leaves L1 alone (ld.global.nc.L1::no_allocate), for a stream each
// thread reads once and no other thread reads again: a full reduction's input. On the H200,
// max of int64 4000x4000 as kiln's kernel reads it: 0.0334 ms with plain loads, 0.0329 ms
// with these (gpuwork microbenchmark, 2026-12-02); other widths load as load() does.
template <int V, class T>
__device__ __forceinline__ vec<T, V> load_streaming(const T* p) {
#ifdef __CUDA_ARCH__
  if constexpr (sizeof(T) * V == 16) {
    uint4 w;
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w)
        : "l"(p));
    return *reinterpret_cast<const vec<T, V>*>(&w);
  }
#endif
  return load<V>(p);
}
template <int V, class T>
__device__ __forceinline__ void store(T* p, const vec<T, V>& x) {
  *reinterpret_cast<vec<T, V>*>(p) = x;
}

// Element offset of iteration index i in an access walking `shape` with `strides`.
template <int R, class I>
__device__ __forceinline__ I offset_of(I i, const i64* shape, const i64* strides) {
  I off = 0;
#pragma unroll
  for (int d = R - 1; d >= 0; --d) {
    I s = (I)shape[d];
    off += (i % s) * (I)strides[d];
    i /= s;
  }
  return off;
}

// Collapsed shape and per-access strides for strided kernels.
template <int R, int A>
struct layout {
  i64 shape[R > 0 ? R : 1];
  i64 strides[A > 0 ? A : 1][R > 0 ? R : 1];
};

// take's range check (FusedGroup::checks) in one thread: the lowest and the highest index
// outside [-n, n) that the thread met, kept with selects, then folded into the check's two words
// (kernels/scalar.cuh: below_word, above_word) once, when the thread ends. A branch or a call
// beside each index, even one never taken, kept the compiler from issuing the next lanes' loads
// before it: the gathers then waited on one another (take of 2^26 indices 2.15 ms where the
// same gather without the check took 1.91).
struct RangeCheck {
  u64* words;
  i64 lo = 0x7fffffffffffffffLL;  // no index met yet: lo >= 0 and hi < 0 record nothing
  i64 hi = -0x7fffffffffffffffLL - 1;
  __device__ explicit RangeCheck(u64* w) : words(w) {}
  RangeCheck(const RangeCheck&) = delete;
  RangeCheck& operator=(const RangeCheck&) = delete;
  __device__ __forceinline__ void note(bool out_of_range, i64 v) {
    lo = out_of_range && v < lo ? v : lo;
    hi = out_of_range && v > hi ? v : hi;
  }
  __device__ ~RangeCheck() {
    if (lo < 0) atomicMax(words, scalar::below_word(lo));
    if (hi >= 0) atomicMax(words + 1, scalar::above_word(hi));
  }
};

}  // namespace kiln
