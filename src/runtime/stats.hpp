// The engine's counters behind kiln::engine_stats(): bumped by the plan runner, atomic since
// arrays may be evaluated from several threads (one plan at a time, read at any time).
#pragma once
#include <atomic>
#include <cstdint>

namespace kiln::runtime {

struct Counters {
  std::atomic<int64_t> plans{0}, kernels{0}, library{0}, copies{0}, bytes{0};
};
Counters& counters();

}  // namespace kiln::runtime
