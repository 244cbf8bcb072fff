// The backend (plan/backend.hpp) that runs steps on each device: the host executor, or the
// CUDA executor of a GPU. The plan runner and the NumPy surface's allocations ask here.
#pragma once
#include <cstddef>
#include <memory>

#include "graph/buffer.hpp"
#include "kiln/device.hpp"
#include "plan/backend.hpp"

namespace kiln::runtime {

// DeviceError for a CUDA device that does not exist.
plan::Backend& backend_for(const Device& d);

// Memory for evaluated arrays on any device: host arrays are pinned when a GPU is present
// (their copies then run at DMA speed), plain aligned memory otherwise.
std::shared_ptr<graph::Buffer> allocate(const Device& d, size_t nbytes);

// Waits until the work that writes `b` has finished (device memory: its stream; nothing else).
void wait_for_writer(const graph::Buffer& b);

}  // namespace kiln::runtime
