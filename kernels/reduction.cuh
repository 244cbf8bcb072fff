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

// The extremes of each real type: max starts from the lowest, min from the highest.
template <class T>
struct limits;
template <>
struct limits<bool> {
  static __device__ bool lowest() { return false; }
  static __device__ bool highest() { return true; }
};
template <>
struct limits<int> {
  static __device__ int lowest() { return -2147483647 - 1; }
  static __device__ int highest() { return 2147483647; }
};
template <>
struct limits<long long> {
  static __device__ long long lowest() { return -9223372036854775807LL - 1; }
  static __device__ long long highest() { return 9223372036854775807LL; }
};
template <>
struct limits<signed char> {
  static __device__ signed char lowest() { return -128; }
  static __device__ signed char highest() { return 127; }
};
template <>
struct limits<short> {
  static __device__ short lowest() { return -32768; }
  static __device__ short highest() { return 32767; }
};
template <>
struct limits<unsigned char> {
  static __device__ unsigned char lowest() { return 0; }
  static __device__ unsigned char highest() { return 255; }
};
template <>
struct limits<unsigned short> {
  static __device__ unsigned short lowest() { return 0; }
  static __device__ unsigned short highest() { return 65535; }
};
template <>
struct limits<unsigned int> {
  static __device__ unsigned int lowest() { return 0; }
  static __device__ unsigned int highest() { return 4294967295u; }
};
template <>
struct limits<unsigned long long> {
  static __device__ unsigned long long lowest() { return 0; }
  static __device__ unsigned long long highest() { return 18446744073709551615ull; }
};
template <>
struct limits<float> {
  static __device__ float lowest() { return -__int_as_float(0x7f800000); }
  static __device__ float highest() { return __int_as_float(0x7f800000); }
};
template <>
struct limits<double> {
  static __device__ double lowest() { return -__longlong_as_double(0x7ff0000000000000LL); }
  static __device__ double highest() { return __longlong_as_double(0x7ff0000000000000LL); }
};

// Max and min of real values: no index to track; NaN propagates (kiln::maximum/minimum). The
// identity never reaches a result: an empty max/min is rejected before planning.
template <class T, bool Max>
struct MaxMinOp {
  typedef T acc;
  typedef T out;
  static __device__ acc init() { return Max ? limits<T>::lowest() : limits<T>::highest(); }
  static __device__ void fold(acc& a, T v, i64) { a = Max ? maximum(a, v) : minimum(a, v); }
  static __device__ void merge(acc& a, const acc& b) { a = Max ? maximum(a, b) : minimum(a, b); }
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
    if constexpr (Arg)
      return a.i;
    else
      return a.v;
  }
};

// ---- block-wide merge: warp shuffles, then one value per warp through shared memory ----

// Shuffles any accumulator (a number, a complex, an extremum with its index) word by word:
// shuffle(word) is one __shfl_*_sync of a 32-bit word.
template <class T, class Shuffle>
__device__ __forceinline__ T shuffle_words(const T& v, Shuffle shuffle) {
  constexpr int kWords = (sizeof(T) + 3) / 4;
  union Words {
    T value;
    unsigned w[kWords];
    __device__ Words() {}
  } in, out;
  in.value = v;
#pragma unroll
  for (int k = 0; k < kWords; ++k) out.w[k] = shuffle(in.w[k]);
  return out.value;
}

// Lane l + delta's value to lane l, within groups of W lanes (a power of two up to 32).
template <class T, int W = 32>
__device__ __forceinline__ T shuffle_down(const T& v, int delta) {
  return shuffle_words(v,
                       [delta](unsigned w) { return __shfl_down_sync(0xffffffffu, w, delta, W); });
}

// Lane `src`'s value (of each group of W lanes) to every lane of its group.
template <class T, int W = 32>
__device__ __forceinline__ T shuffle_from(const T& v, int src) {
  return shuffle_words(v, [src](unsigned w) { return __shfl_sync(0xffffffffu, w, src, W); });
}

