// A mesh of the GPUs of one process: one NCCL communicator per GPU (ncclCommInitAll), each
// rank's collective queued on kiln's current stream of its GPU inside one NCCL group (one
// thread drives every GPU), then waited for with a deadline (mesh/collective_wait.hpp).
#pragma once
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "mesh/communicator.hpp"

namespace kiln::mesh {

class NcclCommunicator final : public Communicator {
 public:
  // DeviceError for an empty or repeated list, NCCL that cannot be loaded, or a missing GPU.
  NcclCommunicator(std::vector<int> devices, std::chrono::milliseconds timeout);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int size() const override { return static_cast<int>(devices_.size()); }
  Device device(int rank) const override { return {Device::Kind::Cuda, devices_.at(rank)}; }
  std::string describe() const override;

 protected:
  void reduce_buffers(const std::vector<const void*>& send, const std::vector<void*>& recv,
                      size_t count, nccl::ncclDataType_t type, Reduction op) override;
  void gather_buffers(const std::vector<const void*>& send, const std::vector<void*>& recv,
                      size_t bytes) override;
  void exchange_buffers(const std::vector<const void*>& send, const std::vector<void*>& recv,
                        size_t bytes) override;

 private:
  class Collective;
  // Queues enqueue(rank, comm, stream) for every rank in one NCCL group, then waits.
  template <class Enqueue>
  void run(const char* what, Enqueue enqueue);
  void abort_all() noexcept;

  std::vector<int> devices_;
  std::vector<nccl::ncclComm_t> comms_;
  std::chrono::milliseconds timeout_;
  std::optional<std::string> aborted_;  // why the communicators were aborted
};

}  // namespace kiln::mesh
