// Stream compaction (kiln::masked, flatnonzero): the rows of a (rows, width) array whose mask
// byte is set, in order, or the positions of those bytes. One launch over tiles of the mask, a
// block a tile: each thread counts its kItems entries, the block scans the counts, the tile takes
// the count of the tiles before it by scan.cuh's decoupled look-back (integers: the same result
// whatever it finds), then every selected row is written at its place. Each mask byte is read
// once and only the selected rows are read.
#pragma once

#include "kiln/scan.cuh"

namespace kiln::compress {

constexpr int kItems = 16, kTile = scan::kThreads * kItems;  // mask bytes a thread, a tile

// kPositions: the positions (T is long long; values unused). Else `width` units of T a row.
template <class T, bool kPositions>
__device__ void select(const bool* mask, const T* values, T* out, long long rows, long long width,
                       long long tiles, void* scratch) {
  using Count = long long;
  const scan::Status s(scratch, tiles, scan::groups_of(tiles));
  __shared__ long long tile_index;
  __shared__ Count warp_totals[scan::kWarps], tile_before;
  __shared__ scan::LookBackShared<Count> look_back;
  if (threadIdx.x == 0) tile_index = (long long)atomicAdd(s.counter, 1ull);
  __syncthreads();
  const long long tile = tile_index;
  const long long first = tile * kTile + (long long)threadIdx.x * kItems;

  // This thread's entries as bits.
  unsigned bits = 0;
  if (first + kItems <= rows && ((unsigned long long)(mask + first) % 16) == 0) {
    const uint4 w = __ldcs((const uint4*)(mask + first));
    const unsigned words[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
    for (int k = 0; k < 16; ++k) bits |= ((words[k / 4] >> (8 * (k % 4))) & 0xffu ? 1u : 0u) << k;
  } else {
    for (int k = 0; k < kItems && first + k < rows; ++k) bits |= (mask[first + k] ? 1u : 0u) << k;
  }
  const Count mine = __popc(bits);

  // Rows are taken in warp-striped order: at step k the warp's lanes take 32 consecutive
  // entries and the picked ones go to consecutive places, so loads and stores are contiguous
  // across the warp (each thread walking its own 16 entries put a warp's 32 stores about 16
  // entries apart: one memory transaction each). Entry e = 32k + lane of the warp's 32 * kItems
  // is bit e % kItems of lane e / kItems's `bits`.
  const unsigned lane = threadIdx.x % 32, below = (1u << lane) - 1u;
  const long long warp_first = tile * kTile + (long long)(threadIdx.x - lane) * kItems;
  unsigned picked[kItems];  // step k's ballot: which lanes' entries are picked
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const unsigned e = 32u * k + lane;
    picked[k] = __ballot_sync(~0u, __shfl_sync(~0u, bits, e / kItems) >> (e % kItems) & 1u);
  }
  // Rows of one unit (and positions) are loaded now, all kItems at once, so their latency
  // passes while the tile waits for the count before it; a loop of load then store kept too
  // few loads in flight to reach the memory's bandwidth.
  const bool one_unit = kPositions || width == 1;
  T v[kItems];
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    if (!one_unit || !(picked[k] >> lane & 1u)) continue;
    if constexpr (kPositions)
      v[k] = warp_first + 32 * k + lane;
    else
      v[k] = values[warp_first + 32 * k + lane];
  }

  // Exclusive count within the block, and the block's total (the warps' folds block_scan left).
  const Count before = scan::block_scan<scatter::Add>(mine, warp_totals) - mine;
  Count total = 0;
  for (int w = 0; w < scan::kWarps; ++w) total += warp_totals[w];
  // The count of the tiles before this one.
  if (threadIdx.x == 0) {
    scan::publish(s.aggregate_words, s.aggregate_slots, tile, total);
    tile_before = 0;
  }
  if (tile > 0) {
    const Count prefix = scan::look_back<scatter::Add, Count>(s, 0, 0, tile, look_back);
    if (threadIdx.x == 0) tile_before = prefix;
  }
  __syncthreads();
  long long at = tile_before + __shfl_sync(~0u, before, 0);  // lane 0's count: the warp's start
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    if (picked[k] >> lane & 1u) {
      const long long o = at + __popc(picked[k] & below), i = warp_first + 32 * k + lane;
      if (one_unit)
        out[o] = v[k];
      else
        for (long long u = 0; u < width; ++u) out[o * width + u] = values[i * width + u];
    }
    at += __popc(picked[k]);
  }
}

}  // namespace kiln::compress