// The first lane of each group of W lanes gets the merge of the group's accumulators.
template <class Op, int W = 32>
__device__ __forceinline__ typename Op::acc warp_merge(typename Op::acc a) {
#pragma unroll
  for (int d = W / 2; d > 0; d >>= 1) Op::merge(a, shuffle_down<typename Op::acc, W>(a, d));
  return a;
}

// Every thread of the block gets the merge of all the block's accumulators.
template <class Op, int BLOCK>
__device__ __forceinline__ typename Op::acc block_merge(typename Op::acc a) {
  constexpr int kWarps = BLOCK / 32;
  __shared__ typename Op::acc per_warp[kWarps];
  __shared__ typename Op::acc result;
  a = warp_merge<Op>(a);
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) per_warp[warp] = a;
  __syncthreads();
  if (warp == 0) {
    a = lane < kWarps ? per_warp[lane] : Op::init();
    a = warp_merge<Op>(a);
    if (lane == 0) result = a;
  }
  __syncthreads();
  return result;
}

// Every thread of a group of TPR threads (a power of two up to a warp, or the whole block of
// TPR threads) gets the merge of the group's accumulators, all in the same order, so all hold
// the same bits. Every lane of the warp must call it (the shuffles name them all).
template <class Op, int TPR>
__device__ __forceinline__ typename Op::acc group_merge(typename Op::acc a) {
  if constexpr (TPR <= 32)
    return shuffle_from<typename Op::acc, TPR>(warp_merge<Op, TPR>(a), 0);
  else
    return block_merge<Op, TPR>(a);
}

// Copies span elements of a dense input into shared memory with the whole block, 16 bytes at
// a time when `vec` says source, destination and span allow it (a row fused with its reductions
// stages its rows so that every pass over them reads on-chip memory). TAIL: span need not be a
// multiple of V; the last span % V go one at a time (long rows, staged from the 16-byte
// boundary before the row). A separate path: with the tail loop in every staging, layernorm
// 16384x4096's kernel compiled to other code (a 24208-byte cubin against 21392) and ran
// 0.154 ms on the H200 against 0.135 ms before; without it the cubin is the one before.
template <int V, int BLOCK, bool TAIL = false, class T, class I>
__device__ __forceinline__ void stage(T* dst, const T* __restrict__ src, I span, int vec) {
  if (V > 1 && vec) {
    const I whole = TAIL ? span / V * V : span;
#pragma unroll 4
    for (I e = (I)threadIdx.x * V; e < whole; e += BLOCK * V) store<V>(dst + e, load<V>(src + e));
    if (TAIL)
      for (I e = whole + threadIdx.x; e < span; e += BLOCK) dst[e] = src[e];
  } else {
#pragma unroll 4
    for (I e = threadIdx.x; e < span; e += BLOCK) dst[e] = src[e];
  }
}

// A row's values into the registers of its TPR lanes (RowFused rows kept in registers): vector
// k of lane `lane` holds row positions (k * TPR + lane) * V .. + V - 1, loaded 16 bytes at a
// time when `vec` says the row is aligned for it; positions from `end` on hold zeros.
template <int P, int V, int TPR, class T, class I>
__device__ __forceinline__ void load_row(vec<T, V> (&dst)[P], const T* __restrict__ row, I end,
                                         int lane, int vec) {
#pragma unroll
  for (int k = 0; k < P; ++k) {
    const I j = ((I)k * TPR + lane) * V;
    if (vec && j + V <= end) {
      dst[k] = load<V>(row + j);
    } else {
#pragma unroll
      for (int l = 0; l < V; ++l) dst[k][l] = j + l < end ? row[j + l] : T();
    }
  }
}

