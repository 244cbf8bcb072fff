// CUB's device-wide radix sort for kiln's sort steps (sort_cub.hpp), in NumPy's order, the
// host's bit for bit (kernels/sort_keys.cuh). Only twelve CUB sorts are instantiated (build
// time: nvcc compiles this file once, for sm_90):
//   keys only, u8 / u32 / u64 keys: the values of integers and bool, one row (keys decode back);
//   float32 / float64, one row: keys only (values) and pairs with int32 positions (argsort;
//     int64 past 2^31 - 1 values) on the floats themselves, CUB's order, whose NaN placement a
//     repair then fixes (below);
//   pairs u8 / u32 / u64 -> int64 positions: everything else, as stable passes from the least
//     significant key to the most (complex has three), then, for several rows, one pass on the
//     row of each position (so each row ends up sorted in place, without a segmented sort).
//
// Why nvcc and not block-level CUB through NVRTC (issue 13 left the choice open): the device-wide
// radix sort (onesweep, tuned per architecture) is what CuPy and PyTorch run, so its speed is
// the peers'; compiled ahead it costs nothing on first call, where NVRTC would compile CUB's
// headers per dtype at first use (seconds each); and the build pays once, about 20 s on one core
// for this file with only the instantiations above. Temporaries come from kiln's caching
// allocator per call, so there is no plan to cache.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "../../kernels/sort_keys.cuh"
#include "cuda/sort_cub.hpp"

namespace kiln::gpu::cub_sort {
namespace {

using sort_keys::order;
using sort_keys::u32;
using sort_keys::u64;
using sort_keys::u8;

constexpr int kBlock = 256;

unsigned blocks_for(long long n) {
  long long b = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(b < (1 << 20) ? b : (1 << 20));
}

#define KILN_GRID_STRIDE(i, n)                                                  \
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
       i += (long long)gridDim.x * blockDim.x)

// keys[i] = key k of x[perm[i]] (of x[i] without perm).
template <class Tag, class K>
__global__ void encode_kernel(const typename order<Tag>::bits* x, const long long* perm, K* keys,
                              long long n, int k) {
  KILN_GRID_STRIDE(i, n) keys[i] = (K)order<Tag>::key(x[perm ? perm[i] : i], k);
}
template <class Tag, class K>
__global__ void decode_kernel(const K* keys, typename order<Tag>::bits* out, long long n) {
  KILN_GRID_STRIDE(i, n) out[i] = order<Tag>::decode(keys[i]);
}
template <class T>
__global__ void gather_kernel(const T* x, const long long* perm, T* out, long long n) {
  KILN_GRID_STRIDE(i, n) out[i] = x[perm[i]];
}
template <class P>
__global__ void iota_kernel(P* p, long long n) {
  KILN_GRID_STRIDE(i, n) p[i] = (P)i;
}
__global__ void widen_kernel(const int* p, long long* out, long long n) {
  KILN_GRID_STRIDE(i, n) out[i] = p[i];
}
// The row of each flat position (the key of the last pass for several rows).
template <class K>
__global__ void row_kernel(const long long* perm, K* keys, long long n, long long len) {
  KILN_GRID_STRIDE(i, n) keys[i] = (K)(perm[i] / len);
}
// Flat positions to positions along the row (position i is in row i / len once sorted).
__global__ void local_kernel(const long long* perm, long long* out, long long n, long long len) {
  KILN_GRID_STRIDE(i, n) out[i] = perm[i] - (i / len) * len;
}

template <int Bytes>
struct alignas(Bytes) blob {
  unsigned char b[Bytes];
};

// ---- the CUB calls (one instantiation each) ----
template <class K, class V>
void pairs(const K* keys_in, K* keys_out, const V* values_in, V* values_out, long long n,
           int end_bit, Scratch& scratch, cudaStream_t s) {
  size_t bytes = 0;
  scratch.check(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys_in, keys_out, values_in,
                                                values_out, n, 0, end_bit, s),
                "cub::DeviceRadixSort::SortPairs (temporary size)");
  void* temp = scratch.get(bytes);
  scratch.check(cub::DeviceRadixSort::SortPairs(temp, bytes, keys_in, keys_out, values_in,
                                                values_out, n, 0, end_bit, s),
                "cub::DeviceRadixSort::SortPairs");
}
template <class K>
void keys_only(const K* keys_in, K* keys_out, long long n, int end_bit, Scratch& scratch,
               cudaStream_t s) {
  size_t bytes = 0;
  scratch.check(cub::DeviceRadixSort::SortKeys(nullptr, bytes, keys_in, keys_out, n, 0, end_bit, s),
                "cub::DeviceRadixSort::SortKeys (temporary size)");
  void* temp = scratch.get(bytes);
  scratch.check(cub::DeviceRadixSort::SortKeys(temp, bytes, keys_in, keys_out, n, 0, end_bit, s),
                "cub::DeviceRadixSort::SortKeys");
}

