// kiln::explain describes the plan: one line per kernel, library call and copy.
#include <doctest/doctest.h>

#include <cstdlib>
#include <kiln/kiln.hpp>
#include <string>

namespace {
int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
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

TEST_CASE("explain: copies say their direction and size") {
  if (!kiln::cuda_available()) {
    MESSAGE("no GPU found: the copy half of this test is skipped");
    return;
  }
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

TEST_CASE("explain: says whether a kernel is compiled yet, without compiling it") {
  auto x = kiln::arange(0, 64, 1, kiln::DType::Float64).eval();
  auto y = kiln::tanh(x * 0.03125) * 5 - 1;
  kiln::Device d = kiln::cuda_available() ? kiln::cuda() : kiln::host();
  if (d.is_host() && !std::getenv("KILN_JIT_ARCH")) {
    CHECK(kiln::explain({y}).find("(host executor)") != std::string::npos);
    return;
  }
  auto xd = kiln::asarray(x, d).eval();
  auto yd = kiln::tanh(xd * 0.03125) * 5 - 1;
  yd.eval();                                     // compiles (or finds) the kernel
  auto again = kiln::tanh(xd * 0.0625) * 7 - 1;  // same structure: same kernel
  CHECK(kiln::explain({again}).find("(cached in memory)") != std::string::npos);
}
