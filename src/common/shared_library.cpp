#include "common/shared_library.hpp"

#include <dlfcn.h>

#include <string>

#include "kiln/errors.hpp"

namespace kiln {

void* open_cuda_library(const char* soname, const char* needed_for, const char* package) {
  if (void* h = dlopen(soname, RTLD_NOW | RTLD_LOCAL)) return h;
  std::string first = dlerror();
#ifdef KILN_CUDA_LIBRARY_DIR
  std::string path = std::string(KILN_CUDA_LIBRARY_DIR) + "/" + soname;
  if (void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
#endif
  throw CudaError(std::string(needed_for) + " needs " + soname + ", which could not be loaded (" +
                  first + "); install the CUDA toolkit's " + package +
                  " or add its folder to LD_LIBRARY_PATH");
}

void* cuda_library_symbol(void* library, const char* soname, const char* name) {
  void* f = dlsym(library, name);
  if (!f)
    throw CudaError(std::string(soname) + " has no " + name +
                    "; kiln needs the version of the CUDA toolkit it was built with");
  return f;
}

}  // namespace kiln
