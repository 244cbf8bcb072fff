// POSIX file helpers for the disk cache.
#include "jit/file_util.hpp"

#include <ctime>

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>

namespace kiln::jit {
namespace {

std::string temp_path_for(const std::string& path) {
  // pid + a process-wide counter make the name unique across processes and threads; the
  // leading dot keeps it out of `ls` and out of the *.kkc entries.
  static std::atomic<unsigned> counter{0};
  auto slash = path.find_last_of('/');
  std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  return dir + "." + base + "." + std::to_string(::getpid()) + "." +
         std::to_string(counter.fetch_add(1)) + kTempSuffix;
}

// "name (uid N)", or "uid N" without a password entry. The _r form: lookups run on any thread.
std::string user_name(uid_t uid) {
  passwd entry, *pw = nullptr;
  char buf[4096];
  std::string id = "uid " + std::to_string(uid);
  if (::getpwuid_r(uid, &entry, buf, sizeof buf, &pw) != 0 || !pw || !pw->pw_name) return id;
  return std::string(pw->pw_name) + " (" + id + ")";
}

std::string octal_mode(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", unsigned(mode & 07777));
  return buf;
}

}  // namespace

Trust trust_of(const struct stat& st, const std::string& path) {
  Trust t;
  uid_t me = ::geteuid();
  bool foreign = st.st_uid != me;
  bool group_w = st.st_mode & S_IWGRP, world_w = st.st_mode & S_IWOTH;
  if (!foreign && !group_w && !world_w) return t;
  t.problem = "(owner " + user_name(st.st_uid) + ", mode " + octal_mode(st.st_mode) + ") is ";
  if (foreign) t.problem += "owned by another user, not by " + user_name(me);
  if (foreign && (group_w || world_w)) t.problem += ", and is ";
  if (group_w || world_w) t.problem += world_w ? "writable by every user" : "writable by its group";
  if (foreign) t.fix = "chown " + std::to_string(me) + " " + path;
  if (group_w || world_w) t.fix += (foreign ? " && " : "") + std::string("chmod go-w ") + path;
  return t;
}

Trust directory_trust(const std::string& dir) {
  struct stat st;
  return ::stat(dir.c_str(), &st) == 0 ? trust_of(st, dir) : Trust{};
}

Trust subdirectory_trust(const std::string& dir) {
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0) return {};
  if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode))
    return {std::string("is a ") + (S_ISLNK(st.st_mode) ? "link" : "file") + ", not a directory",
            "rm " + dir};
  return trust_of(st, dir);
}

std::optional<std::vector<char>> read_trusted_file(const std::string& path, Trust& trust) {
  trust = {};
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st;
  std::optional<std::vector<char>> data;
  if (::fstat(fd, &st) == 0 && (trust = trust_of(st, path)).ok()) data = read_all(fd);
  ::close(fd);
  return data;
}

int make_directories(const std::string& path, mode_t mode) {
  if (path.empty()) return ENOENT;
  // Create each prefix in turn; EEXIST is fine as long as it is a directory in the end.
  for (size_t pos = path.find('/', 1);; pos = path.find('/', pos + 1)) {
    std::string prefix = path.substr(0, pos);
    if (::mkdir(prefix.c_str(), mode) != 0 && errno != EEXIST) return errno;
    if (pos == std::string::npos) break;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return errno;
  return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

int write_all(int fd, std::span<const char> data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    done += size_t(n);
  }
  return 0;
}

std::optional<std::vector<char>> read_all(int fd) {
  std::vector<char> data;
  char chunk[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) return data;
    data.insert(data.end(), chunk, chunk + n);
  }
}

std::optional<std::vector<char>> read_whole_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  auto data = read_all(fd);
  ::close(fd);
  return data;
}

// The kernel stamps files from a coarse clock (a few ms), so entries written or used in the
// same tick would tie and LRU order would be a coin toss; stamp them from the fine clock.
void touch_precisely(const std::string& path) {
  timespec now[2];
  ::clock_gettime(CLOCK_REALTIME, &now[0]);
  now[1] = now[0];
  ::utimensat(AT_FDCWD, path.c_str(), now, 0);  // failing (read-only directory) costs nothing
}

int write_file_atomically(const std::string& path, std::span<const char> data, mode_t mode) {
  std::string tmp = temp_path_for(path);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return errno;
  int err = write_all(fd, data);
  // No fsync: after a power loss the entry may be empty or torn, which the checksum turns into
  // a miss; paying milliseconds per kernel for durability would buy nothing.
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0) touch_precisely(tmp);
  if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) ::unlink(tmp.c_str());
  return err;
}

}  // namespace kiln::jit
