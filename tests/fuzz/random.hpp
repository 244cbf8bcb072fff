// Random choices from std::mt19937_64, computed here rather than with <random>'s
// distributions, whose algorithms differ between standard libraries: a seed names the same
// program with any compiler.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

namespace kiln::fuzz {

class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed) {}

  uint64_t next() { return engine_(); }
  // In [0, 1), with 53 random bits.
  double unit() { return static_cast<double>(next() >> 11) * 0x1p-53; }
  // An integer in [lo, hi] (the modulo bias is far below anything a fuzzer notices).
  int64_t uniform(int64_t lo, int64_t hi) {
    uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
    return span == 0 ? static_cast<int64_t>(next())  // the whole int64 range
                     : static_cast<int64_t>(static_cast<uint64_t>(lo) + next() % span);
  }
  double uniform_real(double lo, double hi) { return lo + (hi - lo) * unit(); }
  bool chance(double p) { return unit() < p; }
  // An index drawn with the given weights.
  int weighted(const std::vector<int>& weights) {
    int64_t total = 0;
    for (int w : weights) total += w;
    int64_t r = uniform(0, total - 1);
    for (size_t i = 0; i < weights.size(); ++i)
      if ((r -= weights[i]) < 0) return static_cast<int>(i);
    return static_cast<int>(weights.size()) - 1;
  }
  template <class It>
  void shuffle(It first, It last) {
    for (auto n = last - first; n > 1; --n) std::swap(first[n - 1], first[uniform(0, n - 1)]);
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace kiln::fuzz
