// The JIT and the kernel cache on a machine without a GPU: NVRTC compiles for sm_90 explicitly,
// and every test gets its own temporary KILN_CACHE_DIR (re-read through the test hook).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <kiln/cache.hpp>
#include <kiln/errors.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "jit/cache_file.hpp"
#include "jit/disk_cache.hpp"
#include "jit/jit.hpp"
#include "jit/nvrtc_api.hpp"
#include "jit/sha256.hpp"
#include "support/child_case.hpp"
#include "support/child_processes.hpp"
#include "support/temp_cache.hpp"
#include "support/variant_kernel.hpp"

namespace fs = std::filesystem;
namespace jit = kiln::jit;
using jit::Origin;
using namespace kiln::test_support;

namespace {

// ---- fixtures ---------------------------------------------------------------------------

// A small grid-stride kernel; `variant` makes distinct sources. It includes an embedded header
// (resolved from memory) but uses nothing from it, so it does not change when skeletons do.
jit::Request kernel(int variant = 0) {
  static const std::string kTemplate = R"(#include "kiln/kiln_common.cuh"
extern "C" __global__ void NAME(const float* x, float* y, long long n) {
  long long step = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
    y[i] = 2.0f * x[i] + VARIANT.0f;
}
)";
  return variant_kernel(kTemplate, "k_test_axpb_", "y = 2 * x + ", variant);
}

bool is_elf(const std::vector<char>& b) {
  return b.size() > 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F';
}

std::string entry_path(const jit::Result& res) {
  return kiln::cache::dir() + "/" + res.kernel->key + ".kkc";
}

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> names;
  for (auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) names.push_back(e.path().filename().string());
  return names;
}

// Every name in a directory (files and folders), sorted, one space between.
std::string listing(const std::string& dir) {
  std::vector<std::string> names;
  for (auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  std::string out;
  for (auto& n : names) out += (out.empty() ? "" : " ") + n;
  return out;
}

const char* origin_name(Origin o) {
  return o == Origin::Compiled ? "compiled" : o == Origin::Memory ? "memory" : "disk";
}

// A child that has not finished compiling in this long is taken as hung.
constexpr unsigned kChildTimeoutS = 120;

struct ChildReport {
  int status = -1;   // exit status; 2: could not drop privileges; -1: killed (a hang)
  std::string text;  // what the body returned
  std::string err;   // its stderr
};

// Runs `body` (returning a report) in a forked child that first becomes `nobody` when this
// process is root: root writes through any mode bits, as CI's containers run, so only an
// unprivileged process sees a mode-0555 directory as read-only.
template <typename Body>
ChildReport run_unprivileged(Body body) {
  TempDir tmp;
  std::string out_path = tmp.path + "/out", err_path = tmp.path + "/err";
  int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE(out >= 0);
  REQUIRE(err >= 0);
  std::fflush(stderr);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::alarm(kChildTimeoutS);
    ::dup2(err, 2);
    if (::getuid() == 0 &&
        (::setgroups(0, nullptr) != 0 || ::setgid(kNobody) != 0 || ::setuid(kNobody) != 0))
      ::_exit(2);
    std::string text;
    try {
      text = body();
    } catch (const std::exception& e) {
      text = std::string("exception: ") + e.what();
    }
    ssize_t n = ::write(out, text.data(), text.size());
    ::_exit(n == ssize_t(text.size()) ? 0 : 1);
  }
  ::close(out);
  ::close(err);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_text(out_path), read_text(err_path)};
}

}  // namespace

// ---- hashing and embedding -----------------------------------------------------------------

