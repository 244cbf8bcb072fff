#include "cuda/cublaslt.hpp"

#include "common/shared_library.hpp"

namespace kiln::gpu::lt {
namespace {

#define KILN_STR2(x) #x
#define KILN_STR(x) KILN_STR2(x)
// The soname of the cuBLAS kiln was compiled against, found the way the loader finds cudart
// (kiln's run path, LD_LIBRARY_PATH, ld.so.cache), then in the toolkit kiln was built with.
constexpr const char* kSoname = "libcublasLt.so." KILN_STR(CUBLAS_VER_MAJOR);

Api load() {
  void* h = kiln::open_cuda_library(kSoname, "matmul on a GPU", "cuBLAS (libcublas)");
  Api a;
#define KILN_CUBLASLT_LOAD(name) \
  a.name = reinterpret_cast<decltype(a.name)>(kiln::cuda_library_symbol(h, kSoname, #name));
  KILN_CUBLASLT_FUNCTIONS(KILN_CUBLASLT_LOAD)
#undef KILN_CUBLASLT_LOAD
  return a;
}

}  // namespace

const Api& api() { return kiln::load_once(&load); }

}  // namespace kiln::gpu::lt