// The end of a one-output reduction: each block stores its partial; the last block to arrive
// (counted on `done`) merges them all, writes the result and re-zeroes the counter, so the
// next launch on the stream starts from zero.
template <class Op, int BLOCK, class Out>
__device__ __forceinline__ void finish_full_reduction(typename Op::acc acc,
                                                      typename Op::acc* partials,
                                                      unsigned int* done, Out* out, i64 n) {
  __shared__ bool last;
  acc = block_merge<Op, BLOCK>(acc);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = acc;
    __threadfence();  // the partial is visible before the count says so
    last = atomicAdd(done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  typename Op::acc a = Op::init();
  for (unsigned k = threadIdx.x; k < gridDim.x; k += BLOCK) Op::merge(a, partials[k]);
  a = block_merge<Op, BLOCK>(a);
  if (threadIdx.x == 0) {
    out[0] = Op::finish(a, n);
    *done = 0;
  }
}

// The walk of a row's TPR lanes (a warp, or a part of one for short rows) along it for
// ReduceRows: the block's share of the row (blockIdx.y of gridDim.y equal parts, each a
// multiple of V long) goes V elements per lane per step through 16-byte loads when `vec` says
// the row is aligned for them, the tail one element at a time. body(lanes<V>, j) folds row
// positions j .. j + V - 1.
template <int V, int TPR = 32, class I, class Body>
__device__ __forceinline__ void row_loop(I r, int vec, int lane, Body body) {
  I per = (r + gridDim.y - 1) / gridDim.y;
  per = (per + V - 1) / V * V;
  I lo = (I)blockIdx.y * per, hi = lo + per < r ? lo + per : r, done = lo;
  if (V > 1 && vec && lo < hi) {
    // Counted in whole vectors: a loop bound the compiler can divide lets it unroll into
    // back-to-back 16-byte loads (rowsum 16384x4096 on the H200: 0.0611 ms, against 0.0652 ms
    // for `j + V <= hi` in elements, same loads, same order; gpuwork microbenchmark).
    const I vectors = (hi - lo) / V;
#pragma unroll 4
    for (I q = lane; q < vectors; q += TPR) body(lanes<V>{}, lo + q * V);
    done = lo + vectors * V;
  }
#pragma unroll 4
  for (I j = done + lane; j < hi; j += TPR) body(lanes<1>{}, j);
}

// Blocks split over gridDim.y store their partials at partials[blockIdx.y * n + o]; the last
// block of a column of blocks to arrive (counted on done[blockIdx.x], which it re-zeroes for
// the next launch) merges them. Every thread of the block calls this once its partials are
// stored; it returns true in the last block only.
__device__ __forceinline__ bool last_of_column(unsigned int* done) {
  __shared__ bool last;
  __threadfence();  // the partials are visible before the count says so
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0)
    last = atomicAdd(&done[blockIdx.x], 1u) == gridDim.y - 1;
  __syncthreads();
  if (last) __threadfence();
  return last;
}

// The end of a reduction whose outputs are split over gridDim.y blocks, once each thread that
// owns output o (`mine`) holds its block's partial: with one block per output that is the
// result; otherwise the last block merges the partials in blockIdx.y order, so the result does
// not depend on which block came last.
template <class Op, class Out>
__device__ __forceinline__ void finish_split(typename Op::acc acc, bool mine,
                                             typename Op::acc* partials, unsigned int* done,
                                             Out* out, i64 o, i64 n, i64 r) {
  if (gridDim.y == 1) {
    if (mine) out[o] = Op::finish(acc, r);
    return;
  }
  if (mine) partials[(i64)blockIdx.y * n + o] = acc;
  if (!last_of_column(done)) return;
  if (mine) {
    typename Op::acc a = partials[o];
#pragma unroll 8  // the partials' loads in flight together; merged in the same order
    for (unsigned k = 1; k < gridDim.y; ++k) Op::merge(a, partials[(i64)k * n + o]);
    out[o] = Op::finish(a, r);
  }
  if (threadIdx.x == 0 && threadIdx.y == 0) done[blockIdx.x] = 0;
}

// The end of a row reduction (TPR lanes per row: a warp, or a part of one for short rows):
// the row's lanes merge.
template <class Op, int TPR = 32, class Out>
__device__ __forceinline__ void finish_rows(typename Op::acc acc, typename Op::acc* partials,
                                            unsigned int* done, Out* out, i64 o, i64 n, i64 r) {
  if constexpr (TPR <= 32)
    acc = warp_merge<Op, TPR>(acc);
  else
    acc = block_merge<Op, TPR>(acc);
  finish_split<Op>(acc, threadIdx.x % TPR == 0 && o < n, partials, done, out, o, n, r);
}