TEST_CASE("SHA-256 matches the FIPS 180-4 test vectors") {
  auto hex = [](std::string s) {
    jit::Sha256 h;
    h.update(s);
    return h.hex_digest();
  };
  CHECK(hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Cache keys are built from many update() calls, so the digest must not depend on how the
// input is split (same FIPS 180-4 vectors, also checked with Python's hashlib.sha256).
TEST_CASE("SHA-256 fed in pieces gives the test vectors") {
  auto hex_in_pieces = [](const std::string& s, size_t piece) {
    jit::Sha256 h;
    for (size_t at = 0; at < s.size(); at += piece) h.update(std::string_view(s).substr(at, piece));
    return h.hex_digest();
  };
  const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  for (size_t piece : {1, 3, 55, 56, 57})
    CHECK(hex_in_pieces(two_blocks, piece) ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const std::string million(1000000, 'a');
  for (size_t piece : {63, 64, 65, 4096})
    CHECK(hex_in_pieces(million, piece) ==
          "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("SHA-256 digest() returns the bytes hex_digest() spells") {
  jit::Sha256 a, b;
  a.update("abc");
  b.update("abc");
  auto bytes = a.digest();
  CHECK(bytes[0] == 0xba);
  CHECK(bytes[31] == 0xad);
  CHECK(jit::to_hex(bytes.data(), bytes.size()) == b.hex_digest());
}

TEST_CASE("kernels/*.cuh are embedded under kiln/<file>.cuh") {
  bool found = false;
  for (auto& h : jit::embedded_headers()) {
    CHECK(std::string(h.name).starts_with("kiln/"));
    if (std::string(h.name) == "kiln/kiln_common.cuh") {
      found = true;
      CHECK(std::string(h.text).find("index_t") != std::string::npos);
    }
  }
  CHECK(found);
}

// ---- compile, memory hit, disk hit ---------------------------------------------------------

TEST_CASE("compile for sm_90, then a memory hit, then a disk hit with zero compiles") {
  TempDir dir;
  use_cache(dir.path);
  CHECK(kiln::cache::dir() == dir.path);

  auto first = jit::get(kernel());
  CHECK(first.origin == Origin::Compiled);
  CHECK(is_elf(first.kernel->cubin));
  CHECK(first.kernel->name == "k_test_axpb_0");
  CHECK(first.kernel->key.size() == 64);
  CHECK(kiln::cache::stats().compiles == 1);
  CHECK(kiln::cache::stats().compile_ms > 0);
  std::string path = entry_path(first);
  REQUIRE(fs::exists(path));
  // Private by default: 0600 less the umask (KILN_CACHE_SHARED, README "the trust model").
  mode_t umask_now = ::umask(0);
  ::umask(umask_now);
  CHECK((fs::status(path).permissions() & fs::perms::all) == fs::perms(0600 & ~umask_now));

  auto second = jit::get(kernel());
  CHECK(second.origin == Origin::Memory);
  CHECK(second.kernel == first.kernel);
  CHECK(kiln::cache::stats().memory_hits == 1);

  struct stat before;
  REQUIRE(::stat(path.c_str(), &before) == 0);
  jit::clear_memory_cache();
  kiln::cache::reset_stats();
  auto third = jit::get(kernel());
  CHECK(third.origin == Origin::Disk);
  CHECK(third.kernel->cubin == first.kernel->cubin);
  CHECK(third.kernel->compile_ms == first.kernel->compile_ms);
  CHECK(kiln::cache::stats().compiles == 0);
  CHECK(kiln::cache::stats().disk_hits == 1);
  // The hit did not rewrite the file (a rename would give a new inode).
  struct stat after;
  REQUIRE(::stat(path.c_str(), &after) == 0);
  CHECK(after.st_ino == before.st_ino);
  CHECK(first.kernel->cubin.size() > 0);  // pointers from before the clear stay valid
}

TEST_CASE("the key covers source, options, arch and name but not the summary or dtypes") {
  TempDir dir;
  use_cache(dir.path);
  auto base = jit::get(kernel()).kernel->key;
  auto r = kernel();
  r.summary = "another description";
  r.dtypes = "f64 -> f64";
  CHECK(jit::get(r).kernel->key == base);
  r = kernel();
  r.options = {"-DKILN_INDEX_64"};
  CHECK(jit::get(r).kernel->key != base);
  r = kernel();
  r.arch = "sm_80";
  auto other_arch = jit::get(r);
  CHECK(other_arch.kernel->key != base);
  CHECK(is_elf(other_arch.kernel->cubin));
  r = kernel();
  r.source += "\n";
  CHECK(jit::get(r).kernel->key != base);
}

TEST_CASE("the file holds the metadata the kiln-cache tool will show") {
  TempDir dir;
  use_cache(dir.path);
  auto res = jit::get(kernel(3));
  auto bytes = read_bytes(entry_path(res));
  jit::CacheEntry e;
  std::string problem;
  REQUIRE(jit::decode_entry(bytes, e, problem));
  CHECK(e.key == res.kernel->key);
  CHECK(e.name == "k_test_axpb_3");
  CHECK(e.summary == "y = 2 * x + 3");
  CHECK(e.dtypes == "f32 -> f32");
  CHECK(e.arch == "sm_90");
  CHECK(e.source == kernel(3).source);
  CHECK(e.options.front() == "--gpu-architecture=sm_90");
  CHECK(e.compile_ms == res.kernel->compile_ms);
  CHECK(e.created > 1600000000);
  CHECK(e.binary == res.kernel->cubin);
}

TEST_CASE("concurrent get() of one key compiles once") {
  TempDir dir;
  use_cache(dir.path);
  constexpr int kThreads = 8;
  std::vector<const jit::Kernel*> got(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] { got[i] = jit::get(kernel(7)).kernel; });
  for (auto& t : threads) t.join();
  for (auto* k : got) CHECK(k == got[0]);
  CHECK(kiln::cache::stats().compiles == 1);
  CHECK(kiln::cache::stats().memory_hits == kThreads - 1);
}

// ---- failures ------------------------------------------------------------------------------

TEST_CASE("a syntax error throws CompileError with the log and the saved source") {
  TempDir dir;
  use_cache(dir.path);
  auto r = kernel();
  r.name = "k_broken";
  r.source = "extern \"C\" __global__ void k_broken(float* y) {\n  y[0] = 1.0f +;\n}\n";
  std::string msg;
  try {
    jit::get(r);
    FAIL("no CompileError");
  } catch (const kiln::CompileError& e) {
    msg = e.what();
  }
  CHECK(msg.find("k_broken") != std::string::npos);
  CHECK(msg.find("expected an expression") != std::string::npos);  // NVRTC's log
  auto at = msg.find("source saved to: ");
  REQUIRE(at != std::string::npos);
  std::string saved = msg.substr(at + 17, msg.find('\n', at) - at - 17);
  CHECK(saved.starts_with(dir.path + "/failed/"));
  REQUIRE(fs::exists(saved));
  auto text = read_bytes(saved);
  CHECK(std::string(text.begin(), text.end()) == r.source);
  // Private like the entries (README "the trust model"), less the umask.
  mode_t umask_now = ::umask(0);
  ::umask(umask_now);
  CHECK((fs::status(dir.path + "/failed").permissions() & fs::perms::all) ==
        fs::perms(0700 & ~umask_now));
  CHECK((fs::status(saved).permissions() & fs::perms::all) == fs::perms(0600 & ~umask_now));
  CHECK(kiln::cache::stats().compiles == 0);
  CHECK_THROWS_AS(jit::get(r), kiln::CompileError);  // a failure is not cached
}

TEST_CASE("a bad option names what this NVRTC supports") {
  TempDir dir;
  use_cache(dir.path);
  auto r = kernel();
  r.arch = "sm_1";
  try {
    jit::get(r);
    FAIL("no CompileError");
  } catch (const kiln::CompileError& e) {
    std::string msg = e.what();
    auto at = msg.find("supports:");
    REQUIRE(at != std::string::npos);
    CHECK(msg.find("sm_90", at) != std::string::npos);
  }
}

// ---- disk robustness -------------------------------------------------------------------------

TEST_CASE("a damaged or foreign file is a miss, is recompiled, and is repaired") {
  TempDir dir;
  use_cache(dir.path);
  auto good = jit::get(kernel());
  std::string path = entry_path(good);
  auto bytes = read_bytes(path);
  REQUIRE(bytes.size() > jit::kFileHeaderSize + 100);

  SUBCASE("truncated payload") { bytes.resize(bytes.size() / 2); }
  SUBCASE("truncated header") { bytes.resize(10); }
  SUBCASE("empty") { bytes.clear(); }
  SUBCASE("garbage") {
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = char(i * 131 + 7);
  }
  SUBCASE("wrong format version") { bytes[8] = char(jit::kFormatVersion + 1); }
  SUBCASE("flipped payload byte") { bytes[bytes.size() - 40] ^= 0x10; }
  SUBCASE("another key's entry") {
    auto other = jit::get(kernel(1));
    bytes = read_bytes(entry_path(other));
  }
  write_bytes(path, bytes);

  jit::clear_memory_cache();
  kiln::cache::reset_stats();
  auto again = jit::get(kernel());
  CHECK(again.origin == Origin::Compiled);
  CHECK(kiln::cache::stats().compiles == 1);
  CHECK(again.kernel->cubin == good.kernel->cubin);

  jit::clear_memory_cache();
  auto repaired = jit::get(kernel());
  CHECK(repaired.origin == Origin::Disk);
  CHECK(repaired.kernel->cubin == good.kernel->cubin);
}

TEST_CASE("an uncreatable cache directory works memory-only with one warning") {
  TempDir tmp;
  std::string file = tmp.path + "/a-file";
  write_bytes(file, {'x'});
  // Neither can ever be created, even by root: so this holds wherever CI runs.
  std::string dir;
  SUBCASE("a path under a regular file (ENOTDIR)") { dir = file + "/sub"; }
  SUBCASE("a regular file where the directory should be") { dir = file; }
  build_cache_now();
  StderrCapture err;
  use_cache(dir);
  auto a = jit::get(kernel());
  auto b = jit::get(kernel(1));
  auto a_again = jit::get(kernel());
  std::string out = err.finish();
  CHECK(a.origin == Origin::Compiled);
  CHECK(b.origin == Origin::Compiled);
  CHECK(a_again.origin == Origin::Memory);
  CHECK(is_elf(a.kernel->cubin));
  CHECK(kiln::cache::dir().empty());
  CHECK_MESSAGE(count_lines_with(out, "kiln: warning") == 1, out);
  CHECK(out.find(dir) != std::string::npos);
  CHECK(read_text(file) == "x");  // the file in the way is left alone
}

TEST_CASE(
    "a read-only cache directory: old entries load, new kernels stay in memory, one warning") {
  TempDir tmp;
  // The child below may be `nobody`: it must be able to reach the directory and read entries.
  fs::permissions(tmp.path, fs::perms(0755));
  std::string ro = tmp.path + "/ro";
  use_cache(ro);
  auto old_entry = jit::get(kernel());  // an entry written while the directory was writable
  REQUIRE(old_entry.origin == Origin::Compiled);
  fs::permissions(ro, fs::perms(0555));
  // The child must own the directory and its entries, or it refuses them as another user's.
  if (::geteuid() == 0)
    for (const std::string& p : {ro, entry_path(old_entry)}) give_to_nobody(p);
  std::string old_name = old_entry.kernel->key + ".kkc";
  std::vector<char> old_cubin = old_entry.kernel->cubin;

  ChildReport child = run_unprivileged([&] {
    std::ostringstream report;
    int fd = ::open((ro + "/probe").c_str(), O_WRONLY | O_CREAT, 0600);
    report << "probe " << (fd < 0 ? std::strerror(errno) : "created") << "\n";
    use_cache(ro);
    auto old_again = jit::get(kernel());
    auto fresh = jit::get(kernel(1));
    auto fresh_again = jit::get(kernel(1));
    report << "old " << origin_name(old_again.origin) << " same "
           << (old_again.kernel->cubin == old_cubin) << "\nnew " << origin_name(fresh.origin) << " "
           << origin_name(fresh_again.origin) << " elf " << is_elf(fresh.kernel->cubin) << "\n";
    return report.str();
  });
  fs::permissions(ro, fs::perms(0755));  // so that TempDir can remove it when not root
  CHECK(child.status == 0);
  CHECK(child.text ==
        "probe Permission denied\n"
        "old disk same 1\n"
        "new compiled memory elf 1\n");
  CHECK(count_lines_with(child.err, "kiln: warning") == 1);
  CHECK(count_lines_with(child.err, ro + " is not writable") == 1);
  CHECK(listing(ro) == old_name);  // nothing written, no usage log
}

// ---- trust: no GPU code that another user can write ------------------------------------------

TEST_CASE("a cache directory another user can write is refused: memory only, one warning") {
  TempDir tmp;
  std::string dir = tmp.path + "/cache";
  REQUIRE(::mkdir(dir.c_str(), 0700) == 0);
  std::string what, fix;
  std::optional<ScopedEnv> shared;
  SUBCASE("group-writable") {
    REQUIRE(::chmod(dir.c_str(), 0770) == 0);
    what = "mode 0770) is writable by its group";
    fix = "`chmod go-w " + dir + "`";
  }
  SUBCASE("world-writable") {
    REQUIRE(::chmod(dir.c_str(), 0707) == 0);
    what = "mode 0707) is writable by every user";
    fix = "`chmod go-w " + dir + "`";
  }
  SUBCASE("world-writable with KILN_CACHE_SHARED=group") {
    shared.emplace("KILN_CACHE_SHARED", "group");
    REQUIRE(::chmod(dir.c_str(), 0757) == 0);
    what = "mode 0757) is writable by every user";
    fix = "`chmod go-w " + dir + "`";
  }
  SUBCASE("owned by another user (refused even for root)") {
    give_to_nobody(dir);
    what = "(owner nobody (uid 65534), mode 0700) is owned by another user, not by ";
    fix = "`chown " + std::to_string(::geteuid()) + " " + dir + "`";
  }
  build_cache_now();
  StderrCapture err;
  use_cache(dir);
  auto a = jit::get(kernel());
  auto a_again = jit::get(kernel());
  std::string out = err.finish();
  CHECK(a.origin == Origin::Compiled);
  CHECK(a_again.origin == Origin::Memory);
  CHECK(kiln::cache::dir().empty());
  CHECK(listing(dir).empty());  // nothing written, nothing read
  CHECK_MESSAGE(count_lines_with(out, "kiln: warning") == 1, out);
  CHECK_MESSAGE(count_lines_with(out, "kernel cache directory " + dir + " ") == 1, out);
  CHECK_MESSAGE(out.find(what) != std::string::npos, out);
  CHECK_MESSAGE(out.find(fix) != std::string::npos, out);
  CHECK(out.find("KILN_CACHE_DIR") != std::string::npos);
}

TEST_CASE("trusted cache directories: private 0700, 0755, and 0750 with KILN_CACHE_SHARED=group") {
  TempDir tmp;
  std::string dir = tmp.path + "/cache";
  mode_t mode = 0700;
  std::optional<ScopedEnv> shared;
  SUBCASE("0700") {}
  SUBCASE("0755: others may read, not write") { mode = 0755; }
  SUBCASE("0750 with KILN_CACHE_SHARED=group") {
    shared.emplace("KILN_CACHE_SHARED", "group");
    mode = 0750;
  }
  REQUIRE(::mkdir(dir.c_str(), 0700) == 0);
  REQUIRE(::chmod(dir.c_str(), mode) == 0);
  build_cache_now();
  StderrCapture err;
  use_cache(dir);
  auto first = jit::get(kernel());
  jit::clear_memory_cache();
  kiln::cache::reset_stats();
  auto second = jit::get(kernel());
  std::string out = err.finish();
  CHECK(first.origin == Origin::Compiled);
  CHECK(second.origin == Origin::Disk);
  CHECK(kiln::cache::stats().disk_hits == 1);
  CHECK(kiln::cache::dir() == dir);
  CHECK_MESSAGE(out.empty(), out);
}

TEST_CASE("an entry another user can write is a miss: never loaded, one warning, then replaced") {
  TempDir dir;
  use_cache(dir.path);
  auto a = jit::get(kernel(0));
  auto b = jit::get(kernel(1));
  std::string path_a = entry_path(a), path_b = entry_path(b);
  std::string what;
  SUBCASE("group-writable") {
    for (auto& p : {path_a, path_b}) REQUIRE(::chmod(p.c_str(), 0620) == 0);
    what = "mode 0620) is writable by its group";
  }
  SUBCASE("world-writable") {
    for (auto& p : {path_a, path_b}) REQUIRE(::chmod(p.c_str(), 0602) == 0);
    what = "mode 0602) is writable by every user";
  }
  SUBCASE("owned by another user") {
    for (auto& p : {path_a, path_b}) give_to_nobody(p);
    what = "(owner nobody (uid 65534), mode 0600) is owned by another user";
  }
  jit::clear_memory_cache();
  kiln::cache::reset_stats();
  jit::reset_disk_warning_for_testing();
  StderrCapture err;
  auto a_again = jit::get(kernel(0));
  auto b_again = jit::get(kernel(1));
  std::string out = err.finish();
  CHECK(a_again.origin == Origin::Compiled);
  CHECK(b_again.origin == Origin::Compiled);
  CHECK(kiln::cache::stats().compiles == 2);
  CHECK(kiln::cache::stats().disk_hits == 0);
  CHECK_MESSAGE(count_lines_with(out, "kiln: warning") == 1, out);  // once per process
  CHECK_MESSAGE(count_lines_with(out, "kernel cache entry " + path_a + " ") == 1, out);
  CHECK_MESSAGE(out.find(what) != std::string::npos, out);
  CHECK(out.find("kiln-cache verify --fix") != std::string::npos);

  // The compile rewrote the entry (a rename: kiln's own file, 0600 less the umask).
  struct stat st;
  REQUIRE(::stat(path_a.c_str(), &st) == 0);
  CHECK(st.st_uid == ::geteuid());
  CHECK((st.st_mode & 0077) == 0);
  jit::clear_memory_cache();
  CHECK(jit::get(kernel(0)).origin == Origin::Disk);
}

TEST_CASE("as an unprivileged user: its own 0700 directory is used, root's directory is refused") {
  TempDir tmp;
  // The child may be `nobody`: it must reach both directories.
  fs::permissions(tmp.path, fs::perms(0755));
  std::string mine = tmp.path + "/mine", roots = tmp.path + "/roots";
  REQUIRE(::mkdir(mine.c_str(), 0700) == 0);
  REQUIRE(::mkdir(roots.c_str(), 0755) == 0);
  bool as_root = ::geteuid() == 0;
  if (as_root) give_to_nobody(mine);
  ChildReport child = run_unprivileged([&] {
    std::ostringstream report;
    use_cache(mine);
    auto first = jit::get(kernel());
    jit::clear_memory_cache();
    auto second = jit::get(kernel());
    report << "mine " << origin_name(first.origin) << " " << origin_name(second.origin) << "\n";
    use_cache(roots);
    jit::reset_disk_warning_for_testing();
    auto other = jit::get(kernel(1));
    report << "roots " << origin_name(other.origin) << " dir '" << kiln::cache::dir() << "'\n";
    return report.str();
  });
  CHECK(child.status == 0);
  // Root's directory is another user's for `nobody`; without root the child is this user.
  CHECK(child.text == "mine compiled disk\nroots compiled dir '" + (as_root ? "" : roots) + "'\n");
  if (as_root) {  // as another user, root's directory is foreign; as root it would be its own
    CHECK_MESSAGE(count_lines_with(child.err, roots + " (owner root (uid 0), mode 0755) is "
                                                      "owned by another user, not by nobody") == 1,
                  child.err);
  }
  if (as_root) CHECK(listing(roots).empty());
}

// ---- processes -------------------------------------------------------------------------------

TEST_CASE("processes racing to compile and write the same key leave one intact entry") {
  TempDir dir;
  use_cache(dir.path);
  constexpr int kChildren = 4;
  int ok = run_children(kChildren, kChildTimeoutS, [](int) {
    jit::reinitialize_for_testing();  // a fresh memory cache, as in a new process
    auto res = jit::get(kernel(5));
    return res.origin != Origin::Memory && is_elf(res.kernel->cubin);
  });
  CHECK(ok == kChildren);
  auto names = files_in(dir.path);
  REQUIRE(names.size() == 1);  // no temporary files left behind
  CHECK(names[0].ends_with(".kkc"));

  jit::reinitialize_for_testing();
  auto res = jit::get(kernel(5));
  CHECK(res.origin == Origin::Disk);
  CHECK(is_elf(res.kernel->cubin));
  CHECK(kiln::cache::stats().compiles == 0);
}

// The child half of the next case, run only by it (in a fresh process): one disk hit, without
// loading NVRTC, under the key the parent gave.
TEST_CASE("fresh process child: a disk hit without NVRTC" * doctest::skip()) {
  auto res = jit::get(kernel(6));
  CHECK(res.origin == Origin::Disk);
  std::ifstream maps("/proc/self/maps");
  bool nvrtc_loaded = false;
  for (std::string line; std::getline(maps, line);)
    nvrtc_loaded |= line.find("libnvrtc.so") != std::string::npos;
  CHECK_FALSE(nvrtc_loaded);
  const char* parents = std::getenv("KILN_TEST_NVRTC_IDENTITY");
  REQUIRE(parents);
  CHECK(jit::nvrtc_identity() == parents);
}

// NVRTC takes 10-20 ms to load, and a kernel found on disk does not need it: its key names the
// NVRTC the loader will open (nvrtc_identity) without opening it. The name must be the one this
// process, which compiled with NVRTC, gives.
TEST_CASE("a fresh process finds a kernel on disk without loading NVRTC, under the same key") {
  TempDir dir;
  use_cache(dir.path);
  REQUIRE(jit::get(kernel(6)).origin == Origin::Compiled);  // NVRTC is loaded here now
  const std::string identity = jit::nvrtc_identity();
  CHECK(identity.starts_with("libnvrtc.so."));
  ::setenv("KILN_TEST_NVRTC_IDENTITY", identity.c_str(), 1);
  CHECK(run_case_in_child("fresh process child: a disk hit without NVRTC"));
  ::unsetenv("KILN_TEST_NVRTC_IDENTITY");
}

TEST_CASE("readers never see a partial entry while processes rewrite it") {
  TempDir dir;
  jit::CacheEntry e;
  e.key = std::string(64, 'a');
  e.name = "k_hammer";
  e.binary.assign(256 * 1024, 'x');  // large enough that a non-atomic write would be seen torn
  int ok = run_children(4, kChildTimeoutS, [&](int child) {
    jit::DiskCache disk(dir.path, 0);
    for (int i = 0; i < 200; ++i) {
      jit::CacheEntry mine = e;
      mine.binary[size_t(i) * 997 % mine.binary.size()] = char('0' + child);
      disk.store(mine);
      auto seen = disk.load(e.key);
      if (!seen || seen->binary.size() != e.binary.size() || seen->name != e.name) return false;
    }
    return true;
  });
  CHECK(ok == 4);
  CHECK(files_in(dir.path).size() == 1);
}

// ---- size cap --------------------------------------------------------------------------------

TEST_CASE("KILN_CACHE_MAX_BYTES evicts least recently used entries, never the newest") {
  TempDir sizes_dir;
  use_cache(sizes_dir.path);
  uintmax_t total = 0;
  for (int v : {10, 11, 12}) total += fs::file_size(entry_path(jit::get(kernel(v))));

  SUBCASE("a cap below one entry keeps just the entry written last") {
    TempDir dir;
    use_cache(dir.path, "1");
    for (int v : {10, 11, 12}) jit::get(kernel(v));
    auto names = files_in(dir.path);
    REQUIRE(names.size() == 1);
    CHECK(names[0] == jit::get(kernel(12)).kernel->key + ".kkc");
  }
  SUBCASE("a disk hit makes an entry recent again") {
    TempDir dir;
    use_cache(dir.path, std::to_string(total - 1).c_str());
    auto k10 = jit::get(kernel(10)).kernel->key;
    auto k11 = jit::get(kernel(11)).kernel->key;
    jit::clear_memory_cache();
    REQUIRE(jit::get(kernel(10)).origin == Origin::Disk);  // refreshes 10's mtime
    auto k12 = jit::get(kernel(12)).kernel->key;
    CHECK(fs::exists(dir.path + "/" + k10 + ".kkc"));
    CHECK_FALSE(fs::exists(dir.path + "/" + k11 + ".kkc"));
    CHECK(fs::exists(dir.path + "/" + k12 + ".kkc"));
  }
}

// ---- modes and arch --------------------------------------------------------------------------

TEST_CASE("KILN_CACHE=memory keeps no files; KILN_CACHE=off compiles every time") {
  TempDir dir;
  SUBCASE("memory") {
    use_cache(dir.path, nullptr, "memory");
    CHECK(jit::get(kernel()).origin == Origin::Compiled);
    CHECK(jit::get(kernel()).origin == Origin::Memory);
    CHECK(kiln::cache::dir().empty());
  }
  SUBCASE("off") {
    use_cache(dir.path, nullptr, "off");
    CHECK(jit::get(kernel()).origin == Origin::Compiled);
    CHECK(jit::get(kernel()).origin == Origin::Compiled);
    CHECK(kiln::cache::stats().compiles == 2);
    CHECK(kiln::cache::dir().empty());
  }
  CHECK(files_in(dir.path).empty());
  ::unsetenv("KILN_CACHE");
}

TEST_CASE("target_arch: KILN_JIT_ARCH, else the device, else empty") {
  const char* saved = std::getenv("KILN_JIT_ARCH");
  std::string restore = saved ? saved : "";
  ::setenv("KILN_JIT_ARCH", "sm_90", 1);
  CHECK(jit::target_arch() == "sm_90");
  TempDir dir;
  use_cache(dir.path);
  auto r = kernel();
  r.arch = "";  // resolved through target_arch()
  CHECK(jit::get(r).kernel->key == jit::get(kernel()).kernel->key);

  ::unsetenv("KILN_JIT_ARCH");
  std::string arch = jit::target_arch();  // must not crash without a driver
  if (arch.empty()) {
    CHECK_THROWS_AS(jit::get(r), kiln::DeviceError);
  } else {
    CHECK((arch.starts_with("sm_") || arch.starts_with("compute_")));
  }
  if (saved) ::setenv("KILN_JIT_ARCH", restore.c_str(), 1);
}
