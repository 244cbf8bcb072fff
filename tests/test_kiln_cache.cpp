// kiln::cache's inventory API, the usage logs behind hit counts and LRU, and the kiln-cache
// tool (KILN_CACHE_TOOL) run as a separate process, all on a machine without a GPU: kernels
// are compiled by NVRTC for sm_90, directly (jit::get) or by evaluating kiln expressions.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <kiln/cache.hpp>
#include <kiln/kiln.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "jit/cache_file.hpp"
#include "jit/jit.hpp"
#include "jit/usage_log.hpp"

namespace fs = std::filesystem;
namespace jit = kiln::jit;
using jit::Origin;

namespace {

// Evaluated groups are compiled for sm_90 even without a GPU; the executor reads this once, at
// the first evaluation, so it is set before main().
const bool kArchSet = [] { return ::setenv("KILN_JIT_ARCH", "sm_90", 0) == 0; }();

// ---- fixtures ---------------------------------------------------------------------------

struct TempDir {
  std::string path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "kiln-cache-test-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void use_cache(const std::string& dir, const char* max_bytes = nullptr) {
  ::setenv("KILN_CACHE_DIR", dir.c_str(), 1);
  if (max_bytes)
    ::setenv("KILN_CACHE_MAX_BYTES", max_bytes, 1);
  else
    ::unsetenv("KILN_CACHE_MAX_BYTES");
  ::unsetenv("KILN_CACHE");
  jit::reinitialize_for_testing();
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// A small kernel; `variant` makes distinct sources (and keys).
jit::Request kernel(int variant) {
  static const std::string kTemplate = R"(extern "C" __global__ void NAME(float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = y[i] * 3.0f + VARIANT.0f;
}
)";
  jit::Request r;
  r.name = "k_tool_test_" + std::to_string(variant);
  r.summary = "y = 3 * y + " + std::to_string(variant);
  r.arch = "sm_90";
  r.source =
      replace_all(replace_all(kTemplate, "NAME", r.name), "VARIANT", std::to_string(variant));
  return r;
}

std::string key_of(int variant) { return jit::get(kernel(variant)).kernel->key; }
std::string entry_path(const std::string& dir, const std::string& key) {
  return dir + "/" + key + ".kkc";
}

std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_bytes(const std::string& path, const std::vector<char>& b) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(b.data(), std::streamsize(b.size()));
}

void write_text(const std::string& path, const std::string& s) {
  write_bytes(path, std::vector<char>(s.begin(), s.end()));
}

std::string read_text(const std::string& path) {
  auto b = read_bytes(path);
  return {b.begin(), b.end()};
}

// Sets a file's mtime `seconds_ago` seconds in the past.
void age_file(const std::string& path, int64_t seconds_ago) {
  timespec t[2];
  t[0].tv_sec = t[1].tv_sec = time_t(jit::now_us() / 1'000'000 - seconds_ago);
  t[0].tv_nsec = t[1].tv_nsec = 0;
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), t, 0) == 0);
}

mode_t mode_of(const std::string& path) {
  struct stat st;
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mode & 0777;
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dir, ec)) names.push_back(e.path().filename().string());
  return names;
}

size_t count_ending(const std::string& dir, const std::string& suffix) {
  size_t n = 0;
  for (auto& name : names_in(dir)) n += name.ends_with(suffix);
  return n;
}

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// ---- running the tool ------------------------------------------------------------------------

struct ToolRun {
  int rc = -1;
  std::string out, err;
};

