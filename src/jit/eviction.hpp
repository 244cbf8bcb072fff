// Removing entries from the cache directory: the size cap (least recently used first) and
// pruning by age.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::jit {

struct PruneRequest {
  std::optional<uint64_t> max_bytes;      // remove least recently used entries until they fit
  std::optional<int64_t> used_before_us;  // remove entries last used before this (Unix us)
  std::string keep;                       // a path never removed (the entry just written)
};

struct PruneResult {
  std::vector<std::string> removed;  // keys
  uint64_t removed_bytes = 0;
  size_t kept = 0;
  uint64_t kept_bytes = 0;
};

// Recency is the later of the entry's last hit (the usage logs, folded on the way, plus this
// process's pending hits) and its file's mtime (written, or last loaded from disk). Files may
// vanish meanwhile (other processes evict too); what another process removed counts as removed.
// Also removes temporary files that crashed writers left behind.
PruneResult prune(const std::string& dir, const PruneRequest& r);

// The size cap after a write: cheap (one directory scan) while the entries fit.
void evict_lru(const std::string& dir, uint64_t max_bytes, const std::string& keep);

}  // namespace kiln::jit
