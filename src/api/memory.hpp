// Memory for evaluated arrays on any device: kiln's host arrays are pinned when a GPU is
// present (their copies then run at DMA speed), plain aligned memory otherwise.
#pragma once
#include <cstddef>

#include "graph/buffer.hpp"

namespace kiln::api {

std::shared_ptr<graph::Buffer> allocate(Device d, size_t nbytes);

}  // namespace kiln::api