// Runs a shell command line (the tool with arguments, maybe behind VAR=value assignments) and
// captures stdout, stderr and the exit status.
ToolRun shell(const std::string& command) {
  TempDir tmp;
  std::string err_file = tmp.path + "/stderr";
  ToolRun r;
  FILE* p = ::popen((command + " 2>" + err_file).c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  int status = ::pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = read_text(err_file);
  return r;
}

ToolRun tool(const std::string& dir, const std::string& args, const std::string& env = "") {
  return shell(env + " " KILN_CACHE_TOOL " --dir '" + dir + "' " + args);
}

// Whether the text is one valid JSON document (checked by Python's parser when there is one).
bool valid_json(const std::string& text) {
  if (::access(KILN_PYTHON, X_OK) != 0) return text.starts_with("{");
  TempDir tmp;
  write_text(tmp.path + "/doc.json", text);
  std::string cmd = std::string(KILN_PYTHON) +
                    " -c 'import json,sys; json.load(open(sys.argv[1]))' " + tmp.path + "/doc.json";
  return shell(cmd).rc == 0;
}

// The number after "name": in compact JSON (first occurrence).
double json_number(const std::string& json, const std::string& name) {
  auto at = json.find("\"" + name + "\":");
  REQUIRE_MESSAGE(at != std::string::npos, name << " missing in " << json);
  return std::strtod(json.c_str() + at + name.size() + 3, nullptr);
}

// The "hits" of the entry with `key` in `list --json` output.
int64_t listed_hits(const std::string& json, const std::string& key) {
  auto at = json.find("\"key\":\"" + key + "\"");
  REQUIRE(at != std::string::npos);
  return int64_t(json_number(json.substr(at), "hits"));
}

// ---- processes -------------------------------------------------------------------------------

// Forks `n` children that start together and run `body`; returns how many exited with status 0.
template <typename Body>
int run_children(int n, Body body) {
  int go[2];
  REQUIRE(::pipe(go) == 0);
  std::vector<pid_t> pids;
  for (int i = 0; i < n; ++i) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::alarm(300);
      ::close(go[1]);
      char c;
      while (::read(go[0], &c, 1) > 0) {
      }
      ::_exit(body(i) ? 0 : 1);
    }
    pids.push_back(pid);
  }
  ::close(go[0]);
  ::close(go[1]);  // EOF releases every child at once
  int ok = 0;
  for (pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  return ok;
}

// This test binary, run again with only the helper case below: a fresh process that ends
// normally, so its hits reach the log through the atexit flush.
void run_helper_process(const std::string& dir) {
  std::string self = fs::read_symlink("/proc/self/exe").string();
  auto r = shell("KILN_CACHE_TEST_CHILD=1 KILN_CACHE_DIR='" + dir + "' '" + self +
                 "' --test-case='helper:*' >/dev/null");
  REQUIRE(r.rc == 0);
}

}  // namespace

TEST_CASE("helper: a process that uses two kernels (run by the cross-process test)") {
  if (!std::getenv("KILN_CACHE_TEST_CHILD")) return;
  for (int i = 0; i < 3; ++i) jit::get(kernel(20));
  jit::get(kernel(21));
}

// ---- the library -----------------------------------------------------------------------------

TEST_CASE("cache::entries() describes each kernel with its hits; cache::clear() empties it") {
  TempDir dir;
  use_cache(dir.path);
  for (int v : {1, 2, 3}) jit::get(kernel(v));
  for (int i = 0; i < 4; ++i) jit::get(kernel(1));  // memory hits
  jit::clear_memory_cache();
  jit::get(kernel(2));  // a disk hit

  auto list = kiln::cache::entries();
  REQUIRE(list.size() == 3);
  std::map<std::string, kiln::cache::Entry> by_name;
  for (auto& e : list) by_name[e.name] = e;
  const auto& e1 = by_name.at("k_tool_test_1");
  CHECK(e1.valid);
  CHECK(e1.problem.empty());
  CHECK(e1.key == key_of(1));
  CHECK(e1.summary == "y = 3 * y + 1");
  CHECK(e1.arch == "sm_90");
  CHECK(e1.options.front() == "--gpu-architecture=sm_90");
  CHECK(e1.bytes == fs::file_size(entry_path(dir.path, e1.key)));
  CHECK(e1.compile_ms > 0);
  CHECK(e1.created > 1600000000);
  CHECK(e1.last_used >= e1.created);
  CHECK(e1.hits == 4);  // the memory hits above, still pending in this process
  CHECK(by_name.at("k_tool_test_2").hits == 1);
  CHECK(by_name.at("k_tool_test_3").hits == 0);

  kiln::cache::clear();
  CHECK(kiln::cache::entries().empty());
  CHECK(count_ending(dir.path, ".kkc") == 0);
  CHECK(jit::get(kernel(1)).origin == Origin::Compiled);  // memory was forgotten too
  CHECK(kiln::cache::entries().front().hits == 0);        // and the old hits
}

