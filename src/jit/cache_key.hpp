// The cache key of a kernel: SHA-256 (hex) of everything that determines the binary.
#pragma once
#include <string>
#include <vector>

#include "jit/jit.hpp"

namespace kiln::jit {

// Hashes the inputs, never the output: name, source, the full option list (arch included),
// every embedded header's name and text, NVRTC's identity and the cache format version.
// The summary is left out: it describes the kernel but does not change it.
std::string cache_key(const Request& r, const std::vector<std::string>& options);

}  // namespace kiln::jit
