// Cache settings from the environment.
#include "jit/cache_config.hpp"

#include <pwd.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace kiln::jit {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

CacheMode parse_mode(const std::string& v) {
  if (v.empty() || v == "disk") return CacheMode::Disk;
  if (v == "memory") return CacheMode::Memory;
  if (v == "off") return CacheMode::Off;
  warn("KILN_CACHE=" + v + " is not one of disk, memory, off; using disk");
  return CacheMode::Disk;
}

std::string home_dir() {
  if (std::string home = env("HOME"); !home.empty()) return home;
  // Services and containers may run without HOME; the password database still knows.
  if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir && *pw->pw_dir) return pw->pw_dir;
  return "";
}

std::string default_dir() {
  // The XDG spec says relative values are invalid and must be ignored.
  if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty() && xdg[0] == '/') return xdg + "/kiln";
  if (std::string home = home_dir(); !home.empty()) return home + "/.cache/kiln";
  return "";
}

bool shared_group(const std::string& v) { return v == "group"; }

}  // namespace

CacheModes cache_modes() {
  if (shared_group(env("KILN_CACHE_SHARED"))) return {0750, 0640};
  return {};
}

bool parse_size(const std::string& v, uint64_t& out) {
  char* end = nullptr;
  double number = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || !(number >= 0 && number < 1e18)) return false;  // also rejects NaN
  std::string suffix(end);
  for (char& c : suffix) c = char(std::toupper(static_cast<unsigned char>(c)));
  if (suffix.ends_with("IB")) {
    suffix.resize(suffix.size() - 2);
  } else if (suffix.ends_with("B")) {
    suffix.pop_back();
  }
  static const std::string kUnits = "KMGT";
  double scale = 1;
  if (!suffix.empty()) {
    auto pos = suffix.size() == 1 ? kUnits.find(suffix[0]) : std::string::npos;
    if (pos == std::string::npos) return false;
    for (size_t i = 0; i <= pos; ++i) scale *= 1024;
  }
  // 2^64 bytes and more do not fit, and converting them to uint64_t is undefined.
  if (number * scale >= 18446744073709551616.0) return false;
  out = uint64_t(number * scale);
  return true;
}

CacheConfig cache_config_from_env() {
  CacheConfig c;
  c.mode = parse_mode(env("KILN_CACHE"));
  c.dir = env("KILN_CACHE_DIR");
  if (c.dir.empty()) c.dir = default_dir();
  if (std::string cap = env("KILN_CACHE_MAX_BYTES"); !cap.empty() && !parse_size(cap, c.max_bytes))
    warn("KILN_CACHE_MAX_BYTES=" + cap + " is not a size such as 500M or 2G; using 1G");
  if (std::string shared = env("KILN_CACHE_SHARED"); !shared.empty() && !shared_group(shared))
    warn("KILN_CACHE_SHARED=" + shared + " is not `group`; the cache stays private to you");
  return c;
}

void warn(const std::string& message) {
  // One fputs call, so lines from several threads do not interleave.
  std::fputs(("kiln: warning: " + message + "\n").c_str(), stderr);
}

}  // namespace kiln::jit
