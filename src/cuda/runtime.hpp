// The CUDA runtime layer: device contexts and streams, the caching device allocator, pinned
// host memory, and copies. Runtime API only (cudart), never libcuda.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>

#include "graph/buffer.hpp"

namespace kiln::gpu {

// Throws kiln::CudaError naming the call, the code and CUDA's message (OutOfMemory for
// cudaErrorMemoryAllocation).
void check(cudaError_t err, const char* call);
#define KILN_CUDA_CHECK(expr) ::kiln::gpu::check((expr), #expr)

struct DeviceInfo {
  int index = 0;
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  std::string arch;  // what NVRTC compiles for: "sm_90"
  size_t total_memory = 0;
  int64_t shared_optin = 48 * 1024;  // shared memory a block may opt in to
  cudaStream_t stream = nullptr;     // kiln's one stream on this device (non-blocking)
};
// Initialises the device on first use (cudaSetDevice, stream creation). DeviceError when the
// index does not name a device.
const DeviceInfo& device(int index);
// Makes `index` current on the calling thread.
void set_device(int index);
// The device's state if device(index) has completed, else null. Never initialises or throws
// (for deleters, which must not start a device that kiln never used).
const DeviceInfo* initialized_device(int index) noexcept;

// Device memory from the caching allocator, on the calling thread's current stream
// (cuda/streams.hpp). Freed memory returns to the cache, stream-ordered on that stream. On
// out-of-memory the cache is released and the allocation retried once; then kiln::OutOfMemory says
// how much was asked for and how much is free.
std::shared_ptr<graph::Buffer> allocate(int device, size_t nbytes);
// Bytes the allocator holds for reuse, and releases them.
size_t cached_bytes(int device);
void release_cache(int device);

// Page-locked host memory from a cache of pinned blocks, so copies run at DMA speed.
std::shared_ptr<graph::Buffer> allocate_pinned(size_t nbytes);
// Sizes are rounded up to a class (64 KiB steps below 1 MiB, then quarter powers of two) so
// freed blocks fit later requests; the cache keeps at most min(1 GiB, RAM / 4) of free blocks.
// A freed block is reused only after the work already queued on kiln's streams (which may still
// read or write it) has finished. Without a GPU this is ordinary 64-byte-aligned host memory
// (Buffer::pinned false; true otherwise).
// OutOfMemory when page-locked memory runs out even after the cache was released.
//
// Free pinned bytes held for reuse, and gives them back to the system.
size_t pinned_cached_bytes();
void release_pinned_cache();
// The process's first page-locked allocation costs about a millisecond, where later ones of
// 64 KiB cost microseconds (H200 machine: 0.7-1.1 ms, then 4-8 us): the driver sets up its
// host mappings. Kiln makes it on a thread of its own when it first touches a GPU (device
// set-up), beside the program's own work, and leaves the 64 KiB block in the cache for a first
// small result. pinned_cached_bytes and release_pinned_cache wait for it.
void warm_pinned_in_background();

// Copies on the calling thread's current stream of the device. Host memory may be pinned (direct
// DMA) or pageable (staged through two pinned buffers, so the CPU copy of one half overlaps the DMA
// of the other).
void copy_to_device(int device, void* dst, const void* src, size_t nbytes, bool src_pinned);
void copy_to_host(int device, void* dst, const void* src, size_t nbytes, bool dst_pinned);
// Waits for the calling thread's current stream of the device.
void synchronize(int device);
//
// When the caller may touch the memory again:
// - copy_to_device, src_pinned: returns at once; the copy is ordered on the device's stream, so
//   kernels queued later see the data. Rewriting the source before the stream reaches the copy
//   (synchronize(device)) races with the DMA; dropping a kiln pinned Buffer at once is safe, as
//   the block is not reused before the copy is done (see allocate_pinned).
// - copy_to_device, pageable source: returns once the whole source has been read into staging
//   (the caller may free or rewrite it); the last DMAs may still be in flight, stream-ordered.
// - copy_to_host (either kind): returns only when dst holds the data (it waits for the stream,
//   so it also waits for the kernels that produced src).
// Staged copies split their host-side memcpy across cpu::parallel_for, so they must not be
// called from inside a cpu::parallel_for task. Zero bytes: nothing is copied (the device is
// still validated).

}  // namespace kiln::gpu
