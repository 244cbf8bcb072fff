// Size cap of the cache directory, by least-recently-used eviction.
#pragma once
#include <cstdint>
#include <string>

namespace kiln::jit {

// When the *.kkc files in `dir` total more than `max_bytes`, removes the least recently used
// ones until they fit, never `keep` (the entry just written). Recency is the file's mtime,
// which a disk hit refreshes; hits served from memory do not, so a kernel used constantly by
// one long-running process ages from its last load: an approximation until hit logs exist.
// Also removes temporary files that crashed writers left behind.
void evict_lru(const std::string& dir, uint64_t max_bytes, const std::string& keep);

}  // namespace kiln::jit
