// Current streams per thread, kiln's streams, and the events that order work across them
// (cuda/streams.hpp).
#include "cuda/streams.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "cuda/per_device.hpp"
#include "cuda/runtime.hpp"
#include "kiln/errors.hpp"

namespace kiln::gpu {
namespace {

constexpr int kMaxDevices = 64;

// The calling thread's choices, per device: null is kiln's own stream, no caller's stream.
// And kiln's own stream of each device, once looked up: asked several times by every
// evaluation, where looking it up in the device's context took a validation each time.
struct ThreadStreams {
  cudaStream_t stream[kMaxDevices] = {};
  cudaStream_t external[kMaxDevices] = {};
  cudaStream_t own[kMaxDevices] = {};
};
thread_local ThreadStreams chosen;

// kiln's own stream of `device` (DeviceError for an index with no device).
cudaStream_t own_stream(int device) {
  if (device < 0 || device >= kMaxDevices) return gpu::device(device).stream;
  cudaStream_t& own = chosen.own[device];
  if (!own) own = gpu::device(device).stream;
  return own;
}

cudaStream_t create_stream(int device) {
  ScopedDevice on(device);
  cudaStream_t s = nullptr;
  // Non-blocking, as kiln's own: no implicit order with the legacy default stream.
  KILN_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return s;
}

}  // namespace

cudaStream_t current_stream(int device) {
  if (device >= 0 && device < kMaxDevices && chosen.stream[device]) return chosen.stream[device];
  return own_stream(device);
}

cudaStream_t current_external(int device) {
  return device >= 0 && device < kMaxDevices ? chosen.external[device] : nullptr;
}

cudaStream_t new_stream(int device) {
  gpu::device(device);  // validates the index
  return create_stream(device);
}

// One kiln stream per caller's stream, kept: a caller that creates streams in a loop reuses
// handles, and the pairing holds no resource of theirs.
cudaStream_t paired_stream(int device, cudaStream_t external) {
  static std::mutex mu;
  static auto* pairs = new std::map<std::pair<int, cudaStream_t>, cudaStream_t>;  // kept to exit
  gpu::device(device);
  std::lock_guard lock(mu);
  auto [it, fresh] = pairs->try_emplace({device, external}, nullptr);
  if (fresh) {
    try {
      it->second = create_stream(device);
    } catch (...) {
      pairs->erase(it);
      throw;
    }
  }
  return it->second;
}

CurrentStream::CurrentStream(int device, cudaStream_t kiln_stream, cudaStream_t external)
    : device_(device) {
  if (device < 0 || device >= kMaxDevices)
    throw DeviceError("kiln streams: cuda:" + std::to_string(device) +
                      " is beyond the 64 devices kiln tracks per thread");
  previous_stream_ = chosen.stream[device];
  previous_external_ = chosen.external[device];
  chosen.stream[device] = kiln_stream;
  chosen.external[device] = external;
}

CurrentStream::~CurrentStream() {
  chosen.stream[device_] = previous_stream_;
  chosen.external[device_] = previous_external_;
}

void stream_wait(cudaStream_t waiter, cudaStream_t producer) {
  if (waiter == producer) return;
  cudaEvent_t e = nullptr;
  KILN_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  cudaError_t err = cudaEventRecord(e, producer);
  if (err == cudaSuccess) err = cudaStreamWaitEvent(waiter, e, 0);
  cudaEventDestroy(e);  // released once the recorded work completes
  check(err, "cudaEventRecord/cudaStreamWaitEvent");
}

void RunOrdering::begin_run(int device) {
  joins_.clear();
  waited_.clear();
  const cudaStream_t s = stream_ = current_stream(device);
  cudaStream_t external = device < kMaxDevices ? chosen.external[device] : nullptr;
  if (external) {  // what the caller queued before this evaluation comes first
    stream_wait(s, external);
    waited_.push_back(external);
    joins_.push_back(external);
  }
  // kiln's own stream follows every run on another, so what is ordered on it (pinned blocks'
  // reuse, kiln::synchronize outside a scope) also covers this run.
  if (cudaStream_t own = own_stream(device); s != own) joins_.push_back(own);
}

void RunOrdering::read_from(int device, const graph::Buffer& b) {
  auto theirs = static_cast<cudaStream_t>(b.stream);
  const cudaStream_t s = stream_;
  if (!theirs || theirs == s || !b.device.is_cuda() || b.device.index != device) return;
  if (std::find(waited_.begin(), waited_.end(), theirs) != waited_.end()) return;
  stream_wait(s, theirs);
  waited_.push_back(theirs);
  // And its stream follows this run, so the buffer's free (queued there) comes after our reads.
  if (std::find(joins_.begin(), joins_.end(), theirs) == joins_.end()) joins_.push_back(theirs);
}

void RunOrdering::end_run() {
  for (cudaStream_t j : joins_) stream_wait(j, stream_);
  joins_.clear();
}

void synchronize_buffer(const graph::Buffer& b) {
  if (b.device.is_cuda() && b.stream)
    KILN_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(b.stream)));
}

}  // namespace kiln::gpu
