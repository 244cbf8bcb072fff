// A small fixed thread pool for host-side work (the host executor, the staged copies of
// src/cuda): one worker per core, the caller helping. Below every stage that uses it.
#pragma once
#include <cstdint>
#include <functional>

namespace kiln::cpu {

// Runs f(0) .. f(n-1) across the pool and waits. Tasks must be independent.
void parallel_for(int64_t n, const std::function<void(int64_t)>& f);
int thread_count();

}  // namespace kiln::cpu
