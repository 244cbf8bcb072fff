#include "mesh/host_communicator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "kiln/errors.hpp"
#include "mesh/wire_type.hpp"

namespace kiln::mesh {
namespace {

// One step of an NCCL reduction on the host. Integer sums and products wrap, as on the GPU
// (computed unsigned, where wrapping is defined; a narrow product is promoted to int first, which
// could overflow); float max and min are fmax and fmin, as NCCL's (a NaN loses to a number).
template <class T>
T combine(T a, T b, Reduction op) {
  switch (op) {
    case Reduction::Sum:
      if constexpr (std::is_integral_v<T>)
        return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) +
                              static_cast<std::make_unsigned_t<T>>(b));
      else
        return a + b;
    case Reduction::Prod:
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<decltype(a * b)>;
        return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
      } else {
        return a * b;
      }
    case Reduction::Max:
      if constexpr (std::is_floating_point_v<T>)
        return std::fmax(a, b);
      else
        return std::max(a, b);
    case Reduction::Min:
      if constexpr (std::is_floating_point_v<T>)
        return std::fmin(a, b);
      else
        return std::min(a, b);
  }
  return a;
}

// Rank 0's values combined with each later rank's in turn, into out.
template <class T>
void reduce_typed(const std::vector<const void*>& send, void* out_bytes, size_t count,
                  Reduction op) {
  T* out = static_cast<T*>(out_bytes);
  std::memcpy(out, send[0], count * sizeof(T));
  for (size_t r = 1; r < send.size(); ++r) {
    const T* in = static_cast<const T*>(send[r]);
    for (size_t i = 0; i < count; ++i) out[i] = combine(out[i], in[i], op);
  }
}

}  // namespace

HostCommunicator::HostCommunicator(int ranks) : ranks_(ranks) {
  if (ranks < 1)
    throw Error("kiln::Mesh::host: a mesh needs at least one rank, not " + std::to_string(ranks));
}

std::string HostCommunicator::describe() const { return "host x " + std::to_string(ranks_); }

void combine_on_host(const std::vector<const void*>& send, void* out, size_t count,
                     nccl::ncclDataType_t type, Reduction op) {
  using namespace nccl;
  switch (type) {
    case ncclInt8:
      return reduce_typed<int8_t>(send, out, count, op);
    case ncclUint8:
      return reduce_typed<uint8_t>(send, out, count, op);
    case ncclInt32:
      return reduce_typed<int32_t>(send, out, count, op);
    case ncclUint32:
      return reduce_typed<uint32_t>(send, out, count, op);
    case ncclInt64:
      return reduce_typed<int64_t>(send, out, count, op);
    case ncclUint64:
      return reduce_typed<uint64_t>(send, out, count, op);
    case ncclFloat32:
      return reduce_typed<float>(send, out, count, op);
    case ncclFloat64:
      return reduce_typed<double>(send, out, count, op);
    default:
      throw Error("host mesh: no host reduction of NCCL data type " + std::to_string(type) +
                  " (kiln widens 16-bit types before a collective)");
  }
}

// Combined once, into rank 0's result, then copied: every rank gets the same bits, as from NCCL.
void HostCommunicator::reduce_buffers(const std::vector<const void*>& send,
                                      const std::vector<void*>& recv, size_t count,
                                      nccl::ncclDataType_t type, Reduction op) {
  combine_on_host(send, recv[0], count, type, op);
  const size_t bytes = count * wire_bytes(type);
  for (size_t r = 1; r < recv.size(); ++r) std::memcpy(recv[r], recv[0], bytes);
}

void HostCommunicator::gather_buffers(const std::vector<const void*>& send,
                                      const std::vector<void*>& recv, size_t bytes) {
  for (void* out : recv)
    for (size_t r = 0; r < send.size(); ++r)
      std::memcpy(static_cast<char*>(out) + r * bytes, send[r], bytes);
}

void HostCommunicator::exchange_buffers(const std::vector<const void*>& send,
                                        const std::vector<void*>& recv, size_t bytes) {
  for (size_t r = 0; r < recv.size(); ++r)
    for (size_t s = 0; s < send.size(); ++s)
      std::memcpy(static_cast<char*>(recv[r]) + s * bytes,
                  static_cast<const char*>(send[s]) + r * bytes, bytes);
}

}  // namespace kiln::mesh
