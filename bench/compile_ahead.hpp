// kiln::compile of a plan of four new kernels against each kernel compiled alone (issue 15,
// item 4: a plan with k new kernels should cost about its slowest compile, not the sum). Run
// with KILN_CACHE=off, so every kernel goes through NVRTC (and, on a machine without a GPU,
// KILN_JIT_ARCH=sm_90, so the host executor compiles at all). Each structure is planned once:
// the singles and the plan of four use arrays of other lengths, so nothing is reused.
#pragma once
#include <kiln/kiln.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace bench {

// Four programs of one kernel each, of different operations and similar size.
inline kiln::Array compile_ahead_program(int k, const kiln::Array& x) {
  switch (k) {
    case 0:
      return kiln::sin(x) * kiln::cos(x) + 1;
    case 1:
      return kiln::exp(-x * x) / (x + 1);
    case 2:
      return kiln::sqrt(kiln::abs(x)) + kiln::tanh(x);
    default:
      return kiln::log1p(x * x) - kiln::arctan(x);
  }
}

struct CompileAheadTimes {
  std::vector<double> single_ms;  // each program alone
  double plan_ms = 0;             // the four in one kiln::compile

  // As the benchmarks print them.
  std::vector<std::pair<std::string, double>> fields() const {
    std::vector<std::pair<std::string, double>> kv;
    for (size_t k = 0; k < single_ms.size(); ++k)
      kv.push_back({"single_" + std::to_string(k) + "_ms", single_ms[k]});
    kv.push_back({"plan_of_4_ms", plan_ms});
    return kv;
  }
};

inline CompileAheadTimes compile_ahead_times(kiln::Device d) {
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  auto input = [&](int64_t n) { return kiln::full({n}, 0.5f, kiln::DType::Float32, d).eval(); };
  CompileAheadTimes t;
  for (int k = 0; k < 4; ++k) {
    auto x = input(1000 + k);
    auto t0 = Clock::now();
    kiln::compile({compile_ahead_program(k, x)});
    t.single_ms.push_back(ms(t0));
  }
  std::vector<kiln::Array> four;
  for (int k = 0; k < 4; ++k) four.push_back(compile_ahead_program(k, input(2000 + k)));
  auto t0 = Clock::now();
  kiln::compile(four);
  t.plan_ms = ms(t0);
  return t;
}

}  // namespace bench
