// Inclusive scans (cumsum, cumprod) along one axis of a dense array seen as (outer, n, inner):
// out[o, j, i] = in[o, 0, i] op ... op in[o, j, i], op being scatter.cuh's add or multiply (bool
// never reaches here: the API scans integers). Two forms:
// - lanes: a thread per (o, i) walks j in order, consecutive threads on consecutive i (coalesced
//   when inner > 1). The host's order exactly, so the same bits.
// - tiles (long axes with few lanes): tiles of kTile values; tile_totals folds each tile,
//   scan_totals turns a row's totals into exclusive prefixes, scan_tiles scans each tile from
//   its prefix. Floats then associate differently from the host's left-to-right sum (the same
//   way every run: no atomics).
#pragma once

#include "kiln/scatter.cuh"

namespace kiln::scan {

constexpr int kThreads = 256, kItems = 8, kTile = kThreads * kItems;

template <int OP, class T>
__device__ __forceinline__ T combine(T a, T b) {
  return scatter::apply<OP>(a, b);
}

template <int OP, class T>
__device__ void lanes(const T* in, T* out, long long outer, long long n, long long inner) {
  const long long lanes = outer * inner;
  for (long long l = (long long)blockIdx.x * blockDim.x + threadIdx.x; l < lanes;
       l += (long long)gridDim.x * blockDim.x) {
    const long long o = l / inner, i = l % inner;
    const long long base = o * n * inner + i;
    T acc = in[base];
    out[base] = acc;
    for (long long j = 1; j < n; ++j) {
      acc = combine<OP>(acc, in[base + j * inner]);
      out[base + j * inner] = acc;
    }
  }
}

// The identity of the scan's operation: -0.0 for sums (so -0.0 + x is x for every x, -0.0
// included) and 1 for products.
template <class T>
__device__ __forceinline__ T from_double(double x) {
  return T(x);
}
template <>
__device__ __forceinline__ float16 from_double<float16>(double x) {
  return to_float16(x);
}
template <>
__device__ __forceinline__ bfloat16 from_double<bfloat16>(double x) {
  return to_bfloat16((float)x);  // the identities are exact in float32
}
template <int OP, class T>
__device__ __forceinline__ T identity() {
  return from_double<T>(OP == scatter::Multiply ? 1.0 : -0.0);
}

// The block's scan of one value per thread, in thread order (Hillis-Steele through shared
// memory, log2(kThreads) steps): returns the fold of the values of the threads before this one
// (the identity for thread 0); `total` gets the block's fold.
template <int OP, class T>
__device__ __forceinline__ T block_scan(T v, T* total) {
  __shared__ T buffer[2][kThreads];
  int from = 0;
  buffer[0][threadIdx.x] = v;
  __syncthreads();
  for (int step = 1; step < kThreads; step *= 2) {
    T x = buffer[from][threadIdx.x];
    if ((int)threadIdx.x >= step) x = combine<OP>(buffer[from][threadIdx.x - step], x);
    buffer[1 - from][threadIdx.x] = x;
    from = 1 - from;
    __syncthreads();
  }
  T before = threadIdx.x > 0 ? buffer[from][threadIdx.x - 1] : identity<OP, T>();
  *total = buffer[from][kThreads - 1];
  __syncthreads();
  return before;
}

// A row of the tiled form is a lane (o, i): n values from in + o * n * inner + i, inner apart.
__device__ __forceinline__ long long row_base(long long r, long long n, long long inner) {
  return (r / inner) * n * inner + r % inner;
}

// Tile t of a row staged in shared memory (coalesced loads when inner is 1); returns its length.
template <class T>
__device__ __forceinline__ int stage_tile(const T* row, long long n, long long inner, long long t,
                                          T* staged) {
  const long long first = t * kTile;
  const int count = (int)(n - first < kTile ? n - first : kTile);
  for (int k = threadIdx.x; k < count; k += kThreads) staged[k] = row[(first + k) * inner];
  __syncthreads();
  return count;
}

// This thread's kItems consecutive staged values folded (the identity past the tile's end).
template <int OP, class T>
__device__ __forceinline__ T fold_items(const T* staged, int count) {
  T acc = identity<OP, T>();
  for (int k = threadIdx.x * kItems; k < (int)(threadIdx.x + 1) * kItems && k < count; ++k)
    acc = combine<OP>(acc, staged[k]);
  return acc;
}

// totals[r * tiles + t]: the fold of tile t of row r (rows = outer * inner).
template <int OP, class T>
__device__ void tile_totals(const T* in, T* totals, long long outer, long long n, long long inner,
                            long long tiles) {
  __shared__ T staged[kTile];
  for (long long b = blockIdx.x; b < outer * inner * tiles; b += gridDim.x) {
    const int count = stage_tile(in + row_base(b / tiles, n, inner), n, inner, b % tiles, staged);
    T total;
    block_scan<OP>(fold_items<OP>(staged, count), &total);
    if (threadIdx.x == 0) totals[b] = total;
  }
}

// A row's tile totals become exclusive prefixes: tile k's is the fold of tiles 0 .. k - 1.
template <int OP, class T>
__device__ void scan_totals(T* totals, long long rows, long long tiles) {
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    T* row = totals + r * tiles;
    T carry = identity<OP, T>();
    for (long long first = 0; first < tiles; first += kThreads) {
      const long long k = first + threadIdx.x;
      T total, before = block_scan<OP>(k < tiles ? row[k] : identity<OP, T>(), &total);
      if (k < tiles) row[k] = combine<OP>(carry, before);
      carry = combine<OP>(carry, total);
    }
  }
}

// out: each tile scanned from its prefix (scan_totals' result).
template <int OP, class T>
__device__ void scan_tiles(const T* in, T* out, const T* prefixes, long long outer, long long n,
                           long long inner, long long tiles) {
  __shared__ T staged[kTile];
  for (long long b = blockIdx.x; b < outer * inner * tiles; b += gridDim.x) {
    const long long base = row_base(b / tiles, n, inner), t = b % tiles;
    const int count = stage_tile(in + base, n, inner, t, staged);
    T total, running = block_scan<OP>(fold_items<OP>(staged, count), &total);
    running = combine<OP>(prefixes[b], running);
    for (int k = threadIdx.x * kItems; k < (int)(threadIdx.x + 1) * kItems && k < count; ++k) {
      running = combine<OP>(running, staged[k]);
      staged[k] = running;
    }
    __syncthreads();
    T* row = out + base + t * kTile * inner;
    for (int k = threadIdx.x; k < count; k += kThreads) row[k * inner] = staged[k];
    __syncthreads();
  }
}

}  // namespace kiln::scan
