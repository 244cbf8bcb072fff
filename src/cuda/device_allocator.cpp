// The caching device allocator, built on CUDA's stream-ordered memory pools: allocations and
// frees are queued on the allocating thread's current kiln stream (cuda/streams.hpp), and the
// device's default pool keeps freed memory for reuse instead of returning it to the driver at every
// synchronisation.
#include <bit>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "common/spin_lock.hpp"
#include "cuda/per_device.hpp"
#include "cuda/runtime.hpp"
#include "cuda/streams.hpp"
#include "kiln/errors.hpp"

namespace kiln::gpu {
namespace {

struct Pool {
  cudaMemPool_t handle = nullptr;  // null where the device has no pool support: plain cudaMalloc
};

PerDevice<Pool>& pools() {
  static auto* all = new PerDevice<Pool>;  // never destroyed, like the device contexts
  return *all;
}

cudaMemPool_t open_pool(int index) {
  int supported = 0;
  KILN_CUDA_CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, index));
  if (!supported) return nullptr;
  cudaMemPool_t pool = nullptr;
  KILN_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, index));
  // The default threshold (0) hands free memory back to the driver at every synchronisation,
  // which makes each new allocation after a sync slow; keep everything until release_cache().
  uint64_t keep_all = UINT64_MAX;
  KILN_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all));
  return pool;
}

cudaMemPool_t pool_of(int index) {
  device(index);  // validates the index and creates the context
  return pools().get(index, [index](Pool& p) { p.handle = open_pool(index); }).handle;
}

uint64_t pool_attribute(cudaMemPool_t pool, cudaMemPoolAttr attr) {
  uint64_t value = 0;
  KILN_CUDA_CHECK(cudaMemPoolGetAttribute(pool, attr, &value));
  return value;
}

// Returns memory to the pool in stream order, so it is reused only after the kernels queued
// before the free are done with it. Runs in destructors: it never throws, and it restores the
// calling thread's device.
struct DeviceFree {
  int index;
  cudaStream_t stream;
  bool pooled;
  void operator()(void* p) const noexcept {
    int previous = -1;
    bool switched = cudaGetDevice(&previous) == cudaSuccess && previous != index;
    if (switched) cudaSetDevice(index);
    cudaError_t err = pooled ? cudaFreeAsync(p, stream) : cudaFree(p);
    if (switched) cudaSetDevice(previous);
    // A free can fail only when the context is broken or the runtime is shutting down at exit;
    // nothing useful can be done, but the error must not surface in an unrelated later call.
    if (err != cudaSuccess) cudaGetLastError();
  }
};

// Blocks up to 32 MiB (the results of small and mid-sized evaluations, reduction scratch) are
// recycled by kiln itself, with no CUDA call: a freed block goes on a free list by stream and
// size class and is handed out again to an allocation on the same stream. That is safe because
// whatever is queued on that stream after the reuse runs after everything that used the block
// before: the block's own stream's work, and (cuda/streams.hpp) other streams' reads, which
// that stream waited for. The pool's own calls (cudaMallocFromPoolAsync, cudaFreeAsync) take
// the driver's lock and cost microseconds each, a share of an evaluation that launches one
// kernel over a few MiB (bench/gpu_bench.cpp: tiny, lazy_loop_200).
class SmallBlocks {
 public:
  static constexpr size_t kLargest = size_t{32} << 20;
  static constexpr size_t kCap = size_t{256} << 20;  // bytes kept on the free lists at most

  // A block's size class: 512-byte steps up to 1 MiB, then eight steps per power of two (a
  // block wastes under 12.5%). `index` numbers the classes from 0.
  struct Class {
    size_t size, index;
  };
  static Class class_of(size_t n) {
    if (n <= kFine) return {(n + kGrain - 1) / kGrain * kGrain, (n + kGrain - 1) / kGrain};
    const size_t floor = std::bit_floor(n), step = floor / 8;
    const size_t size = (n + step - 1) / step * step;  // <= 2 * floor, whose index follows on
    return {size, kFine / kGrain + 8 * (std::bit_width(floor) - 1 - kFineBits) + size / step - 8};
  }

