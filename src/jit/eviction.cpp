// LRU eviction over the cache directory.
#include "jit/eviction.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <vector>

#include "jit/file_util.hpp"

namespace kiln::jit {
namespace {

struct CacheFile {
  std::string path;
  uint64_t size;
  timespec mtime;
};

bool older(const CacheFile& a, const CacheFile& b) {
  if (a.mtime.tv_sec != b.mtime.tv_sec) return a.mtime.tv_sec < b.mtime.tv_sec;
  if (a.mtime.tv_nsec != b.mtime.tv_nsec) return a.mtime.tv_nsec < b.mtime.tv_nsec;
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
      files.push_back({path, uint64_t(st.st_size), st.st_mtim});
    }
  }
  ::closedir(d);
  return files;
}

}  // namespace

void evict_lru(const std::string& dir, uint64_t max_bytes, const std::string& keep) {
  std::vector<CacheFile> files = scan(dir);
  uint64_t total = 0;
  for (auto& f : files) total += f.size;
  if (total <= max_bytes) return;
  std::sort(files.begin(), files.end(), older);
  for (auto& f : files) {
    if (total <= max_bytes) break;
    if (f.path == keep) continue;
    // ENOENT means another process evicted it first: the bytes are gone either way.
    if (::unlink(f.path.c_str()) == 0 || errno == ENOENT) total -= f.size;
  }
}

}  // namespace kiln::jit
