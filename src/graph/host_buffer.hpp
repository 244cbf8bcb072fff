// Host memory for kiln's own arrays (graph buffers): 64-byte aligned, so Eigen maps it with
// aligned loads. Here, below both executors, since the pinned allocator of src/cuda falls back
// to it where nothing can be pinned.
#pragma once
#include <cstddef>

#include "graph/buffer.hpp"

namespace kiln::cpu {

inline constexpr size_t kAlignment = 64;
std::shared_ptr<graph::Buffer> allocate(size_t nbytes);

}  // namespace kiln::cpu