// The end of a column reduction (a block of BX x BY threads, BX * BY <= 256, thread (x, y)
// holding partials of outputs o .. o + V - 1, o = (blockIdx.x * BX + x) * V): the block's BY
// rows of threads merge in order; with the rows split over gridDim.y blocks, the last block of
// the column merges their partials with all its threads: thread t takes output t % W (W = BX V
// outputs in the block's column) and every S-th block's partial from t / W on (S = threads / W
// stripes), then the stripes merge in order. A fixed order, whichever block came last, and no
// thread walks all gridDim.y partials of V outputs alone where there are threads to share it
// (that serial walk was the cost of splitting few outputs' rows widely).
template <class Op, int V, class Out>
__device__ __forceinline__ void finish_columns(typename Op::acc (&acc)[V],
                                               typename Op::acc* partials, unsigned int* done,
                                               Out* out, i64 o, i64 n, i64 r) {
  const int bx = blockDim.x, by = blockDim.y, threads = bx * by, W = bx * V;
  const int t = threadIdx.y * bx + threadIdx.x;
  __shared__ typename Op::acc rows[256 * V];
  if (by > 1) {
#pragma unroll
    for (int l = 0; l < V; ++l) rows[t * V + l] = acc[l];
    __syncthreads();
    if (threadIdx.y == 0)
      for (int k = 1; k < by; ++k)
#pragma unroll
        for (int l = 0; l < V; ++l) Op::merge(acc[l], rows[(k * bx + threadIdx.x) * V + l]);
  }
  const bool mine = threadIdx.y == 0 && o < n;
  if (gridDim.y == 1) {
    if (mine)
      for (int l = 0; l < V && o + l < n; ++l) out[o + l] = Op::finish(acc[l], r);
    return;
  }
  if (mine)
    for (int l = 0; l < V && o + l < n; ++l) partials[(i64)blockIdx.y * n + o + l] = acc[l];
  if (!last_of_column(done)) return;
  const i64 first = (i64)blockIdx.x * W;
  if (threads < 2 * W) {  // too few threads to share a column's partials: each walks its own
    for (int u = t; u < W; u += threads)
      if (first + u < n) {
        typename Op::acc a = partials[first + u];
#pragma unroll 8  // the partials' loads in flight together; merged in the same order
        for (unsigned k = 1; k < gridDim.y; ++k) Op::merge(a, partials[(i64)k * n + first + u]);
        out[first + u] = Op::finish(a, r);
      }
  } else {
    const int S = threads / W, u = t % W, s = t / W;
    typename Op::acc a = Op::init();
    if (s < S && first + u < n)
#pragma unroll 8  // the partials' loads in flight together; merged in the same order
      for (unsigned k = s; k < gridDim.y; k += S) Op::merge(a, partials[(i64)k * n + first + u]);
    if (s < S) rows[s * W + u] = a;  // the block's rows were merged above: reused as stripes
    __syncthreads();
    if (s == 0 && first + u < n) {
      for (int k = 1; k < S; ++k) Op::merge(a, rows[k * W + u]);
      out[first + u] = Op::finish(a, r);
    }
  }
  if (t == 0) done[blockIdx.x] = 0;
}

