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

// Computes once the digest of the embedded headers, which every key hashes, so that the first
// key costs what the others do: libcrypto's first SHA-256 sets up its providers (1.3-2.4 ms on
// the developer machine). Thread-safe; gpu::warm_up_in_background calls it.
void prepare_cache_keys();

// Whether `s` has the form of a key (64 lowercase hex digits), as entry file names must.
bool is_cache_key(std::string_view s);

}  // namespace kiln::jit
