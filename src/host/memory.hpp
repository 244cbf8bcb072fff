// Host memory for kiln's own arrays: 64-byte aligned, so Eigen maps it with aligned loads.
#pragma once
#include <cstddef>

#include "graph/buffer.hpp"

namespace kiln::cpu {

inline constexpr size_t kAlignment = 64;
std::shared_ptr<graph::Buffer> allocate(size_t nbytes);

}  // namespace kiln::cpu
