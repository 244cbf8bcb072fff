// The engine's counters behind kiln::engine_stats(): atomic since arrays may be evaluated from
// several threads and the counters read at any time. Every write holds the evaluation lock
// (runtime/pipeline.hpp: the plan runner bumps them, reset_engine_stats takes the lock), so a
// bump is a plain load and store, without the locked read-modify-write of ++.
#pragma once
#include <atomic>
#include <cstdint>

namespace kiln::runtime {

struct Counters {
  std::atomic<int64_t> plans{0}, kernels{0}, library{0}, copies{0}, bytes{0};
};
Counters& counters();

// Adds n to a counter; the caller holds the evaluation lock.
inline void bump(std::atomic<int64_t>& counter, int64_t n = 1) {
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

}  // namespace kiln::runtime
