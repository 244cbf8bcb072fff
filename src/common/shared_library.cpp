#include "common/shared_library.hpp"

#include <dlfcn.h>

#include <cuda_runtime_api.h>
#include <limits.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>

#include "kiln/errors.hpp"

namespace kiln {

void* try_open_cuda_library(const char* soname, std::string* why) {
  if (void* h = dlopen(soname, RTLD_NOW | RTLD_LOCAL)) return h;
  *why = dlerror();
#ifdef KILN_CUDA_LIBRARY_DIR
  std::string path = std::string(KILN_CUDA_LIBRARY_DIR) + "/" + soname;
  if (void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
#endif
  return nullptr;
}

void* open_cuda_library(const char* soname, const char* needed_for, const char* package) {
  std::string why;
  if (void* h = try_open_cuda_library(soname, &why)) return h;
  throw CudaError(std::string(needed_for) + " needs " + soname + ", which could not be loaded (" +
                  why + "); install the CUDA toolkit's " + package +
                  " or add its folder to LD_LIBRARY_PATH");
}

namespace {

// `folder`/`name` with links resolved, or empty when it does not exist.
std::string existing(std::string_view folder, const char* name) {
  if (folder.empty()) return {};
  std::string path = std::string(folder) + "/" + name;
  char resolved[PATH_MAX];
  return realpath(path.c_str(), resolved) ? std::string(resolved) : std::string();
}

std::string folder_of(const std::string& path) { return path.substr(0, path.rfind('/')); }

}  // namespace

std::string find_cuda_library(const char* soname) {
  if (const char* env = std::getenv("LD_LIBRARY_PATH")) {
    std::string_view dirs(env);
    for (size_t start = 0; start <= dirs.size();) {
      size_t end = std::min(dirs.find(':', start), dirs.size());
      if (auto p = existing(dirs.substr(start, end - start), soname); !p.empty()) return p;
      start = end + 1;
    }
  }
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cudaRuntimeGetVersion), &info) && info.dli_fname) {
    char cudart[PATH_MAX];
    if (realpath(info.dli_fname, cudart))
      if (auto p = existing(folder_of(cudart), soname); !p.empty()) return p;
  }
#ifdef KILN_CUDA_LIBRARY_DIR
  return existing(KILN_CUDA_LIBRARY_DIR, soname);
#else
  return {};
#endif
}

void* cuda_library_symbol(void* library, const char* soname, const char* name,
                          const char* requirement) {
  void* f = dlsym(library, name);
  if (!f) throw CudaError(std::string(soname) + " has no " + name + "; kiln needs " + requirement);
  return f;
}

}  // namespace kiln
