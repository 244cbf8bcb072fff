// The host work of two of issue 12's workloads in instructions, for callgrind (scripts/
// host-instructions runs it under the stub CUDA runtime, bench/stub_cudart): instructions do not
// move with the machine's load or clock as times do, so a change to the engine's host path is
// measured exactly on the developer machine.
//
//   host_instructions tiny N           N evaluations of (s + 1), s one float32 on the GPU
//   host_instructions lazy_loop_200 N  N loops of 200 steps s = s * 0.999f + 0.001f on 2^20
//                                      float32, each then evaluated
//
// Each first warms up through copies of the measured functions (the kernel compiled and loaded,
// the plan cached, the pools filled), so that callgrind --toggle-collect on measured_* counts the
// steady state only; noipa keeps the compiler from merging a copy with its original.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <kiln/kiln.hpp>

namespace {

using kiln::Array;

[[gnu::noipa]] void measured_tiny(const Array& s) { (s + 1).eval(); }
[[gnu::noipa]] void warm_tiny(const Array& s) { (s + 1).eval(); }

Array steps(const Array& x) {
  Array s = x;
  for (int k = 0; k < 200; ++k) s = s * 0.999f + 0.001f;
  return s;
}
[[gnu::noipa]] Array measured_build(const Array& x) { return steps(x); }
[[gnu::noipa]] Array warm_build(const Array& x) { return steps(x); }
[[gnu::noipa]] void measured_evaluate(Array& s) {  // and the graph dropped
  s.eval();
  s = Array();
}
[[gnu::noipa]] void warm_evaluate(Array& s) {
  s.eval();
  s = Array();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: host_instructions tiny|lazy_loop_200 N\n");
    return 2;
  }
  const int n = std::atoi(argv[2]);
  if (std::strcmp(argv[1], "tiny") == 0) {
    auto s = kiln::asarray<float>({1.0f}, kiln::cuda()).eval();
    for (int i = 0; i < 500; ++i) warm_tiny(s);
    for (int i = 0; i < n; ++i) measured_tiny(s);
  } else if (std::strcmp(argv[1], "lazy_loop_200") == 0) {
    auto x = kiln::asarray(std::vector<float>(1 << 20, 1.0f), kiln::cuda()).eval();
    for (int i = 0; i < 30; ++i) {
      Array s = warm_build(x);
      warm_evaluate(s);
    }
    for (int i = 0; i < n; ++i) {
      Array s = measured_build(x);
      measured_evaluate(s);
    }
  } else {
    std::fprintf(stderr, "host_instructions: unknown workload '%s' (tiny or lazy_loop_200)\n",
                 argv[1]);
    return 2;
  }
}
