// Basic device helpers shared by every kiln kernel skeleton. This file is embedded into the
// library at build time and reaches NVRTC as "kiln/kiln_common.cuh"; it must therefore compile
// without any CUDA toolkit header (NVRTC gets no include path).
#pragma once

namespace kiln {

// Element indices: 32-bit when every operand fits (cheaper address arithmetic), 64-bit
// otherwise. The generator picks one by defining KILN_INDEX_64 before including this file.
#ifdef KILN_INDEX_64
typedef long long index_t;
#else
typedef int index_t;
#endif

// N elements of T loaded and stored as one aligned access; with sizeof(T) * N == 16 this is a
// single 128-bit transaction, which is what saturates HBM on elementwise kernels.
template <typename T, int N>
struct alignas(sizeof(T) * N) vec {
  T v[N];
  __device__ __forceinline__ T& operator[](int i) { return v[i]; }
  __device__ __forceinline__ const T& operator[](int i) const { return v[i]; }
};

// How many T make one 16-byte vector (at least 1 for types wider than 16 bytes).
template <typename T>
struct vec_width {
  static constexpr int value = sizeof(T) >= 16 ? 1 : 16 / sizeof(T);
};

// Global thread index and grid size for grid-stride loops, computed in index_t so 64-bit
// launches do not overflow.
__device__ __forceinline__ index_t global_thread() {
  return (index_t)blockIdx.x * (index_t)blockDim.x + (index_t)threadIdx.x;
}
__device__ __forceinline__ index_t grid_threads() {
  return (index_t)gridDim.x * (index_t)blockDim.x;
}

}  // namespace kiln
