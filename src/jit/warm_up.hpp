// What a process's first kernel lookup and first compile would otherwise wait for, started on a
// thread of its own when kiln first touches a GPU (cuda/device_context.cpp), beside the
// program's own set-up: the cache keys' shared digest (libcrypto's first SHA-256 sets up its
// providers, 1.3-2.4 ms) and NVRTC's load (10-20 ms; KILN_NVRTC_PRELOAD=0 leaves it to the first
// compile). Whoever needs either first waits for the thread's work, never repeats it.
#pragma once

namespace kiln::jit {

// Starts the warm-up, once per process; errors wait for the caller that needs the result.
void warm_up_in_background();

}  // namespace kiln::jit
