// Which stream kiln's work on a device goes to, and how work on different streams is ordered.
//
// Each thread has a current stream per device: kiln's own (DeviceInfo::stream) unless a
// kiln::StreamScope names another. kiln only ever enqueues on streams it created and never
// destroys (so a buffer's free may always be queued on the stream that allocated it). A
// caller's stream is served by a kiln stream paired with it: each evaluation's work waits for
// what the caller queued before (begin_run) and the caller's later work waits for kiln's
// (end_run), by events, never a device-wide synchronisation.
//
// Buffers remember the stream that allocated (and wrote) them (Buffer::stream). A plan reading a
// buffer from another stream waits for that stream first, and at its end that stream waits for
// the plan, so the buffer's free, queued on its own stream, comes after every read, and its
// memory is reused (by the pool or kiln's small-block lists, kept per stream) only then.
#pragma once
#include <cuda_runtime_api.h>

#include <vector>

#include "graph/buffer.hpp"

namespace kiln::gpu {

// The calling thread's current stream on `device`, and the caller's stream it is paired with
// (null when it is kiln's own or one kiln created).
cudaStream_t current_stream(int device);
cudaStream_t current_external(int device);

// A kiln stream on `device`: a new one, or the one paired with the caller's `external` stream.
// Created once and kept to process exit.
cudaStream_t new_stream(int device);
cudaStream_t paired_stream(int device, cudaStream_t external);

// Makes `kiln_stream` (and, for a caller's stream, the pairing with `external`) current on the
// calling thread for `device` until destroyed, restoring what was current before.
class CurrentStream {
 public:
  CurrentStream(int device, cudaStream_t kiln_stream, cudaStream_t external);
  ~CurrentStream();
  CurrentStream(const CurrentStream&) = delete;
  CurrentStream& operator=(const CurrentStream&) = delete;

 private:
  int device_;
  cudaStream_t previous_stream_, previous_external_;
};

// `waiter` waits (on the device) for everything queued on `producer` so far.
void stream_wait(cudaStream_t waiter, cudaStream_t producer);

// Orders one evaluation on `device` with the streams around it (see above): begin_run before
// its first step, read_from for each buffer it reads that it did not allocate, end_run after
// its last step. One run at a time per thread (the evaluation lock serialises runs).
class RunOrdering {
 public:
  void begin_run(int device);
  void read_from(int device, const graph::Buffer& b);
  void end_run();

 private:
  cudaStream_t stream_ = nullptr;     // the run's: the thread's current one at begin_run
  std::vector<cudaStream_t> waited_;  // streams this run waited for
  std::vector<cudaStream_t> joins_;   // streams that must wait for this run's end
};

// Waits for the stream that wrote `b` (device memory with a stream); nothing otherwise.
void synchronize_buffer(const graph::Buffer& b);

}  // namespace kiln::gpu
