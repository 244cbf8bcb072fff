// Page-locked host memory with a cache of freed blocks. cudaHostAlloc costs about a millisecond
// per call (it pins every page), far more than the copies it speeds up, so freed blocks are kept
// by size class and handed out again.
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <condition_variable>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/background.hpp"
#include "cuda/runtime.hpp"
#include "cuda/streams.hpp"
#include "graph/host_buffer.hpp"
#include "kiln/errors.hpp"

namespace kiln::gpu {
namespace {

constexpr size_t kKiB = size_t{1} << 10, kMiB = size_t{1} << 20, kGiB = size_t{1} << 30;

size_t round_up(size_t n, size_t step) { return (n + step - 1) / step * step; }

// A pinned block and, per device, an event marking the point on kiln's stream after which no
// queued copy reads or writes it any more.
struct Block {
  void* ptr = nullptr;
  size_t size = 0;
  std::vector<cudaEvent_t> done;
};

// An event on device `index` without throwing (deleters): null if it cannot be made.
cudaEvent_t new_event(int index) noexcept {
  int previous = -1;
  bool switched = cudaGetDevice(&previous) == cudaSuccess && previous != index;
  if (switched) cudaSetDevice(index);
  cudaEvent_t e = nullptr;
  if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess) {
    cudaGetLastError();
    e = nullptr;
  }
  if (switched) cudaSetDevice(previous);
  return e;
}

// Called when the last reference to a block goes away. A copy from it may still be queued
// (copy_to_device from pinned memory returns at once), so mark each device's current stream now
// (a copy queued on another kiln stream was joined into kiln's own by its run's end, see
// cuda/streams.hpp); the block is reused only after those marks complete. Falls back to waiting if
// no event can be made.
void mark_streams(Block& b) noexcept {
  for (int i = 0; i < static_cast<int>(b.done.size()); ++i) {
    const DeviceInfo* d = initialized_device(i);
    if (!d) continue;  // a device kiln never started has no work queued
    if (!b.done[i]) b.done[i] = new_event(i);
    cudaStream_t stream = current_stream(i);
    cudaError_t err =
        b.done[i] ? cudaEventRecord(b.done[i], stream) : cudaStreamSynchronize(stream);
    if (err != cudaSuccess) cudaGetLastError();
  }
}

void wait_streams(const Block& b) {
  for (cudaEvent_t e : b.done)
    if (e) KILN_CUDA_CHECK(cudaEventSynchronize(e));
}

void destroy(Block* b) noexcept {
  for (cudaEvent_t e : b->done)
    if (e) cudaEventDestroy(e);
  if (cudaFreeHost(b->ptr) != cudaSuccess) cudaGetLastError();
  delete b;
}

size_t physical_memory() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : 0;
}

class PinnedCache {
 public:
  // Free blocks kept at most: pinned pages cannot be swapped, so the cache must not starve the
  // rest of the machine.
  const size_t cap = std::min(kGiB, physical_memory() / 4);

  // Below 1 MiB: 64 KiB steps. Above: a quarter of the power of two below the size, so a block
  // wastes under 25% and neighbouring sizes share a class. Blocks too big to ever be cached are
  // not rounded beyond 64 KiB.
  size_t size_class(size_t n) const {
    if (n < kMiB) return round_up(n, 64 * kKiB);
    size_t rounded = round_up(n, std::bit_floor(n) / 4);
    return rounded > cap ? round_up(n, 64 * kKiB) : rounded;
  }

  Block* take(size_t size) {
    if (Block* b = pop(size)) {
      wait_streams(*b);
      return b;
    }
    return create(size);
  }

  void give_back(Block* b) noexcept {
    mark_streams(*b);
    {
      std::lock_guard lock(mu_);
      if (cached_ + b->size <= cap) {
        free_[b->size].push_back(b);
        cached_ += b->size;
        return;
      }
    }
    // Over the cap: free it, once no queued copy uses it (cudaFreeHost would not wait for the
    // stream by itself).
    try {
      wait_streams(*b);
    } catch (...) {
    }
    destroy(b);
  }

