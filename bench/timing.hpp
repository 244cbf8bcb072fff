// What the GPU benchmarks share: the median time of back-to-back calls, and the one JSON line a
// workload prints (bench/run_gpu_bench.py reads it).
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace bench {

using Clock = std::chrono::steady_clock;
inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Median over `repeats` timings of `iters` back-to-back calls of f, each ended by sync(): the
// device time per call when the host keeps ahead.
inline double median_ms(const std::function<void()>& f, const std::function<void()>& sync,
                        int iters = 20, int repeats = 7) {
  f();
  sync();
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = Clock::now();
    for (int i = 0; i < iters; ++i) f();
    sync();
    t.push_back(ms_since(t0) / iters);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

inline void print(const std::string& id, const std::vector<std::pair<std::string, double>>& kv) {
  std::printf("{\"id\": \"%s\"", id.c_str());
  for (const auto& [k, v] : kv) std::printf(", \"%s\": %.6g", k.c_str(), v);
  std::printf("}\n");
}

}  // namespace bench
