// Library steps on a GPU: FFTs through cuFFT (work areas from kiln's allocator) and random
// numbers from a one-pass Philox kernel that reproduces cuRAND's stream, both on the device's
// kiln stream, so stream-ordered memory reuse stays safe.
#pragma once
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "graph/buffer.hpp"
#include "plan/plan.hpp"

namespace kiln::gpu {

// Reads `in` (dense, plan buffer step.in's dtype and shape) and writes `out` (dense, plan buffer
// step.out), cropping or zero-padding each transformed axis to step.lengths, then scaling by
// step.scale. Same contract as the host's cpu::run_fft.
void run_fft(const plan::FftStep& step, const plan::PlanBuffer& in_desc, const void* in,
             const plan::PlanBuffer& out_desc, void* out, int device);

// out = x with the values placed at their positions (cpu::run_scatter's contract; float sums
// and products at repeated positions may round differently, as they run in any order).
void run_scatter(const plan::ScatterStep& step, const plan::PlanBuffer& out_desc, const void* x,
                 const int64_t* positions, const void* values, int64_t count, void* out,
                 uint64_t* check, int device);
// out = the inclusive scan of in (cpu::run_scan's contract): long rows in one pass of tiles
// (decoupled look-back), whose float sums associate differently from the host's (the same way
// every run).
void run_scan(const plan::ScanStep& step, const plan::PlanBuffer& out_desc, const void* in,
              void* out, int device);
// kernels/scan.cuh's kiln::scan::kThreads: the block of the single-pass scan and of the compress
// step, and the tiles of one look-back group.
constexpr int kLookBackBlock = 512;
// Scratch for one launch of kernels/scan.cuh's decoupled look-back over `rows` rows of
// `row_tiles` tiles (its Status), its counter and status words zeroed on the current stream;
// held until the launch is queued (freed stream-ordered).
std::shared_ptr<graph::Buffer> look_back_status(int device, int64_t rows, int64_t row_tiles);
// The selected rows or positions (cpu::run_compress's contract), in one pass over tiles of the
// mask: each tile counts its selected entries, takes the count before it by decoupled
// look-back and writes its rows at once.
void run_compress(const plan::CompressStep& step, const plan::PlanBuffer& out_desc,
                  const bool* mask, const void* values, void* out, int device);
std::vector<std::string> compile_compress_helpers(const std::string& arch);
// Compiles every scatter and scan kernel for `arch` without a GPU (how tests check
// kernels/scatter.cuh through NVRTC on machines that have none). Returns the kernel names.
// Compiles every scatter and scan kernel of these dtypes for `arch` (all by default).
std::vector<std::string> compile_scatter_helpers(const std::string& arch,
                                                 std::span<const DType> dtypes = kAllDTypes);
std::vector<std::string> compile_scan_helpers(const std::string& arch,
                                              std::span<const DType> dtypes = kAllDTypes);

// out = a @ b per batch entry, then the step's epilogue, through cuBLASLt (the Backend's
// contract), on the device's kiln stream; float sums associate as cuBLASLt's algorithm does.
// Where cuBLASLt has no algorithm with the epilogue, the plain product and then the step's
// unfused kernel.
void run_matmul(const plan::MatmulStep& step, const plan::PlanBuffer& out_desc, const void* a,
                const void* b, const void* bias, void* out, int device);

// out = the rows of in sorted (cpu::run_sort's contract, the same bits) by CUB's radix sort
// (cuda/sort_cub.hpp), its temporaries from kiln's allocator on the current stream.
void run_sort(const plan::SortStep& step, const plan::PlanBuffer& out_desc, const void* in,
              void* out, int device);

// Fills `out` with the same numbers the host's cpu::run_random gives for this step.
void run_random(const plan::RandomStep& step, const plan::PlanBuffer& out_desc, void* out,
                int device);

}  // namespace kiln::gpu
