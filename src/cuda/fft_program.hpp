// How the cuFFT executor runs one FFT step, as data: the copies, zero-padding, cuFFT calls
// (each with its advanced-layout arguments), clean-ups and scaling, in order. Pure shape
// arithmetic with no CUDA, so the layouts can be checked on a machine without a GPU.
//
// The pass scheme. cuFFT transforms at most three dimensions per plan, and a plan's batch
// has a single distance, while a step may transform any subset of up to eight axes. After
// dropping extent-1 dimensions (a length-1 DFT is the identity) and merging neighbouring
// batch dimensions, the transformed dimensions fall into runs of consecutive dimensions.
// Each run, cut into chunks of at most three from the innermost end, is one pass: a 1-3-D
// plan over the chunk whose elements are `inner` apart (the product of the extents after
// it), batched over the `outer` slabs before it and the `inner` positions after it.
//  - outer == 1 or inner == 1 (the common cases: fftn over every axis, fft2 over the last
//    two, fft along the first or last axis): one call, batched over the other.
//  - both > 1 (say axis 1 of a 3-D array): one plan batched over one of them, called once
//    per index of the other with the pointers advanced; whichever needs fewer calls.
// The first pass reads the input out of place (cuFFT's C2C and R2C leave their input
// intact), later ones work in place on the output.
//
// Real transforms. rfftn: one R2C pass over the real axis (the last of `axes`, NumPy's
// halved axis) together with up to two transformed dimensions right before it, then C2C
// passes over the other axes on the half-spectrum. irfftn: C2C inverse passes over every
// axis but the real one on a copy of the input (cuFFT's C2R overwrites its input), then a
// batched 1-D C2R along the real axis. NumPy defines irfftn on input that is not Hermitian
// by exactly that order and by ignoring the imaginary parts of the DC and Nyquist terms;
// cuFFT's C2R does not promise to ignore them, so they are zeroed first, and a multi-axis
// C2R (whose result on non-Hermitian input is unspecified) is never used.
//
// Full spectra of real input (R2CFull: fft / fftn of real arrays). The halved axis is the
// innermost transformed one of length > 1 (any would do; this one gives contiguous lines and
// leaves only batch dimensions after it). The R2C pass is rfftn's, then a HermitianOp fills
// entries k > n / 2 of the halved axis from X[c, k] = conj(X[-c, n - k]). Two layouts:
//  - the R2C pass covers every transformed axis (at most three consecutive ones: fftn of
//    1-3-D arrays, fft, fft2 over trailing axes): it writes the half spectrum straight into
//    the output, each line keeping its full length n (a padded onembed), and the expansion
//    runs in place. Per complex output element that is 1/2 write by cuFFT and 1/2 read + 1/2
//    write by the expansion, with no temporary. (A compact half in a temporary would cost
//    the same cuFFT traffic plus a read of the half and a write of all of the output.)
//  - more passes follow: the half spectrum is compact in a temporary (BufferId::Half) so the
//    C2C passes transform only its lines, and the expansion writes all of the output from
//    it, applying the norm scale on the way. A padded half in the output would make those
//    passes transform the unused lines too, about as many bytes again per pass.
// In place, whatever cuFFT might leave in the unused entries k > n / 2 does not matter: the
// expansion only writes them.
//
// Integer input (the planner hands a GPU FFT of real input cast from int32 / int64 / bool the
// integers themselves). When only R2C passes read the input, their plans convert each value
// as cuFFT loads it (an LTO load callback, PlanSpec::load_from), so no pass is spent on the
// cast. Otherwise (a crop or pad, a staging copy, or several calls stepping through int32 or
// bool, whose pointers cuFFT would find misaligned for reals) a ConvertOp casts the input
// into BufferId::Converted first and every op reads that instead.
//
// Alignment. cuFFT wants the real pointers of R2C / C2R aligned like complex ones, so a real
// pass that needs several calls batches over `inner` (calls advance by whole slabs), and when
// a slab holds an odd number of reals its side goes through a staging copy with one spare
// real per slab.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "plan/plan.hpp"

