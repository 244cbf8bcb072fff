#include "jit/nvrtc_api.hpp"

#include <cuda_runtime_api.h>  // CUDART_VERSION: NVRTC's soname has the toolkit's major version

#include <dlfcn.h>
#include <limits.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "common/shared_library.hpp"

namespace kiln::jit {
namespace {

const std::string& soname() {
  static const std::string name = "libnvrtc.so." + std::to_string(CUDART_VERSION / 1000);
  return name;
}

// A library file as nvrtc_identity names it: the name with links resolved, and the size.
std::string file_identity(const std::string& resolved_path) {
  struct stat st;
  if (resolved_path.empty() || ::stat(resolved_path.c_str(), &st) != 0) return {};
  return resolved_path.substr(resolved_path.rfind('/') + 1) + " " + std::to_string(st.st_size);
}

// The identity of the file the loader will open, found once; empty when kiln cannot tell.
const std::string& foreseen_identity() {
  static const std::string id = file_identity(find_cuda_library(soname().c_str()));
  return id;
}

// Set once NVRTC is loaded, from the file it was loaded from.
struct Loaded {
  std::mutex mu;
  std::string identity;
};
Loaded& loaded() {
  static auto* l = new Loaded;  // never destroyed: keys may be computed during exit
  return *l;
}

void note_loaded(void* symbol) {
  Dl_info info{};
  char path[PATH_MAX];
  std::string id;
  if (dladdr(symbol, &info) && info.dli_fname && realpath(info.dli_fname, path))
    id = file_identity(path);
  if (id.empty()) id = "unknown " + soname();
  const std::string& foreseen = foreseen_identity();
  if (!foreseen.empty() && foreseen != id)
    std::fprintf(stderr,
                 "kiln: NVRTC was loaded from %s, not %s as kiln foresaw; kernels found in the "
                 "cache until now were compiled by the latter, later ones by the former\n",
                 id.c_str(), foreseen.c_str());
  std::lock_guard lock(loaded().mu);
  loaded().identity = id;
}

NvrtcApi load() {
  void* h = open_cuda_library(soname().c_str(), "compiling kernels", "NVRTC (cuda-nvrtc)");
  NvrtcApi a;
#define KILN_NVRTC_LOAD(name) \
  a.name = reinterpret_cast<decltype(a.name)>(cuda_library_symbol(h, soname().c_str(), #name));
  KILN_NVRTC_FUNCTIONS(KILN_NVRTC_LOAD)
#undef KILN_NVRTC_LOAD
  note_loaded(reinterpret_cast<void*>(a.nvrtcVersion));
  return a;
}

}  // namespace

const NvrtcApi& nvrtc() { return load_once(&load); }

void foresee_nvrtc() { foreseen_identity(); }

std::string nvrtc_identity() {
  {
    std::lock_guard lock(loaded().mu);
    if (!loaded().identity.empty()) return loaded().identity;
  }
  if (!foreseen_identity().empty()) return foreseen_identity();
  nvrtc();  // kiln cannot tell which file the loader will pick: load it and see
  std::lock_guard lock(loaded().mu);
  return loaded().identity;
}

}  // namespace kiln::jit
