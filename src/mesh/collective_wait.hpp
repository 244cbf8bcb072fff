// Waiting for a collective without hanging: a rank whose process died or whose GPU stopped
// leaves the others' NCCL kernels spinning forever, so cudaStreamSynchronize would never
// return. Instead the wait polls each rank's stream and NCCL's asynchronous error, and on an
// error or after a deadline aborts the communicators (ncclCommAbort, which stops the kernels)
// and throws. Written against this small interface so that its logic is tested without GPUs.
#pragma once
#include <chrono>
#include <optional>
#include <string>

namespace kiln::mesh {

// A collective in flight on every rank of a communicator.
class InFlight {
 public:
  virtual ~InFlight() = default;
  virtual int ranks() const = 0;
  // The mesh's name for the i-th rank waited for (a process holding ranks from k on: k + i).
  virtual int rank_name(int i) const { return i; }
  // Whether rank r's part has finished. May throw (a CUDA error on its stream).
  virtual bool finished(int rank) = 0;
  // Why rank r's communicator failed (NCCL's asynchronous error), or none while it is healthy.
  virtual std::optional<std::string> failure(int rank) = 0;
  // Aborts every rank's communicator: nothing waits for the collective any more.
  virtual void abort() = 0;
};

// Returns when every rank has finished. When a rank reports a failure first, or `timeout`
// passes, calls abort() and throws kiln::DeviceError naming `what`, the rank and the reason.
void wait_or_abort(InFlight& op, std::chrono::milliseconds timeout, const std::string& what);

}  // namespace kiln::mesh
