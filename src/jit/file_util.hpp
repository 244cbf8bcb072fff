// Small POSIX file helpers for the disk cache. They report failure as an errno value instead of
// throwing: every disk problem degrades the cache, none may fail a computation.
#pragma once
#include <sys/types.h>

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kiln::jit {

// mkdir -p with `mode` for every directory created (the umask still applies). 0 or errno.
int make_directories(const std::string& path, mode_t mode);

// The whole file, or nullopt when it cannot be opened or read.
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
