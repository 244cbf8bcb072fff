#include "cuda/pointer.hpp"

#include <cuda_runtime_api.h>

#include "kiln/device.hpp"

namespace kiln::gpu {

PointerInfo pointer_info(const void* p) noexcept {
  PointerInfo info;
  if (!p || !cuda_available()) return info;
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();  // not sticky: clear it so the next checked call does not report it
    return info;
  }
  info.device = a.device;
  switch (a.type) {
    case cudaMemoryTypeUnregistered:
      info.kind = PointerInfo::Kind::Host;
      break;
    case cudaMemoryTypeHost:
      info.kind = PointerInfo::Kind::Pinned;
      break;
    case cudaMemoryTypeDevice:
      info.kind = PointerInfo::Kind::Device;
      break;
    case cudaMemoryTypeManaged:
      info.kind = PointerInfo::Kind::Managed;
      break;
  }
  return info;
}

}  // namespace kiln::gpu
