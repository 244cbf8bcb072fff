#include "cuda/warm_up.hpp"

#include <cstdlib>
#include <mutex>
#include <sstream>
#include <thread>

#include "cuda/cufft_api.hpp"
#include "jit/cache_config.hpp"
#include "jit/cache_key.hpp"
#include "jit/nvrtc_api.hpp"

namespace kiln::gpu {
namespace {

// cuFFT first: a warm disk cache needs no NVRTC, and the loader opens one library at a time, so
// an FFT (or cuRAND, cuBLASLt) opened while NVRTC loads would wait 10-20 ms for it.
constexpr const char* kDefault = "cufft,nvrtc";

void load(const std::string& library) {
  if (library == "nvrtc") jit::nvrtc();
  if (library == "cufft") fft::cufft();
}

}  // namespace

std::vector<std::string> preload_list(const char* setting) {
  std::vector<std::string> list;
  std::stringstream in(setting ? setting : kDefault);
  for (std::string name; std::getline(in, name, ',');) {
    if (name == "none" || name.empty()) continue;
    if (name == "nvrtc" || name == "cufft")
      list.push_back(name);
    else
      jit::warn("KILN_PRELOAD names '" + name +
                "', which kiln cannot load ahead (it knows nvrtc and cufft); leaving it out");
  }
  return list;
}

void warm_up_in_background() {
  static std::once_flag started;
  std::call_once(started, [] {
    jit::foresee_nvrtc();  // here, before the thread below may hold the loader
    const auto libraries = preload_list(std::getenv("KILN_PRELOAD"));
    try {
      std::thread([libraries] {
        try {
          jit::prepare_cache_keys();
          for (const auto& library : libraries) load(library);
        } catch (...) {  // reported to whoever needs it, who tries again
        }
      }).detach();
    } catch (...) {  // no thread: each is done where it is first needed
    }
  });
}

}  // namespace kiln::gpu
