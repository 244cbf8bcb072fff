// Turning CUDA runtime error codes into kiln exceptions.
#include <string>

#include "cuda/runtime.hpp"
#include "kiln/errors.hpp"

namespace kiln::gpu {
namespace {

// After these the CUDA context is unusable for the rest of the process: every later call fails
// the same way, so the message says so instead of inviting a retry.
bool is_sticky(cudaError_t err) {
  switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
      return true;
    default:
      return false;
  }
}

std::string describe(cudaError_t err, const char* call) {
  return std::string(call) + " failed: " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) +
         ")";
}

}  // namespace

void check(cudaError_t err, const char* call) {
  if (err == cudaSuccess) return;
  // The runtime also remembers the error per thread; clear it so that a later, unrelated
  // cudaGetLastError() (kernel launch checks) does not report this one again.
  cudaGetLastError();
  std::string msg = describe(err, call);
  if (err == cudaErrorMemoryAllocation)
    throw OutOfMemory(msg + "; free arrays you no longer need or work on smaller pieces");
  if (is_sticky(err))
    throw CudaError(msg + "; the CUDA context is now unusable, restart the process " +
                    "(run with compute-sanitizer to find the faulting access)");
  throw CudaError(msg);
}

}  // namespace kiln::gpu
