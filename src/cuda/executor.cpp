#include "cuda/executor.hpp"

#include <cstring>

#include "cuda/kernels.hpp"
#include "cuda/library.hpp"
#include "cuda/runtime.hpp"

namespace kiln::gpu {

plan::PreparedGroup prepared_group(const LaunchRecord& rec) {
  static_assert(static_cast<int>(jit::Origin::Compiled) + 1 ==
                    static_cast<int>(plan::KernelOrigin::Compiled) &&
                static_cast<int>(jit::Origin::Disk) + 1 ==
                    static_cast<int>(plan::KernelOrigin::Disk));
  return {rec.name, static_cast<plan::KernelOrigin>(static_cast<int>(rec.origin) + 1), rec.source};
}

std::shared_ptr<graph::Buffer> Executor::allocate(size_t nbytes) {
  return gpu::allocate(device_, nbytes);
}

std::shared_ptr<graph::Buffer> Executor::allocate_check_words(size_t nbytes) {
  // A block from the pinned cache is reused only once the work queued when it was freed has
  // finished (allocate_pinned), so no kernel of an earlier run still writes it.
  auto b = gpu::allocate_pinned(nbytes);
  std::memset(b->data(), 0, nbytes);
  return b;
}

plan::PreparedGroup Executor::prepare(const plan::KernelStep& step) {
  return prepared_group(prepare_group(step, device_));
}

bool Executor::needs_compile(const plan::KernelStep& step) const { return !step.compiled->value; }

plan::PreparedGroup Executor::compile_kernel(const plan::KernelStep& step) {
  return prepared_group(compile_group(step, device(device_).arch));
}

void Executor::run_group(const plan::KernelStep& step, const std::vector<Scalar>& params,
                         const std::function<void*(int)>& data) {
  gpu::run_group(step, params, device_, data);
}

void Executor::run_fft(const plan::FftStep& step, const plan::PlanBuffer& in_desc, const void* in,
                       const plan::PlanBuffer& out_desc, void* out) {
  gpu::run_fft(step, in_desc, in, out_desc, out, device_);
}

void Executor::run_random(const plan::RandomStep& step, const plan::PlanBuffer& out_desc,
                          void* out) {
  gpu::run_random(step, out_desc, out, device_);
}

void Executor::run_scatter(const plan::ScatterStep& step, const plan::PlanBuffer& out_desc,
                           const void* x, const int64_t* positions, const void* values,
                           int64_t count, void* out, uint64_t* check) {
  gpu::run_scatter(step, out_desc, x, positions, values, count, out, check, device_);
}

void Executor::run_scan(const plan::ScanStep& step, const plan::PlanBuffer& out_desc,
                        const void* in, void* out) {
  gpu::run_scan(step, out_desc, in, out, device_);
}

void Executor::run_compress(const plan::CompressStep& step, const plan::PlanBuffer& out_desc,
                            const bool* mask, const void* values, void* out) {
  gpu::run_compress(step, out_desc, mask, values, out, device_);
}

void Executor::run_sort(const plan::SortStep& step, const plan::PlanBuffer& out_desc,
                        const void* in, void* out) {
  gpu::run_sort(step, out_desc, in, out, device_);
}

// A pinned source is read by DMA after this returns; a pageable one has been staged.
void Executor::run_matmul(const plan::MatmulStep& step, const plan::PlanBuffer& out_desc,
                          const void* a, const void* b, const void* bias, void* out) {
  gpu::run_matmul(step, out_desc, a, b, bias, out, device_);
}

bool Executor::copy_from_host(void* dst, const void* src, size_t nbytes, bool src_pinned) {
  copy_to_device(device_, dst, src, nbytes, src_pinned);
  return src_pinned;
}

void Executor::copy_to_host(void* dst, const void* src, size_t nbytes, bool dst_pinned) {
  gpu::copy_to_host(device_, dst, src, nbytes, dst_pinned);
}

void Executor::synchronize() { gpu::synchronize(device_); }

}  // namespace kiln::gpu
