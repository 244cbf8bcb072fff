// cuFFT, loaded on first use (cuda/shared_library.hpp): libcufft is the largest CUDA library a
// kiln program could link (287 MB), and most programs never run an FFT on a GPU. Its functions
// are called through this table, declared from cuFFT's own headers.
#pragma once
#include <cufftXt.h>

namespace kiln::gpu::fft {

#define KILN_CUFFT_FUNCTIONS(X) \
  X(cufftCreate)                \
  X(cufftSetAutoAllocation)     \
  X(cufftMakePlanMany64)        \
  X(cufftGetSize)               \
  X(cufftSetWorkArea)           \
  X(cufftSetStream)             \
  X(cufftDestroy)               \
  X(cufftXtSetJITCallback)      \
  X(cufftExecC2C)               \
  X(cufftExecZ2Z)               \
  X(cufftExecR2C)               \
  X(cufftExecD2Z)               \
  X(cufftExecC2R)               \
  X(cufftExecZ2D)

struct CufftApi {
#define KILN_CUFFT_MEMBER(name) decltype(&::name) name = nullptr;
  KILN_CUFFT_FUNCTIONS(KILN_CUFFT_MEMBER)
#undef KILN_CUFFT_MEMBER
};

// The library's functions, loaded by the first call (thread-safe); kiln::CudaError naming the
// library and the reason when it cannot be opened, and a later call tries again.
const CufftApi& cufft();

}  // namespace kiln::gpu::fft
