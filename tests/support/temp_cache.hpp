// A throw-away kernel cache for tests: a temporary directory, KILN_CACHE_* pointed at it, and
// the file helpers that inspect or damage the entries written there, and a capture of the
// warnings kiln prints. Shared by the tests of the JIT cache (test_jit_cache), of its inventory
// and tool (test_kiln_cache) and of the environment (test_environment), so that all set up the
// cache exactly the same way.
#pragma once
#include <doctest/doctest.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "jit/jit.hpp"

namespace kiln::test_support {

// A fresh directory under the system's temporary directory, removed with everything in it.
struct TempDir {
  std::string path;
  explicit TempDir(const std::string& prefix = "kiln-test") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    namespace fs = std::filesystem;
    std::error_code ec;
    // A test may have made the directory read-only; remove_all needs to write it.
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

// Points the cache at `dir` (with an optional size cap and KILN_CACHE mode) and starts from an
// empty memory cache, as a new process would.
inline void use_cache(const std::string& dir, const char* max_bytes = nullptr,
                      const char* mode = nullptr) {
  ::setenv("KILN_CACHE_DIR", dir.c_str(), 1);
  if (max_bytes)
    ::setenv("KILN_CACHE_MAX_BYTES", max_bytes, 1);
  else
    ::unsetenv("KILN_CACHE_MAX_BYTES");
  if (mode)
    ::setenv("KILN_CACHE", mode, 1);
  else
    ::unsetenv("KILN_CACHE");
  kiln::jit::reinitialize_for_testing();
}

// The process's cache is built, from the environment, on its first use, and reinitializing
// builds it again: so a test's first use_cache() can warn twice about one bad setting. A test
// that counts warnings calls this before it starts capturing stderr.
inline void build_cache_now() {
  TempDir somewhere;
  use_cache(somewhere.path);
}

// Sets (or, with nullptr, unsets) one environment variable until the end of the scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~ScopedEnv() { had_ ? ::setenv(name_, old_.c_str(), 1) : ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

// The account an unprivileged child becomes and whose files root's tests plant; the same on
// Debian, Ubuntu and Fedora.
inline constexpr uid_t kNobody = 65534;

// Gives `path` to nobody, as another user's file. Needs root, as CI and the dev machine run.
inline void give_to_nobody(const std::string& path) {
  REQUIRE_MESSAGE(::chown(path.c_str(), kNobody, kNobody) == 0,
                  "chown to nobody needs root (CI runs the tests as root)");
}

inline std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// A new file is 0600, as kiln makes its own: under a umask such as 002 it would otherwise be
// group-writable, an untrusted entry that kiln and kiln-cache refuse. An existing file keeps
// its mode.
inline void write_bytes(const std::string& path, const std::vector<char>& b) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  REQUIRE_MESSAGE(fd >= 0, "cannot write " << path);
  bool complete = ::write(fd, b.data(), b.size()) == ssize_t(b.size());
  ::close(fd);
  REQUIRE_MESSAGE(complete, "short write to " << path);
}

inline std::string read_text(const std::string& path) {
  auto b = read_bytes(path);
  return {b.begin(), b.end()};
}

inline void write_text(const std::string& path, const std::string& s) {
  write_bytes(path, std::vector<char>(s.begin(), s.end()));
}

// Redirects fd 2 into a file until finish(), which returns what was written (or until it is
// destroyed, when an assertion ends the case first).
struct StderrCapture {
  TempDir tmp;
  int saved = -1;
  StderrCapture() {
    std::fflush(stderr);
    saved = ::dup(2);
    int fd = ::open((tmp.path + "/err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(fd, 2);
    ::close(fd);
  }
  ~StderrCapture() { restore(); }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;
  std::string finish() {
    restore();
    return read_text(tmp.path + "/err");
  }

 private:
  void restore() {
    if (saved < 0) return;
    std::fflush(stderr);
    ::dup2(saved, 2);
    ::close(saved);
    saved = -1;
  }
};

inline int count_lines_with(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(needle) != std::string::npos;
  return n;
}

}  // namespace kiln::test_support
