// Device contexts: one lazily initialised record (properties, kiln's stream) per CUDA device.
#include <string>

#include "cuda/per_device.hpp"
#include "cuda/runtime.hpp"
#include "cuda/streams.hpp"
#include "cuda/warm_up.hpp"
#include "kiln/errors.hpp"

namespace kiln::gpu {
namespace {

// Never destroyed: buffers freed during static destruction still look devices up, and the CUDA
// runtime may already be gone by then, so streams are left for process exit to reclaim.
PerDevice<DeviceInfo>& contexts() {
  static auto* all = new PerDevice<DeviceInfo>;
  return *all;
}

// The strings are built only when there is something to report.
void validate(int index) {
  int n = cuda_device_count();
  if (n > 0 && index >= 0 && index < n) return;
  std::string name = "cuda:" + std::to_string(index);
  if (n == 0)
    throw DeviceError(name + " was requested but no CUDA device is available (0 devices: no " +
                      "GPU or no driver); use kiln::host(), or check kiln::cuda_available()");
  if (index < 0 || index >= n)
    throw DeviceError(name + " does not exist: this machine has " + std::to_string(n) +
                      " CUDA device(s), cuda:0..cuda:" + std::to_string(n - 1));
}

void init(DeviceInfo& d, int index) {
  ScopedDevice on(index);  // creates the primary context; the stream belongs to it
  cudaDeviceProp p{};
  KILN_CUDA_CHECK(cudaGetDeviceProperties(&p, index));
  d.index = index;
  d.sm_count = p.multiProcessorCount;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.arch = "sm_" + std::to_string(p.major * 10 + p.minor);
  d.total_memory = p.totalGlobalMem;
  d.shared_optin = static_cast<int64_t>(p.sharedMemPerBlockOptin);
  // Non-blocking: kiln's work must not serialise with the legacy default stream that other
  // libraries in the process may use.
  KILN_CUDA_CHECK(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking));
  // A GPU in use will look kernels up, compile some and copy results back: start what the first
  // of each waits for now (the keys' digest, NVRTC, the first pinned block), beside the
  // program's set-up.
  warm_up_in_background();
  warm_pinned_in_background();
}

}  // namespace

// Asked several times by every evaluation on a GPU: a device already set up was validated then.
const DeviceInfo& device(int index) {
  if (const DeviceInfo* d = contexts().find(index)) return *d;
  validate(index);
  return contexts().get(index, [index](DeviceInfo& d) { init(d, index); });
}

const DeviceInfo* initialized_device(int index) noexcept { return contexts().find(index); }

namespace {

// Whether device `index` is necessarily the calling thread's current one: on a machine with one
// device, the only device a thread can have (cudaSetDevice to any other fails). Then kiln asks
// the runtime nothing, where it would read the current device (a runtime call before every
// launch) only to find it is this one.
bool only_device(int index) { return index == 0 && cuda_device_count() == 1; }

}  // namespace

// Asked before every launch: reading the thread's current device is cheaper than setting it.
// The only device is valid and current: nothing to check or ask.
void set_device(int index) {
  if (only_device(index)) return;
  device(index);  // validates the index
  int current = -1;
  KILN_CUDA_CHECK(cudaGetDevice(&current));
  if (current != index) KILN_CUDA_CHECK(cudaSetDevice(index));
}

void synchronize(int index) { KILN_CUDA_CHECK(cudaStreamSynchronize(current_stream(index))); }

ScopedDevice::ScopedDevice(int index) : index_(index) {
  if (only_device(index)) {
    previous_ = index;  // nothing to switch, nothing to restore
    return;
  }
  KILN_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != index_) KILN_CUDA_CHECK(cudaSetDevice(index_));
}

ScopedDevice::~ScopedDevice() {
  if (previous_ >= 0 && previous_ != index_) cudaSetDevice(previous_);
}

}  // namespace kiln::gpu
