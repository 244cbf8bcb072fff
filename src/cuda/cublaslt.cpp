#include "cuda/cublaslt.hpp"

#include <dlfcn.h>

#include <mutex>
#include <string>

#include "kiln/errors.hpp"

namespace kiln::gpu::lt {
namespace {

#define KILN_STR2(x) #x
#define KILN_STR(x) KILN_STR2(x)
// The soname of the cuBLAS kiln was compiled against, found the way the loader finds cudart
// (kiln's run path, LD_LIBRARY_PATH, ld.so.cache), then in the toolkit kiln was built with.
constexpr const char* kSoname = "libcublasLt.so." KILN_STR(CUBLAS_VER_MAJOR);

void* open_library() {
  if (void* h = dlopen(kSoname, RTLD_NOW | RTLD_LOCAL)) return h;
  std::string first = dlerror();
#ifdef KILN_CUDA_LIBRARY_DIR
  std::string path = std::string(KILN_CUDA_LIBRARY_DIR) + "/" + kSoname;
  if (void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
#endif
  throw CudaError(std::string("matmul on a GPU needs cuBLASLt, and ") + kSoname +
                  " could not be loaded (" + first +
                  "); install the CUDA toolkit's cuBLAS (libcublas) or add its folder to "
                  "LD_LIBRARY_PATH");
}

Api load() {
  void* h = open_library();
  Api a;
  auto symbol = [h](const char* name) {
    void* f = dlsym(h, name);
    if (!f)
      throw CudaError(std::string(kSoname) + " has no " + name +
                      "; kiln needs the cuBLAS of the CUDA toolkit it was built with");
    return f;
  };
#define KILN_CUBLASLT_LOAD(name) a.name = reinterpret_cast<decltype(a.name)>(symbol(#name));
  KILN_CUBLASLT_FUNCTIONS(KILN_CUBLASLT_LOAD)
#undef KILN_CUBLASLT_LOAD
  return a;
}

}  // namespace

const Api& api() {
  static std::mutex mu;
  static Api loaded;
  static bool ready = false;
  std::lock_guard lock(mu);
  if (!ready) {
    loaded = load();  // throws before `ready` is set: the next call tries again
    ready = true;
  }
  return loaded;
}

}  // namespace kiln::gpu::lt
