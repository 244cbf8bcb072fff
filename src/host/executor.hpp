// The host executor behind the engine's backend interface: fused groups chunk by chunk with
// Eigen (host/fused.hpp), FFTs through FFTW, random numbers through Philox, memcpy copies. The
// reference every other backend is checked against.
#pragma once
#include "plan/backend.hpp"

namespace kiln::cpu {

class Executor : public plan::Backend {
 public:
  std::shared_ptr<graph::Buffer> allocate(size_t nbytes) override;
  std::shared_ptr<graph::Buffer> allocate_check_words(size_t nbytes) override;
  plan::PreparedGroup prepare(const plan::KernelStep& step) override;
  void check_user_code(const plan::KernelStep& step) override;
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
  void synchronize() override {}
};

}  // namespace kiln::cpu
