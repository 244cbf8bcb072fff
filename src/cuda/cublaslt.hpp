// cuBLASLt, loaded on first use (cuda/shared_library.hpp). Linking libcublasLt makes every kiln
// program pay for it at start (measured: 0.03 s -> 0.23 s and 46 -> 256 MB resident for a program
// that never multiplies a matrix), so the library is opened with dlopen by the first matmul on a
// GPU and its functions are called through this table, declared from cuBLASLt's own header. Like
// the rest of src/cuda, it never touches libcuda.
#pragma once
#include <cublasLt.h>

namespace kiln::gpu::lt {

#define KILN_CUBLASLT_FUNCTIONS(X)        \
  X(cublasLtCreate)                       \
  X(cublasLtGetStatusName)                \
  X(cublasLtGetStatusString)              \
  X(cublasLtMatmulDescCreate)             \
  X(cublasLtMatmulDescSetAttribute)       \
  X(cublasLtMatmulDescDestroy)            \
  X(cublasLtMatrixLayoutCreate)           \
  X(cublasLtMatrixLayoutSetAttribute)     \
  X(cublasLtMatrixLayoutDestroy)          \
  X(cublasLtMatmulPreferenceCreate)       \
  X(cublasLtMatmulPreferenceSetAttribute) \
  X(cublasLtMatmulPreferenceDestroy)      \
  X(cublasLtMatmulAlgoGetHeuristic)       \
  X(cublasLtMatmul)

struct Api {
#define KILN_CUBLASLT_MEMBER(name) decltype(&::name) name = nullptr;
  KILN_CUBLASLT_FUNCTIONS(KILN_CUBLASLT_MEMBER)
#undef KILN_CUBLASLT_MEMBER
};

// The library's functions, loaded by the first call (thread-safe). kiln::CudaError naming the
// library and dlerror()'s reason when it cannot be opened or lacks a function; a later call
// tries again.
const Api& api();

}  // namespace kiln::gpu::lt