  size_t cached() {
    std::lock_guard lock(mu_);
    return cached_;
  }

  void release() {
    std::vector<Block*> all;
    {
      std::lock_guard lock(mu_);
      for (auto& [size, blocks] : free_) all.insert(all.end(), blocks.begin(), blocks.end());
      free_.clear();
      cached_ = 0;
    }
    for (Block* b : all) {
      wait_streams(*b);
      destroy(b);
    }
  }

 private:
  Block* pop(size_t size) {
    std::lock_guard lock(mu_);
    auto it = free_.find(size);
    if (it == free_.end() || it->second.empty()) return nullptr;
    Block* b = it->second.back();
    it->second.pop_back();
    cached_ -= size;
    return b;
  }

  // Pins outside the lock (it is slow); on failure releases the cache and tries once more.
  Block* create(size_t size) {
    void* p = nullptr;
    cudaError_t err = cudaHostAlloc(&p, size, cudaHostAllocPortable);
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      release();
      err = cudaHostAlloc(&p, size, cudaHostAllocPortable);
    }
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      throw OutOfMemory("page-locked host allocation of " + std::to_string(size) +
                        " bytes failed; free host arrays you no longer need or work on "
                        "smaller pieces");
    }
    // Portable: the block is pinned for every device's context, not only the current one.
    check(err, "cudaHostAlloc(&p, size, cudaHostAllocPortable)");
    auto* b = new Block{p, size, {}};
    b->done.assign(static_cast<size_t>(cuda_device_count()), nullptr);
    return b;
  }

  std::mutex mu_;
  std::unordered_map<size_t, std::vector<Block*>> free_;  // by size class
  size_t cached_ = 0;
};

// Never destroyed: buffers freed during static destruction still return their blocks here.
PinnedCache& cache() {
  static auto* c = new PinnedCache;
  return *c;
}

}  // namespace

std::shared_ptr<graph::Buffer> allocate_pinned(size_t nbytes) {
  // Without a GPU nothing can be pinned (and nothing needs to be): plain aligned memory.
  if (!cuda_available()) return cpu::allocate(nbytes);
  auto buffer = std::make_shared<graph::Buffer>();
  buffer->nbytes = nbytes;
  buffer->device = kiln::host();
  buffer->pinned = true;
  if (nbytes == 0) return buffer;
  PinnedCache& c = cache();
  Block* b = c.take(c.size_class(nbytes));
  buffer->owner = std::shared_ptr<void>(b->ptr, [b](void*) { cache().give_back(b); });
  return buffer;
}

namespace {

// Whether the warm-up's block may still be on its way into the cache.
struct WarmUp {
  std::mutex mu;
  std::condition_variable done;
  bool running = false;
  void wait() {
    std::unique_lock lock(mu);
    done.wait(lock, [this] { return !running; });
  }
  void finish() {
    std::lock_guard lock(mu);
    running = false;
    done.notify_all();
  }
};
WarmUp& warm_up() {
  static auto* w = new WarmUp;  // never destroyed: the thread may outlive static destructors
  return *w;
}

}  // namespace

void warm_pinned_in_background() {
  static std::once_flag started;
  std::call_once(started, [] {
    if (!cuda_available()) return;
    warm_up().running = true;
    // Waited for when this thread ends (common/background.hpp); no thread: the first allocation
    // pays.
    const bool started = start_background([](const BackgroundStop&) {
      try {
        allocate_pinned(64 * kKiB);  // dropped at once: the block goes to the cache
      } catch (...) {                // an allocation that fails here fails again where it is needed
      }
      warm_up().finish();
    });
    if (!started) warm_up().finish();
  });
}

size_t pinned_cached_bytes() {
  if (!cuda_available()) return 0;
  warm_up().wait();
  return cache().cached();
}

void release_pinned_cache() {
  if (!cuda_available()) return;
  warm_up().wait();
  cache().release();
}

}  // namespace kiln::gpu
