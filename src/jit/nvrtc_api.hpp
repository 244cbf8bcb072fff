// NVRTC, loaded on first use (common/shared_library.hpp): a program that finds every kernel in
// the cache, or never uses a GPU, does not load its 109 MB. Functions are called through this
// table, declared from NVRTC's own header. gpu::warm_up_in_background (cuda/warm_up.hpp) starts
// the load on a thread of its own when kiln first touches a GPU, so the program's set-up hides it.
#pragma once
#include <nvrtc.h>

#include <string>

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
// Finds, once, the NVRTC file the loader will open (nvrtc_identity's name for it). Called before
// any thread loads NVRTC: finding it asks the loader (dladdr), which waits while it loads one.
void foresee_nvrtc();

// Which NVRTC compiles this process's kernels, as cache keys and entries name it: its library
// file's name and size (nvrtcVersion() alone says only "13.0", and a patch release can change
// code generation). Known without loading NVRTC, from the file the loader will open
// (find_cuda_library), so that a kernel found on disk does not wait for NVRTC's 10-20 ms load;
// once NVRTC is loaded, from the file it was loaded from. Where the two differ (a loader
// setting kiln did not foresee), kiln warns once and names the loaded one from then on.
std::string nvrtc_identity();

}  // namespace kiln::jit
