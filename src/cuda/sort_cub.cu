// CUB's device-wide radix sort for kiln's sort steps (sort_cub.hpp). Every dtype sorts on the
// keys of kernels/sort_keys.cuh, so the GPU's order is the host's bit for bit. Only eight CUB
// sorts are instantiated (build time: nvcc compiles this file once, for sm_90):
//   keys only, u8 / u32 / u64 keys: the values of integers and bool, one row (keys decode back);
//   pairs u32 -> u32, u64 -> u64: the values of float32 / float64, one row (the value rides with
//     its key: -0.0 and +0.0, or NaNs of different bits, share a key and keep their input order);
//   pairs u8 / u32 / u64 -> int64 positions: everything else, as stable passes from the least
//     significant key to the most (complex has three), then, for several rows, one pass on the
//     row of each position (so each row ends up sorted in place, without a segmented sort).
#include <cub/device/device_radix_sort.cuh>

#include <cstdint>
#include <type_traits>

#include "../../kernels/sort_keys.cuh"
#include "cuda/sort_cub.hpp"

namespace kiln::gpu::cub_sort {
namespace {

using sort::order;
using sort::u32;
using sort::u64;
using sort::u8;

constexpr int kBlock = 256;

unsigned blocks_for(long long n) {
  long long b = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(b < (1 << 20) ? b : (1 << 20));
}

#define KILN_GRID_STRIDE(i, n)                                                            \
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n);            \
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
__global__ void iota_kernel(long long* p, long long n) { KILN_GRID_STRIDE(i, n) p[i] = i; }
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
  scratch.check(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys_in, keys_out, values_in, values_out,
                                        n, 0, end_bit, s),
        "cub::DeviceRadixSort::SortPairs (temporary size)");
  void* temp = scratch.get(bytes);
  scratch.check(cub::DeviceRadixSort::SortPairs(temp, bytes, keys_in, keys_out, values_in, values_out, n,
                                        0, end_bit, s),
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
  encode_kernel<Tag, K><<<blocks_for(n), kBlock, 0, j.s>>>(static_cast<const bits*>(j.in), perm,
                                                            keys, n, k);
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
      case 1: key_pass<Tag, u8>(j, k, perm, a, b); break;
      case 4: key_pass<Tag, u32>(j, k, perm, a, b); break;
      default: key_pass<Tag, u64>(j, k, perm, a, b); break;
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
    gather_kernel<blob<sizeof(bits)>><<<blocks_for(n), kBlock, 0, j.s>>>(
        static_cast<const blob<sizeof(bits)>*>(j.in), a,
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
  encode_kernel<Tag, K><<<blocks_for(n), kBlock, 0, j.s>>>(static_cast<const bits*>(j.in),
                                                            nullptr, keys, n, 0);
  j.scratch.check(cudaGetLastError(), "the sort-key kernel's launch");
  keys_only<K>(keys, keys + n, n, order<Tag>::key_bits(0), j.scratch, j.s);
  decode_kernel<Tag, K>
      <<<blocks_for(n), kBlock, 0, j.s>>>(keys + n, static_cast<bits*>(j.values), n);
  j.scratch.check(cudaGetLastError(), "the decode kernel's launch");
}

// float32 / float64 values of one row: the bits carried by their keys.
template <class Tag>
void float_values(const Job& j) {
  using bits = typename order<Tag>::bits;
  const long long n = j.total();
  bits* keys = static_cast<bits*>(j.scratch.get(2 * n * sizeof(bits)));
  encode_kernel<Tag, bits><<<blocks_for(n), kBlock, 0, j.s>>>(static_cast<const bits*>(j.in),
                                                               nullptr, keys, n, 0);
  j.scratch.check(cudaGetLastError(), "the sort-key kernel's launch");
  pairs<bits, bits>(keys, keys + n, static_cast<const bits*>(j.in), static_cast<bits*>(j.values),
                    n, 8 * sizeof(bits), j.scratch, j.s);
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
  if constexpr (std::is_same_v<Tag, sort::F32> || std::is_same_v<Tag, sort::F64>) {
    if (one_row_values) return float_values<Tag>(j);
  }
  by_positions<Tag>(j);
}

}  // namespace

void sort_rows(Order o, const void* in, void* values, int64_t* indices, int64_t rows, int64_t n,
               Scratch& scratch, cudaStream_t stream) {
  if (rows * n == 0) return;
  Job j{in, values, reinterpret_cast<long long*>(indices), rows, n, scratch, stream};
  switch (o) {
    case Order::U8: return run<sort::U8>(j);
    case Order::I8: return run<sort::I8>(j);
    case Order::U16: return run<sort::U16>(j);
    case Order::I16: return run<sort::I16>(j);
    case Order::U32: return run<sort::U32>(j);
    case Order::I32: return run<sort::I32>(j);
    case Order::U64: return run<sort::U64>(j);
    case Order::I64: return run<sort::I64>(j);
    case Order::F16: return run<sort::F16>(j);
    case Order::BF16: return run<sort::BF16>(j);
    case Order::F32: return run<sort::F32>(j);
    case Order::F64: return run<sort::F64>(j);
    case Order::C64: return run<sort::C64>(j);
    case Order::C128: return run<sort::C128>(j);
  }
}

}  // namespace kiln::gpu::cub_sort
