// Skeletons for reductions with a fused elementwise prologue. The iteration space is
// [kept..., reduced...]: output o folds the R values at indices o*R .. o*R+R-1. The generated
// kernel supplies the prologue (value at an index) and picks an accumulator below.
#pragma once
#include "kiln/elementwise.cuh"

namespace kiln {

// ---- accumulators: init, fold a value found at index i, merge two partials, finish ----
template <class T>
struct SumOp {
  typedef T acc;
  typedef T out;
  static __device__ acc init() { return T(0); }
  static __device__ void fold(acc& a, T v, i64) { a = a + v; }
  static __device__ void merge(acc& a, const acc& b) { a = a + b; }
  static __device__ out finish(const acc& a, i64) { return a; }
};
template <class T>
struct IntSumOp : SumOp<T> {
  static __device__ void fold(T& a, T v, i64) { a = wrap_add(a, v); }
  static __device__ void merge(T& a, const T& b) { a = wrap_add(a, b); }
};
template <class T>
struct ProdOp {
  typedef T acc;
  typedef T out;
  static __device__ acc init() { return T(1); }
  static __device__ void fold(acc& a, T v, i64) { a = a * v; }
  static __device__ void merge(acc& a, const acc& b) { a = a * b; }
  static __device__ out finish(const acc& a, i64) { return a; }
};
template <class T>
struct IntProdOp : ProdOp<T> {
  static __device__ void fold(T& a, T v, i64) { a = wrap_mul(a, v); }
  static __device__ void merge(T& a, const T& b) { a = wrap_mul(a, b); }
};
template <class T, class R>
struct MeanOp : SumOp<T> {
  static __device__ T finish(const T& a, i64 n) { return a / T(R(n)); }
};
struct AnyOp {
  typedef bool acc;
  typedef bool out;
  static __device__ acc init() { return false; }
  static __device__ void fold(acc& a, bool v, i64) { a = a || v; }
  static __device__ void merge(acc& a, const acc& b) { a = a || b; }
  static __device__ out finish(const acc& a, i64) { return a; }
};
struct AllOp {
  typedef bool acc;
  typedef bool out;
  static __device__ acc init() { return true; }
  static __device__ void fold(acc& a, bool v, i64) { a = a && v; }
  static __device__ void merge(acc& a, const acc& b) { a = a && b; }
  static __device__ out finish(const acc& a, i64) { return a; }
};

// Max, min, argmax, argmin: NaN wins (the first NaN for the arg forms); ties keep the
// smaller index, so the result does not depend on how the work was split.
template <bool B, class A, class C>
struct pick_type {
  typedef A type;
};
template <class A, class C>
struct pick_type<false, A, C> {
  typedef C type;
};

template <class T>
struct Extremum {
  T v;
  i64 i;
  bool set;
};
template <class T, bool Max, bool Arg>
struct ExtremumOp {
  typedef Extremum<T> acc;
  typedef typename pick_type<Arg, i64, T>::type out;
  static __device__ acc init() {
    acc a;
    a.v = T(0);
    a.i = 0;
    a.set = false;
    return a;
  }
  static __device__ bool better(const acc& b, const acc& a) {  // does b replace a?
    if (!b.set) return false;
    if (!a.set) return true;
    bool bn = is_nan(b.v), an = is_nan(a.v);
    if (an || bn) return bn && (!an || b.i < a.i);
    if (Max ? a.v < b.v : b.v < a.v) return true;
    return !(Max ? b.v < a.v : a.v < b.v) && b.i < a.i;  // equal: the earlier index
  }
  static __device__ void fold(acc& a, T v, i64 i) {
    acc b;
    b.v = v;
    b.i = i;
    b.set = true;
    if (better(b, a)) a = b;
  }
  static __device__ void merge(acc& a, const acc& b) {
    if (better(b, a)) a = b;
  }
  static __device__ out finish(const acc& a, i64) {
    if constexpr (Arg) return a.i;
    else return a.v;
  }
};

// ---- block-wide merge through shared memory ----
template <class Op, int BLOCK>
__device__ __forceinline__ typename Op::acc block_merge(typename Op::acc a) {
  __shared__ typename Op::acc part[BLOCK];
  part[threadIdx.x] = a;
  __syncthreads();
#pragma unroll
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if ((int)threadIdx.x < s) Op::merge(part[threadIdx.x], part[threadIdx.x + s]);
    __syncthreads();
  }
  return part[0];
}

}  // namespace kiln
