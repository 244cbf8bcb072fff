// The per-process usage logs and their summary; see usage_log.hpp for the design.
#include "jit/usage_log.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <vector>

#include "jit/cache_config.hpp"
#include "jit/cache_key.hpp"
#include "jit/file_util.hpp"

namespace kiln::jit {
namespace {

// Appending sooner than this bounds what a crash loses; later would be free either way, since
// jit::get() hits are rare once the plan cache holds the kernels.
constexpr size_t kFlushKeys = 256;
constexpr int64_t kFlushHits = 4096;
constexpr int64_t kFlushIntervalUs = 60'000'000;
constexpr time_t kStaleTempSeconds = 3600;

std::string usage_dir(const std::string& dir) { return dir + "/usage"; }
std::string summary_path(const std::string& dir) { return usage_dir(dir) + "/summary"; }

// ---- parsing ---------------------------------------------------------------------------------

bool parse_int(const std::string& s, int64_t& out) {
  if (s.empty() || s.size() > 18) return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  return true;
}

// "1764590000.123456" or plain seconds "1764590000".
bool parse_time_us(const std::string& s, int64_t& out) {
  auto dot = s.find('.');
  int64_t sec = 0, frac = 0;
  if (!parse_int(s.substr(0, dot), sec)) return false;
  if (dot != std::string::npos) {
    std::string f = s.substr(dot + 1);
    if (f.empty() || f.size() > 6 || !parse_int(f, frac)) return false;
    for (size_t i = f.size(); i < 6; ++i) frac *= 10;
  }
  out = sec * 1'000'000 + frac;
  return true;
}

bool parse_line(const std::string& line, std::string& key, Usage& u) {
  char k[80], hits[32], when[32];
  if (std::sscanf(line.c_str(), "%79s %31s %31s", k, hits, when) != 3) return false;
  key = k;
  return is_cache_key(key) && parse_int(hits, u.hits) && parse_time_us(when, u.last_used_us);
}

// Only complete lines count: a writer that died mid-append leaves a last line without its
// newline, whose numbers may be cut short.
void parse_into(const std::vector<char>& text, UsageMap& into) {
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n') continue;
    std::string key;
    Usage u;
    if (parse_line(std::string(text.data() + start, i - start), key, u))
      merge_usage(into, {{key, u}});
    start = i + 1;
  }
}

std::string serialise(const UsageMap& m) {
  std::string out;
  for (const auto& [key, u] : m) out += usage_line(key, u);
  return out;
}

std::vector<std::string> log_paths(const std::string& dir) {
  std::vector<std::string> paths;
  DIR* d = ::opendir(usage_dir(dir).c_str());
  if (!d) return paths;
  while (const dirent* ent = ::readdir(d)) {
    std::string name = ent->d_name;
    if (!name.starts_with(".") && name.ends_with(".log"))
      paths.push_back(usage_dir(dir) + "/" + name);
  }
  ::closedir(d);
  return paths;
}

// ---- appending -------------------------------------------------------------------------------

bool same_file(int fd, const std::string& path) {
  struct stat a, b;
  return ::fstat(fd, &a) == 0 && ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

// Appends under the log's lock. Never creates the cache directory itself: a directory that
// disappeared (a test's temporary one, a `rm -rf`) must stay gone.
void append_locked(const std::string& dir, const std::string& name, const std::string& text) {
  if (!usage_trust(dir).ok()) return;  // (a usage/ this creates is trusted: ours, private)
  if (::mkdir(usage_dir(dir).c_str(), cache_modes().dir) != 0 && errno != EEXIST) return;
  std::string path = usage_dir(dir) + "/" + name;
  for (int attempt = 0; attempt < 4; ++attempt) {
    int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
                    cache_modes().file);
    if (fd < 0) return;  // read-only cache: the hits are simply not kept
    bool done = false;
    if (::flock(fd, LOCK_EX) == 0 && same_file(fd, path)) {
      write_all(fd, std::span(text.data(), text.size()));
      done = true;
    }
    ::close(fd);  // also releases the lock
    if (done) return;
  }
}

struct Batch {
  std::string dir, name;
  UsageMap hits;
};

// The process's pending hits. Never destroyed: atexit handlers and other threads may still
// record or flush while static objects are being torn down.
class Recorder {
 public:
  void record(const std::string& dir, const std::string& key) {
    std::unique_lock lock(mutex_);
    if (dir != dir_) {
      Batch old = take();
      dir_ = dir;
      lock.unlock();
      write(old);
      lock.lock();
    }
    int64_t now = now_us();
    Usage& u = pending_[key];
    u.hits++;
    u.last_used_us = now;
    if (++pending_hits_ < kFlushHits && pending_.size() < kFlushKeys &&
        now - last_flush_us_ < kFlushIntervalUs)
      return;
    Batch due = take();
    lock.unlock();
    write(due);
  }

  void flush() {
    std::unique_lock lock(mutex_);
    Batch due = take();
    lock.unlock();
    write(due);
  }

  UsageMap pending(const std::string& dir) {
    std::lock_guard lock(mutex_);
    return dir == dir_ ? pending_ : UsageMap{};
  }

  void forget(const std::string& dir) {
    std::lock_guard lock(mutex_);
    if (dir == dir_) take();
  }

