// NCCL, opened at run time like NVRTC and cuFFT (common/shared_library.hpp): kiln builds,
// starts and runs every single-device program without it, and only a kiln::Mesh of GPUs
// loads libnccl.so.2. Its functions are called through this table of the declarations in
// mesh/nccl.hpp.
#pragma once
#include <string>

#include "mesh/nccl.hpp"

namespace kiln::nccl {

inline constexpr const char* kSoname = "libnccl.so.2";
// The oldest NCCL whose API and enumerators match mesh/nccl.hpp (bfloat16 came in 2.10, the
// non-blocking communicators that let a rank that never joins fail at the mesh's timeout in
// 2.14); kiln was written against 2.28.
inline constexpr int kOldestVersion = version_code(2, 14, 0);

struct NcclApi {
#define KILN_NCCL_MEMBER(name, result, params) result(*name) params = nullptr;
  KILN_NCCL_FUNCTIONS(KILN_NCCL_MEMBER)
#undef KILN_NCCL_MEMBER
  int version = 0;  // ncclGetVersion's code, e.g. 22803 for 2.28.3
};

// The functions of libnccl.so.2, loaded by the first call (thread-safe); a failed load throws
// load_library's error, and a later call tries again.
const NcclApi& api();
// The functions of the library `soname`, loaded now: kiln::DeviceError naming the library and
// how to install NCCL when it cannot be opened or is older than kOldestVersion.
NcclApi load_library(const char* soname);
// "2.28.3" for a version code.
std::string version_string(int code);
// Throws kiln::CudaError naming the call, NCCL's result code and its message, unless `result`
// is ncclSuccess.
void check(ncclResult_t result, const char* call);
#define KILN_NCCL_CHECK(expr) ::kiln::nccl::check((expr), #expr)

}  // namespace kiln::nccl
