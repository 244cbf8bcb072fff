// Scalar types, NumPy's value semantics on the device, and index helpers. Every generated
// kernel includes this (through elementwise.cuh or reduction.cuh).
#pragma once

namespace kiln {

typedef long long i64;
typedef unsigned long long u64;

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
template <int V, class T>
__device__ __forceinline__ void store(T* p, const vec<T, V>& x) {
  *reinterpret_cast<vec<T, V>*>(p) = x;
}

// Integer arithmetic wraps, as NumPy's does (through unsigned types: defined behaviour).
template <class T>
__device__ __forceinline__ T wrap_add(T a, T b) {
  return (T)((u64)a + (u64)b);
}
template <class T>
__device__ __forceinline__ T wrap_sub(T a, T b) {
  return (T)((u64)a - (u64)b);
}
template <class T>
__device__ __forceinline__ T wrap_mul(T a, T b) {
  return (T)((u64)a * (u64)b);
}
template <class T>
__device__ __forceinline__ T wrap_neg(T a) {
  return (T)(0ull - (u64)a);
}
template <class T>
__device__ __forceinline__ T int_abs(T a) {
  return a < 0 ? wrap_neg(a) : a;
}
template <class T>
__device__ T int_pow(T base, T exp) {
  if (exp < 0) return base == 1 ? 1 : base == -1 ? ((exp & 1) ? -1 : 1) : 0;
  u64 result = 1, b = (u64)base;
  for (u64 e = (u64)exp; e; e >>= 1, b *= b)
    if (e & 1) result *= b;
  return (T)result;
}

// Float to integer as NumPy on x86: out of range and NaN give the minimum integer.
template <class T, class F>
__device__ __forceinline__ T float_to_int(F v) {
  const F lo = (F)(T)((u64)1 << (sizeof(T) * 8 - 1));
  return (v >= lo && v < -lo) ? (T)v : (T)((u64)1 << (sizeof(T) * 8 - 1));
}

// NaN-propagating minimum and maximum (NumPy's minimum/maximum).
template <class T>
__device__ __forceinline__ T maximum(T a, T b) {
  return a != a ? a : b != b ? b : (a < b ? b : a);
}
template <class T>
__device__ __forceinline__ T minimum(T a, T b) {
  return a != a ? a : b != b ? b : (b < a ? b : a);
}
template <class T>
__device__ __forceinline__ bool is_nan(T v) {
  return v != v;
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

}  // namespace kiln
