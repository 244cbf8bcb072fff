// What kind of memory a user pointer addresses, so kiln::wrap can refuse a device pointer
// declared as host memory (or the reverse) before a kernel faults on it: a fault on the GPU
// poisons the whole CUDA context, every later call fails.
#pragma once

namespace kiln::gpu {

struct PointerInfo {
  enum class Kind {
    Unknown,  // no GPU, or CUDA could not tell
    Host,     // ordinary (pageable) host memory
    Pinned,   // page-locked host memory (cudaMallocHost, cudaHostRegister)
    Device,   // device memory of `device`
    Managed,  // unified memory (cudaMallocManaged): usable on the host and on devices
  } kind = Kind::Unknown;
  int device = -1;
};

// Never throws; without a GPU the answer is Unknown.
PointerInfo pointer_info(const void* p) noexcept;

}  // namespace kiln::gpu
