// The cache key of a kernel: SHA-256 (hex) of everything that determines the binary.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "jit/jit.hpp"

namespace kiln::jit {

// Hashes the inputs, never the output: name, source, the full option list (arch included),
// every embedded header's name and text, NVRTC's identity and the cache format version.
// The summary is left out: it describes the kernel but does not change it.
std::string cache_key(const Request& r, const std::vector<std::string>& options);

// Whether `s` has the form of a key (64 lowercase hex digits), as entry file names must.
bool is_cache_key(std::string_view s);

}  // namespace kiln::jit