TEST_CASE("a hit never rewrites the entry; it goes to this process's usage log") {
  TempDir dir;
  use_cache(dir.path);
  std::string key = key_of(4);
  std::string path = entry_path(dir.path, key);
  auto bytes = read_bytes(path);
  struct stat before;
  REQUIRE(::stat(path.c_str(), &before) == 0);
  for (int i = 0; i < 3; ++i) {
    jit::clear_memory_cache();
    CHECK(jit::get(kernel(4)).origin == Origin::Disk);
  }
  jit::get(kernel(4));
  jit::flush_usage();
  struct stat after;
  REQUIRE(::stat(path.c_str(), &after) == 0);
  CHECK(after.st_ino == before.st_ino);
  CHECK(read_bytes(path) == bytes);

  auto logs = names_in(dir.path + "/usage");
  REQUIRE(logs.size() == 1);
  CHECK(logs[0].starts_with(std::to_string(::getpid()) + "-"));
  CHECK(logs[0].ends_with(".log"));
  std::string log = read_text(dir.path + "/usage/" + logs[0]);
  CHECK(log.starts_with(key + " 4 "));
  CHECK(log.ends_with("\n"));
}

TEST_CASE("a shared directory gets group-readable files, usage logs included") {
  TempDir tmp;
  std::string dir = tmp.path + "/shared/kiln";  // created by kiln
  mode_t saved = ::umask(002);                  // a group-shared setup
  use_cache(dir);
  jit::get(kernel(5));
  jit::get(kernel(5));
  jit::flush_usage();
  auto folded = tool(dir, "stats");  // writes the summary
  CHECK(folded.rc == 0);
  CHECK(mode_of(dir) == 0775);
  CHECK(mode_of(entry_path(dir, key_of(5))) == 0664);
  CHECK(mode_of(dir + "/usage") == 0775);
  CHECK(mode_of(dir + "/usage/summary") == 0664);
  jit::get(kernel(5));
  jit::flush_usage();
  ::umask(saved);
  CHECK(count_ending(dir + "/usage", ".log") == 1);
  for (auto& name : names_in(dir + "/usage"))
    if (name.ends_with(".log")) CHECK(mode_of(dir + "/usage/" + name) == 0664);
}

TEST_CASE("LRU eviction counts memory hits through the usage log, not only file mtimes") {
  TempDir sizes;
  use_cache(sizes.path);
  uintmax_t total = 0;
  for (int v : {10, 11, 12}) total += fs::file_size(entry_path(sizes.path, key_of(v)));

  TempDir dir;
  use_cache(dir.path, std::to_string(total - 1).c_str());
  std::string k10 = key_of(10), k11 = key_of(11);
  // By mtime alone 10 is the oldest; only its memory hit below says it is in use.
  age_file(entry_path(dir.path, k10), 300);
  age_file(entry_path(dir.path, k11), 200);
  CHECK(jit::get(kernel(10)).origin == Origin::Memory);
  std::string k12 = key_of(12);  // the write that goes over the cap
  CHECK(fs::exists(entry_path(dir.path, k10)));
  CHECK_FALSE(fs::exists(entry_path(dir.path, k11)));
  CHECK(fs::exists(entry_path(dir.path, k12)));
}

TEST_CASE("usage logs: torn and garbage lines are ignored; hits sum, the latest use wins") {
  TempDir dir;
  use_cache(dir.path);
  std::string key = key_of(6);
  fs::create_directories(dir.path + "/usage");
  write_text(dir.path + "/usage/1-1.log", key + " 2 1700000000.5\ngarbage line\n" + key + " 1 17");
  write_text(dir.path + "/usage/2-1.log", key + " 3 1700000100\n" + key + " x 1700000200\n");
  jit::UsageMap u = jit::read_usage(dir.path);
  CHECK(u[key].hits == 5);
  CHECK(u[key].last_used_us == 1700000100LL * 1'000'000);
  u = jit::fold_usage(dir.path);
  CHECK(u[key].hits == 5);
  CHECK(count_ending(dir.path + "/usage", ".log") == 0);
  CHECK(jit::read_usage(dir.path)[key].hits == 5);  // now from the summary
}

// ---- the tool on caches made by kiln itself ----------------------------------------------------

