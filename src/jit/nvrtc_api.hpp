// NVRTC, loaded on first use (common/shared_library.hpp): a program that finds every kernel in
// the cache, or never uses a GPU, does not load its 109 MB. Functions are called through this
// table, declared from NVRTC's own header. load_nvrtc_in_background starts the load on a thread
// of its own when kiln first touches a GPU, so the program's own set-up hides it.
#pragma once
#include <nvrtc.h>

namespace kiln::jit {

#define KILN_NVRTC_FUNCTIONS(X) \
  X(nvrtcVersion)               \
  X(nvrtcGetErrorString)        \
  X(nvrtcGetNumSupportedArchs)  \
  X(nvrtcGetSupportedArchs)     \
  X(nvrtcCreateProgram)         \
  X(nvrtcCompileProgram)        \
  X(nvrtcDestroyProgram)        \
  X(nvrtcGetProgramLogSize)     \
  X(nvrtcGetProgramLog)         \
  X(nvrtcGetCUBINSize)          \
  X(nvrtcGetCUBIN)              \
  X(nvrtcGetPTXSize)            \
  X(nvrtcGetPTX)                \
  X(nvrtcGetLTOIRSize)          \
  X(nvrtcGetLTOIR)

struct NvrtcApi {
#define KILN_NVRTC_MEMBER(name) decltype(&::name) name = nullptr;
  KILN_NVRTC_FUNCTIONS(KILN_NVRTC_MEMBER)
#undef KILN_NVRTC_MEMBER
};

// The library's functions, loaded by the first call (thread-safe); kiln::CudaError naming the
// library and the reason when it cannot be opened (a later call tries again).
const NvrtcApi& nvrtc();
// Starts loading NVRTC on a detached thread (once per process; errors wait for nvrtc()).
void load_nvrtc_in_background();

}  // namespace kiln::jit