int bits_for(long long max_value) {
  int b = 1;
  while (b < 64 && (max_value >> b) != 0) ++b;
  return b;
}

struct Job {
  const void* in;
  void* values;
  long long* indices;
  long long rows, n;
  Scratch& scratch;
  cudaStream_t s;
  long long total() const { return rows * n; }
};

// One stable pass on key k of x[perm], carrying perm along: perm_out = perm sorted by the key.
template <class Tag, class K>
void key_pass(const Job& j, int k, const long long* perm, const long long* perm_in,
              long long* perm_out) {
  using bits = typename order<Tag>::bits;
  const long long n = j.total();
  K* keys = static_cast<K*>(j.scratch.get(2 * n * sizeof(K)));
  encode_kernel<Tag, K>
      <<<blocks_for(n), kBlock, 0, j.s>>>(static_cast<const bits*>(j.in), perm, keys, n, k);
  j.scratch.check(cudaGetLastError(), "the sort-key kernel's launch");
  pairs<K, long long>(keys, keys + n, perm_in, perm_out, n, order<Tag>::key_bits(k), j.scratch,
                      j.s);
}

// The general form: positions sorted key by key (and by row), then the outputs from them.
template <class Tag>
void by_positions(const Job& j) {
  using bits = typename order<Tag>::bits;
  const long long n = j.total();
  long long* a = static_cast<long long*>(j.scratch.get(2 * n * sizeof(long long)));
  long long* b = a + n;
  iota_kernel<<<blocks_for(n), kBlock, 0, j.s>>>(a, n);
  j.scratch.check(cudaGetLastError(), "the iota kernel's launch");
  for (int k = 0; k < order<Tag>::keys; ++k) {
    const long long* perm = k == 0 ? nullptr : a;  // keys of x[a]
    switch (order<Tag>::key_bytes(k)) {
      case 1:
        key_pass<Tag, u8>(j, k, perm, a, b);
        break;
      case 4:
        key_pass<Tag, u32>(j, k, perm, a, b);
        break;
      default:
        key_pass<Tag, u64>(j, k, perm, a, b);
        break;
    }
    long long* t = a;
    a = b;
    b = t;
  }
  if (j.rows > 1) {
    const int end_bit = bits_for(j.rows - 1);
    if (end_bit <= 32) {
      u32* keys = static_cast<u32*>(j.scratch.get(2 * n * sizeof(u32)));
      row_kernel<<<blocks_for(n), kBlock, 0, j.s>>>(a, keys, n, j.n);
      j.scratch.check(cudaGetLastError(), "the row-key kernel's launch");
      pairs<u32, long long>(keys, keys + n, a, b, n, end_bit, j.scratch, j.s);
    } else {
      u64* keys = static_cast<u64*>(j.scratch.get(2 * n * sizeof(u64)));
      row_kernel<<<blocks_for(n), kBlock, 0, j.s>>>(a, keys, n, j.n);
      j.scratch.check(cudaGetLastError(), "the row-key kernel's launch");
      pairs<u64, long long>(keys, keys + n, a, b, n, end_bit, j.scratch, j.s);
    }
    long long* t = a;
    a = b;
    b = t;
  }
  if (j.values) {
    gather_kernel<blob<sizeof(bits)>>
        <<<blocks_for(n), kBlock, 0, j.s>>>(static_cast<const blob<sizeof(bits)>*>(j.in), a,
                                            static_cast<blob<sizeof(bits)>*>(j.values), n);
    j.scratch.check(cudaGetLastError(), "the gather kernel's launch");
  }
  if (j.indices) {
    local_kernel<<<blocks_for(n), kBlock, 0, j.s>>>(a, j.indices, n, j.n);
    j.scratch.check(cudaGetLastError(), "the position kernel's launch");
  }
}