  void* take(cudaStream_t stream, Class c) {
    std::lock_guard lock(mu_);
    std::vector<std::vector<void*>>* by_class = lists(stream, false);
    if (!by_class) return nullptr;
    auto& list = (*by_class)[c.index];
    if (list.empty()) return nullptr;
    void* p = list.back();
    list.pop_back();
    held_ -= c.size;
    return p;
  }
  // False when the block is not kept (cap reached, or no memory for the list).
  bool give(cudaStream_t stream, void* p, Class c) noexcept {
    try {
      std::lock_guard lock(mu_);
      if (held_ + c.size > kCap) return false;
      lists(stream, true)->at(c.index).push_back(p);
      held_ += c.size;
      return true;
    } catch (...) {
      return false;
    }
  }
  // Hands every kept block back to the pool, each in its stream's order.
  void release() {
    std::lock_guard lock(mu_);
    for (auto& l : free_)
      for (auto& blocks : l.by_class) {
        for (void* p : blocks) cudaFreeAsync(p, l.stream);
        blocks.clear();
      }
    held_ = 0;
  }
  size_t held() {
    std::lock_guard lock(mu_);
    return held_;
  }

 private:
  static constexpr size_t kGrain = 512;
  static constexpr int kFineBits = 20;
  static constexpr size_t kFine = size_t{1} << kFineBits;

  SpinLock mu_;  // taken twice by every evaluation: its take and, later, its give
  // Per stream (few: kiln's own comes first), indexed by class: this runs on every allocation
  // and free of a tiny evaluation, where a hash map's lookup cost as much as the rest of the
  // allocation.
  struct StreamLists {
    cudaStream_t stream;
    std::vector<std::vector<void*>> by_class =
        std::vector<std::vector<void*>>(class_of(kLargest).index + 1);
  };
  std::vector<StreamLists> free_;
  std::vector<std::vector<void*>>* lists(cudaStream_t stream, bool create) {
    for (auto& l : free_)
      if (l.stream == stream) return &l.by_class;
    if (!create) return nullptr;
    free_.push_back({stream});
    return &free_.back().by_class;
  }
  size_t held_ = 0;
};

PerDevice<SmallBlocks>& small_blocks() {
  static auto* all = new PerDevice<SmallBlocks>;  // never destroyed: frees may run at exit
  return *all;
}

struct SmallFree {
  SmallBlocks* blocks;
  SmallBlocks::Class size;
  DeviceFree fallback;
  void operator()(void* p) const noexcept {
    if (!blocks->give(fallback.stream, p, size)) fallback(p);
  }
};

// A buffer that frees its memory itself, through `free`, in its destructor: made with its
// count in one allocation (make_shared), where a deleter held by the owner was a second one, a
// malloc and a free more on every evaluation. The owner then only carries the address.
template <class Free>
struct OwnedBuffer : graph::Buffer {
  explicit OwnedBuffer(Free f) : free(f) {}
  OwnedBuffer(const OwnedBuffer&) = delete;
  OwnedBuffer& operator=(const OwnedBuffer&) = delete;
  ~OwnedBuffer() { free(data()); }
  Free free;
};

// A buffer owning p (freed by `free` when the last reference goes); p is freed at once if the
// buffer cannot be made.
template <class Free>
std::shared_ptr<graph::Buffer> owning(void* p, Free free) {
  std::shared_ptr<OwnedBuffer<Free>> b;
  try {
    b = std::make_shared<OwnedBuffer<Free>>(free);
  } catch (...) {
    free(p);
    throw;
  }
  b->owner = std::shared_ptr<void>(std::shared_ptr<void>(), p);  // the address, owning nothing
  return b;
}

