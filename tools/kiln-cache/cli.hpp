// kiln-cache: what the commands share (options, errors, output helpers, cache access).
#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

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

struct Options {
  std::string dir;
  bool json = false;
  std::vector<std::string> args;  // after the command name, global options taken out
};

// Takes a command's options out of its arguments; whatever is left must be positional.
class ArgReader {
 public:
  explicit ArgReader(std::vector<std::string> args) : args_(std::move(args)) {}
  bool flag(std::string_view name);
  // `--name V` or `--name=V`; a missing value is a UsageError.
  std::optional<std::string> value(std::string_view name);
  // The positional arguments; an unknown option or more than `max` of them is a UsageError.
  std::vector<std::string> positionals(size_t max);

 private:
  std::vector<std::string> args_;
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

// Throws Failure unless `dir` is a readable directory.
void require_directory(const std::string& dir);
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

// A compact JSON writer: commas and escaping are its business.
class Json {
 public:
  Json& begin_object();
  Json& end_object();
  Json& begin_array();
  Json& end_array();
  Json& key(std::string_view k);
  Json& value(std::string_view s);
  Json& value(const char* s) { return value(std::string_view(s)); }
  Json& value(const std::string& s) { return value(std::string_view(s)); }
  Json& value(int64_t v);
  Json& value(uint64_t v);
  Json& value(int v) { return value(int64_t(v)); }
  Json& value(double v);
  Json& value(bool v);
  Json& null();
  // Writes the document and a newline to stdout.
  void print() const;

 private:
  void separate();
  std::string out_;
  std::vector<bool> first_;  // per open container: nothing written in it yet
  bool after_key_ = false;
};

// The fields kiln::cache::Entry has, as one JSON object's members (the caller opens it).
void entry_members(Json& j, const kiln::jit::EntryFile& f);

}  // namespace kiln_cache
