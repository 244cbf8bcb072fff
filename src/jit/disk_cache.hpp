// The disk half of the kernel cache: one <key>.kkc file per kernel in one directory.
//
// Every problem degrades instead of failing: a missing directory is created (0700, or 0750 with
// KILN_CACHE_SHARED=group; the umask still applies), an unusable or untrusted one (another user
// can write it: file_util.hpp, trust_of) makes the cache memory-only with one warning per
// process, a bad or untrusted file is a miss that the next write replaces.
#pragma once
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "jit/cache_file.hpp"

namespace kiln::jit {

class DiskCache {
 public:
  DiskCache(std::string dir, uint64_t max_bytes);

  // Entries can be looked up (the directory exists and can be read).
  bool readable() const { return readable_; }
  // New entries (and usage logs) can be written.
  bool writable() const { return writable_; }
  const std::string& dir() const { return dir_; }
  std::string path_for(const std::string& key) const;
  // Where failing sources go: <dir>/failed, or "" when the directory is not writable.
  std::string failed_dir() const;

  // The entry for `key`, or nullopt for a missing, truncated, corrupt, foreign-version or
  // other-key file, or one that another user can write (never loaded; one warning per process). A
  // hit updates the file's mtime (recency for eviction, besides the usage logs) but never rewrites
  // it.
  std::optional<CacheEntry> load(const std::string& key) const;

  // Writes the entry atomically, then evicts down to the size cap. A failed write warns once
  // and stops further writes in this process.
  void store(const CacheEntry& e);

 private:
  void disable_writes(const std::string& why);
  void evict_over_cap(const std::string& keep) const;

  std::string dir_;
  uint64_t max_bytes_;  // 0: no cap
  bool readable_ = false;
  std::atomic<bool> writable_{false};
};

// Lets tests see the once-per-process warnings (directory, untrusted entry) again.
void reset_disk_warning_for_testing();

}  // namespace kiln::jit
