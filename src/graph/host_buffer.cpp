#include "graph/host_buffer.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <new>
#include <string>

#include "kiln/errors.hpp"

namespace kiln::cpu {

std::shared_ptr<graph::Buffer> allocate(size_t nbytes) {
  auto b = std::make_shared<graph::Buffer>();
  b->nbytes = nbytes;
  b->device = kiln::host();
  if (nbytes == 0) return b;
  // Large arrays go on transparent huge pages, as NumPy does: first touch of a fresh 64 MB
  // array otherwise costs ~16k page faults, several times the work of a simple kernel.
  constexpr size_t kHuge = size_t{2} << 20;
  size_t align = nbytes >= kHuge ? kHuge : kAlignment;
  size_t rounded = (nbytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded);
  if (p && align == kHuge) madvise(p, rounded, MADV_HUGEPAGE);
  if (!p)
    throw OutOfMemory("host allocation of " + std::to_string(nbytes) +
                      " bytes failed; free arrays you no longer need or use smaller shapes");
  b->owner = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  return b;
}

}  // namespace kiln::cpu
