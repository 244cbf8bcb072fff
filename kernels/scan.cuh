// Inclusive scans (cumsum, cumprod) along one axis of a dense array seen as (outer, n, inner):
// out[o, j, i] = in[o, 0, i] op ... op in[o, j, i], op being scatter.cuh's add or multiply (bool
// never reaches here: the API scans integers). `in` is what loads the values at dense positions:
// an array in memory (Dense, the scan step), or a fused producer's expression computed at each
// position (codegen's Form::Scan, through produced()), so that cumsum(f(x)) reads x once and never
// writes f(x). Two forms:
// - lanes: a thread per (o, i) walks j in order, consecutive threads on consecutive i (coalesced
//   when inner > 1). The host's order exactly, so the same bits.
// - single_pass (long axes with few lanes): each row in tiles of kTileBytes, one block a tile,
//   every element read once and written once. A tile publishes its fold (aggregate) at once and
//   takes the fold of the tiles before it from their published aggregates (a decoupled
//   look-back, after Merrill and Garland 2016, in groups of kThreads tiles: see look_back). Tiles
//   take their index from an atomic counter in the order blocks start, so a tile only waits on
//   tiles that are running: progress whatever order the device schedules blocks in.
//   Deterministic: a tile's prefix is one fixed association of its row's tile folds, whatever had
//   been published when it looked, so float results are the same bits every run. They associate
//   differently from the host's left-to-right walk, so they may differ from it in the last bits
//   (at most about n * eps relative to the scan of the magnitudes).
#pragma once

#include "kiln/scatter.cuh"

