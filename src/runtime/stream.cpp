// kiln::Stream, StreamScope and Event (kiln/stream.hpp) over the CUDA layer's current streams
// and run ordering (cuda/streams.hpp).
#include <cuda_runtime_api.h>

#include <string>

#include "cuda/per_device.hpp"
#include "cuda/runtime.hpp"
#include "cuda/streams.hpp"
#include "kiln/errors.hpp"
#include "kiln/stream.hpp"

namespace kiln {
namespace {

int gpu_index(Device d, const char* what) {
  if (!d.is_cuda())
    throw DeviceError(std::string(what) + ": streams belong to GPUs, and " + d.str() +
                      " is the host; pass kiln::cuda(i)");
  gpu::device(d.index);  // DeviceError when there is no such GPU
  return d.index;
}

cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }

}  // namespace

Stream Stream::create(Device d) {
  int i = gpu_index(d, "kiln::Stream::create");
  return Stream(d, gpu::new_stream(i), nullptr);
}

Stream Stream::wrap(void* cuda_stream, Device d) {
  int i = gpu_index(d, "kiln::Stream::wrap");
  if (!cuda_stream)
    throw Error(
        "kiln::Stream::wrap: the stream is null (the legacy default stream); kiln "
        "orders work by events on real streams: create one with cudaStreamCreate");
  return Stream(d, gpu::paired_stream(i, as_stream(cuda_stream)), cuda_stream);
}

void Stream::synchronize() const {
  gpu::check(cudaStreamSynchronize(as_stream(kiln_)), "cudaStreamSynchronize");
  if (external_) gpu::check(cudaStreamSynchronize(as_stream(external_)), "cudaStreamSynchronize");
}

Stream stream(Device d) {
  int i = gpu_index(d, "kiln::stream");
  Stream s(d, gpu::current_stream(i), gpu::current_external(i));
  return s;
}

StreamScope::StreamScope(const Stream& s) {
  current_ = std::make_shared<gpu::CurrentStream>(s.device_.index, as_stream(s.kiln_),
                                                  as_stream(s.external_));
}

StreamScope::~StreamScope() = default;

Event Event::record(const Stream& s) {
  gpu::ScopedDevice on(gpu_index(s.device(), "kiln::Event::record"));
  cudaEvent_t e = nullptr;
  gpu::check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  std::shared_ptr<void> held(e, [](void* p) { cudaEventDestroy(static_cast<cudaEvent_t>(p)); });
  gpu::check(cudaEventRecord(e, as_stream(s.native())), "cudaEventRecord");
  return Event(std::move(held));
}

void Event::wait(const Stream& s) const {
  // For a wrapped stream the program's: each evaluation in its scope starts after it.
  gpu::check(cudaStreamWaitEvent(as_stream(s.native()), static_cast<cudaEvent_t>(native()), 0),
             "cudaStreamWaitEvent");
}

void Event::synchronize() const {
  gpu::check(cudaEventSynchronize(static_cast<cudaEvent_t>(native())), "cudaEventSynchronize");
}

bool Event::ready() const {
  cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(native()));
  if (err == cudaErrorNotReady) {
    cudaGetLastError();  // not an error: clear it so no later call reports it
    return false;
  }
  gpu::check(err, "cudaEventQuery");
  return true;
}

}  // namespace kiln