TEST_CASE("kiln expressions (KILN_JIT_ARCH=sm_90) fill the cache; list, show, stats describe it") {
  TempDir dir;
  use_cache(dir.path);
  // Without a GPU the host evaluation also compiles (KILN_JIT_ARCH); with one, the device runs
  // the kernels: either way they land in the cache.
  kiln::Device d = kiln::cuda_available() ? kiln::cuda() : kiln::host();
  auto x = kiln::arange(0, 1000, 1, kiln::DType::Float32, d);
  auto y = (kiln::sin(x) * 2 + kiln::cos(x) / 3).eval();
  double total = kiln::sum(x * x).get().item<double>();
  CHECK(total == doctest::Approx(332833500.0).epsilon(1e-4));
  auto entries = kiln::cache::entries();
  REQUIRE(entries.size() >= 2);

  auto list = tool(dir.path, "list");
  CHECK(list.rc == 0);
  CHECK(contains(list.out, "KEY"));
  CHECK(contains(list.out, "LAST USED"));
  for (auto& e : entries) {
    CHECK(contains(list.out, e.key.substr(0, 12) + "  " + e.name.substr(0, 30)));
    CHECK(contains(list.out, e.summary.substr(0, 20)));
  }
  CHECK(contains(list.out, "sin"));
  CHECK(contains(list.out, "sm_90"));

  auto json = tool(dir.path, "list --json");
  CHECK(json.rc == 0);
  CHECK(valid_json(json.out));
  for (auto& e : entries) CHECK(contains(json.out, "\"key\":\"" + e.key + "\""));

  auto show = tool(dir.path, "show " + entries[0].key.substr(0, 10), "PATH=/nonexistent");
  CHECK(show.rc == 0);
  CHECK(contains(show.out, entries[0].key));
  CHECK(contains(show.out, "extern \"C\" __global__"));
  CHECK(contains(show.out, "--gpu-architecture=sm_90"));
  CHECK(contains(show.out, "PTX/SASS unavailable"));
}

// ---- the tool on kernels compiled directly -------------------------------------------------

TEST_CASE("list sorts; show prints source, options and SASS through cuobjdump; JSON parses") {
  TempDir dir;
  use_cache(dir.path);
  for (int v : {1, 2, 3}) jit::get(kernel(v));
  for (int i = 0; i < 5; ++i) jit::get(kernel(2));
  jit::get(kernel(3));
  jit::flush_usage();
  std::string k1 = key_of(1), k2 = key_of(2), k3 = key_of(3);

  auto by_hits = tool(dir.path, "list --sort hits");
  CHECK(by_hits.rc == 0);
  CHECK(by_hits.out.find(k2.substr(0, 12)) < by_hits.out.find(k3.substr(0, 12)));
  CHECK(by_hits.out.find(k3.substr(0, 12)) < by_hits.out.find(k1.substr(0, 12)));
  for (const char* column : {"size", "compile", "used"}) {
    auto r = tool(dir.path, std::string("--json list --sort=") + column);
    CHECK(r.rc == 0);
    CHECK(valid_json(r.out));
  }
  CHECK(tool(dir.path, "list --sort colour").rc == 2);

  auto show = tool(dir.path, "show " + k2.substr(0, 8), "PATH=/nonexistent");
  CHECK(show.rc == 0);
  CHECK(contains(show.out, "k_tool_test_2"));
  CHECK(contains(show.out, "y = 3 * y + 2"));
  CHECK(contains(show.out, kernel(2).source));
  CHECK(contains(show.out, "-std=c++17"));
  CHECK(contains(show.out, "hits       5 "));
  CHECK(contains(show.out, "PTX/SASS unavailable: cuobjdump is not on PATH"));

  // A stand-in cuobjdump: proves the cubin goes to a file that exists while it runs.
  TempDir bin;
  write_text(bin.path + "/cuobjdump",
             "#!/bin/sh\necho \"FAKE-SASS $1\"\n[ -s \"$2\" ] && echo \"cubin file $2\"\n");
  ::chmod((bin.path + "/cuobjdump").c_str(), 0755);
  auto sass = tool(dir.path, "show " + k2, "PATH='" + bin.path + "'");
  CHECK(sass.rc == 0);
  CHECK(contains(sass.out, "--- SASS (cuobjdump -sass) ---\nFAKE-SASS -sass\ncubin file "));
  auto at = sass.out.find("cubin file ");
  CHECK_FALSE(fs::exists(sass.out.substr(at + 11, sass.out.find('\n', at) - at - 11)));

  auto json = tool(dir.path, "show --json " + k2.substr(0, 12), "PATH='" + bin.path + "'");
  CHECK(json.rc == 0);
  CHECK(valid_json(json.out));
  CHECK(contains(json.out, "\"sass\":\"FAKE-SASS -sass\\n"));
  CHECK(json_number(json.out, "hits") == 5);
}

