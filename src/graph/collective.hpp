// Collectives: the steps that combine the pieces of an array split over the ranks of a mesh
// (kiln::Mesh, src/mesh). Each rank's result is a graph node (OpKind::Collective) whose inputs
// are the parts of every rank this process holds, so a collective is lazy like any library
// step: the planner places it after the kernels that compute the parts, explain() shows it with
// the bytes it sends, and the kernels that read its result follow it in the same plan. The graph
// and the engine know only this interface; the mesh layer implements it (NCCL, or the host), so
// nothing below src/mesh links NCCL.
#pragma once
#include <cstdint>
#include <span>

#include "kiln/dtype.hpp"

namespace kiln::graph {

// AllReduce: every rank's result is its part's shape, the parts combined elementwise.
// AllGather: every rank's result is the parts stacked along a new leading axis, in rank order.
// AllToAll: each part holds one block per rank along its leading axis; rank r's result holds,
//           at block s, block r of rank s's part.
enum class CollectiveKind : uint8_t { AllReduce, AllGather, AllToAll };
// How an all-reduce combines (NCCL's ops; float max and min as NCCL's fmax and fmin).
enum class CollectiveReduction : uint8_t { Sum, Prod, Max, Min };

const char* collective_name(CollectiveKind k);       // "all-reduce", ...
const char* collective_name(CollectiveReduction r);  // "sum", ...

// One run of a collective over the ranks this process holds: in[i] and out[i] are rank
// ranks[i]'s part and result, in the memory of its device; each part is `part_elements` values
// of `dtype`.
struct CollectiveCall {
  CollectiveKind kind;
  CollectiveReduction reduction;
  DType dtype;
  int64_t part_elements;
  std::span<const int> ranks;
  std::span<const void* const> in;
  std::span<void* const> out;
};

class CollectiveRunner {
 public:
  virtual ~CollectiveRunner() = default;
  // Runs the collective, ordered after the work queued so far on each rank's device (kiln's
  // stream there), and returns once it has finished or failed (DeviceError).
  virtual void run_collective(const CollectiveCall& call) = 0;
};

// The bytes one rank sends for a collective of parts of `part_bytes` over `ranks` ranks, as
// NCCL's ring algorithms send them: an all-reduce 2 (N - 1) / N of a part, an all-gather its
// part to N - 1 ranks, an all-to-all the N - 1 blocks it does not keep.
int64_t collective_bytes_sent(CollectiveKind k, int64_t part_bytes, int ranks);

}  // namespace kiln::graph
