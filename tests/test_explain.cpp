// kiln::explain describes the plan: one line per kernel, library call and copy.
#include <doctest/doctest.h>

#include <stdlib.h>

#include <cstdlib>
#include <kiln/cache.hpp>
#include <kiln/kiln.hpp>
#include <optional>
#include <string>

#include "jit/jit.hpp"
#include "support/gpu.hpp"

namespace {

// Without a GPU, host evaluation compiles its kernels too when KILN_JIT_ARCH is set (as in CI),
// which is what makes explain's cache state and the compile count observable on the host. The
// executor reads it once, at the first evaluation, so it is set before main().
const bool kArchSet = [] { return ::setenv("KILN_JIT_ARCH", "sm_90", 0) == 0; }();

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// Sets (or, given null, unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~ScopedEnv() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// An empty memory-only kernel cache with its counters at zero, for one scope (so neither a disk
// cache nor an earlier test can have the kernel already).
struct FreshMemoryCache {
  ScopedEnv mode{"KILN_CACHE", "memory"};
  FreshMemoryCache() { kiln::jit::reinitialize_for_testing(); }
  ~FreshMemoryCache() { kiln::jit::reinitialize_for_testing(); }
};

// explain only looks the kernel up: before the first evaluation it says "not compiled yet" and
// compiles nothing; once evaluated, another array of the same structure is "cached in memory",
// and describing it neither compiles nor counts a hit.
void check_explain_does_not_compile(const kiln::Device& d) {
  auto x = kiln::arange(0, 64, 1, kiln::DType::Float64, d).eval();
  FreshMemoryCache fresh;
  auto y = kiln::tanh(x * 0.03125) * 5 - 1;
  std::string before = kiln::explain({y});
  CHECK(count(before, "kernel ") == 1);
  CHECK(count(before, "(not compiled yet)") == 1);
  CHECK(kiln::cache::stats().compiles == 0);
  CHECK(kiln::cache::stats().memory_hits == 0);
  y.eval();
  CHECK(kiln::cache::stats().compiles == 1);
  auto again = kiln::tanh(x * 0.0625) * 7 - 1;  // same structure: same kernel
  std::string after = kiln::explain({again});
  CHECK(count(after, "(cached in memory)") == 1);
  CHECK(kiln::cache::stats().compiles == 1);
  CHECK(kiln::cache::stats().memory_hits == 0);
  CHECK(kiln::cache::stats().disk_hits == 0);
}

}  // namespace

TEST_CASE("explain: the chain is one kernel, named after what it does") {
  auto x = kiln::arange(0, 100, 1, kiln::DType::Float32).eval();
  auto t = kiln::sin(x * 2 + 1) * kiln::cos(x);
  std::string e = kiln::explain({kiln::exp(-t) - x});
  CHECK(count(e, "kernel ") == 1);
  CHECK(e.find("k_mul_add_sin_cos") != std::string::npos);
  CHECK(e.find("_f32_") != std::string::npos);
  CHECK(count(kiln::explain({kiln::sum(t), t}), "kernel ") == 2);
  CHECK(kiln::explain({x}).find("nothing to do") != std::string::npos);
}

// What a kernel moves counts each buffer once, however many of its elements' reads it serves:
// x[1:] + x[:-1] reads x's 1001 float64 (8008 bytes) and writes 1000 (8000 bytes). explain says
// what the engine's counters then count.
TEST_CASE("explain: a kernel reading one buffer twice moves it once, as the engine counts") {
  auto x = kiln::arange(0, 1001, 1, kiln::DType::Float64).eval();
  auto y = x("1:") + x(":-1");
  CHECK(kiln::explain({y}).find("moves 0.016 MB") != std::string::npos);
  kiln::reset_engine_stats();
  y.eval();
  CHECK(kiln::engine_stats().kernels == 1);
  CHECK(kiln::engine_stats().bytes_moved == 8008 + 8000);
}

GPU_TEST_CASE("explain: copies say their direction and size") {
  auto h = kiln::arange(0, 1000, 1, kiln::DType::Float64).eval();
  std::string e = kiln::explain({(kiln::asarray(h, kiln::cuda()) * 2).get()});
  CHECK(count(e, "copy host -> device") == 1);
  CHECK(count(e, "copy device -> host") == 1);
  CHECK(e.find("0.008 MB") != std::string::npos);
}

TEST_CASE("to_dot: one cluster per fused group, buffers as boxes") {
  auto x = kiln::arange(0, 100, 1, kiln::DType::Float32).eval();
  auto t = kiln::sin(x * 2 + 1) * kiln::cos(x);
  std::string dot = kiln::to_dot({kiln::sum(t), t});
  CHECK(dot.rfind("digraph kiln {", 0) == 0);
  CHECK(count(dot, "subgraph cluster_") == 2);
  CHECK(dot.find("(sum)") != std::string::npos);
  CHECK(count(dot, "shape=box") >= 3);  // x, t, sum(t)
  CHECK(dot.find("label=\"sin\"") != std::string::npos);
}

TEST_CASE("explain: a host array without a JIT arch is left to the host executor") {
  auto x = kiln::arange(0, 64, 1, kiln::DType::Float64).eval();
  ScopedEnv no_arch("KILN_JIT_ARCH", nullptr);
  FreshMemoryCache fresh;
  std::string e = kiln::explain({kiln::tanh(x * 0.03125) * 5 - 1});
  CHECK(count(e, "kernel ") == 1);
  CHECK(count(e, "(host executor)") == 1);
  CHECK(kiln::cache::stats().compiles == 0);
}

NO_GPU_TEST_CASE(
    "explain: says whether a host kernel (KILN_JIT_ARCH) is compiled, compiling none") {
  check_explain_does_not_compile(kiln::host());
}

GPU_TEST_CASE("explain: says whether a GPU kernel is compiled yet, without compiling it") {
  check_explain_does_not_compile(kiln::cuda());
}
