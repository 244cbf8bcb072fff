// Small fixed kernels around library steps (FFT padding and scaling, scatter updates): an
// extern "C" wrapper that calls a template of kernels/, compiled through the JIT and its kernel
// cache on first use, loaded once per device for the process's life (a kernel handle must
// outlive every launch that may still be queued), launched on the device's kiln stream. A
// helper that kiln's build also holds compiled ahead of time (the FFT's, fft_helpers_aot.cu)
// launches that kernel instead wherever its SASS runs, so it needs no compile at all.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "jit/jit.hpp"

namespace kiln::gpu::helpers {

constexpr int kBlock = 256;  // a helper's block unless it says otherwise

struct Helper {
  std::string name, source, summary, dtypes;
  std::vector<std::string> options = {};  // NVRTC's, beyond the JIT's own
  int block = kBlock;                     // threads a block, as the wrapper's __launch_bounds__
  // The same kernel built into kiln by nvcc (its host stub, same parameters and block bound),
  // or null.
  const void* built_in = nullptr;
};

// One extern "C" kernel `name(params)` whose body is `call;`, after #include "kiln/HEADER",
// launched in blocks of `block` threads.
Helper wrap(const std::string& header, const std::string& name, const std::string& params,
            const std::string& call, const std::string& summary, const std::string& dtypes,
            int block = kBlock);

// h's kernel for arch, with `extra` NVRTC options besides h's.
jit::Result compile(const Helper& h, const std::string& arch,
                    const std::vector<std::string>& extra = {});

// Whether kiln's build holds SASS of the built-in kernel `fn` for the device's arch (asks the
// runtime; launch() asks once per device and kernel).
bool built_in_runs_on(const void* fn, int device);

// Grid-stride kernels: enough blocks to fill the device, no more.
int64_t max_blocks(int device);
void launch(const Helper& h, int device, dim3 grid, void** args);
// A grid-stride launch over n elements (nothing to do for n == 0 is the caller's check).
void launch(const Helper& h, int device, int64_t n, void** args);

}  // namespace kiln::gpu::helpers