TEST_CASE("stats: entries, bytes, hits and the compile time the hits saved") {
  TempDir dir;
  use_cache(dir.path);
  for (int v : {1, 2}) jit::get(kernel(v));
  for (int i = 0; i < 3; ++i) jit::get(kernel(1));
  jit::get(kernel(2));
  jit::flush_usage();
  double saved = 0;
  uint64_t bytes = 0;
  for (auto& e : kiln::cache::entries()) saved += double(e.hits) * e.compile_ms, bytes += e.bytes;

  auto json = tool(dir.path, "stats --json");
  CHECK(json.rc == 0);
  CHECK(valid_json(json.out));
  CHECK(json_number(json.out, "entries") == 2);
  CHECK(json_number(json.out, "bad_entries") == 0);
  CHECK(json_number(json.out, "bytes") == double(bytes));
  CHECK(json_number(json.out, "hits") == 4);
  CHECK(json_number(json.out, "saved_ms") == doctest::Approx(saved));

  auto text = tool(dir.path, "stats");
  CHECK(text.rc == 0);
  CHECK(contains(text.out, "entries       2"));
  CHECK(contains(text.out, "hits          4"));
  CHECK(contains(text.out, "time saved"));
}

TEST_CASE("verify names truncated, garbage, other-version and misnamed files; --fix removes them") {
  TempDir dir;
  use_cache(dir.path);
  std::string k1 = key_of(1), k2 = key_of(2), k3 = key_of(3), k4 = key_of(4);
  auto good = tool(dir.path, "verify");
  CHECK(good.rc == 0);
  CHECK(contains(good.out, "checked 4 entries"));

  auto b1 = read_bytes(entry_path(dir.path, k1));
  b1.resize(b1.size() / 2);
  write_bytes(entry_path(dir.path, k1), b1);
  auto b2 = read_bytes(entry_path(dir.path, k2));
  b2[8] = char(jit::kFormatVersion + 1);
  write_bytes(entry_path(dir.path, k2), b2);
  std::string garbage_key(64, 'e');
  write_text(entry_path(dir.path, garbage_key), "this is not a kernel at all, just some text");
  std::string copied_key(64, 'c');
  fs::copy_file(entry_path(dir.path, k4), entry_path(dir.path, copied_key));
  write_text(dir.path + "/notes.txt", "someone's notes");

  auto bad = tool(dir.path, "verify");
  CHECK(bad.rc == 1);
  CHECK(contains(bad.out, entry_path(dir.path, k1) + ": payload size mismatch (truncated?)"));
  CHECK(contains(bad.out, entry_path(dir.path, k2) + ": format version " +
                              std::to_string(jit::kFormatVersion + 1)));
  CHECK(contains(bad.out, entry_path(dir.path, garbage_key) + ": "));
  CHECK(contains(
      bad.out, entry_path(dir.path, copied_key) + ": holds the entry of key " + k4.substr(0, 12)));
  CHECK_FALSE(contains(bad.out, entry_path(dir.path, k3) + ":"));
  CHECK(contains(bad.out, "notes.txt is not a kiln file"));
  CHECK(contains(bad.out, "4 bad"));

  auto json = tool(dir.path, "verify --json");
  CHECK(json.rc == 1);
  CHECK(valid_json(json.out));
  CHECK(contains(json.out, "\"ok\":false"));
  CHECK(contains(json.out, "\"unknown_files\":[\"notes.txt\"]"));
  CHECK(tool(dir.path, "stats").out.find("4 damaged") != std::string::npos);

  auto fix = tool(dir.path, "verify --fix");
  CHECK(fix.rc == 0);
  CHECK(contains(fix.out, "(removed)"));
  for (auto& k : {k1, k2, garbage_key, copied_key})
    CHECK_FALSE(fs::exists(entry_path(dir.path, k)));
  CHECK(fs::exists(entry_path(dir.path, k3)));
  CHECK(fs::exists(entry_path(dir.path, k4)));
  CHECK(fs::exists(dir.path + "/notes.txt"));
  auto again = tool(dir.path, "verify");
  CHECK(again.rc == 0);
  CHECK(contains(again.out, "checked 2 entries"));
  CHECK(contains(again.out, "all good"));
}

