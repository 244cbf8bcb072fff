// Streams and events: running kiln's work on a CUDA stream of the program's choosing, and
// ordering it with the program's own work without synchronising the device.
//
// Each thread has a current stream per GPU: kiln's own, unless a StreamScope names another.
// Evaluations (eval(), data(), item(), ...) queue their work on the current stream of the
// thread that evaluates; copies, cuFFT, the random step and every library step follow it.
//
// A Stream wraps either a stream kiln created (Stream::create) or the program's own
// cudaStream_t (Stream::wrap, not owned). Inside a StreamScope of a wrapped stream, each
// evaluation starts after the work the program queued on its stream before, and work the
// program queues on it afterwards starts after the evaluation: as if kiln's kernels were on that
// stream. (kiln queues them on a stream of its own paired with it, ordered both ways by events,
// so kiln never frees memory on a stream the program may destroy.) The wrapped stream must be
// valid while evaluations run in the scope; arrays made there stay valid after it is destroyed.
//
// Memory stays safe across streams: an array evaluated on one stream and read by an evaluation
// on another is waited for first, and its memory is reused only after every stream that read it
// has finished with it, whichever thread frees it. Several threads may evaluate at once, each on
// its own stream: their kernels overlap on the GPU.
//
// What waits: Array::data(), item(), to_vector(), get(), printing and to_dlpack wait for the
// array's own stream; kiln::synchronize(d) waits for the calling thread's current stream of d
// (outside any scope that is kiln's own, which follows every evaluation that has finished
// queueing on other streams, so it waits for all of kiln's work); Stream::synchronize and
// Event::synchronize wait for what they name. eval() and everything lazy return without waiting
// for the GPU: a host thread goes on building graphs while the kernels run. (eval() does wait
// for what it cannot queue: a copy from pageable host memory, staged; a copy to the host; a
// selection's count, which sizes its result; and CUDA may wait for queued device work when it
// loads a kernel's module for the first time.)
#pragma once
#include <memory>

#include "kiln/device.hpp"

namespace kiln {

class Stream {
 public:
  // A new stream of kiln's on GPU d (DeviceError for the host or a missing GPU).
  static Stream create(Device d);
  // The program's CUDA stream (a cudaStream_t) on GPU d; kiln does not own or destroy it.
  static Stream wrap(void* cuda_stream, Device d);

  Device device() const { return device_; }
  // The program's stream for a wrapped Stream, else the one kiln created (a cudaStream_t). Events
  // record and wait here: kiln's evaluations in a wrapped stream's scope are joined into it.
  void* native() const { return external_ ? external_ : kiln_; }
  // Waits for kiln's work queued on this stream (and, for a wrapped one, the program's).
  void synchronize() const;
  bool operator==(const Stream& o) const {
    return device_ == o.device_ && kiln_ == o.kiln_ && external_ == o.external_;
  }

 private:
  friend class StreamScope;
  friend class Event;
  friend Stream stream(Device d);
  Stream(Device d, void* kiln_stream, void* external)
      : device_(d), kiln_(kiln_stream), external_(external) {}
  Device device_;
  void* kiln_ = nullptr;      // the kiln stream the work goes to
  void* external_ = nullptr;  // the program's stream, for a wrapped Stream
};

// The calling thread's current stream on GPU d.
Stream stream(Device d);

// Makes `s` the calling thread's current stream on its device until the scope ends (scopes nest;
// the previous one comes back). Not movable: a scope belongs to one thread's block.
class StreamScope {
 public:
  explicit StreamScope(const Stream& s);
  ~StreamScope();
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;

 private:
  std::shared_ptr<void> current_;
};

// A point in a stream's work: record it on one stream, make another wait for it (on the GPU,
// the host goes on), or wait for it on the host.
class Event {
 public:
  // Marks the work queued on s so far.
  static Event record(const Stream& s);
  // Work queued on s from now on starts after the marked work has finished.
  void wait(const Stream& s) const;
  void synchronize() const;
  // True when the marked work has finished.
  bool ready() const;
  void* native() const { return event_.get(); }  // the cudaEvent_t

 private:
  explicit Event(std::shared_ptr<void> e) : event_(std::move(e)) {}
  std::shared_ptr<void> event_;
};

}  // namespace kiln
