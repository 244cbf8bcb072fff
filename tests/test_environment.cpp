// The environment variables kiln reads (README "Environment", DESIGN.md): KILN_CACHE,
// KILN_CACHE_DIR and its default from XDG_CACHE_HOME or HOME, KILN_CACHE_MAX_BYTES,
// KILN_CACHE_SHARED, KILN_MODE.
// Each case saves the variables it touches and puts them back when it ends.
#include <doctest/doctest.h>
#include <pwd.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <kiln/cache.hpp>
#include <kiln/kiln.hpp>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "jit/cache_config.hpp"
#include "jit/jit.hpp"
#include "support/temp_cache.hpp"
#include "support/variant_kernel.hpp"

// doctest prints a refused size as "refused" rather than {?}.
template <>
struct doctest::StringMaker<std::optional<uint64_t>> {
  static doctest::String convert(const std::optional<uint64_t>& v) {
    return v ? std::to_string(*v).c_str() : "refused";
  }
};

namespace fs = std::filesystem;
namespace jit = kiln::jit;
using jit::CacheMode;
using jit::Origin;
using namespace kiln::test_support;

namespace {

constexpr uint64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024, kTiB = kGiB * 1024;
constexpr uint64_t kDefaultCap = kGiB;  // README: "default 1G"

// Saves the variables kiln reads and restores them (set or unset) when the case ends.
class EnvGuard {
 public:
  EnvGuard() {
    for (const char* name : {"KILN_CACHE", "KILN_CACHE_DIR", "KILN_CACHE_MAX_BYTES",
                             "KILN_CACHE_SHARED", "XDG_CACHE_HOME", "HOME", "KILN_MODE"}) {
      const char* v = std::getenv(name);
      saved_[name] = v ? std::optional<std::string>(v) : std::nullopt;
    }
  }
  ~EnvGuard() {
    for (auto& [name, value] : saved_)
      value ? ::setenv(name.c_str(), value->c_str(), 1) : ::unsetenv(name.c_str());
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

void set_or_unset(const char* name, const char* value) {
  value ? ::setenv(name, value, 1) : ::unsetenv(name);
}

// The configuration kiln reads from the environment, and what it printed while reading it.
struct ConfigRead {
  jit::CacheConfig config;
  std::string err;
};
ConfigRead read_config() {
  StderrCapture capture;
  ConfigRead r;
  r.config = jit::cache_config_from_env();
  r.err = capture.finish();
  return r;
}

jit::Request kernel(int variant) {
  static const std::string kTemplate = R"(extern "C" __global__ void NAME(float* y) {
  y[threadIdx.x] += VARIANT.0f;
}
)";
  return variant_kernel(kTemplate, "k_env_test_", "y += ", variant);
}

// The size KILN_CACHE_MAX_BYTES=value gives, or nullopt when it is refused.
std::optional<uint64_t> size_of(const std::string& value) {
  uint64_t out = 12345;
  if (!jit::parse_size(value, out)) return std::nullopt;
  return out;
}

// The mode a thread started now begins in.
kiln::Mode new_thread_mode() {
  kiln::Mode m{};
  std::thread([&] { m = kiln::get_mode(); }).join();
  return m;
}

}  // namespace

// ---- KILN_CACHE ----------------------------------------------------------------------------

TEST_CASE("KILN_CACHE: disk, memory and off do what the README says") {
  EnvGuard env;
  TempDir dir;
  SUBCASE("disk (also the default) keeps each kernel in KILN_CACHE_DIR") {
    const char* mode = nullptr;
    SUBCASE("unset") {}
    SUBCASE("disk") { mode = "disk"; }
    use_cache(dir.path, nullptr, mode);
    CHECK(kiln::cache::dir() == dir.path);
    auto first = jit::get(kernel(1));
    CHECK(first.origin == Origin::Compiled);
    CHECK(fs::exists(dir.path + "/" + first.kernel->key + ".kkc"));
    jit::clear_memory_cache();
    CHECK(jit::get(kernel(1)).origin == Origin::Disk);
  }
  SUBCASE("memory: compiled once per process, nothing on disk") {
    use_cache(dir.path, nullptr, "memory");
    CHECK(kiln::cache::dir().empty());
    CHECK(jit::get(kernel(2)).origin == Origin::Compiled);
    CHECK(jit::get(kernel(2)).origin == Origin::Memory);
    CHECK(fs::is_empty(dir.path));
  }
  SUBCASE("off: every get() compiles, nothing on disk") {
    use_cache(dir.path, nullptr, "off");
    CHECK(kiln::cache::dir().empty());
    CHECK(jit::get(kernel(3)).origin == Origin::Compiled);
    CHECK(jit::get(kernel(3)).origin == Origin::Compiled);
    CHECK(kiln::cache::stats().compiles == 2);
    CHECK(fs::is_empty(dir.path));
  }
}

