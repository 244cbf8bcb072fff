#include "cuda/warm_up.hpp"

#include <cstdlib>
#include <mutex>
#include <sstream>

#include "common/background.hpp"
#include "cuda/cufft_api.hpp"
#include "jit/cache_config.hpp"
#include "jit/cache_key.hpp"
#include "jit/nvrtc_api.hpp"

namespace kiln::gpu {
namespace {

// NVRTC first: a program with an empty cache compiles at once, while its first FFT usually comes
// later. The loader opens one library at a time, so the other order makes the first compile wait
// for cuFFT. Measured on the H200 machine (fresh processes alternating; gpuwork/s19b.sh):
// a first integer fftn with a warm cache 3.95-5.16 ms this way, 3.92-5.21 cuFFT first, 7.56-9.85
// with nothing loaded, 8.65-9.78 with NVRTC alone; the first compile with an empty cache 21.5-31.8
// ms this way, 27.4-38.6 cuFFT first.
constexpr const char* kDefault = "nvrtc,cufft";

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
    // Waited for when this thread ends: a library's initialiser must not meet the process's
    // clean-up (common/background.hpp). No thread: each is done where it is first needed.
    start_background(
        [libraries = preload_list(std::getenv("KILN_PRELOAD"))](const BackgroundStop& stop) {
          jit::prepare_cache_keys();  // failures are reported to whoever needs it, who tries again
          for (const auto& library : libraries)
            if (!stop.requested()) load(library);
        });
  });
}

}  // namespace kiln::gpu
