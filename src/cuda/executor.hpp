// The CUDA executor behind the engine's backend interface, for one device: generated kernels
// through the JIT and kernel cache (cuda/kernels.hpp), cuFFT and Philox library steps
// (cuda/library.hpp), the caching allocator and copies on the device's stream
// (cuda/runtime.hpp).
#pragma once
#include "cuda/streams.hpp"
#include "plan/backend.hpp"

namespace kiln::gpu {

struct LaunchRecord;

class Executor final : public plan::Backend {
 public:
  explicit Executor(int device) : device_(device) {}

  std::shared_ptr<graph::Buffer> allocate(size_t nbytes) override;
  // Page-locked host memory, which kernels address directly (unified addressing): the plan
  // runner reads a check's words after one wait for the stream, with no zeroing or copy
  // queued around the kernel that writes them (take with TakeMode::Raise: two fewer calls
  // and two fewer steps on the GPU's queue per evaluation).
  std::shared_ptr<graph::Buffer> allocate_check_words(size_t nbytes) override;
  plan::PreparedGroup prepare(const plan::KernelStep& step) override;
  bool needs_compile(const plan::KernelStep& step) const override;
  plan::PreparedGroup compile_kernel(const plan::KernelStep& step) override;
  void check_user_code(const plan::KernelStep&) override {}  // NVRTC compiles user code
  void run_group(const plan::KernelStep& step, const std::vector<Scalar>& params,
                 const std::function<void*(int)>& data) override;
  void run_fft(const plan::FftStep& step, const plan::PlanBuffer& in_desc, const void* in,
               const plan::PlanBuffer& out_desc, void* out) override;
  void run_random(const plan::RandomStep& step, const plan::PlanBuffer& out_desc,
                  void* out) override;
  void run_scatter(const plan::ScatterStep& step, const plan::PlanBuffer& out_desc, const void* x,
                   const int64_t* positions, const void* values, int64_t count, void* out,
                   uint64_t* check) override;
  void run_scan(const plan::ScanStep& step, const plan::PlanBuffer& out_desc, const void* in,
                void* out) override;
  void run_compress(const plan::CompressStep& step, const plan::PlanBuffer& out_desc,
                    const bool* mask, const void* values, void* out) override;
  void run_matmul(const plan::MatmulStep& step, const plan::PlanBuffer& out_desc, const void* a,
                  const void* b, const void* bias, void* out) override;
  void run_sort(const plan::SortStep& step, const plan::PlanBuffer& out_desc, const void* in,
                void* out) override;
  bool copy_from_host(void* dst, const void* src, size_t nbytes, bool src_pinned) override;
  void copy_to_host(void* dst, const void* src, size_t nbytes, bool dst_pinned) override;
  void synchronize() override;
  void begin_run() override { ordering_.begin_run(device_); }
  void read_from(const graph::Buffer& b) override { ordering_.read_from(device_, b); }
  void end_run() override { ordering_.end_run(); }

 private:
  int device_;
  RunOrdering ordering_;
};

// What a kernel lookup reported, in the backend interface's terms.
plan::PreparedGroup prepared_group(const LaunchRecord& rec);

}  // namespace kiln::gpu
