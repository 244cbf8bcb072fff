// Device's text, which every stage prints (errors, explain): here, below them all, not with
// the CUDA runtime queries of src/cuda/device.cpp.
#include <string>

#include "kiln/device.hpp"

namespace kiln {

std::string Device::str() const { return is_host() ? "host" : "cuda:" + std::to_string(index); }

}  // namespace kiln
