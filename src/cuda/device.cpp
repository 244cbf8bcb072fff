// Device discovery through the CUDA runtime (never libcuda, so binaries start without a
// driver: the runtime then reports no device).
#include <cuda_runtime_api.h>

#include <string>

#include "kiln/device.hpp"
#include "kiln/errors.hpp"

namespace kiln {

int cuda_device_count() {
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();  // clear the sticky "no driver" error
      return 0;
    }
    return n;
  }();
  return count;
}

bool cuda_available() { return cuda_device_count() > 0; }

Device cuda(int index) {
  int n = cuda_device_count();
  if (n == 0)
    throw DeviceError("kiln::cuda(" + std::to_string(index) +
                      "): no CUDA device is available on this machine (no GPU or no driver); "
                      "use kiln::host(), or check kiln::cuda_available() first");
  if (index < 0 || index >= n)
    throw DeviceError("kiln::cuda(" + std::to_string(index) + "): this machine has " +
                      (n == 1 ? std::string("one CUDA device, kiln::cuda(0)")
                              : std::to_string(n) + " CUDA devices, kiln::cuda(0) to kiln::cuda(" +
                                    std::to_string(n - 1) + ")") +
                      "; kiln::cuda_device_count() says how many");
  return {Device::Kind::Cuda, index};
}

}  // namespace kiln