namespace kiln::gpu::fft {

enum class Precision : uint8_t { Single, Double };
enum class Transform : uint8_t { C2C, R2C, C2R };
// Half: the compact half spectrum of a multi-pass R2CFull program (complex). Converted: integer
// input cast to reals, when it cannot be converted on load.
enum class BufferId : uint8_t { In, Out, Scratch, Staging, Half, Converted };

// false: one-pass R2CFull programs use the compact temporary too (to time both layouts).
inline constexpr bool kR2CHalfInOutput = true;

// cufftMakePlanMany64's arguments. Strides and distances count elements of each side's own
// type (reals for the R2C input and the C2R output). Entries past `rank` are zero.
struct PlanSpec {
  Transform transform;
  Precision precision;
  int rank;
  std::array<int64_t, 3> n, inembed, onembed;
  int64_t istride, idist, ostride, odist, batch;
  // R2C only: the input holds these integers (or bool), each converted to a real on load.
  std::optional<DType> load_from;
  std::vector<int64_t> key() const;
};

// One plan run `loops` times, the pointers advanced by in_step / out_step elements each time.
struct ExecOp {
  PlanSpec plan;
  BufferId in, out;
  bool inverse;
  int64_t loops, in_step, out_step;
};
// dst (dense, dst_shape) = src (dense, src_shape) cropped and zero-padded per dimension,
// converted between the buffers' element kinds (real -> complex adds a zero imaginary part,
// complex -> real keeps the real part). Equal shapes and kinds make it a plain copy.
struct PadOp {
  BufferId src, dst;
  Shape src_shape, dst_shape;
};
// Zeroes the imaginary part of entries `first` and `second` (-1: none) along the middle
// dimension of buf viewed as [outer, extent, inner].
struct ZeroImagOp {
  BufferId buf;
  int64_t outer, extent, inner, first, second;
};
// Multiplies every value of buf by factor (both parts of complex values).
struct ScaleOp {
  BufferId buf;
  double factor;
};
// R2CFull's expansion. src and dst viewed as [outer..., k, inner]: src holds entries
// k < n / 2 + 1 of every line along the halved axis k, lines src_extent apart (n / 2 + 1 when
// compact, n when src == dst); dst's lines have all n. For each entry of src:
//   dst[o, k, i] = factor * src[o, k, i]         (skipped when src == dst and factor == 1)
//   dst[-o, n - k, i] = factor * conj(src[o, k, i])   for 1 <= k < n - n / 2
// where -o negates the index of every mirrored (transformed) outer dimension modulo its
// extent. Each src entry is read once and each dst entry written once, and in place the
// written entries (k > n / 2) are never read, so the kernel needs no ordering.
struct HermitianOp {
  BufferId src, dst;
  std::vector<int64_t> outer;  // extents of the dimensions before the halved one
  std::vector<bool> mirror;    // per outer dimension: transformed
  int64_t n, src_extent, inner;
  double factor;
};
// Converted (reals of the precision) = In (integers or bool), element by element.
struct ConvertOp {
  DType from;
};
using Op = std::variant<ConvertOp, PadOp, ExecOp, ZeroImagOp, ScaleOp, HermitianOp>;

struct BufferInfo {
  bool complex = true;
  int64_t elements = 0;  // Scratch / Staging: 0 when the program needs none
};

struct Program {
  Precision precision;
  BufferInfo in, out, scratch, staging;  // scratch: complex or real; staging: real
  BufferInfo half;                       // complex
  std::vector<Op> ops;
  DType in_dtype;  // what In holds in memory (integers only for R2C / R2CFull programs)
  BufferInfo converted{false, 0};  // real
  const BufferInfo& info(BufferId b) const;
  size_t element_bytes(BufferId b) const;
};

// The program for a step reading `in` and writing `out` (dense, the plan buffers' shapes and
// dtypes). The output must not be empty (an empty batch has nothing to transform).
// load_callbacks false: integer input always goes through a ConvertOp.
Program make_program(const plan::FftStep& step, const plan::PlanBuffer& in,
                     const plan::PlanBuffer& out, bool load_callbacks = true);
// Whether some ExecOp converts the input on load (its plan needs cuFFT's JIT link).
bool uses_load_callbacks(const Program& p);

}  // namespace kiln::gpu::fft