TEST_CASE("KILN_CACHE with another value: one warning naming it and the accepted values") {
  EnvGuard env;
  TempDir dir;
  ::setenv("KILN_CACHE_DIR", dir.path.c_str(), 1);
  std::string value;
  SUBCASE("a typo") { value = "dsik"; }
  SUBCASE("another case") { value = "Memory"; }
  SUBCASE("a number") { value = "1"; }
  CAPTURE(value);
  ::setenv("KILN_CACHE", value.c_str(), 1);
  ConfigRead r = read_config();
  CHECK(count_lines_with(r.err, "kiln: warning") == 1);
  CHECK(count_lines_with(r.err, "KILN_CACHE=" + value) == 1);
  for (const char* accepted : {"disk", "memory", "off"})
    CHECK(r.err.find(accepted) != std::string::npos);
  CHECK(r.config.mode == CacheMode::Disk);  // the default
}

// ---- KILN_CACHE_SHARED ------------------------------------------------------------------------

TEST_CASE("KILN_CACHE_SHARED: unset is private (0700/0600), group is 0750/0640, else one warning") {
  EnvGuard env;
  TempDir dir;
  ::setenv("KILN_CACHE_DIR", dir.path.c_str(), 1);
  const char* value = nullptr;
  mode_t dir_mode = 0700, file_mode = 0600;
  int warnings = 0;
  SUBCASE("unset") {}
  SUBCASE("group") { value = "group", dir_mode = 0750, file_mode = 0640; }
  SUBCASE("a typo") { value = "gruop", warnings = 1; }
  SUBCASE("world is not offered") { value = "world", warnings = 1; }
  CAPTURE(value);
  set_or_unset("KILN_CACHE_SHARED", value);
  ConfigRead r = read_config();
  CHECK(count_lines_with(r.err, "kiln: warning") == warnings);
  if (warnings) CHECK(count_lines_with(r.err, std::string("KILN_CACHE_SHARED=") + value) == 1);
  CHECK(jit::cache_modes().dir == dir_mode);
  CHECK(jit::cache_modes().file == file_mode);
}

// ---- KILN_CACHE_DIR and its default ----------------------------------------------------------

TEST_CASE("the cache directory: KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln") {
  EnvGuard env;
  ::unsetenv("KILN_CACHE");
  const char* dir = "/kiln-test/explicit";
  const char* xdg = "/kiln-test/xdg";
  const char* home = "/kiln-test/home";
  std::string expected;
  SUBCASE("KILN_CACHE_DIR wins over both") {
    set_or_unset("KILN_CACHE_DIR", dir);
    set_or_unset("XDG_CACHE_HOME", xdg);
    set_or_unset("HOME", home);
    expected = dir;
  }
  SUBCASE("XDG_CACHE_HOME wins over HOME") {
    set_or_unset("KILN_CACHE_DIR", nullptr);
    set_or_unset("XDG_CACHE_HOME", xdg);
    set_or_unset("HOME", home);
    expected = std::string(xdg) + "/kiln";
  }
  SUBCASE("an empty KILN_CACHE_DIR or XDG_CACHE_HOME counts as unset") {
    set_or_unset("KILN_CACHE_DIR", "");
    set_or_unset("XDG_CACHE_HOME", "");
    set_or_unset("HOME", home);
    expected = std::string(home) + "/.cache/kiln";
  }
  SUBCASE("a relative XDG_CACHE_HOME is ignored, as the XDG spec says") {
    set_or_unset("KILN_CACHE_DIR", nullptr);
    set_or_unset("XDG_CACHE_HOME", "relative/cache");
    set_or_unset("HOME", home);
    expected = std::string(home) + "/.cache/kiln";
  }
  SUBCASE("without HOME, ~ is the password database's home directory") {
    set_or_unset("KILN_CACHE_DIR", nullptr);
    set_or_unset("XDG_CACHE_HOME", nullptr);
    set_or_unset("HOME", nullptr);
    const passwd* pw = ::getpwuid(::getuid());
    REQUIRE(pw != nullptr);
    expected = std::string(pw->pw_dir) + "/.cache/kiln";
  }
  ConfigRead r = read_config();
  CHECK(r.config.dir == expected);
  CHECK(r.err.empty());
}

TEST_CASE("the default directories are created and used") {
  EnvGuard env;
  TempDir root;
  ::unsetenv("KILN_CACHE");
  ::unsetenv("KILN_CACHE_DIR");
  ::unsetenv("KILN_CACHE_MAX_BYTES");
  std::string expected;
  SUBCASE("$XDG_CACHE_HOME/kiln") {
    ::setenv("XDG_CACHE_HOME", (root.path + "/xdg").c_str(), 1);
    ::setenv("HOME", (root.path + "/home").c_str(), 1);
    expected = root.path + "/xdg/kiln";
  }
  SUBCASE("$HOME/.cache/kiln") {
    ::unsetenv("XDG_CACHE_HOME");
    ::setenv("HOME", (root.path + "/home").c_str(), 1);
    expected = root.path + "/home/.cache/kiln";
  }
  jit::reinitialize_for_testing();
  CHECK(kiln::cache::dir() == expected);
  auto res = jit::get(kernel(4));
  CHECK(fs::exists(expected + "/" + res.kernel->key + ".kkc"));
  use_cache(root.path + "/elsewhere");  // off the directory before TempDir removes it
}

