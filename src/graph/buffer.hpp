// Storage behind an evaluated array: dense, row-major, aligned. The owner (a shared_ptr with
// the backend's deleter) decides how the memory is freed, so borrowed memory works too.
#pragma once
#include <cstddef>
#include <memory>

#include "kiln/device.hpp"

namespace kiln::graph {

struct Buffer {
  std::shared_ptr<void> owner;  // keeps the memory alive; its get() is the data address
  size_t nbytes = 0;
  Device device;
  bool pinned = false;  // page-locked host memory: copies to a GPU run at DMA speed
  // Device memory from kiln's allocator: the kiln stream (a cudaStream_t) that allocated it and
  // whose work writes it; null for memory kiln did not allocate (cuda/streams.hpp).
  void* stream = nullptr;
  void* data() const { return owner.get(); }
};
using BufferRef = std::shared_ptr<const Buffer>;

}  // namespace kiln::graph
