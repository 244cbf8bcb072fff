// Loop skeletons for fused elementwise kernels. The generated kernel supplies only the body:
// what one element (or one vector of V elements) computes.
#pragma once
#include "kiln/complex.cuh"
#include "kiln/types.cuh"

namespace kiln {

// Every access is dense or constant. With `vec` set (every dense pointer aligned to its
// vector size) each step handles V consecutive elements through 16-byte loads and stores;
// the tail, and the unaligned case, go one element at a time. Grid-stride, so any grid works.
// U vector steps per iteration keep more loads in flight (what a reduction, which only
// reads, needs to reach the memory roof).
template <int V, int U = 1, class I, class Body>
__device__ __forceinline__ void contiguous_loop(I n, int vec, Body body) {
  I tid = (I)blockIdx.x * blockDim.x + threadIdx.x;
  I stride = (I)gridDim.x * blockDim.x;
  I done = 0;
  if (V > 1 && vec) {
    I nv = n / V, k = tid;
    for (; k + (U - 1) * stride < nv; k += U * stride) {
#pragma unroll
      for (int u = 0; u < U; ++u) body(lanes<V>{}, (k + u * stride) * V);
    }
    for (; k < nv; k += stride) body(lanes<V>{}, k * V);
    done = nv * V;
  }
  for (I i = done + tid; i < n; i += stride) body(lanes<1>{}, i);
}

// Some access is strided: each element finds its offsets from the collapsed layout.
template <class I, class Body>
__device__ __forceinline__ void strided_loop(I n, Body body) {
  I stride = (I)gridDim.x * blockDim.x;
  for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) body(i);
}

}  // namespace kiln