TEST_CASE("show: an unknown key, an ambiguous prefix or a non-hex one is an error, not a crash") {
  TempDir dir;
  use_cache(dir.path);
  std::string k1 = key_of(1);
  // A second valid entry whose key differs from k1 only in the last digit.
  jit::CacheEntry e;
  std::string problem;
  REQUIRE(jit::decode_entry(read_bytes(entry_path(dir.path, k1)), e, problem));
  e.key = k1.substr(0, 63) + (k1[63] == '0' ? "1" : "0");
  e.name = "k_twin";
  write_bytes(entry_path(dir.path, e.key), jit::encode_entry(e));

  auto ambiguous = tool(dir.path, "show " + k1.substr(0, 63));
  CHECK(ambiguous.rc == 1);
  CHECK(contains(ambiguous.err, "ambiguous"));
  CHECK(contains(ambiguous.err, k1 + "  k_tool_test_1"));
  CHECK(contains(ambiguous.err, e.key + "  k_twin"));
  CHECK(ambiguous.out.empty());

  CHECK(tool(dir.path, "show " + k1).rc == 0);  // a full key is never ambiguous
  CHECK(tool(dir.path, "show " + e.key.substr(0, 64)).rc == 0);

  std::string unknown = k1[0] == 'f' ? "0123" : "f0f0f0f0";
  auto missing = tool(dir.path, "show " + unknown);
  CHECK(missing.rc == 1);
  CHECK(contains(missing.err, "no cache entry with key prefix '" + unknown + "'"));
  auto not_hex = tool(dir.path, "show xyz");
  CHECK(not_hex.rc == 2);
  CHECK(contains(not_hex.err, "'xyz' is not a key"));
  CHECK(tool(dir.path, "show").rc == 2);
  CHECK(tool(dir.path, "show a b").rc == 2);

  write_bytes(entry_path(dir.path, e.key), {'x'});
  auto damaged = tool(dir.path, "show " + e.key);
  CHECK(damaged.rc == 1);
  CHECK(contains(damaged.err, "damaged"));
}

TEST_CASE("bad command lines and missing directories: a message and a non-zero exit") {
  TempDir dir;
  use_cache(dir.path);
  jit::get(kernel(1));
  struct Case {
    std::string args;
    int rc;
    std::string message;
  };
  std::string file = entry_path(dir.path, key_of(1));
  for (const Case& c : std::vector<Case>{
           {"", 2, "no command given"},
           {"frobnicate", 2, "unknown command 'frobnicate'"},
           {"--colour list", 2, "unknown option --colour"},
           {"list --colour", 2, "unknown option --colour"},
           {"list extra", 2, "unexpected argument 'extra'"},
           {"prune", 2, "prune needs --max-bytes N or --older-than DAYS"},
           {"prune --max-bytes lots", 2, "--max-bytes takes a size"},
           {"prune --older-than -3", 2, "--older-than takes a number of days"},
           {"prune --older-than", 2, "--older-than needs a value"},
           {"stats --dir", 2, "--dir needs a directory"},
           {"stats --dir " + dir.path + "/nowhere", 1, "does not exist"},
           {"list --dir " + file, 1, "is not a directory"},
           {"verify --dir " + dir.path + "/nowhere", 1, "does not exist"},
           {"clear --dir " + dir.path + "/nowhere --json", 1, "does not exist"},
       }) {
    CAPTURE(c.args);
    auto r = shell(KILN_CACHE_TOOL " " + c.args);
    CHECK(r.rc == c.rc);
    CHECK(contains(r.err, c.message));
  }
  auto help = shell(KILN_CACHE_TOOL " --help");
  CHECK(help.rc == 0);
  for (const char* word : {"list", "show", "stats", "verify", "prune", "clear", "--json", "--dir"})
    CHECK(contains(help.out, word));
  auto list_help = shell(KILN_CACHE_TOOL " list --help");
  CHECK(list_help.rc == 0);
  CHECK(contains(list_help.out, "--sort"));
  CHECK(shell(KILN_CACHE_TOOL " help prune").out.find("--older-than") != std::string::npos);

  // Without --dir the tool uses the library's directory.
  auto by_env = shell("KILN_CACHE_DIR='" + dir.path + "' " KILN_CACHE_TOOL " list");
  CHECK(by_env.rc == 0);
  CHECK(contains(by_env.out, "k_tool_test_1"));
}