// Integer and bool values of one row: their keys sorted alone and decoded.
template <class Tag>
void integer_values(const Job& j) {
  using bits = typename order<Tag>::bits;
  using K = typename order<Tag>::key_type;
  const long long n = j.total();
  K* keys = static_cast<K*>(j.scratch.get(2 * n * sizeof(K)));
  encode_kernel<Tag, K>
      <<<blocks_for(n), kBlock, 0, j.s>>>(static_cast<const bits*>(j.in), nullptr, keys, n, 0);
  j.scratch.check(cudaGetLastError(), "the sort-key kernel's launch");
  keys_only<K>(keys, keys + n, n, order<Tag>::key_bits(0), j.scratch, j.s);
  decode_kernel<Tag, K>
      <<<blocks_for(n), kBlock, 0, j.s>>>(keys + n, static_cast<bits*>(j.values), n);
  j.scratch.check(cudaGetLastError(), "the decode kernel's launch");
}

// ---- float32 / float64, one row: CUB's own float order, NaNs moved after ----
// CUB sorts floats stably with -0.0 equal to +0.0, as NumPy, but puts NaNs by their bits: those
// with the sign bit first, the others last. So the sort runs on the floats themselves (no key
// pass: this is the benchmarked form), and a repair moves every NaN to the end in input order
// where the sorted row has one at either end. Data without NaNs pays five launches that return
// at once (`flag` is 0).
constexpr int kTileThreads = 256, kTileItems = 16, kTile = kTileThreads * kTileItems;

__device__ __forceinline__ bool sign_of(float v) { return __float_as_uint(v) >> 31; }
__device__ __forceinline__ bool sign_of(double v) {
  return static_cast<unsigned long long>(__double_as_longlong(v)) >> 63;
}

