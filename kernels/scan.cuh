// Inclusive scans (cumsum, cumprod) along one axis of a dense array seen as (outer, n, inner):
// out[o, j, i] = in[o, 0, i] op ... op in[o, j, i], op being scatter.cuh's add or multiply (bool
// never reaches here: the API scans integers). Two forms:
// - lanes: a thread per (o, i) walks j in order, consecutive threads on consecutive i (coalesced
//   when inner > 1). The host's order exactly, so the same bits.
// - single_pass (long axes with few lanes): each row in tiles of kTileBytes, one block a tile,
//   every element read once and written once. A tile publishes its fold (aggregate), then the
//   fold of its row up to it (inclusive prefix), and a tile takes its prefix from the tiles
//   before it (decoupled look-back, Merrill and Garland 2016). Tiles take their index from an
//   atomic counter in the order blocks start, so a tile only waits on tiles that are running:
//   progress whatever order the device schedules blocks in.
//   Deterministic: a tile's prefix is always the left fold of its row's tile folds,
//   ((A0 op A1) op A2) ..., whichever predecessors had published their prefix when it looked
//   back (it folds forward from the nearest published prefix, not backward), so float results
//   are the same bits every run. They associate differently from the host's left-to-right walk,
//   so they may differ from it in the last bits (at most about n * eps relative to the scan of
//   the magnitudes).
#pragma once

#include "kiln/scatter.cuh"

namespace kiln::scan {

constexpr int kThreads = 256, kWarps = kThreads / 32;
// Each thread holds kVectors 16-byte vectors of a tile: 16 KiB a tile whatever the dtype.
constexpr int kVectors = 4, kTileBytes = kThreads * kVectors * 16;

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
// included) and 1 for products. It only pads a row's last tile past the row's end.
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

// A fold that may be empty: the prefix of the first element has nothing before it, and
// combining with an identity instead would not be exact (a complex product with 1 + 0i turns an
// infinite part into NaN).
template <int OP, class T>
struct Maybe {
  T value;
  bool has = false;
  __device__ __forceinline__ void then(T x) {
    value = has ? combine<OP>(value, x) : x;
    has = true;
  }
  __device__ __forceinline__ T before(T x) const { return has ? combine<OP>(value, x) : x; }
};

// Warp shuffles of any T (1 to 16 bytes), a 32-bit word at a time.
template <class T>
__device__ __forceinline__ T shuffle_up(T v, int delta) {
  constexpr int kWords = (sizeof(T) + 3) / 4;
  unsigned w[kWords] = {};
  memcpy(w, &v, sizeof(T));
#pragma unroll
  for (int k = 0; k < kWords; ++k) w[k] = __shfl_up_sync(0xffffffffu, w[k], delta);
  memcpy(&v, w, sizeof(T));
  return v;
}
template <class T>
__device__ __forceinline__ T shuffle(T v, int lane) {
  constexpr int kWords = (sizeof(T) + 3) / 4;
  unsigned w[kWords] = {};
  memcpy(w, &v, sizeof(T));
#pragma unroll
  for (int k = 0; k < kWords; ++k) w[k] = __shfl_sync(0xffffffffu, w[k], lane);
  memcpy(&v, w, sizeof(T));
  return v;
}

// The inclusive scan of one value per lane, in lane order (Kogge-Stone through shuffles).
template <int OP, class T>
__device__ __forceinline__ T warp_scan(T v, int lane) {
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    T up = shuffle_up(v, d);
    if (lane >= d) v = combine<OP>(up, v);
  }
  return v;
}

// Status of a tile in the look-back.
enum : int { kPending = 0, kAggregate = 1, kPrefix = 2 };

// The scratch of a launch over `tiles` tiles (src/cuda/scan.cpp allocates it and zeroes its
// counter and words before each launch): 16-byte value slots for aggregates and prefixes, the
// tile counter, then a 64-bit status word a tile, its flag in the high half. A value of 4 bytes
// or less travels in the word's low half, so a tile's status and value are one load (the
// aggregate is overwritten by the prefix, which is as good to fold from); a wider one goes
// through its slot, written before the flag and read after it.
struct Status {
  uint4 *aggregates, *prefixes;
  unsigned long long *counter, *words;
  __device__ Status(void* scratch, long long tiles) {
    aggregates = (uint4*)scratch;
    prefixes = aggregates + tiles;
    counter = (unsigned long long*)(prefixes + tiles);
    words = counter + 1;
  }
};

