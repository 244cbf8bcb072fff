// A gate on a CUDA stream: work queued behind it has certainly not run until the test opens it,
// so tests can say what kiln queued without waiting, and what ran while a stream was held,
// without timing.
#pragma once
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace kiln::test_support {

// Holds a stream back until released (a host function the stream runs, waiting for a flag), so
// whether later work has run is certain, not a matter of timing. Gives up after 20 s so a kiln
// that wrongly waits on the host cannot hang the test; `timed_out` says it gave up, and
// `released_by_test` that this thread let it go while it still held.
struct Gate {
  std::atomic<bool> open{false}, released_by_test{false}, timed_out{false}, started{false};
  static void CUDART_CB hold(void* self) {
    auto* g = static_cast<Gate*>(self);
    g->started = true;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!g->open.load() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    if (!g->open.load()) g->timed_out = true;
  }
  void close_on(cudaStream_t s) {
    REQUIRE(cudaLaunchHostFunc(s, &Gate::hold, this) == cudaSuccess);
  }
  void release() {
    released_by_test = !timed_out.load();
    open = true;
  }
};

}  // namespace kiln::test_support
