#include "host/memory.hpp"

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
  size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (!p)
    throw OutOfMemory("host allocation of " + std::to_string(nbytes) +
                      " bytes failed; free arrays you no longer need or use smaller shapes");
  b->owner = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  return b;
}

}  // namespace kiln::cpu