TEST_CASE("prune --max-bytes removes least recently used first, by the usage log over mtime") {
  TempDir dir;
  use_cache(dir.path);
  std::map<int, std::string> key;
  for (int v : {1, 2, 3, 4}) key[v] = key_of(v);
  // By mtime alone (all about 10 days ago) 3 and 4 would go first; the usage summary says 1 was
  // used 1 h ago, 3 2 h ago, 2 3 h ago and 4 never (so its mtime is its recency).
  int64_t now_s = jit::now_us() / 1'000'000;
  std::map<int, int64_t> age = {{1, 864100}, {2, 864050}, {3, 864300}, {4, 864200}};
  for (int v : {1, 2, 3, 4}) age_file(entry_path(dir.path, key[v]), age[v]);
  fs::create_directories(dir.path + "/usage");
  auto at = [&](int64_t s) { return jit::Usage{1, s * 1'000'000}; };
  write_text(dir.path + "/usage/summary", jit::usage_line(key[1], at(now_s - 3600)) +
                                              jit::usage_line(key[2], at(now_s - 3 * 3600)) +
                                              jit::usage_line(key[3], at(now_s - 2 * 3600)));
  uint64_t keep =
      fs::file_size(entry_path(dir.path, key[1])) + fs::file_size(entry_path(dir.path, key[3]));

  auto r = tool(dir.path, "prune --json --max-bytes " + std::to_string(keep));
  CHECK(r.rc == 0);
  CHECK(valid_json(r.out));
  CHECK(contains(r.out, "\"removed\":[\"" + key[4] + "\",\"" + key[2] + "\"]"));
  CHECK(json_number(r.out, "remaining_entries") == 2);
  CHECK(json_number(r.out, "remaining_bytes") == double(keep));
  CHECK(fs::exists(entry_path(dir.path, key[1])));
  CHECK(fs::exists(entry_path(dir.path, key[3])));

  auto text = tool(dir.path, "prune --max-bytes 1K");
  CHECK(text.rc == 0);
  CHECK(contains(text.out, "removed 2 entries"));
  CHECK(count_ending(dir.path, ".kkc") == 0);
}

TEST_CASE("prune --older-than DAYS removes entries unused for that long") {
  TempDir dir;
  use_cache(dir.path);
  std::string old_but_used = key_of(1), old = key_of(2), fresh = key_of(3);
  age_file(entry_path(dir.path, old_but_used), 10 * 86400);
  age_file(entry_path(dir.path, old), 10 * 86400);
  CHECK(jit::get(kernel(1)).origin == Origin::Memory);  // in use now, says the usage log
  jit::flush_usage();

  auto r = tool(dir.path, "prune --older-than 2");
  CHECK(r.rc == 0);
  CHECK(contains(r.out, "removed 1 entry ("));
  CHECK(contains(r.out, "removed " + old.substr(0, 12)));
  CHECK_FALSE(fs::exists(entry_path(dir.path, old)));
  CHECK(fs::exists(entry_path(dir.path, old_but_used)));
  CHECK(fs::exists(entry_path(dir.path, fresh)));
  CHECK(tool(dir.path, "prune --older-than 0.5").out.find("removed 0 entries") !=
        std::string::npos);
}

TEST_CASE("clear removes entries, usage logs and failed sources, and nothing else") {
  TempDir dir;
  use_cache(dir.path);
  for (int v : {1, 2}) jit::get(kernel(v));
  jit::get(kernel(1));
  jit::flush_usage();
  fs::create_directories(dir.path + "/failed");
  write_text(dir.path + "/failed/k_broken_0123456789ab.cu", "broken");
  write_text(dir.path + "/notes.txt", "keep me");

  auto r = tool(dir.path, "clear --json");
  CHECK(r.rc == 0);
  CHECK(valid_json(r.out));
  CHECK(json_number(r.out, "removed_entries") == 2);
  CHECK(count_ending(dir.path, ".kkc") == 0);
  CHECK(count_ending(dir.path + "/usage", ".log") == 0);
  CHECK_FALSE(fs::exists(dir.path + "/usage/summary"));
  CHECK_FALSE(fs::exists(dir.path + "/failed/k_broken_0123456789ab.cu"));
  CHECK(fs::exists(dir.path + "/notes.txt"));
  auto list = tool(dir.path, "list");
  CHECK(list.rc == 0);
  CHECK(contains(list.out, "0 entries"));
  CHECK(contains(tool(dir.path, "clear").out, "removed 0 entries"));
}

// ---- processes -------------------------------------------------------------------------------

TEST_CASE("hit counts add up across processes: each logs at exit, the tool folds the logs") {
  TempDir dir;
  use_cache(dir.path);
  run_helper_process(dir.path);  // compiles 20 and 21; two memory hits on 20
  auto first = tool(dir.path, "stats --json");
  CHECK(json_number(first.out, "hits") == 2);
  CHECK(json_number(first.out, "entries") == 2);
  CHECK(count_ending(dir.path + "/usage", ".log") == 0);  // folded into the summary

  run_helper_process(dir.path);  // now a disk hit and two memory hits on 20, a disk hit on 21
  run_helper_process(dir.path);
  auto list = tool(dir.path, "list --json");
  CHECK(list.rc == 0);
  CHECK(listed_hits(list.out, key_of(20)) == 8);
  CHECK(listed_hits(list.out, key_of(21)) == 2);
  CHECK(json_number(tool(dir.path, "stats --json").out, "hits") == 10);
}

