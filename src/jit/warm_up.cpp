#include "jit/warm_up.hpp"

#include <cstdlib>
#include <mutex>
#include <string_view>
#include <thread>

#include "jit/cache_key.hpp"
#include "jit/nvrtc_api.hpp"

namespace kiln::jit {
namespace {

// KILN_NVRTC_PRELOAD=0: a program that finds its kernels on disk, or needs none, never loads
// NVRTC; one that compiles waits for the load at its first compile. (The loader opens one
// library at a time: a cuFFT or cuBLASLt opened while NVRTC loads waits for it.)
bool preload_nvrtc() {
  const char* v = std::getenv("KILN_NVRTC_PRELOAD");
  return !(v && std::string_view(v) == "0");
}

}  // namespace

void warm_up_in_background() {
  static std::once_flag started;
  std::call_once(started, [] {
    foresee_nvrtc();  // here, before the thread below may hold the loader
    const bool nvrtc_too = preload_nvrtc();
    try {
      std::thread([nvrtc_too] {
        try {
          prepare_cache_keys();
          if (nvrtc_too) nvrtc();
        } catch (...) {  // reported to whoever needs it, who tries again
        }
      }).detach();
    } catch (...) {  // no thread: each is done where it is first needed
    }
  });
}

}  // namespace kiln::jit
