// Listing, checking and clearing a cache directory.
#include "jit/cache_inventory.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "jit/cache_key.hpp"
#include "jit/file_util.hpp"

namespace kiln::jit {
namespace {

// Regular files of `dir` by name, "." and ".." aside.
std::vector<std::string> file_names(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return names;
  while (const dirent* ent = ::readdir(d)) {
    std::string name = ent->d_name;
    struct stat st;
    if (::lstat((dir + "/" + name).c_str(), &st) == 0 && S_ISREG(st.st_mode)) names.push_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

constexpr const char* kVanished = "removed while being read";

bool is_entry_name(const std::string& name) { return name.ends_with(".kkc"); }
bool is_temp_name(const std::string& name) {
  return name.starts_with(".") && name.ends_with(kTempSuffix);
}

std::string key_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return name.ends_with(".kkc") ? name.substr(0, name.size() - 4) : name;
}

// Why a decoded file is not the entry its name promises, or "".
std::string name_problem(const std::string& key, const CacheEntry& e) {
  if (!is_cache_key(key)) return "file name is not a cache key (64 hex digits)";
  if (e.key != key)
    return "holds the entry of key " + e.key.substr(0, 12) + "... (a copied or renamed file)";
  return "";
}

// Removes the regular files of `dir` that `pick` selects; adds to `r`.
template <typename Pick>
void remove_files(const std::string& dir, ClearResult& r, Pick pick) {
  for (const auto& name : file_names(dir)) {
    if (!pick(name)) continue;
    std::string path = dir + "/" + name;
    struct stat st;
    bool counted = is_entry_name(name) && ::stat(path.c_str(), &st) == 0;
    if (::unlink(path.c_str()) == 0) {
      if (counted) r.entries++, r.bytes += uint64_t(st.st_size);
    } else if (errno != ENOENT) {
      r.complete = false;
    }
  }
}

}  // namespace

EntryFile read_entry_file(const std::string& path, bool keep_binary) {
  EntryFile f;
  f.path = path;
  f.key = key_of(path);
  Trust trust;
  auto bytes = read_trusted_file(path, trust);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    f.problem = errno == ENOENT ? kVanished : "cannot be read";
    return f;
  }
  f.bytes = uint64_t(st.st_size);
  f.mtime_us = int64_t(st.st_mtim.tv_sec) * 1'000'000 + st.st_mtim.tv_nsec / 1000;
  if (!trust.ok()) {
    // kiln never loads it (DiskCache::load), so the tools call it bad too.
    f.problem = "untrusted: " + trust.problem + " (kiln does not load it; fix: " + trust.fix + ")";
    return f;
  }
  if (!bytes) {
    f.problem = "cannot be read";
    return f;
  }
  if (decode_entry(*bytes, f.entry, f.problem)) f.problem = name_problem(f.key, f.entry);
  f.valid = f.problem.empty();
  if (!keep_binary) f.entry.binary = {};
  return f;
}

std::vector<EntryFile> list_entry_files(const std::string& dir, const UsageMap& usage) {
  std::vector<EntryFile> out;
  for (const auto& name : file_names(dir)) {
    if (!is_entry_name(name)) continue;
    EntryFile f = read_entry_file(dir + "/" + name, false);
    if (f.problem == kVanished) continue;  // another process removed it meanwhile
    if (auto it = usage.find(f.key); it != usage.end()) f.usage = it->second;
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<std::string> unknown_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& name : file_names(dir))
    if (!is_entry_name(name) && !is_temp_name(name)) out.push_back(name);
  return out;
}

ClearResult clear_directory(const std::string& dir) {
  ClearResult r;
  remove_files(dir, r, [](const std::string& n) { return is_entry_name(n) || is_temp_name(n); });
  r.complete &= remove_usage(dir);
  // Saved failing sources are <name>_<key prefix>.cu; kiln writes nothing else there.
  remove_files(dir + "/failed", r,
               [](const std::string& n) { return n.ends_with(".cu") || is_temp_name(n); });
  return r;
}

}  // namespace kiln::jit