template <class T>
__device__ __forceinline__ constexpr bool packed() {
  return sizeof(T) <= 4;
}

// Slots go through L2 (st.cg / ld.cg: no stale L1 line), words are volatile.
template <class T>
__device__ __forceinline__ void publish(const Status& s, long long tile, int flag, T v) {
  unsigned long long word = (unsigned long long)flag << 32;
  if constexpr (packed<T>()) {
    unsigned bits = 0;
    memcpy(&bits, &v, sizeof(T));
    word |= bits;
  } else {
    uint4 w = make_uint4(0, 0, 0, 0);
    memcpy(&w, &v, sizeof(T));
    __stcg(&(flag == kPrefix ? s.prefixes : s.aggregates)[tile], w);
    __threadfence();  // the slot before the flag, for every reader
  }
  *(volatile unsigned long long*)&s.words[tile] = word;
}

template <class T>
struct Seen {
  int flag;
  T value;
};

// A tile's status once it has one (spinning while it is pending).
template <class T>
__device__ __forceinline__ Seen<T> wait_for(const Status& s, long long tile) {
  unsigned long long word;
  do word = *(volatile unsigned long long*)&s.words[tile];
  while ((word >> 32) == kPending);
  Seen<T> seen;
  seen.flag = (int)(word >> 32);
  if constexpr (packed<T>()) {
    const unsigned bits = (unsigned)word;
    memcpy(&seen.value, &bits, sizeof(T));
  } else {
    __threadfence();  // the slot after the flag
    const uint4 w = __ldcg(&(seen.flag == kPrefix ? s.prefixes : s.aggregates)[tile]);
    memcpy(&seen.value, &w, sizeof(T));
  }
  return seen;
}

// The prefix of tile t of a row (t > 0) whose first tile has index `row_first` in the launch,
// computed by the whole block: windows of kThreads predecessors, nearest first, each thread
// waiting for one tile's status, until a window holds a published prefix. Then thread 0 folds
// forward from the nearest such prefix through the aggregates after it: the row's left fold of
// tile aggregates whatever was found, so the same bits every run. A window as wide as the block
// (not a warp) matters: the nearest prefix is typically as far back as there are tiles running,
// hundreds, and each window costs a round trip to L2. The first kKept windows' values stay in
// shared memory for the fold; farther ones (rare) are read again. Returns the prefix in thread 0
// only; every thread must call it.
constexpr int kKept = 4;
template <int OP, class T>
__device__ T look_back(const Status& s, long long row_first, long long t, T* kept, int& nearest) {
  for (int w = 0;; ++w) {
    const long long mine = t - 1 - (long long)w * kThreads - threadIdx.x;
    Seen<T> seen;
    seen.flag = kPending;
    if (mine >= 0) seen = wait_for<T>(s, row_first + mine);
    if (threadIdx.x == 0) nearest = kThreads;
    __syncthreads();
    if (w < kKept && mine >= 0) kept[w * kThreads + threadIdx.x] = seen.value;
    if (seen.flag == kPrefix) atomicMin(&nearest, (int)threadIdx.x);
    __syncthreads();
    const int found = nearest;  // the same in every thread: the loop's exit is uniform
    __syncthreads();            // read by all before thread 0 resets it for the next window
    if (found == kThreads)
      continue;  // the row's first tile has its prefix at once: some window finds one
    T prefix = seen.value;
    if (threadIdx.x == 0) {
      prefix = w < kKept
                   ? kept[w * kThreads + found]
                   : wait_for<T>(s, row_first + t - 1 - (long long)w * kThreads - found).value;
      for (int v = w; v >= 0; --v)
        for (int i = (v == w ? found : kThreads) - 1; i >= 0; --i) {
          if (v < kKept) {
            prefix = combine<OP>(prefix, kept[v * kThreads + i]);
          } else {  // seen before as an aggregate; a prefix published since is as good
            const Seen<T> again = wait_for<T>(s, row_first + t - 1 - (long long)v * kThreads - i);
            prefix = again.flag == kPrefix ? again.value : combine<OP>(prefix, again.value);
          }
        }
    }
    return prefix;
  }
}

