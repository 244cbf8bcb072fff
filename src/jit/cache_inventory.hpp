// What a cache directory holds, entry by entry: for kiln::cache::entries() and the kiln-cache
// tool. Reading every file is the point here (validation needs the checksum); the kernel
// lookup path never calls this.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "jit/cache_file.hpp"
#include "jit/usage_log.hpp"

namespace kiln::jit {

struct EntryFile {
  std::string path;
  std::string key;  // the file name without .kkc
  uint64_t bytes = 0;
  int64_t mtime_us = 0;  // written, or last loaded from disk
  bool valid = false;
  std::string problem;  // why it is not valid
  CacheEntry entry;     // decoded metadata; the binary only when asked for
  Usage usage;
  // The later of the last hit and the mtime: the recency LRU eviction uses.
  int64_t last_used_us() const { return std::max(usage.last_used_us, mtime_us); }
};

// Reads and checks one <key>.kkc file: no other user may be able to write it (trust_of), and it
// must decode and hold the entry for its file name's key.
EntryFile read_entry_file(const std::string& path, bool keep_binary);

// Every *.kkc file in `dir`, sorted by key, with `usage` attached.
std::vector<EntryFile> list_entry_files(const std::string& dir, const UsageMap& usage);

// Regular files in `dir` that are neither entries nor kiln's own (temporaries): a cache never
// creates them, so they are reported, never deleted.
std::vector<std::string> unknown_files(const std::string& dir);

struct ClearResult {
  size_t entries = 0;
  uint64_t bytes = 0;
  bool complete = true;  // false when something could not be removed
};

// Removes the entries, the usage logs, temporaries and saved failing sources; only names kiln
// writes, so a --dir pointed at the wrong folder loses nothing else.
ClearResult clear_directory(const std::string& dir);

}  // namespace kiln::jit
