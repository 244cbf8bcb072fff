// Host <-> device copies on the calling thread's current stream (cuda/streams.hpp). Pinned host
// memory is copied by one DMA; pageable memory (which the GPU cannot read directly) goes through
// two pinned staging buffers per device, so that the CPU copy into (or out of) one overlaps the DMA
// of the other.
#include <algorithm>
#include <cstring>
#include <mutex>

#include "common/parallel.hpp"
#include "cuda/per_device.hpp"
#include "cuda/runtime.hpp"
#include "cuda/streams.hpp"

namespace kiln::gpu {
namespace {

// Large enough that the per-piece overhead (an event wait, waking the pool, a DMA launch) is
// small next to a piece's copy time, small enough that the first DMA starts early. On an H200
// (PCIe 5, 16 cores) 2 x 16 MiB gave 35-45 GB/s for 32-128 MB pageable copies, 2 x 8 MiB 25-33.
constexpr size_t kStagingBytes = size_t{16} << 20;

struct Staging {
  std::mutex mu;  // the two buffers serve one copy at a time
  std::shared_ptr<graph::Buffer> buffer[2];
  // Recorded after the last DMA that used buffer k: the CPU may touch it once this completes.
  cudaEvent_t idle[2] = {nullptr, nullptr};
};

PerDevice<Staging>& stagings() {
  static auto* all = new PerDevice<Staging>;  // never destroyed, like the device contexts
  return *all;
}

Staging& staging(int index) {
  return stagings().get(index, [index](Staging& s) {
    ScopedDevice on(index);  // events belong to the device that is current at creation
    for (int k = 0; k < 2; ++k) {
      s.buffer[k] = allocate_pinned(kStagingBytes);
      KILN_CUDA_CHECK(cudaEventCreateWithFlags(&s.idle[k], cudaEventDisableTiming));
    }
  });
}

// One core copies about 10 GB/s, well below the DMA rate, so big pieces are split across the
// host thread pool.
void host_copy(void* dst, const void* src, size_t n) {
  constexpr size_t kPart = size_t{512} << 10;
  int64_t parts = std::min<int64_t>(cpu::thread_count(), static_cast<int64_t>(n / kPart));
  if (parts <= 1) {
    std::memcpy(dst, src, n);
    return;
  }
  // Ceiling division, then whole cache lines: the parts must cover all n bytes.
  size_t per_part = (n + static_cast<size_t>(parts) - 1) / static_cast<size_t>(parts);
  size_t step = (per_part + 63) / 64 * 64;
  cpu::parallel_for(parts, [&](int64_t i) {
    size_t off = static_cast<size_t>(i) * step;
    if (off < n)
      std::memcpy(static_cast<char*>(dst) + off, static_cast<const char*>(src) + off,
                  std::min(step, n - off));
  });
}

// Returns once `src` has been read completely; the last DMAs may still be queued.
void stage_to_device(const DeviceInfo& d, Staging& s, char* dst, const char* src, size_t n) {
  cudaStream_t stream = current_stream(d.index);
  std::lock_guard lock(s.mu);
  int k = 0;
  for (size_t off = 0; off < n; off += kStagingBytes, k ^= 1) {
    size_t len = std::min(kStagingBytes, n - off);
    void* stage = s.buffer[k]->data();
    KILN_CUDA_CHECK(cudaEventSynchronize(s.idle[k]));
    host_copy(stage, src + off, len);
    KILN_CUDA_CHECK(cudaMemcpyAsync(dst + off, stage, len, cudaMemcpyHostToDevice, stream));
    KILN_CUDA_CHECK(cudaEventRecord(s.idle[k], stream));
  }
}

// Two DMAs are kept queued ahead of the CPU copy out; returns when `dst` holds everything.
void stage_to_host(const DeviceInfo& d, Staging& s, char* dst, const char* src, size_t n) {
  cudaStream_t stream = current_stream(d.index);
  std::lock_guard lock(s.mu);
  size_t pieces = (n + kStagingBytes - 1) / kStagingBytes;
  auto issue = [&](size_t i) {
    if (i >= pieces) return;
    size_t off = i * kStagingBytes, k = i % 2;
    size_t len = std::min(kStagingBytes, n - off);
    // Stream order puts this DMA after any queued one that still reads buffer k.
    KILN_CUDA_CHECK(
        cudaMemcpyAsync(s.buffer[k]->data(), src + off, len, cudaMemcpyDeviceToHost, stream));
    KILN_CUDA_CHECK(cudaEventRecord(s.idle[k], stream));
  };
  issue(0);
  issue(1);
  for (size_t i = 0; i < pieces; ++i) {
    size_t off = i * kStagingBytes, k = i % 2;
    KILN_CUDA_CHECK(cudaEventSynchronize(s.idle[k]));
    host_copy(dst + off, s.buffer[k]->data(), std::min(kStagingBytes, n - off));
    issue(i + 2);
  }
}

}  // namespace

void copy_to_device(int index, void* dst, const void* src, size_t nbytes, bool src_pinned) {
  const DeviceInfo& d = device(index);
  if (nbytes == 0) return;
  ScopedDevice on(index);
  if (src_pinned) {
    KILN_CUDA_CHECK(
        cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyHostToDevice, current_stream(index)));
    return;
  }
  stage_to_device(d, staging(index), static_cast<char*>(dst), static_cast<const char*>(src),
                  nbytes);
}

void copy_to_host(int index, void* dst, const void* src, size_t nbytes, bool dst_pinned) {
  const DeviceInfo& d = device(index);
  if (nbytes == 0) return;
  ScopedDevice on(index);
  if (dst_pinned) {
    cudaStream_t stream = current_stream(index);
    KILN_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToHost, stream));
    KILN_CUDA_CHECK(cudaStreamSynchronize(stream));
    return;
  }
  stage_to_host(d, staging(index), static_cast<char*>(dst), static_cast<const char*>(src), nbytes);
}

}  // namespace kiln::gpu
