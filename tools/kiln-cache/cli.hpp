// kiln-cache: what the commands share (options, errors, output helpers, cache access).
#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "jit/cache_inventory.hpp"

namespace kiln_cache {

// A bad command line: reported with a pointer to --help, exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// The command could not do its job (missing directory, unknown key): exit status 1.
struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The command line, as CLI11 parsed it (main.cpp defines which command takes which option).
struct Options {
  std::string dir;
  bool json = false;
  std::string sort = "used";              // list --sort
  std::optional<std::string> key;         // show KEY
  bool fix = false;                       // verify --fix
  std::optional<std::string> max_bytes;   // prune --max-bytes
  std::optional<std::string> older_than;  // prune --older-than
};

struct Command {
  const char* name;
  const char* synopsis;  // "list [--sort hits|size|compile|used]"
  const char* summary;   // one line for the global help
  const char* help;      // the rest of `kiln-cache COMMAND --help`
  int (*run)(const Options&);
};
const std::vector<Command>& commands();

int run_list(const Options& o);
int run_show(const Options& o);
int run_stats(const Options& o);
int run_verify(const Options& o);
int run_prune(const Options& o);
int run_clear(const Options& o);

// ---- the cache -----------------------------------------------------------------------------

// Why kiln does not trust `dir` or its usage/ (another user could write them: jit::usage_trust),
// what that costs and the fix, as a clause after the path; nullopt when it trusts them.
std::optional<std::string> distrust(const std::string& dir);
// Throws Failure unless `dir` is a readable directory. One kiln does not trust is read with a
// warning on stderr (distrust); its usage is not read, so hits show as 0.
void require_directory(const std::string& dir);
// As require_directory, but an untrusted directory is a Failure: the commands that delete or
// write (clear, prune, verify --fix) leave it alone until its owner fixes it.
void require_trusted_directory(const std::string& dir, const std::string& command);
// Every entry file with its hits (the usage logs are folded first when the directory allows).
std::vector<kiln::jit::EntryFile> load_entries(const std::string& dir);
// The entry file whose key starts with `prefix`; Failure when none or several match.
std::string resolve_key(const std::string& dir, const std::string& prefix);

// ---- output --------------------------------------------------------------------------------

std::string human_bytes(uint64_t bytes);
std::string human_ms(double ms);
std::string human_age(int64_t then_us, int64_t now_us);  // "5 min ago"
std::string local_time(int64_t unix_s);                  // "2026-01-31 14:05:09"
std::string shorten(std::string_view s, size_t max);     // one line, "..." past max
std::string join(const std::vector<std::string>& parts, std::string_view sep);
std::string count(uint64_t n, std::string_view one, std::string_view many);  // "1 entry"

// Columns padded to their widest cell; `right[i]` right-aligns column i (numbers).
void print_table(const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right);

// Insertion-ordered, so members print in the order each command writes them.
using Json = nlohmann::ordered_json;
// Writes the document, compact, and a newline to stdout. Bytes that are not UTF-8 (in a path or
// a kernel's source) print as U+FFFD instead of failing the command.
void write_json(const Json& document);
// Whether a document was written: a command that fails after its output (clear, when some files
// stay) must not add a second one.
bool json_written();

// The fields kiln::cache::Entry has, as one JSON object (the commands add their own).
Json entry_json(const kiln::jit::EntryFile& f);

}  // namespace kiln_cache
