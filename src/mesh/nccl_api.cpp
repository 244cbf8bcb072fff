#include "mesh/nccl_api.hpp"

#include <string>

#include "common/shared_library.hpp"
#include "kiln/errors.hpp"

namespace kiln::nccl {
namespace {

constexpr const char* kInstall =
    "install NCCL 2 (NVIDIA's CUDA apt repository: libnccl2; or pip: nvidia-nccl-cu13) or add "
    "the folder holding libnccl.so.2 to LD_LIBRARY_PATH";

void check_with(const NcclApi& a, ncclResult_t result, const char* call) {
  if (result == ncclSuccess) return;
  throw CudaError(std::string(call) + " failed: NCCL error " + std::to_string(result) + " (" +
                  a.ncclGetErrorString(result) +
                  "); run with NCCL_DEBUG=WARN for NCCL's own account");
}

NcclApi load_default() { return load_library(kSoname); }

}  // namespace

NcclApi load_library(const char* soname) {
  std::string why;
  void* h = try_open_cuda_library(soname, &why);
  if (!h)
    throw DeviceError(std::string("a kiln::Mesh of GPUs needs NCCL, and ") + soname +
                      " could not be loaded (" + why + "); " + kInstall +
                      ". A kiln::Mesh::host(n) mesh runs without it.");
  NcclApi a;
#define KILN_NCCL_LOAD(name, result, params)   \
  a.name = reinterpret_cast<decltype(a.name)>( \
      cuda_library_symbol(h, soname, #name, "NCCL 2.10 or later"));
  KILN_NCCL_FUNCTIONS(KILN_NCCL_LOAD)
#undef KILN_NCCL_LOAD
  check_with(a, a.ncclGetVersion(&a.version), "ncclGetVersion");
  if (a.version < kOldestVersion)
    throw DeviceError("kiln::Mesh needs NCCL " + version_string(kOldestVersion) +
                      " or later, and the " + soname + " loaded is " + version_string(a.version) +
                      "; " + kInstall);
  return a;
}

const NcclApi& api() { return load_once(&load_default); }

std::string version_string(int code) {
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." +
         std::to_string(code % 100);
}

void check(ncclResult_t result, const char* call) {
  if (result != ncclSuccess) check_with(api(), result, call);
}

}  // namespace kiln::nccl
