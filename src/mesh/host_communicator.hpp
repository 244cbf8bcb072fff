// A mesh of host "ranks": the collectives of a mesh of GPUs, done in host memory with NCCL's
// semantics, so the same programs run and are tested on machines without a GPU or NCCL.
#pragma once
#include "mesh/communicator.hpp"

namespace kiln::mesh {

// The host's NCCL arithmetic: out = `op` over the ranks' send buffers (`count` values of
// `type` each), combined in rank order, so every rank that computes it gets the same bits.
void combine_on_host(const std::vector<const void*>& send, void* out, size_t count,
                     nccl::ncclDataType_t type, Reduction op);

class HostCommunicator final : public Communicator {
 public:
  explicit HostCommunicator(int ranks);
  int size() const override { return ranks_; }
  Device device(int) const override { return host(); }
  std::string describe() const override;

 protected:
  void reduce_buffers(const std::vector<const void*>& send, const std::vector<void*>& recv,
                      size_t count, nccl::ncclDataType_t type, Reduction op) override;
  void gather_buffers(const std::vector<const void*>& send, const std::vector<void*>& recv,
                      size_t bytes) override;
  void exchange_buffers(const std::vector<const void*>& send, const std::vector<void*>& recv,
                        size_t bytes) override;

 private:
  int ranks_;
};

}  // namespace kiln::mesh