// ---- KILN_CACHE_MAX_BYTES
// ------------------------------------------------------------------------

TEST_CASE("KILN_CACHE_MAX_BYTES: bytes, or K/M/G/T in powers of 1024; 0 is no cap") {
  CHECK(size_of("0") == 0u);
  CHECK(size_of("123") == 123u);
  CHECK(size_of("500M") == 500 * kMiB);
  CHECK(size_of("2G") == 2 * kGiB);
  CHECK(size_of("1.5G") == 3 * kGiB / 2);
  CHECK(size_of("64KiB") == 64 * kKiB);
  CHECK(size_of("3T") == 3 * kTiB);
  CHECK(size_of("1000000T") == 1000000 * kTiB);  // about 2^60: large, and still fits
}

TEST_CASE("KILN_CACHE_MAX_BYTES refuses garbage, negatives and sizes past 2^64") {
  std::string value;
  SUBCASE("empty") { value = ""; }
  SUBCASE("words") { value = "lots"; }
  SUBCASE("a unit alone") { value = "G"; }
  SUBCASE("an unknown unit") { value = "12Q"; }
  SUBCASE("two units") { value = "1GM"; }
  SUBCASE("a space inside") { value = "5 M"; }
  SUBCASE("negative") { value = "-1"; }
  SUBCASE("negative with a unit") { value = "-5M"; }
  SUBCASE("NaN") { value = "nan"; }
  SUBCASE("infinity") { value = "inf"; }
  SUBCASE("2^64 bytes") { value = "18446744073709551616"; }
  SUBCASE("2^64 bytes through a unit") { value = "16777216T"; }
  SUBCASE("far past 2^64 through a unit") { value = "20000000T"; }
  SUBCASE("a huge number") { value = "1e30"; }
  CAPTURE(value);
  CHECK(size_of(value) == std::nullopt);
}

TEST_CASE("a refused KILN_CACHE_MAX_BYTES warns, naming it, and the cap stays 1G") {
  EnvGuard env;
  ::setenv("KILN_CACHE_DIR", "/kiln-test/unused", 1);
  std::string value;
  SUBCASE("garbage") { value = "lots"; }
  SUBCASE("negative") { value = "-5M"; }
  SUBCASE("overflow") { value = "20000000T"; }
  CAPTURE(value);
  ::setenv("KILN_CACHE_MAX_BYTES", value.c_str(), 1);
  ConfigRead r = read_config();
  CHECK(count_lines_with(r.err, "kiln: warning") == 1);
  CHECK(count_lines_with(r.err, "KILN_CACHE_MAX_BYTES=" + value) == 1);
  CHECK(r.config.max_bytes == kDefaultCap);

  ::setenv("KILN_CACHE_MAX_BYTES", "2G", 1);
  r = read_config();
  CHECK(r.err.empty());
  CHECK(r.config.max_bytes == 2 * kGiB);
  ::unsetenv("KILN_CACHE_MAX_BYTES");
  r = read_config();
  CHECK(r.err.empty());
  CHECK(r.config.max_bytes == kDefaultCap);
}

// ---- KILN_MODE
// ------------------------------------------------------------------------------------

TEST_CASE("KILN_MODE: new threads start lazy (default) or eager; set_mode is per thread") {
  EnvGuard env;
  ::unsetenv("KILN_MODE");
  CHECK(new_thread_mode() == kiln::Mode::Lazy);
  ::setenv("KILN_MODE", "lazy", 1);
  CHECK(new_thread_mode() == kiln::Mode::Lazy);
  ::setenv("KILN_MODE", "eager", 1);
  CHECK(new_thread_mode() == kiln::Mode::Eager);

  kiln::Mode mine = kiln::get_mode();
  kiln::set_mode(kiln::Mode::Lazy);  // this thread's choice; new threads still read KILN_MODE
  CHECK(new_thread_mode() == kiln::Mode::Eager);
  CHECK(kiln::get_mode() == kiln::Mode::Lazy);
  kiln::set_mode(kiln::Mode::Eager);
  ::unsetenv("KILN_MODE");
  CHECK(new_thread_mode() == kiln::Mode::Lazy);
  kiln::set_mode(mine);
}

TEST_CASE("KILN_MODE with another value: lazy, with a warning naming it and lazy, eager") {
  EnvGuard env;
  std::string value;
  SUBCASE("a typo") { value = "eagre"; }
  SUBCASE("another case") { value = "EAGER"; }
  CAPTURE(value);
  ::setenv("KILN_MODE", value.c_str(), 1);
  StderrCapture capture;
  kiln::Mode m = new_thread_mode();
  std::string err = capture.finish();
  CHECK(m == kiln::Mode::Lazy);
  CHECK(count_lines_with(err, "kiln: warning") == 1);
  CHECK(count_lines_with(err, "KILN_MODE=" + value) == 1);
  CHECK(err.find("lazy") != std::string::npos);
  CHECK(err.find("eager") != std::string::npos);
}