  // fork(): the child starts with no pending hits (the parent will log them) and a log of its
  // own; the mutex is held across the fork so the child never inherits it mid-update.
  void before_fork() { mutex_.lock(); }
  void after_fork_parent() { mutex_.unlock(); }
  void after_fork_child() {
    pending_.clear();
    pending_hits_ = 0;
    start_us_ = last_flush_us_ = now_us();
    mutex_.unlock();
  }

 private:
  Batch take() {
    Batch b{dir_, std::to_string(::getpid()) + "-" + std::to_string(start_us_) + ".log", {}};
    b.hits.swap(pending_);
    pending_hits_ = 0;
    last_flush_us_ = now_us();
    return b;
  }
  static void write(const Batch& b) {
    if (!b.hits.empty() && !b.dir.empty()) append_locked(b.dir, b.name, serialise(b.hits));
  }

  std::mutex mutex_;
  std::string dir_;
  UsageMap pending_;
  int64_t pending_hits_ = 0;
  int64_t start_us_ = now_us();
  int64_t last_flush_us_ = start_us_;
};

Recorder& recorder() {
  static Recorder* r = [] {
    auto* rec = new Recorder;
    std::atexit([] { recorder().flush(); });
    ::pthread_atfork([] { recorder().before_fork(); }, [] { recorder().after_fork_parent(); },
                     [] { recorder().after_fork_child(); });
    return rec;
  }();
  return *r;
}

// ---- folding ---------------------------------------------------------------------------------

// Reads and deletes one log under its lock, so an appender either finished before (its lines
// are read) or reopens a fresh file after (its lines wait for the next fold).
void consume_log(const std::string& path, UsageMap& into) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  if (::flock(fd, LOCK_EX) == 0 && same_file(fd, path)) {
    if (auto text = read_all(fd)) {
      parse_into(*text, into);
      ::unlink(path.c_str());
    }
  }
  ::close(fd);
}

void drop_missing_entries(const std::string& dir, UsageMap& m) {
  for (auto it = m.begin(); it != m.end();) {
    std::string path = dir + "/" + it->first + ".kkc";
    it = ::access(path.c_str(), F_OK) != 0 && errno == ENOENT ? m.erase(it) : std::next(it);
  }
}

// Temporary summaries of folds that died.
void remove_stale_temps(const std::string& dir) {
  DIR* d = ::opendir(usage_dir(dir).c_str());
  if (!d) return;
  time_t now = std::time(nullptr);
  while (const dirent* ent = ::readdir(d)) {
    std::string name = ent->d_name, path = usage_dir(dir) + "/" + name;
    struct stat st;
    if (name.starts_with(".") && name.ends_with(kTempSuffix) && ::stat(path.c_str(), &st) == 0 &&
        now - st.st_mtime > kStaleTempSeconds)
      ::unlink(path.c_str());
  }
  ::closedir(d);
}

}  // namespace

void merge_usage(UsageMap& into, const UsageMap& from) {
  for (const auto& [key, u] : from) {
    Usage& t = into[key];
    t.hits += u.hits;
    if (u.last_used_us > t.last_used_us) t.last_used_us = u.last_used_us;
  }
}

int64_t now_us() {
  timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000;
}

std::string usage_line(const std::string& key, const Usage& u) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s %lld %lld.%06lld\n", key.c_str(), (long long)u.hits,
                (long long)(u.last_used_us / 1'000'000), (long long)(u.last_used_us % 1'000'000));
  return buf;
}

void record_hit(const std::string& dir, const std::string& key) { recorder().record(dir, key); }
void flush_usage() { recorder().flush(); }
UsageMap pending_usage(const std::string& dir) { return recorder().pending(dir); }
void forget_pending_usage(const std::string& dir) { recorder().forget(dir); }

Trust usage_trust(const std::string& dir) {
  if (Trust t = directory_trust(dir); !t.ok()) return t;
  Trust t = subdirectory_trust(usage_dir(dir));
  if (!t.ok()) t.problem = "has a usage/ that " + t.problem;
  return t;
}

UsageMap read_usage(const std::string& dir) {
  UsageMap total;
  if (!usage_trust(dir).ok()) return total;
  std::vector<std::string> paths = log_paths(dir);
  paths.insert(paths.begin(), summary_path(dir));
  for (const auto& p : paths)
    if (auto text = read_whole_file(p)) parse_into(*text, total);
  return total;
}

UsageMap fold_usage(const std::string& dir) {
  if (!usage_trust(dir).ok()) return {};
  std::string lock_path = usage_dir(dir) + "/fold.lock";
  int lock =
      ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, cache_modes().file);
  if (lock < 0 || ::access(usage_dir(dir).c_str(), W_OK) != 0 || ::flock(lock, LOCK_EX) != 0) {
    if (lock >= 0) ::close(lock);
    return read_usage(dir);
  }
  UsageMap total;
  if (auto text = read_whole_file(summary_path(dir))) parse_into(*text, total);
  for (const auto& p : log_paths(dir)) consume_log(p, total);
  drop_missing_entries(dir, total);
  std::string text = serialise(total);
  write_file_atomically(summary_path(dir), std::span(text.data(), text.size()), cache_modes().file);
  remove_stale_temps(dir);
  ::close(lock);
  return total;
}

bool remove_usage(const std::string& dir) {
  if (!usage_trust(dir).ok()) return false;
  bool ok = true;
  std::vector<std::string> paths = log_paths(dir);
  paths.push_back(summary_path(dir));
  for (const auto& p : paths) ok &= ::unlink(p.c_str()) == 0 || errno == ENOENT;
  return ok;
}

}  // namespace kiln::jit
