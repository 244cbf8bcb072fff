#include "graph/host_buffer.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <list>
#include <mutex>
#include <new>
#include <string>

#include "kiln/errors.hpp"

namespace kiln::cpu {
namespace {

constexpr size_t kHuge = size_t{2} << 20;

// Large blocks freed are kept for reuse, up to a cap (1 GiB, or an eighth of the memory where
// that is less), the oldest freed first past it. A fresh block costs the kernel zeroing its
// pages at first touch, which was half the time of a host step such as a cast or a scan on the
// 2-core developer machine; and a plan's intermediates (a mask's prefix sums, scatter
// positions) come back at the same sizes at every evaluation of a loop.
class BlockCache {
 public:
  BlockCache() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) cap_ = std::min(cap_, static_cast<size_t>(pages) * page / 8);
  }
  // A cached block of exactly `bytes` (a multiple of kHuge), or null.
  void* take(size_t bytes) {
    std::lock_guard<std::mutex> lock(m_);
    for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it)
      if (it->bytes == bytes) {
        void* p = it->p;
        held_ -= bytes;
        blocks_.erase(std::next(it).base());
        return p;
      }
    return nullptr;
  }
  void give(void* p, size_t bytes) {
    std::lock_guard<std::mutex> lock(m_);
    blocks_.push_back({p, bytes});
    held_ += bytes;
    while (held_ > cap_) {
      std::free(blocks_.front().p);
      held_ -= blocks_.front().bytes;
      blocks_.pop_front();
    }
  }

 private:
  struct Block {
    void* p;
    size_t bytes;
  };
  std::mutex m_;
  std::list<Block> blocks_;  // oldest freed first
  size_t held_ = 0, cap_ = size_t{1} << 30;
};

// Never destroyed: arrays held in static storage may be freed after it would have been.
BlockCache& block_cache() {
  static auto* cache = new BlockCache;
  return *cache;
}

}  // namespace

std::shared_ptr<graph::Buffer> allocate(size_t nbytes) {
  auto b = std::make_shared<graph::Buffer>();
  b->nbytes = nbytes;
  b->device = kiln::host();
  if (nbytes == 0) return b;
  // Large arrays go on transparent huge pages, as NumPy does: first touch of a fresh 64 MB
  // array otherwise costs ~16k page faults, several times the work of a simple kernel.
  if (nbytes >= kHuge) {
    const size_t rounded = (nbytes + kHuge - 1) / kHuge * kHuge;
    void* p = block_cache().take(rounded);
    if (!p) p = std::aligned_alloc(kHuge, rounded);
    if (p) {
      madvise(p, rounded, MADV_HUGEPAGE);
      b->owner = std::shared_ptr<void>(p, [rounded](void* q) { block_cache().give(q, rounded); });
      return b;
    }
  } else if (void* p = std::aligned_alloc(kAlignment,
                                          (nbytes + kAlignment - 1) / kAlignment * kAlignment)) {
    b->owner = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
    return b;
  }
  throw OutOfMemory("host allocation of " + std::to_string(nbytes) +
                    " bytes failed; free arrays you no longer need or use smaller shapes");
}

}  // namespace kiln::cpu
