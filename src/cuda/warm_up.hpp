// What a process's first kernel lookup, first compile and first FFT would otherwise wait for,
// started on a thread of its own when kiln first touches a GPU (cuda/device_context.cpp), beside
// the program's own set-up: the cache keys' shared digest (libcrypto's first SHA-256 sets up its
// providers, 1.3-2.4 ms), then the libraries KILN_PRELOAD names, in its order (default
// "nvrtc,cufft": NVRTC's load is 10-20 ms on the H200 machine, cuFFT's 5). Whoever needs one
// first waits for the thread's work, never repeats it.
#pragma once

#include <string>
#include <vector>

namespace kiln::gpu {

// The libraries a KILN_PRELOAD setting names ("nvrtc", "cufft"; "none" or empty for none), in
// its order; null gives the default. An unknown entry is left out with a warning.
std::vector<std::string> preload_list(const char* setting);

// Starts the warm-up, once per process; errors wait for the caller that needs the result.
void warm_up_in_background();

}  // namespace kiln::gpu