// repair[0] = whether the sorted row (keys) begins or ends with a NaN.
template <class F>
__global__ void nan_probe_kernel(const F* keys, long long n, long long* repair) {
  repair[0] = keys[0] != keys[0] || keys[n - 1] != keys[n - 1];
}
// counts[2 t], counts[2 t + 1]: the NaNs of tile t of x, and those with the sign bit.
template <class F>
__global__ void nan_count_kernel(const F* x, long long n, const long long* repair,
                                 long long* counts) {
  if (!repair[0]) return;
  using Reduce = cub::BlockReduce<int, kTileThreads>;
  __shared__ typename Reduce::TempStorage temp[2];
  const long long base = (long long)blockIdx.x * kTile;
  int c = 0, neg = 0;
  for (long long i = base + threadIdx.x; i < n && i < base + kTile; i += kTileThreads) {
    const F v = x[i];
    if (v != v) {
      ++c;
      neg += sign_of(v);
    }
  }
  c = Reduce(temp[0]).Sum(c);
  neg = Reduce(temp[1]).Sum(neg);
  if (threadIdx.x == 0) {
    counts[2 * blockIdx.x] = c;
    counts[2 * blockIdx.x + 1] = neg;
  }
}
// One block: counts[2 t] becomes tile t's first NaN's rank; repair[1] = the NaNs, repair[2] =
// those with the sign bit (at the front of the sorted row). Bounded to its 1024 threads: without
// the bound nvcc gave it more registers than a block of 1024 may have (cudaErrorLaunchOutOfResources
// on the H200, 2026-12-03).
__global__ void __launch_bounds__(1024) nan_scan_kernel(long long* counts, long long tiles, long long* repair) {
  if (!repair[0]) return;
  using Scan = cub::BlockScan<long long, 1024>;
  __shared__ typename Scan::TempStorage temp;
  __shared__ long long carry, negs;
  if (threadIdx.x == 0) carry = negs = 0;
  __syncthreads();
  for (long long t0 = 0; t0 < tiles; t0 += 1024) {
    const long long t = t0 + threadIdx.x;
    long long c = t < tiles ? counts[2 * t] : 0, rank, total;
    Scan(temp).ExclusiveSum(c, rank, total);
    if (t < tiles) {
      counts[2 * t] = carry + rank;
      atomicAdd(reinterpret_cast<unsigned long long*>(&negs),
                static_cast<unsigned long long>(counts[2 * t + 1]));
    }
    __syncthreads();
    if (threadIdx.x == 0) carry += total;
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    repair[1] = carry;
    repair[2] = negs;
  }
}
// The numbers, at [negs, negs + n - nans) of the sorted row, copied to tmp (when negs > 0).
template <class P>
__global__ void shift_out_kernel(const P* out, P* tmp, long long n, const long long* repair) {
  if (!repair[0] || !repair[2]) return;
  const long long numbers = n - repair[1], negs = repair[2];
  KILN_GRID_STRIDE(i, numbers) tmp[i] = out[i + negs];
}
template <class P>
__global__ void shift_back_kernel(P* out, const P* tmp, long long n, const long long* repair) {
  if (!repair[0] || !repair[2]) return;
  const long long numbers = n - repair[1];
  KILN_GRID_STRIDE(i, numbers) out[i] = tmp[i];
}
// Each NaN of x, in input order, after the numbers: its bits (values) or its position (indices).
template <class F, class P>
__global__ void nan_place_kernel(const F* x, P* out, long long n, const long long* counts,
                                 const long long* repair) {
  if (!repair[0]) return;
  using Scan = cub::BlockScan<int, kTileThreads>;
  __shared__ typename Scan::TempStorage temp;
  const long long base = (long long)blockIdx.x * kTile + (long long)threadIdx.x * kTileItems;
  int c = 0;
  for (int k = 0; k < kTileItems; ++k)
    if (base + k < n && x[base + k] != x[base + k]) ++c;
  int rank;
  Scan(temp).ExclusiveSum(c, rank);
  long long at = n - repair[1] + counts[2 * blockIdx.x] + rank;
  for (int k = 0; k < kTileItems; ++k) {
    const long long i = base + k;
    if (i < n && x[i] != x[i]) {
      if constexpr (std::is_same_v<P, F>)
        out[at++] = x[i];
      else
        out[at++] = i;
    }
  }
}

// out (sorted by CUB's float order, keys the sorted floats) with its NaNs moved last in input
// order. P: F for values, long long for positions.
template <class F, class P>
void repair_nans(const Job& j, const F* x, const F* keys, P* out) {
  const long long n = j.total(), tiles = (n + kTile - 1) / kTile;
  long long* repair = static_cast<long long*>(j.scratch.get((3 + 2 * tiles) * sizeof(long long)));
  long long* counts = repair + 3;
  P* tmp = static_cast<P*>(j.scratch.get(n * sizeof(P)));
  const unsigned grid = static_cast<unsigned>(tiles);
  nan_probe_kernel<F><<<1, 1, 0, j.s>>>(keys, n, repair);
  nan_count_kernel<F><<<grid, kTileThreads, 0, j.s>>>(x, n, repair, counts);
  nan_scan_kernel<<<1, 1024, 0, j.s>>>(counts, tiles, repair);
  shift_out_kernel<P><<<blocks_for(n), kBlock, 0, j.s>>>(out, tmp, n, repair);
  shift_back_kernel<P><<<blocks_for(n), kBlock, 0, j.s>>>(out, tmp, n, repair);
  nan_place_kernel<F, P><<<grid, kTileThreads, 0, j.s>>>(x, out, n, counts, repair);
  j.scratch.check(cudaGetLastError(), "the NaN repair kernels' launch");
}

