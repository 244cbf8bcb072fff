// kiln::wrap: a Buffer leaf whose owner aliases the user's pointer, so kiln neither copies nor
// frees it; the checks here stop the mistakes that would otherwise surface later as a crash or
// as a GPU fault that poisons the CUDA context.
#include "kiln/interop.hpp"

#include <cstdint>

#include "api/build.hpp"
#include "cuda/pointer.hpp"
#include "graph/node.hpp"
#include "graph/shape.hpp"
#include "runtime/backends.hpp"

namespace kiln {
namespace {

// The alignment kiln's code assumes: the C++ type's on the host (std::complex<double> is
// 8-aligned), the element size on a GPU (kiln::complex<T> is aligned to both parts, and vector
// loads start from element-aligned addresses).
size_t required_alignment(DType t, Device d) {
  size_t size = static_cast<size_t>(itemsize(t));
  return d.is_cuda() || !is_complex(t) ? size : size / 2;
}

void check_memory_kind(const void* data, Device d) {
  using Kind = gpu::PointerInfo::Kind;
  gpu::PointerInfo info = gpu::pointer_info(data);
  if (info.kind == Kind::Unknown || info.kind == Kind::Managed) return;  // usable anywhere
  bool device_memory = info.kind == Kind::Device;
  if (d.is_host() && device_memory)
    throw DeviceError(
        "kiln::wrap: the pointer is device memory of cuda:" + std::to_string(info.device) +
        ", not host memory; pass kiln::cuda(" + std::to_string(info.device) + ") as the device");
  if (d.is_cuda() && !device_memory)
    throw DeviceError("kiln::wrap: the pointer is host memory, not device memory of " + d.str() +
                      "; wrap it on kiln::host() and copy it with kiln::asarray(x, " +
                      "kiln::cuda())");
  if (d.is_cuda() && info.device != d.index)
    throw DeviceError("kiln::wrap: the pointer is device memory of cuda:" +
                      std::to_string(info.device) + ", not of " + d.str());
}

}  // namespace

Array wrap(const void* data, DType t, Shape s, Device d, std::shared_ptr<void> keep_alive) {
  graph::check_rank(s, "kiln::wrap");
  size_t nbytes = static_cast<size_t>(shape_size(s)) * itemsize(t);
  if (!data && nbytes)
    throw Error("kiln::wrap: data is null but the shape " + shape_str(s) + " has elements");
  if (d.is_cuda()) cuda(d.index);  // DeviceError when there is no such GPU
  // An empty std::vector has no data(): give the empty array memory of its own, so no code
  // ever sees a null address.
  if (!data) return Array(graph::buffer_node(runtime::allocate(d, 0), t, std::move(s)));
  if (reinterpret_cast<uintptr_t>(data) % required_alignment(t, d))
    throw Error("kiln::wrap: the pointer is not aligned for " + std::string(dtype_name(t)) +
                " (it needs a multiple of " + std::to_string(required_alignment(t, d)) +
                " bytes); copy the data with kiln::asarray instead");
  if (nbytes) check_memory_kind(data, d);
  auto buf = std::make_shared<graph::Buffer>();
  // The aliasing constructor: shares ownership with keep_alive (none when it is null) and
  // points at the user's data, so releasing the buffer never frees that memory.
  buf->owner = std::shared_ptr<void>(std::move(keep_alive), const_cast<void*>(data));
  buf->nbytes = nbytes;
  buf->device = d;
  buf->pinned = false;  // copies to a GPU go through staging: the memory may be pageable
  return Array(graph::buffer_node(std::move(buf), t, std::move(s)));
}

}  // namespace kiln
