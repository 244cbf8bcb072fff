// Small POSIX file helpers for the disk cache. They report failure as an errno value instead of
// throwing: every disk problem degrades the cache, none may fail a computation.
#pragma once
#include <sys/stat.h>
#include <sys/types.h>

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kiln::jit {

// mkdir -p with `mode` for every directory created (the umask still applies). 0 or errno.
int make_directories(const std::string& path, mode_t mode);

// Whether kiln may load GPU code from a cache directory or entry. kiln runs what it loads, so
// (as ssh does with keys) only a path that no other user can write is trusted: owned by the
// effective user (root's own files are fine for root; another user's are refused even for
// root) and neither group- nor world-writable. Group-readable is fine (KILN_CACHE_SHARED).
struct Trust {
  std::string problem;  // "" when trusted, else what is wrong, naming the owner and the mode
  std::string fix;      // a shell command that makes it trusted
  bool ok() const { return problem.empty(); }
};
Trust trust_of(const struct stat& st, const std::string& path);

// A cache directory's trust (the path may be a link to it, as ~/.cache often is). A directory
// that cannot be examined is trusted here: the access checks that follow report it.
Trust directory_trust(const std::string& dir);

// A directory inside the cache (usage/): trusted only as a real directory, not a link, since
// a link there would send kiln's writes and deletions elsewhere. A missing one is trusted.
Trust subdirectory_trust(const std::string& dir);

// The whole file, or nullopt when it cannot be opened or read, or when it is not trusted; then
// `trust` says why. The check is made on the open file, so a swap after it cannot slip through.
std::optional<std::vector<char>> read_trusted_file(const std::string& path, Trust& trust);

// The whole file, or nullopt when it cannot be opened or read, or is a symbolic link.
std::optional<std::vector<char>> read_whole_file(const std::string& path);

// Sets a file's access and modification times from the fine-grained realtime clock.
void touch_precisely(const std::string& path);

// Writes `data` to a unique temporary file beside `path`, then renames it over `path`, so
// readers see the old file or the complete new one, never a partial one; two writers racing
// on the same path both succeed and the last rename wins. 0 or errno.
int write_file_atomically(const std::string& path, std::span<const char> data, mode_t mode);

// Writes all of `data` to `fd`, retrying on EINTR and short writes. 0 or errno.
int write_all(int fd, std::span<const char> data);

// Reads `fd` from its current offset to the end. nullopt on a read error.
std::optional<std::vector<char>> read_all(int fd);

// The suffix of those temporary files, so cleanup can recognise ones a crash left behind.
inline constexpr const char* kTempSuffix = ".tmp";

}  // namespace kiln::jit
