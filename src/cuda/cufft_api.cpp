#include "cuda/cufft_api.hpp"

#include "common/shared_library.hpp"

namespace kiln::gpu::fft {
namespace {

#define KILN_STR2(x) #x
#define KILN_STR(x) KILN_STR2(x)
constexpr const char* kSoname = "libcufft.so." KILN_STR(CUFFT_VER_MAJOR);

CufftApi load() {
  void* h = kiln::open_cuda_library(kSoname, "an FFT on a GPU", "cuFFT (libcufft)");
  CufftApi a;
#define KILN_CUFFT_LOAD(name) \
  a.name = reinterpret_cast<decltype(a.name)>(kiln::cuda_library_symbol(h, kSoname, #name));
  KILN_CUFFT_FUNCTIONS(KILN_CUFFT_LOAD)
#undef KILN_CUFFT_LOAD
  return a;
}

}  // namespace

const CufftApi& cufft() { return kiln::load_once(&load); }

}  // namespace kiln::gpu::fft
