// Which arch to compile for: KILN_JIT_ARCH, else the current device's compute capability.
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <map>
#include <mutex>

#include "jit/jit.hpp"
#include "jit/nvrtc_compile.hpp"

namespace kiln::jit {
namespace {

// SASS runs on devices of the same major version with an equal or higher minor, so the
// newest supported arch of the device's major is the best cubin. When NVRTC knows no arch of
// that major (a device newer than this toolkit) we emit PTX and let the driver finish it.
std::string arch_for_capability(int cc) {
  int best = 0;
  for (int a : nvrtc_supported_archs())
    if (a <= cc) best = a;
  if (best == 0) return "sm_" + std::to_string(cc);  // too old: NVRTC will say so clearly
  if (best / 10 == cc / 10) return "sm_" + std::to_string(best);
  return "compute_" + std::to_string(best);
}

// Without a driver cudaGetDeviceCount fails; that is the normal "no GPU" case, not an error,
// so the error is cleared and later runtime calls do not report it.
bool have_device() {
  static const bool present = [] {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) cudaGetLastError();
    return err == cudaSuccess && count > 0;
  }();
  return present;
}

// Two attribute queries rather than cudaGetDeviceProperties, which fills every property.
std::string query_arch(int device) {
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  return arch_for_capability(major * 10 + minor);
}

std::string current_device_arch() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  // Cached per device: the answer never changes and kernels are requested often.
  static std::mutex mutex;
  static std::map<int, std::string> by_device;
  std::lock_guard lock(mutex);
  auto it = by_device.find(device);
  if (it == by_device.end()) it = by_device.emplace(device, query_arch(device)).first;
  return it->second;
}

}  // namespace

std::string target_arch() {
  if (const char* env = std::getenv("KILN_JIT_ARCH"); env && *env) return env;
  if (!have_device()) return "";
  return current_device_arch();
}

}  // namespace kiln::jit