namespace kiln::scan {

// A block a tile, and the look-back's groups of tiles (src/cuda/library.hpp's kLookBackBlock).
// Fewer, larger tiles mean fewer look-backs: on the H200 (2^27 float32 cumsum, gpuwork's
// microbenchmark, 2026-12-03) 256 threads x 4 vectors (16 KiB tiles) took 0.952 ms, 256 x 8
// 0.476, 512 x 4 0.391; the same kernel without any look-back 0.268.
constexpr int kThreads = 512, kWarps = kThreads / 32;
// Each thread holds kVectors 16-byte vectors of a tile: 32 KiB a tile whatever the dtype.
constexpr int kVectors = 4, kTileBytes = kThreads * kVectors * 16;

template <int OP, class T>
__device__ __forceinline__ T combine(T a, T b) {
  return scatter::apply<OP>(a, b);
}

// The values of a dense array: in(i) is element i, in.items(i, x) the 16 bytes from element i
// (aligned) at once.
template <class T>
struct Dense {
  const T* in;
  __device__ __forceinline__ T operator()(long long i) const { return in[i]; }
  __device__ __forceinline__ void items(long long i, T* x) const {
    const uint4 w = __ldcs((const uint4*)(in + i));
    memcpy(x, &w, 16);
  }
};

// The values of a fused producer: one(i) computes the value at position i, many(i, x) the
// 16 bytes' worth from position i at once (every dense input read in vectors).
template <class One, class Many>
struct Produced {
  One one;
  Many many;
  __device__ __forceinline__ auto operator()(long long i) const { return one(i); }
  template <class T>
  __device__ __forceinline__ void items(long long i, T* x) const {
    many(i, x);
  }
};
template <class One, class Many>
__device__ __forceinline__ Produced<One, Many> produced(One one, Many many) {
  return {one, many};
}

template <int OP, class T, class In>
__device__ void lanes(In in, T* out, long long outer, long long n, long long inner) {
  const long long lanes = outer * inner;
  for (long long l = (long long)blockIdx.x * blockDim.x + threadIdx.x; l < lanes;
       l += (long long)gridDim.x * blockDim.x) {
    const long long o = l / inner, i = l % inner;
    const long long base = o * n * inner + i;
    T acc = in(base);
    out[base] = acc;
    for (long long j = 1; j < n; ++j) {
      acc = combine<OP>(acc, in(base + j * inner));
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

// The look-back's shared state (src/cuda/scan.cpp allocates it and zeroes its counter and
// words before each launch): for each tile its fold (aggregate), and for each group of kThreads
// consecutive tiles of a row the fold of every tile of the row before the group (the group's
// prefix). A value is published as a 64-bit word, its ready flag in the high half: a value of 4
// bytes or less travels in the low half, so flag and value are one load; a wider one goes
// through a 16-byte slot, written before the flag and read after it. Layout: the tiles' slots,
// the groups' slots, the tile counter, the tiles' words, the groups' words.
struct Status {
  uint4 *aggregate_slots, *group_slots;
  unsigned long long *counter, *aggregate_words, *group_words;
  __device__ Status(void* scratch, long long tiles, long long groups) {
    aggregate_slots = (uint4*)scratch;
    group_slots = aggregate_slots + tiles;
    counter = (unsigned long long*)(group_slots + groups);
    aggregate_words = counter + 1;
    group_words = aggregate_words + tiles;
  }
};

// A row's tiles in groups of kThreads: the block looks at a whole group at once.
__host__ __device__ constexpr long long groups_of(long long tiles) {
  return (tiles + kThreads - 1) / kThreads;
}

template <class T>
__device__ __forceinline__ constexpr bool packed() {
  return sizeof(T) <= 4;
}

// Slots go through L2 (st.cg / ld.cg: no stale L1 line), words are volatile.
template <class T>
__device__ __forceinline__ void publish(unsigned long long* words, uint4* slots, long long i, T v) {
  unsigned long long word = 1ull << 32;
  if constexpr (packed<T>()) {
    unsigned bits = 0;
    memcpy(&bits, &v, sizeof(T));
    word |= bits;
  } else {
    uint4 w = make_uint4(0, 0, 0, 0);
    memcpy(&w, &v, sizeof(T));
    __stcg(&slots[i], w);
    __threadfence();  // the slot before the flag, for every reader
  }
  *(volatile unsigned long long*)&words[i] = word;
}

// Value i, spinning until it is published; with `wait` false, one look (false: not yet).
template <class T>
__device__ __forceinline__ bool read(const unsigned long long* words, const uint4* slots,
                                     long long i, T& v, bool wait = true) {
  unsigned long long word;
  do word = *(volatile const unsigned long long*)&words[i];
  while ((word >> 32) == 0 && wait);
  if ((word >> 32) == 0) return false;
  if constexpr (packed<T>()) {
    const unsigned bits = (unsigned)word;
    memcpy(&v, &bits, sizeof(T));
  } else {
    __threadfence();  // the slot after the flag
    const uint4 w = __ldcg(&slots[i]);
    memcpy(&v, &w, sizeof(T));
  }
  return true;
}

// The inclusive scan of one value a thread in thread order, always associated the same way
// (lanes by warp_scan, then the left fold of the warps before): a position's result depends
// only on the values up to it. `folds`: kWarps values of shared memory. Every thread calls it.
template <int OP, class T>
__device__ T block_scan(T v, T* folds) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  T x = warp_scan<OP>(v, lane);
  if (lane == 31) folds[warp] = x;
  __syncthreads();
  if (warp > 0) {
    T before = folds[0];
    for (int w = 1; w < warp; ++w) before = combine<OP>(before, folds[w]);
    x = combine<OP>(before, x);
  }
  __syncthreads();  // folds free again
  return x;
}

// Shared memory of one look-back: two block scans' warp folds and the values they hand over.
template <class T>
struct LookBackShared {
  T folds[kWarps], group_prefix, local;
  int group_known;
};

// The fold of tiles 0 .. t-1 of a row (t > 0): the prefix of t's group (g = t / kThreads)
// combined with the fold of the group's tiles before t. A group's prefix is its predecessor's
// combined with the predecessor's total; the first tile to need it computes and publishes it,
// later ones read it. Both folds are block_scans over kThreads aggregates at once, so the
// result is one fixed association of the row's tile folds whatever was published when: the
// same bits every run, and no thread folds hundreds of values one after another. Waits only
// on tiles that started before t (tile indices come from the launch's counter in start order),
// so it always progresses. `row_first`, `group_first`: the row's first tile and group in the
// launch. Every thread calls it and gets the prefix. `sh` may be raw shared
// memory (T may have a constructor, which __shared__ refuses).
template <int OP, class T>
__device__ T look_back(const Status& s, long long row_first, long long group_first, long long t,
                       LookBackShared<T>& sh) {
  const long long g = t / kThreads;
  const int p = (int)(t % kThreads), i = threadIdx.x;
  if (i == 0)
    sh.group_known =
        g == 0 || read(s.group_words, s.group_slots, group_first + g, sh.group_prefix, false);
  __syncthreads();
  const bool compute_group = !sh.group_known;  // the same in every thread
  // Issue every wait at once: the previous group's tiles (for its total) and this group's.
  T before_group{}, in_group{};
  if (compute_group)
    read(s.aggregate_words, s.aggregate_slots, row_first + (g - 1) * kThreads + i, before_group);
  if (i < p) read(s.aggregate_words, s.aggregate_slots, row_first + g * kThreads + i, in_group);
  if (compute_group) {
    const T total = block_scan<OP>(before_group, sh.folds);
    if (i == kThreads - 1) {
      T prefix = total;
      if (g > 1) {
        read(s.group_words, s.group_slots, group_first + g - 1, prefix);
        prefix = combine<OP>(prefix, total);
      }
      publish(s.group_words, s.group_slots, group_first + g, prefix);
      sh.group_prefix = prefix;
    }
  }
  if (p > 0) {
    const T local = block_scan<OP>(in_group, sh.folds);
    if (i == p - 1) sh.local = local;
  }
  __syncthreads();
  if (g == 0) return sh.local;
  return p == 0 ? sh.group_prefix : combine<OP>(sh.group_prefix, sh.local);
}

// The single-pass scan: a block per tile of kTileBytes, rows of n values `inner` apart
// (row r at (r / inner) * n * inner + r % inner), `tiles` tiles a row. `vectors`: inner is 1
// and every row starts 16-byte aligned in what `in` reads and in `out`, so whole vectors load and
// store at once (in.items). Warp w holds the tile's w-th kWarps-th part: its lane l, vector j holds
// the kItems values from 32 * kItems * w + 32 * kItems * j / kVectors + kItems * l (coalesced, 512
// bytes a warp).
template <int OP, class T, class In>
__device__ void single_pass(In in, T* out, long long outer, long long n, long long inner,
                            long long tiles, void* scratch, int vectors) {
  constexpr int kItems = 16 / sizeof(T), kTile = kTileBytes / sizeof(T);
  const Status s(scratch, outer * inner * tiles, outer * inner * groups_of(tiles));
  __shared__ long long tile_index;
  // Raw: T may have a constructor, which __shared__ refuses.
  __shared__ uint4 slots[kWarps + 1];
  __shared__ __align__(16) unsigned char look_back_raw[sizeof(LookBackShared<T>)];
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
      in.items(row + first + k0, x[j]);
    } else {
#pragma unroll
      for (int i = 0; i < kItems; ++i)
        x[j][i] = k0 + i < count ? in(row + (first + k0 + i) * inner) : identity<OP, T>();
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
  if (threadIdx.x == 0) publish(s.aggregate_words, s.aggregate_slots, tile, fold.value);
  if (t > 0) {
    const T prefix =
        look_back<OP, T>(s, tile - t, r * groups_of(tiles), t, *(LookBackShared<T>*)look_back_raw);
    if (threadIdx.x == 0) tile_prefix = prefix;
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
