// The disk cache directory: setup, lookups, atomic writes.
#include "jit/disk_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "jit/cache_config.hpp"
#include "jit/eviction.hpp"
#include "jit/file_util.hpp"

namespace kiln::jit {
namespace {

std::atomic<bool> g_warned{false};
std::atomic<bool> g_warned_entry{false};

// Several caches (or a reconfigured one) share the flag: the promise is one line per process.
void warn_once(const std::string& message) {
  if (!g_warned.exchange(true)) warn(message);
}

// A separate flag: an untrusted entry in a usable directory is a different problem, and its
// warning must not be swallowed by an earlier one about writes.
void warn_untrusted_entry(const std::string& path, const Trust& t) {
  if (g_warned_entry.exchange(true)) return;
  warn("kernel cache entry " + path + " " + t.problem +
       ", so someone else may have written the GPU code in it; it is not loaded (the kernel is "
       "compiled instead). Run `" +
       t.fix + "`, or `kiln-cache verify --fix` to remove such entries.");
}

}  // namespace

void reset_disk_warning_for_testing() {
  g_warned = false;
  g_warned_entry = false;
}

DiskCache::DiskCache(std::string dir, uint64_t max_bytes)
    : dir_(std::move(dir)), max_bytes_(max_bytes) {
  if (dir_.empty()) {
    warn_once(
        "no kernel cache directory (HOME is unset); kernels are kept in memory only. "
        "Set KILN_CACHE_DIR to a writable directory.");
    return;
  }
  if (int err = make_directories(dir_, cache_modes().dir); err != 0) {
    warn_once("kernel cache directory " + dir_ + " cannot be created (" + std::strerror(err) +
              "); kernels are kept in memory only. Set KILN_CACHE_DIR to a writable directory "
              "or KILN_CACHE=memory.");
    return;
  }
  if (Trust t = directory_trust(dir_); !t.ok()) {
    warn_once("kernel cache directory " + dir_ + " " + t.problem +
              ": kiln runs the GPU code it finds there, so kernels are kept in memory only. Run `" +
              t.fix + "`, or set KILN_CACHE_DIR to a directory that only you can write.");
    return;
  }
  readable_ = ::access(dir_.c_str(), R_OK | X_OK) == 0;
  if (!readable_) {
    warn_once("kernel cache directory " + dir_ + " cannot be read (" + std::strerror(errno) +
              "); kernels are kept in memory only. Set KILN_CACHE_DIR to a writable directory "
              "or KILN_CACHE=memory.");
    return;
  }
  writable_ = ::access(dir_.c_str(), W_OK) == 0;
  if (!writable_) disable_writes(std::strerror(errno));
}

std::string DiskCache::path_for(const std::string& key) const { return dir_ + "/" + key + ".kkc"; }

std::string DiskCache::failed_dir() const { return writable_ ? dir_ + "/failed" : ""; }

void DiskCache::disable_writes(const std::string& why) {
  writable_ = false;
  warn_once("kernel cache directory " + dir_ + " is not writable (" + why +
            "); existing entries are used, new kernels are kept in memory only. Set "
            "KILN_CACHE_DIR to a writable directory or KILN_CACHE=memory.");
}

std::optional<CacheEntry> DiskCache::load(const std::string& key) const {
  if (!readable_) return std::nullopt;
  std::string path = path_for(key);
  Trust trust;
  auto bytes = read_trusted_file(path, trust);
  if (!trust.ok()) warn_untrusted_entry(path, trust);
  if (!bytes) return std::nullopt;
  CacheEntry e;
  std::string problem;
  // A file under another key's name (copied, or a hash prefix clash in a tool) is a miss too.
  if (!decode_entry(*bytes, e, problem) || e.key != key) return std::nullopt;
  touch_precisely(path);  // recency for LRU eviction
  return e;
}

void DiskCache::store(const CacheEntry& e) {
  if (!writable_) return;
  std::string path = path_for(e.key);
  if (int err = write_file_atomically(path, encode_entry(e), cache_modes().file); err != 0) {
    disable_writes(std::strerror(err));
    return;
  }
  if (max_bytes_ > 0) evict_lru(dir_, max_bytes_, path);
}

}  // namespace kiln::jit
