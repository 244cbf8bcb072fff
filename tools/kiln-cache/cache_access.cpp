// Opening the cache directory, loading entries, resolving key prefixes.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "cli.hpp"
#include "jit/cache_key.hpp"
#include "jit/usage_log.hpp"

namespace kiln_cache {
namespace jit = kiln::jit;

namespace {

void require_readable_directory(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT)
      throw Failure("cache directory " + dir +
                    " does not exist (nothing has been cached there yet; pass --dir DIR or set "
                    "KILN_CACHE_DIR)");
    throw Failure("cannot open cache directory " + dir + ": " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) throw Failure(dir + " is not a directory");
  if (::access(dir.c_str(), R_OK | X_OK) != 0)
    throw Failure("cannot read cache directory " + dir + ": " + std::strerror(errno));
}

}  // namespace

std::optional<std::string> distrust(const std::string& dir) {
  jit::Trust t = jit::usage_trust(dir);
  if (t.ok()) return std::nullopt;
  const bool whole = !jit::directory_trust(dir).ok();  // else only usage/: entries still load
  return t.problem + (whole ? ", so kiln does not use it" : ", so kiln keeps no hits there") +
         "; run `" + t.fix + "`";
}

void require_directory(const std::string& dir) {
  require_readable_directory(dir);
  if (auto why = distrust(dir))
    std::cerr << "kiln-cache: warning: cache directory " << dir << " " << *why << "\n";
}

void require_trusted_directory(const std::string& dir, const std::string& command) {
  require_readable_directory(dir);
  if (auto why = distrust(dir))
    throw Failure("`kiln-cache " + command +
                  "` leaves alone a directory kiln does not trust: " + dir + " " + *why + " first");
}

std::vector<jit::EntryFile> load_entries(const std::string& dir) {
  require_directory(dir);
  return jit::list_entry_files(dir, jit::fold_usage(dir));
}

namespace {

std::string normalised_prefix(const std::string& prefix) {
  std::string p = prefix;
  for (char& c : p) c = char(std::tolower(static_cast<unsigned char>(c)));
  bool hex = std::all_of(p.begin(), p.end(), [](char c) { return std::isxdigit(c); });
  if (p.empty() || p.size() > 64 || !hex)
    throw UsageError("'" + prefix + "' is not a key or key prefix (hex digits, as `list` shows)");
  return p;
}

// The keys of the *.kkc files, from their names: resolving a prefix reads no entry.
std::vector<std::string> keys_in(const std::string& dir) {
  std::vector<std::string> keys;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.ends_with(".kkc") && jit::is_cache_key(name.substr(0, name.size() - 4)))
      keys.push_back(name.substr(0, name.size() - 4));
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::string ambiguity(const std::string& dir, const std::string& prefix,
                      const std::vector<std::string>& keys) {
  std::string msg = "key prefix '" + prefix + "' is ambiguous; it matches " +
                    std::to_string(keys.size()) + " entries:";
  for (const auto& k : keys) {
    auto f = jit::read_entry_file(dir + "/" + k + ".kkc", false);
    msg += "\n  " + k + "  " + (f.valid ? f.entry.name : "(bad: " + f.problem + ")");
  }
  return msg + "\ngive more digits";
}

}  // namespace

std::string resolve_key(const std::string& dir, const std::string& prefix) {
  std::string p = normalised_prefix(prefix);
  require_directory(dir);
  std::vector<std::string> matches;
  for (const auto& k : keys_in(dir))
    if (k.starts_with(p)) matches.push_back(k);
  if (matches.empty()) throw Failure("no cache entry with key prefix '" + p + "' in " + dir);
  if (matches.size() > 1) throw Failure(ambiguity(dir, p, matches));
  return matches[0];
}

}  // namespace kiln_cache
