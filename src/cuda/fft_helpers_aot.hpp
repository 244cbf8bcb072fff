// The FFT helper kernels built into kiln by nvcc (fft_helpers_aot.cu), found by the name of
// their NVRTC twin in fft_kernels.cpp. Like sort_cub.hpp this interface names no kiln type, so
// the .cu file includes only kernels/fft.cuh and the helpers' launch constants.
#pragma once
#include <string>
#include <vector>

namespace kiln::gpu::fft::aot {

// The host stub of the built-in kernel that does what fft_kernels.cpp's helper `name` does
// (same template instance, parameters and block bound), for cudaLaunchKernel; null when kiln
// has none by that name.
const void* kernel(const std::string& name);

// Every name kernel() knows.
std::vector<std::string> names();

}  // namespace kiln::gpu::fft::aot
