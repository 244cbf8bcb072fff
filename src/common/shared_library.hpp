// CUDA libraries that kiln opens on first use instead of linking (NVRTC, cuFFT, cuBLASLt): a
// program that never runs an FFT or a matmul on a GPU does not load them at start (each costs
// tenths of a second and hundreds of MB). Their functions are called through tables of pointers
// declared from the libraries' own headers. Nothing here touches libcuda.
#pragma once
#include <mutex>
#include <string>

namespace kiln {

// Opens `soname` the way the loader finds cudart (kiln's run path, LD_LIBRARY_PATH,
// ld.so.cache), then in the CUDA toolkit kiln was built with. kiln::CudaError saying that
// `needed_for` needs it, dlerror()'s reason and what to install (`package`) when it cannot.
void* open_cuda_library(const char* soname, const char* needed_for, const char* package);
// The same search without the error: null, with dlerror()'s reason in *why, when it fails (for a
// library that is not part of the toolkit, as NCCL, whose caller says what to install).
void* try_open_cuda_library(const char* soname, std::string* why);
// The file open_cuda_library would open for `soname`, found without opening it (loading NVRTC
// takes 10-20 ms, while a kernel found on disk needs only its name): the first folder of
// LD_LIBRARY_PATH holding it, else the folder of the cudart this process loaded (the loader
// found cudart by kiln's run path or ld.so.cache, and a toolkit keeps its libraries together),
// else the toolkit kiln was built with. The path with links resolved; empty when none exists.
std::string find_cuda_library(const char* soname);
// The function `name` of an opened library; kiln::CudaError when the library lacks it, saying
// that kiln needs `requirement`.
void* cuda_library_symbol(
    void* library, const char* soname, const char* name,
    const char* requirement = "the version of the CUDA toolkit it was built with");

// The table `load` fills, loaded by the first call (thread-safe). When load throws, the error
// reaches the caller and the next call tries again.
template <class Api>
const Api& load_once(Api (*load)()) {
  static std::mutex mu;
  static Api loaded;
  static bool ready = false;
  std::lock_guard lock(mu);
  if (!ready) {
    loaded = load();
    ready = true;
  }
  return loaded;
}

}  // namespace kiln
