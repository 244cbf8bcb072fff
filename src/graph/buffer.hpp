// Storage behind an evaluated array: dense, row-major, aligned. The owner (a shared_ptr with
// the backend's deleter) decides how the memory is freed, so borrowed memory works too; or the
// buffer frees it itself, a derived type's destructor, and the owner carries only the address
// (kiln's device memory: one allocation per buffer, cuda/device_allocator.cpp). So a Buffer is
// never copied: a copy would not keep that memory alive.
#pragma once
#include <cstddef>
#include <memory>

#include "kiln/device.hpp"

namespace kiln::graph {

struct Buffer {
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  std::shared_ptr<void> owner;  // its get() is the data address
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
