#include "api/memory.hpp"

#include "cuda/runtime.hpp"
#include "graph/host_buffer.hpp"

namespace kiln::api {

std::shared_ptr<graph::Buffer> allocate(Device d, size_t nbytes) {
  if (d.is_cuda()) return gpu::allocate(d.index, nbytes);
  return cuda_available() ? gpu::allocate_pinned(nbytes) : cpu::allocate(nbytes);
}

}  // namespace kiln::api
