#include "jit/nvrtc_api.hpp"

#include <cuda_runtime_api.h>  // CUDART_VERSION: NVRTC's soname has the toolkit's major version

#include <mutex>
#include <string>
#include <thread>

#include "common/shared_library.hpp"

namespace kiln::jit {
namespace {

const std::string& soname() {
  static const std::string name = "libnvrtc.so." + std::to_string(CUDART_VERSION / 1000);
  return name;
}

NvrtcApi load() {
  void* h = open_cuda_library(soname().c_str(), "compiling kernels", "NVRTC (cuda-nvrtc)");
  NvrtcApi a;
#define KILN_NVRTC_LOAD(name) \
  a.name = reinterpret_cast<decltype(a.name)>(cuda_library_symbol(h, soname().c_str(), #name));
  KILN_NVRTC_FUNCTIONS(KILN_NVRTC_LOAD)
#undef KILN_NVRTC_LOAD
  return a;
}

}  // namespace

const NvrtcApi& nvrtc() { return load_once(&load); }

void load_nvrtc_in_background() {
  static std::once_flag started;
  std::call_once(started, [] {
    try {
      std::thread([] {
        try {
          nvrtc();
        } catch (...) {  // reported by the first compile, which tries again
        }
      }).detach();
    } catch (...) {  // no thread: the first compile loads it
    }
  });
}

}  // namespace kiln::jit
