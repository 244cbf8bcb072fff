// What combines the ranks' results: the interface that NCCL (a mesh of GPUs) and the host (a
// mesh of host ranks, for CI) implement. The collectives over Arrays are written once here:
// they check the parts and build each rank's result as a lazy graph node (graph/collective.hpp),
// which the planner places as a step after the kernels that compute the parts; when the plan
// runs, the communicator (the step's graph::CollectiveRunner) moves and combines the memory
// the plan allocated.
// A communicator of several processes holds some ranks only (holds()): vectors of parts and
// buffers still have one entry per rank, those of the ranks other processes hold being empty
// Arrays and null pointers.
#pragma once
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graph/collective.hpp"
#include "kiln/array.hpp"
#include "mesh/nccl.hpp"

namespace kiln::mesh {

using Reduction = graph::CollectiveReduction;

class Communicator : public graph::CollectiveRunner,
                     public std::enable_shared_from_this<Communicator> {
 public:
  virtual int size() const = 0;
  virtual Device device(int rank) const = 0;
  // "host x 3", "cuda:0, cuda:1; NCCL 2.28.3".
  virtual std::string describe() const = 0;
  // Whether this process holds rank r (its piece, its part of each collective).
  virtual bool holds(int) const { return true; }

  // The parts (one per rank held, on device(rank), of one shape and dtype) combined
  // elementwise, as
  // ncclAllReduce does: rank r's result on device(r). Float max and min follow NCCL, whose
  // fmax lets a number win over NaN; complex values only sum (DTypeError for the others:
  // NCCL combines their parts, not the numbers);
  // int16, uint16 and 16-bit floats are not carried (mesh/wire_type.hpp).
  std::vector<Array> all_reduce(const std::vector<Array>& parts, Reduction op);
  // Rank r's result: the parts stacked along a new leading axis in rank order (ncclAllGather).
  std::vector<Array> all_gather(const std::vector<Array>& parts);
  // Each part holds one block per rank along its leading axis (size() of them); rank r's
  // result holds, at block s, block r of rank s's part (an all-to-all: grouped ncclSend and
  // ncclRecv).
  std::vector<Array> all_to_all(const std::vector<Array>& parts);

  // The plan's step: the buffers of the ranks held, one collective at a time.
  void run_collective(const graph::CollectiveCall& call) override;

 protected:
  // recv[r] = op over ranks of send[r], `count` values of `type` each; all on device(r).
  virtual void reduce_buffers(const std::vector<const void*>& send, const std::vector<void*>& recv,
                              size_t count, nccl::ncclDataType_t type, Reduction op) = 0;
  // recv[r] = the ranks' send buffers, `bytes` each, one after another in rank order.
  virtual void gather_buffers(const std::vector<const void*>& send, const std::vector<void*>& recv,
                              size_t bytes) = 0;
  // Block s (`bytes` at s * bytes) of recv[r] = block r of send[s].
  virtual void exchange_buffers(const std::vector<const void*>& send,
                                const std::vector<void*>& recv, size_t bytes) = 0;

 private:
  void check_parts(const std::vector<Array>& parts, const char* what) const;
  // Each held rank's result of the collective of `parts`, of `shape`: lazy nodes.
  std::vector<Array> collective(graph::CollectiveKind kind, Reduction op,
                                const std::vector<Array>& parts, const Shape& shape);
  std::mutex mu_;  // one collective at a time: NCCL communicators are not thread-safe
};

}  // namespace kiln::mesh
