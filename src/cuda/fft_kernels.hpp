// The small kernels around cuFFT calls (kernels/fft.cuh), compiled through the JIT cache on
// first use and launched on the device's kiln stream.
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

// Compiles every helper for `arch` without a GPU (how tests check kernels/fft.cuh with NVRTC
// on machines that have none), the load callbacks as LTO-IR. Returns the kernel names.
std::vector<std::string> compile_helpers(const std::string& arch);

}  // namespace kiln::gpu::fft
