// The small kernels around cuFFT calls (kernels/fft.cuh), launched on the device's kiln stream:
// those built into kiln (fft_helpers_aot.cu) where its build has SASS for the device, else
// compiled through the JIT cache on first use.
#pragma once
#include <string>
#include <vector>

#include "cuda/fft_program.hpp"
#include "jit/jit.hpp"

namespace kiln::gpu::fft {

// A dense array's element kind for the helpers: real or complex, of the program's precision.
struct Elements {
  bool complex;
  Precision precision;
};

// dst (dst_shape) = src (src_shape) cropped / zero-padded, converted between element kinds.
void pad_copy(int device, const void* src, Elements src_kind, const Shape& src_shape, void* dst,
              Elements dst_kind, const Shape& dst_shape);
// See ZeroImagOp.
void zero_imag(int device, void* data, Precision p, const ZeroImagOp& op);
// See HermitianOp (src may equal dst).
void expand_hermitian(int device, const void* src, void* dst, Precision p, const HermitianOp& op);
// dst = n reals of precision p converted from the n integers (or bools) of dtype `from` at src.
void convert_input(int device, const void* src, DType from, void* dst, Precision p, int64_t n);
// cuFFT's load callback that reads `from` values as reals of precision p: its name, and its
// LTO-IR in `cubin` (from the kernel cache, so it lives as long as the process).
const jit::Kernel& load_callback(DType from, Precision p, int device);
// Multiplies `count` reals (a complex value is two) by factor.
void scale(int device, void* data, Precision p, int64_t count, double factor);

// The names of every helper kernel an FFT step may launch (not the load callbacks), each also
// built into kiln.
std::vector<std::string> helper_names();

// Whether the helpers launch the kernels built into kiln where those run: yes, unless
// KILN_FFT_AOT=0 (then always the JIT's). enable_built_in_helpers switches it for the process
// (for tests comparing the two paths).
bool built_in_helpers_enabled();
void enable_built_in_helpers(bool on);
// Whether the built-in helpers run on `device`: kiln's build has their SASS for its arch (then,
// unless disabled, a first FFT there compiles no helper).
bool built_in_helpers_run_on(int device);

// Compiles every helper for `arch` without a GPU (how tests check kernels/fft.cuh with NVRTC
// on machines that have none), the load callbacks as LTO-IR. Returns the kernel names.
std::vector<std::string> compile_helpers(const std::string& arch);

}  // namespace kiln::gpu::fft
