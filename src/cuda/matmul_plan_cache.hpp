// cuBLASLt matmul plans (the operation descriptor, the three matrix layouts and the algorithm
// the heuristic chose) in an LRU cache keyed by everything they depend on: dtype, precision,
// sizes, layouts, batch strides, pointer alignments and the device. Planning (the heuristic)
// costs tens of microseconds; a cached plan is only enqueued.
#pragma once
#include <cublasLt.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "kiln/dtype.hpp"
#include "kiln/linalg.hpp"
#include "plan/plan.hpp"

namespace kiln::gpu::matmul {

// Throws kiln::CudaError naming the call and the cublasStatus_t; kiln::OutOfMemory for
// CUBLAS_STATUS_ALLOC_FAILED.
void check(cublasStatus_t s, const char* call);

// How one operand's matrices lie in memory (plan::matrix_layout), and the distance between
// consecutive batch entries (0: one matrix for every entry).
struct Side {
  bool col_major;
  int64_t ld, batch_stride;
};

// One cuBLASLt call: `batch` row-major products out (m x n, dense) = a (m x k) b (k x n),
// then the epilogue (a bias of n values, the same for every batch entry).
struct Spec {
  DType dtype;
  bool tf32;
  int64_t m, n, k, batch;
  Side a, b;
  int64_t out_batch_stride;
  // The largest power of two (at most 256) dividing every matrix's address: cuBLASLt's
  // algorithms may assume it, so it is part of the plan. The bias's likewise (0: none).
  uint32_t align_a, align_b, align_out;
  plan::Epilogue epilogue = plan::Epilogue::None;
  uint32_t align_bias = 0;
  std::vector<int64_t> key(int device) const;
};

// cuBLASLt's description of a spec: the operation (compute and scale types, transposes) and
// the column-major layouts of its D (n x m) = op(A) op(B), with A holding b's matrices and B
// a's, so that no operand is copied; and the heuristic's preference (the work-area cap, the
// operands' alignments). Host objects: they are made without a GPU.
struct Descriptors {
  explicit Descriptors(const Spec& spec);
  ~Descriptors() { release(); }
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;

  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  bool double_scale = false;  // alpha and beta are double (FP64 compute), else float

 private:
  void release() noexcept;
};

class Plan {
 public:
  // The heuristic's choice for the device. `bias`: a bias address of the spec's alignment,
  // which the heuristic reads (never dereferencing it) to know what it may assume.
  Plan(const Spec& spec, int device, const void* bias = nullptr);
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  // Whether cuBLASLt has an algorithm for the spec. Only a spec with an epilogue may have none
  // (a dtype or layout whose kernels lack it): the caller then runs the plain product and the
  // epilogue on its own. Without one, construction throws.
  bool available() const { return available_; }

  // Enqueues the product on the device's kiln stream, with a work area from kiln's allocator.
  // `bias`: the bias's address, of the spec's alignment (null without a bias).
  void run(const void* a, const void* b, const void* bias, void* out) const;

 private:
  int device_;
  Descriptors desc_;
  cublasLtMatmulAlgo_t algo_{};
  size_t workspace_ = 0;
  bool available_ = true;
  // The bias address is an attribute of the shared descriptor, set before each call: one
  // thread at a time sets it and enqueues.
  mutable std::mutex bias_mutex_;
};

std::shared_ptr<Plan> acquire_plan(const Spec& spec, int device, const void* bias = nullptr);
MatmulPlanCacheInfo plan_cache_info();
void set_plan_cache_limit(size_t max_plans);
void clear_plan_cache();

}  // namespace kiln::gpu::matmul