// The single-pass scan: a block per tile of kTileBytes, rows of n values `inner` apart
// (row r at (r / inner) * n * inner + r % inner), `tiles` tiles a row. `vectors`: inner is 1
// and every row starts 16-byte aligned in `in` and `out`, so whole vectors load and store at
// once. Warp w holds the tile's w-th eighth: its lane l, vector j holds the kItems values from
// 32 * kItems * w + 32 * kItems * j / kVectors + kItems * l (coalesced, 512 bytes a warp).
template <int OP, class T>
__device__ void single_pass(const T* in, T* out, long long outer, long long n, long long inner,
                            long long tiles, void* scratch, int vectors) {
  constexpr int kItems = 16 / sizeof(T), kTile = kTileBytes / sizeof(T);
  const Status s(scratch, outer * inner * tiles);
  __shared__ long long tile_index;
  __shared__ uint4 slots[kWarps + 1];  // raw: T may have a constructor, which __shared__ refuses
  __shared__ __align__(16) unsigned char kept_raw[kKept * kThreads * sizeof(T)];
  __shared__ int nearest;
  T* warp_folds = (T*)slots;  // then the tile's prefix
  T& tile_prefix = warp_folds[kWarps];
  if (threadIdx.x == 0) tile_index = (long long)atomicAdd(s.counter, 1ull);
  __syncthreads();
  const long long tile = tile_index, r = tile / tiles, t = tile % tiles;
  const long long row = (r / inner) * n * inner + r % inner, first = t * kTile;
  const int count = n - first < kTile ? (int)(n - first) : kTile;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  // Load (every load issued first), then scan each vector's values in place.
  T x[kVectors][kItems];
#pragma unroll
  for (int j = 0; j < kVectors; ++j) {
    const int k0 = ((warp * kVectors + j) * 32 + lane) * kItems;
    if (vectors && k0 + kItems <= count) {
      uint4 w = __ldcs((const uint4*)(in + row + first + k0));
      memcpy(x[j], &w, 16);
    } else {
#pragma unroll
      for (int i = 0; i < kItems; ++i)
        x[j][i] = k0 + i < count ? in[row + (first + k0 + i) * inner] : identity<OP, T>();
    }
  }
#pragma unroll
  for (int j = 0; j < kVectors; ++j)
#pragma unroll
    for (int i = 1; i < kItems; ++i) x[j][i] = combine<OP>(x[j][i - 1], x[j][i]);
  // Each vector's prefix within the warp: the folds of the warp's earlier vectors (`carry`,
  // in order) then those of the lower lanes in this one.
  Maybe<OP, T> before[kVectors], carry;
#pragma unroll
  for (int j = 0; j < kVectors; ++j) {
    const T scanned = warp_scan<OP>(x[j][kItems - 1], lane);
    const T lower = shuffle_up(scanned, 1);
    before[j] = carry;
    if (lane > 0) before[j].then(lower);
    carry.then(shuffle(scanned, 31));
  }
  if (lane == 0) warp_folds[warp] = carry.value;
  __syncthreads();

  // The tile's fold (its warps' folds in order), published, then its prefix (every thread looks
  // back; thread 0 folds and publishes).
  Maybe<OP, T> fold;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) fold.then(warp_folds[w]);
  if (t == 0) {
    if (threadIdx.x == 0) publish(s, tile, kPrefix, fold.value);
  } else {
    if (threadIdx.x == 0) publish(s, tile, kAggregate, fold.value);
    const T prefix = look_back<OP, T>(s, tile - t, t, (T*)kept_raw, nearest);
    if (threadIdx.x == 0) {
      publish(s, tile, kPrefix, combine<OP>(prefix, fold.value));
      tile_prefix = prefix;
    }
  }
  __syncthreads();

  // Each value from the tile's prefix, its warp's, its vector's and its own scan.
  Maybe<OP, T> warp_prefix;
  if (t > 0) warp_prefix.then(tile_prefix);
  for (int w = 0; w < warp; ++w) warp_prefix.then(warp_folds[w]);
#pragma unroll
  for (int j = 0; j < kVectors; ++j) {
    Maybe<OP, T> p = warp_prefix;
    if (before[j].has) p.then(before[j].value);
#pragma unroll
    for (int i = 0; i < kItems; ++i) x[j][i] = p.before(x[j][i]);
    const int k0 = ((warp * kVectors + j) * 32 + lane) * kItems;
    if (vectors && k0 + kItems <= count) {
      uint4 w;
      memcpy(&w, x[j], 16);
      __stcs((uint4*)(out + row + first + k0), w);
    } else {
#pragma unroll
      for (int i = 0; i < kItems; ++i)
        if (k0 + i < count) out[row + (first + k0 + i) * inner] = x[j][i];
    }
  }
}

}  // namespace kiln::scan
