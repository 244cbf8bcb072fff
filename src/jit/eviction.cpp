// LRU eviction and pruning over the cache directory.
#include "jit/eviction.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>

#include "jit/file_util.hpp"
#include "jit/usage_log.hpp"

namespace kiln::jit {
namespace {

struct CacheFile {
  std::string path, key;
  uint64_t size;
  int64_t used_us;  // mtime until the usage logs are merged in
};

bool older(const CacheFile& a, const CacheFile& b) {
  if (a.used_us != b.used_us) return a.used_us < b.used_us;
  return a.path < b.path;
}

// A temporary file older than this belongs to a writer that died; live writes take ms.
constexpr time_t kStaleTempSeconds = 3600;

// Lists the entries; removes stale temporaries on the way. Files may vanish meanwhile (other
// processes evict too), so a failed stat just skips the file.
std::vector<CacheFile> scan(const std::string& dir) {
  std::vector<CacheFile> files;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return files;
  time_t now = std::time(nullptr);
  while (const dirent* ent = ::readdir(d)) {
    std::string name = ent->d_name;
    std::string path = dir + "/" + name;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (name.starts_with(".") && name.ends_with(kTempSuffix)) {
      if (now - st.st_mtim.tv_sec > kStaleTempSeconds) ::unlink(path.c_str());
    } else if (name.ends_with(".kkc")) {
      int64_t mtime_us = int64_t(st.st_mtim.tv_sec) * 1'000'000 + st.st_mtim.tv_nsec / 1000;
      files.push_back({path, name.substr(0, name.size() - 4), uint64_t(st.st_size), mtime_us});
    }
  }
  ::closedir(d);
  return files;
}

void apply_usage(const std::string& dir, std::vector<CacheFile>& files) {
  UsageMap usage = fold_usage(dir);
  merge_usage(usage, pending_usage(dir));
  for (auto& f : files)
    if (auto it = usage.find(f.key); it != usage.end())
      f.used_us = std::max(f.used_us, it->second.last_used_us);
}

bool wanted_gone(const CacheFile& f, const PruneRequest& r, uint64_t total) {
  if (f.path == r.keep) return false;
  if (r.used_before_us && f.used_us < *r.used_before_us) return true;
  return r.max_bytes && total > *r.max_bytes;
}

}  // namespace

PruneResult prune(const std::string& dir, const PruneRequest& r) {
  std::vector<CacheFile> files = scan(dir);
  apply_usage(dir, files);
  std::sort(files.begin(), files.end(), older);
  uint64_t total = 0;
  for (auto& f : files) total += f.size;
  PruneResult out;
  for (auto& f : files) {
    // ENOENT means another process removed it first: the bytes are gone either way.
    if (wanted_gone(f, r, total) && (::unlink(f.path.c_str()) == 0 || errno == ENOENT)) {
      total -= f.size;
      out.removed.push_back(f.key);
      out.removed_bytes += f.size;
    } else {
      out.kept++;
      out.kept_bytes += f.size;
    }
  }
  return out;
}

void evict_lru(const std::string& dir, uint64_t max_bytes, const std::string& keep) {
  uint64_t total = 0;
  for (auto& f : scan(dir)) total += f.size;
  if (total <= max_bytes) return;
  PruneRequest r;
  r.max_bytes = max_bytes;
  r.keep = keep;
  prune(dir, r);
}

}  // namespace kiln::jit