std::shared_ptr<graph::Buffer> described(std::shared_ptr<graph::Buffer> b, int index, size_t nbytes,
                                         cudaStream_t stream) {
  b->nbytes = nbytes;
  b->device = Device{Device::Kind::Cuda, index};
  b->stream = stream;
  return b;
}

// Null when the device is out of memory (with the runtime's error state cleared).
void* try_allocate(cudaStream_t stream, cudaMemPool_t pool, size_t nbytes) {
  void* p = nullptr;
  cudaError_t err =
      pool ? cudaMallocFromPoolAsync(&p, nbytes, pool, stream) : cudaMalloc(&p, nbytes);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    return nullptr;
  }
  check(err, pool ? "cudaMallocFromPoolAsync(&p, nbytes, pool, stream)" : "cudaMalloc(&p, nbytes)");
  return p;
}

std::string human(size_t bytes) {
  char text[32];
  double gib = static_cast<double>(bytes) / double(1 << 30);
  std::snprintf(text, sizeof text, "%.2f GiB", gib);
  return std::to_string(bytes) + " bytes (" + text + ")";
}

[[noreturn]] void out_of_memory(int index, size_t nbytes) {
  size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) cudaGetLastError();
  throw OutOfMemory("out of memory on cuda:" + std::to_string(index) + ": asked for " +
                    human(nbytes) + ", " + human(free) + " free of " + human(total) +
                    " after releasing kiln's cache; free arrays you no longer need (let them "
                    "go out of scope) or work on smaller pieces");
}

// Frees everything the pool holds beyond live allocations. The device is synchronised first
// (every stream: frees may be queued on any of kiln's) so that their memory is released too.
void trim(const DeviceInfo& d, cudaMemPool_t pool) {
  small_blocks().get(d.index, [](SmallBlocks&) {}).release();
  KILN_CUDA_CHECK(cudaDeviceSynchronize());
  if (pool) KILN_CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
}

}  // namespace

std::shared_ptr<graph::Buffer> allocate(int index, size_t nbytes) {
  cudaMemPool_t pool = pool_of(index);  // (validates the index)
  const cudaStream_t stream = current_stream(index);
  if (nbytes == 0) return described(std::make_shared<graph::Buffer>(), index, nbytes, stream);
  DeviceFree to_pool{index, stream, pool != nullptr};
  const bool small = pool && nbytes <= SmallBlocks::kLargest;
  const SmallBlocks::Class size =
      small ? SmallBlocks::class_of(nbytes) : SmallBlocks::Class{nbytes, 0};
  SmallBlocks* blocks = small ? &small_blocks().get(index, [](SmallBlocks&) {}) : nullptr;
  void* p = blocks ? blocks->take(stream, size) : nullptr;
  if (!p) {
    ScopedDevice on(index);
    p = try_allocate(stream, pool, size.size);
    if (!p) {
      trim(device(index), pool);
      p = try_allocate(stream, pool, size.size);
    }
    if (!p) out_of_memory(index, nbytes);
  }
  if (blocks) return described(owning(p, SmallFree{blocks, size, to_pool}), index, nbytes, stream);
  return described(owning(p, to_pool), index, nbytes, stream);
}

size_t cached_bytes(int index) {
  cudaMemPool_t pool = pool_of(index);
  if (!pool) return 0;
  uint64_t reserved = pool_attribute(pool, cudaMemPoolAttrReservedMemCurrent);
  uint64_t used = pool_attribute(pool, cudaMemPoolAttrUsedMemCurrent);
  // The recycled blocks are in use as far as the pool can tell.
  return (reserved > used ? reserved - used : 0) +
         small_blocks().get(index, [](SmallBlocks&) {}).held();
}

void release_cache(int index) {
  cudaMemPool_t pool = pool_of(index);
  ScopedDevice on(index);
  trim(device(index), pool);
}

}  // namespace kiln::gpu