template <class Tag>
void float_row(const Job& j) {
  using F = std::conditional_t<std::is_same_v<Tag, sort_keys::F32>, float, double>;
  const long long n = j.total();
  const F* x = static_cast<const F*>(j.in);
  if (j.values) {
    F* out = static_cast<F*>(j.values);
    keys_only<F>(x, out, n, 8 * sizeof(F), j.scratch, j.s);
    return repair_nans<F, F>(j, x, out, out);
  }
  F* keys = static_cast<F*>(j.scratch.get(n * sizeof(F)));
  if (n <= std::numeric_limits<int>::max()) {
    // Positions of 4 bytes through the sort's passes, widened once after: each pass moves 4
    // bytes an element less than with int64 positions.
    int* iota = static_cast<int*>(j.scratch.get(2 * n * sizeof(int)));
    iota_kernel<<<blocks_for(n), kBlock, 0, j.s>>>(iota, n);
    j.scratch.check(cudaGetLastError(), "the iota kernel's launch");
    pairs<F, int>(x, keys, iota, iota + n, n, 8 * sizeof(F), j.scratch, j.s);
    widen_kernel<<<blocks_for(n), kBlock, 0, j.s>>>(iota + n, j.indices, n);
    j.scratch.check(cudaGetLastError(), "the widening kernel's launch");
  } else {
    long long* iota = static_cast<long long*>(j.scratch.get(n * sizeof(long long)));
    iota_kernel<<<blocks_for(n), kBlock, 0, j.s>>>(iota, n);
    j.scratch.check(cudaGetLastError(), "the iota kernel's launch");
    pairs<F, long long>(x, keys, iota, j.indices, n, 8 * sizeof(F), j.scratch, j.s);
  }
  repair_nans<F, long long>(j, x, keys, j.indices);
}

// Whether Tag's key is its value (integers and bool: order<Tag>::decode exists).
template <class Tag, class = void>
struct has_decode : std::false_type {};
template <class Tag>
struct has_decode<Tag, std::void_t<decltype(&order<Tag>::decode)>> : std::true_type {};

template <class Tag>
void run(const Job& j) {
  const bool one_row_values = j.rows == 1 && j.values && !j.indices;
  if constexpr (has_decode<Tag>::value) {
    if (one_row_values) return integer_values<Tag>(j);
  }
  if constexpr (std::is_same_v<Tag, sort_keys::F32> || std::is_same_v<Tag, sort_keys::F64>) {
    if (j.rows == 1 && (j.values != nullptr) != (j.indices != nullptr)) return float_row<Tag>(j);
  }
  by_positions<Tag>(j);
}

}  // namespace

void sort_rows(Order o, const void* in, void* values, int64_t* indices, int64_t rows, int64_t n,
               Scratch& scratch, cudaStream_t stream) {
  if (rows * n == 0) return;
  Job j{in, values, reinterpret_cast<long long*>(indices), rows, n, scratch, stream};
  switch (o) {
    case Order::U8:
      return run<sort_keys::U8>(j);
    case Order::I8:
      return run<sort_keys::I8>(j);
    case Order::U16:
      return run<sort_keys::U16>(j);
    case Order::I16:
      return run<sort_keys::I16>(j);
    case Order::U32:
      return run<sort_keys::U32>(j);
    case Order::I32:
      return run<sort_keys::I32>(j);
    case Order::U64:
      return run<sort_keys::U64>(j);
    case Order::I64:
      return run<sort_keys::I64>(j);
    case Order::F16:
      return run<sort_keys::F16>(j);
    case Order::BF16:
      return run<sort_keys::BF16>(j);
    case Order::F32:
      return run<sort_keys::F32>(j);
    case Order::F64:
      return run<sort_keys::F64>(j);
    case Order::C64:
      return run<sort_keys::C64>(j);
    case Order::C128:
      return run<sort_keys::C128>(j);
  }
}

}  // namespace kiln::gpu::cub_sort
