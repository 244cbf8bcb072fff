#include "runtime/backends.hpp"

#include <string>
#include <vector>

#include "cuda/executor.hpp"
#include "cuda/runtime.hpp"
#include "cuda/streams.hpp"
#include "kiln/errors.hpp"
#include "runtime/host_backend.hpp"

namespace kiln::runtime {
namespace {

std::vector<gpu::Executor> make_gpu_backends() {
  std::vector<gpu::Executor> out;
  for (int i = 0; i < cuda_device_count(); ++i) out.emplace_back(i);
  return out;
}

// The error for a device index with no GPU behind it: kept out of backend_for, which every
// evaluation calls several times, so that its fast path needs no frame for a throw.
[[noreturn, gnu::noinline]] void no_gpu_backend(const Device& d) {
  gpu::device(d.index);  // throws the DeviceError that names the devices there are
  throw DeviceError("no CUDA device " + d.str());
}

// Kept to exit (never destroyed), so that kiln::synchronize from a static destructor still
// finds them. Each in a function of its own, so that backend_for's fast path saves no registers
// for a first call's construction.
[[gnu::noinline]] HostBackend& host_backend() {
  static auto* host = new HostBackend;
  return *host;
}
[[gnu::noinline]] std::vector<gpu::Executor>& gpu_backends() {
  static auto* gpus = new std::vector<gpu::Executor>(make_gpu_backends());
  return *gpus;
}

}  // namespace

plan::Backend& backend_for(const Device& d) {
  if (d.is_host()) return host_backend();
  auto& gpus = gpu_backends();
  if (d.index < 0 || d.index >= static_cast<int>(gpus.size())) no_gpu_backend(d);
  return gpus[d.index];
}

std::shared_ptr<graph::Buffer> allocate(const Device& d, size_t nbytes) {
  return backend_for(d).allocate(nbytes);
}

void wait_for_writer(const graph::Buffer& b) { gpu::synchronize_buffer(b); }

}  // namespace kiln::runtime

namespace kiln {

void synchronize(Device d) { runtime::backend_for(d).synchronize(); }

}  // namespace kiln