// The end of a narrow column reduction (ReduceNarrowColumns, blocks numbered along y): thread
// t's lane l holds the fold of column (t * V + l) % n over the rows it met. The block's slots of
// each column merge in slot order; with several blocks, each stores its n partials and the last
// to finish merges them in block order, striped over its threads as finish_columns does. The
// order is fixed, whichever block came last.
template <class Op, int V, class Out>
__device__ __forceinline__ void finish_narrow_columns(typename Op::acc (&acc)[V],
                                                      typename Op::acc* partials,
                                                      unsigned int* done, Out* out, i64 n, i64 r) {
  __shared__ typename Op::acc slots[256 * V];
  const int t = threadIdx.x, cols = (int)n, W = blockDim.x * V;
#pragma unroll
  for (int l = 0; l < V; ++l) slots[t * V + l] = acc[l];
  __syncthreads();
  typename Op::acc a = Op::init();
  if (t < cols)
    for (int k = t; k < W; k += cols) Op::merge(a, slots[k]);
  if (gridDim.y == 1) {
    if (t < cols) out[t] = Op::finish(a, r);
    return;
  }
  if (t < cols) partials[(i64)blockIdx.y * n + t] = a;
  if (!last_of_column(done)) return;  // (its barriers also end the reads of slots above)
  const int S = blockDim.x / cols, u = t % cols, s = t / cols;
  a = Op::init();
  if (s < S)
#pragma unroll 8  // the partials' loads in flight together; merged in the same order
    for (unsigned k = s; k < gridDim.y; k += S) Op::merge(a, partials[(i64)k * n + u]);
  if (s < S) slots[s * cols + u] = a;
  __syncthreads();
  if (s == 0) {
    for (int k = 1; k < S; ++k) Op::merge(a, slots[k * cols + u]);
    out[u] = Op::finish(a, r);
  }
  if (t == 0) done[0] = 0;
}

// A column's fold in a ColumnFused kernel (32 x 8 threads, thread (x, y) holding the partial
// of column x over rows y, y + 8, ...): the 8 partials merged in order of y, returned to every
// thread of the column. The trailing barrier frees the scratch for the next merge.
template <class Op>
__device__ __forceinline__ typename Op::acc column_merge(typename Op::acc a) {
  __shared__ typename Op::acc part[8][32];
  part[threadIdx.y][threadIdx.x] = a;
  __syncthreads();
  typename Op::acc m = part[0][threadIdx.x];
  for (int k = 1; k < 8; ++k) Op::merge(m, part[k][threadIdx.x]);
  __syncthreads();
  return m;
}

// ---- thread block clusters (sm_90 on): a column's rows split over the blocks of a cluster ----
// Raw PTX rather than cooperative_groups, so NVRTC needs no header. Compiled for an older
// architecture, a block is a cluster of one (the launcher then asks for no cluster).

// This block's rank in its cluster, and the cluster's block count.
__device__ __forceinline__ unsigned cluster_rank() {
#if __CUDA_ARCH__ >= 900
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
#else
  return 0;
#endif
}
__device__ __forceinline__ unsigned cluster_blocks() {
#if __CUDA_ARCH__ >= 900
  unsigned n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  return n;
#else
  return 1;
#endif
}

// Every thread of every block of the cluster arrives before any goes on; shared-memory writes
// before it are visible to the cluster's blocks after it.
__device__ __forceinline__ void cluster_sync() {
#if __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::
                   : "memory");
#else
  __syncthreads();
#endif
}

// The address of `p` (in this block's shared memory) in the shared memory of block `rank` of
// the cluster, as a generic pointer (distributed shared memory).
template <class T>
__device__ __forceinline__ const T* cluster_peer(const T* p, unsigned rank) {
#if __CUDA_ARCH__ >= 900
  unsigned long long out;
  asm volatile("mapa.u64 %0, %1, %2;" : "=l"(out) : "l"(p), "r"(rank));
  return reinterpret_cast<const T*>(out);
#else
  return p;
#endif
}

// column_merge over a cluster whose blocks took consecutive slices of the column's rows: each
// block's merge, then the blocks' in rank order, read from their shared memory. Every block gets
// the same bits. The trailing cluster barrier keeps a block from overwriting its slot (the next
// merge) while another still reads it; cluster_sync is a block barrier too, so it also frees
// column_merge's scratch.
template <class Op>
__device__ __forceinline__ typename Op::acc cluster_column_merge(typename Op::acc a) {
  a = column_merge<Op>(a);
  const unsigned blocks = cluster_blocks();
  if (blocks == 1) return a;
  __shared__ typename Op::acc slot[32];
  if (threadIdx.y == 0) slot[threadIdx.x] = a;
  cluster_sync();
  typename Op::acc m = *cluster_peer(&slot[threadIdx.x], 0);
  for (unsigned q = 1; q < blocks; ++q) Op::merge(m, *cluster_peer(&slot[threadIdx.x], q));
  cluster_sync();
  return m;
}

}  // namespace kiln
