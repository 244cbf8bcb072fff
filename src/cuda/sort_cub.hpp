// The GPU's sorts: CUB's device-wide radix sort, compiled by nvcc in sort_cub.cu (kept small:
// only the key and value types below are instantiated). This
// interface names no kiln type, so the .cu file includes no kiln header but kernels/sort_keys.cuh.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace kiln::gpu::cub_sort {

// kernels/sort_keys.cuh's orders (bool sorts as U8).
enum class Order : int { U8, I8, U16, I16, U32, I32, U64, I64, F16, BF16, F32, F64, C64, C128 };

// What the sort needs of kiln: device memory for its temporaries, alive until the work queued
// on the stream is done (kiln's caching allocator frees stream-ordered), and kiln's error for a
// failed CUDA call (it throws unless e is cudaSuccess).
class Scratch {
 public:
  virtual void* get(size_t bytes) = 0;
  virtual void check(cudaError_t e, const char* call) = 0;

 protected:
  ~Scratch() = default;
};

// Sorts each of `rows` contiguous rows of `n` values of `in` (dense, rows x n) stably in
// NumPy's order, on `stream`: the sorted values into `values` (when not null, same layout) and
// the positions along the row they came from into `indices` (int64, when not null).
void sort_rows(Order order, const void* in, void* values, int64_t* indices, int64_t rows, int64_t n,
               Scratch& scratch, cudaStream_t stream);

}  // namespace kiln::gpu::cub_sort
