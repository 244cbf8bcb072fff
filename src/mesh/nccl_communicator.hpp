// A mesh of GPUs through NCCL: every GPU of one process (ncclCommInitAll), or one GPU per
// process (ncclCommInitRank: this process holds one rank of the mesh). Each rank held has its
// collective queued on kiln's current stream of its GPU inside one NCCL group (one thread drives
// every GPU of the process), then waited for with a deadline (mesh/collective_wait.hpp).
#pragma once
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "mesh/communicator.hpp"

namespace kiln::mesh {

class NcclCommunicator final : public Communicator {
 public:
  // Every GPU of `devices` a rank of this process. DeviceError for an empty or repeated list,
  // NCCL that cannot be loaded, or a missing GPU.
  NcclCommunicator(std::vector<int> devices, std::chrono::milliseconds timeout);
  // Rank `rank` of `size`, on GPU `device`, joining the communicator NCCL's `id` names (every
  // rank must be given the same id): a non-blocking communicator, joined once every rank has,
  // or a DeviceError (the communicator aborted) when one has not within `timeout`.
  NcclCommunicator(int device, int rank, int size, const nccl::ncclUniqueId& id,
                   std::chrono::milliseconds timeout);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int size() const override { return size_; }
  // A rank another process holds is on a GPU this process does not know: cuda(-1).
  Device device(int rank) const override {
    return {Device::Kind::Cuda, holds(rank) ? devices_[rank - first_] : -1};
  }
  bool holds(int rank) const override {
    return rank >= first_ && rank < first_ + static_cast<int>(devices_.size());
  }
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
  class Joining;
  // Queues enqueue(rank, comm, stream) for every rank in one NCCL group, then waits.
  template <class Enqueue>
  void run(const char* what, Enqueue enqueue);
  void abort_all() noexcept;

  std::vector<int> devices_;  // the GPUs of the ranks held, from rank first_ on
  int first_ = 0, size_ = 0;
  std::vector<nccl::ncclComm_t> comms_;  // one per rank held
  std::chrono::milliseconds timeout_;
  std::optional<std::string> aborted_;  // why the communicators were aborted
};

}  // namespace kiln::mesh