TEST_CASE("no hit is lost while processes append usage logs and others fold them") {
  TempDir dir;
  std::string key(64, 'a');
  write_text(entry_path(dir.path, key), "stands in for an entry: folds keep only keys with files");
  constexpr int kAppenders = 3, kHits = 300;
  int ok = run_children(kAppenders + 2, [&](int child) {
    for (int i = 0; i < kHits; ++i) {
      if (child >= kAppenders) {
        jit::fold_usage(dir.path);
        continue;
      }
      jit::record_hit(dir.path, key);
      jit::flush_usage();  // one append per hit: as many chances to race as possible
    }
    return true;
  });
  CHECK(ok == kAppenders + 2);
  CHECK(jit::fold_usage(dir.path)[key].hits == kAppenders * kHits);
  CHECK(count_ending(dir.path + "/usage", ".log") == 0);
  for (auto& name : names_in(dir.path + "/usage")) CHECK_FALSE(name.ends_with(".tmp"));
}

TEST_CASE("four processes compiling, reading, folding and evicting in one directory") {
  TempDir dir, counts;
  constexpr int kChildren = 4;
  // Each child gets kernels 30..37 (in its own order) for several rounds, forgets its memory
  // cache between rounds so the next round reads the disk, and appends its hits each round;
  // child 0 also folds the logs while the others append. Returns the hits it saw.
  auto hammer = [&](int child) {
    jit::reinitialize_for_testing();
    int64_t hits = 0;
    for (int round = 0; round < 4; ++round) {
      for (int i = 0; i < 8; ++i) {
        auto r = jit::get(kernel(30 + (i + child * 3) % 8));
        if (r.kernel->cubin.size() < 4 || r.kernel->cubin[1] != 'E') return false;
        hits += r.origin != Origin::Compiled;
        if (i % 2 == 0) jit::get(kernel(30 + (i + child * 3) % 8)), ++hits;  // a memory hit
      }
      jit::clear_memory_cache();
      jit::flush_usage();
      if (child == 0) jit::fold_usage(dir.path);
    }
    write_text(counts.path + "/" + std::to_string(child), std::to_string(hits));
    return true;
  };

  // Keys and sizes from a scratch directory, so this process never touches `dir` itself.
  TempDir scratch;
  use_cache(scratch.path);
  std::vector<std::string> keys;
  uintmax_t largest = 0;
  for (int v = 30; v < 38; ++v) {
    keys.push_back(key_of(v));
    largest = std::max(largest, fs::file_size(entry_path(scratch.path, keys.back())));
  }

  SUBCASE("no cap: every entry survives and no hit is lost") {
    use_cache(dir.path);
    CHECK(run_children(kChildren, hammer) == kChildren);
    int64_t expected = 0;
    for (int c = 0; c < kChildren; ++c)
      expected += std::stoll(read_text(counts.path + "/" + std::to_string(c)));
    auto verify = tool(dir.path, "verify");
    CHECK(verify.rc == 0);
    CHECK(contains(verify.out, "checked 8 entries"));
    for (auto& k : keys) CHECK(fs::exists(entry_path(dir.path, k)));
    for (auto& name : names_in(dir.path)) CHECK_FALSE(name.ends_with(".tmp"));
    CHECK(json_number(tool(dir.path, "stats --json").out, "hits") == double(expected));
  }
  SUBCASE("a cap of three entries: evictions race, every survivor is intact") {
    std::string cap = std::to_string(3 * largest);
    use_cache(dir.path, cap.c_str());
    CHECK(run_children(kChildren, hammer) == kChildren);
    auto verify = tool(dir.path, "verify --json");
    CHECK(verify.rc == 0);
    CHECK(contains(verify.out, "\"ok\":true"));
    // Each process keeps the entry it wrote last, so the cap may be exceeded by those.
    uintmax_t total = 0;
    for (auto& name : names_in(dir.path))
      if (name.ends_with(".kkc")) total += fs::file_size(dir.path + "/" + name);
    CHECK(total <= (3 + kChildren) * largest);
    CHECK(count_ending(dir.path, ".kkc") >= 1);
    for (auto& name : names_in(dir.path)) CHECK_FALSE(name.ends_with(".tmp"));
    CHECK(tool(dir.path, "list").rc == 0);
  }
}
