#include "cuda/matmul_plan_cache.hpp"

#include <string>

#include "cuda/cublaslt.hpp"
#include "cuda/lru_cache.hpp"
#include "cuda/per_device.hpp"
#include "cuda/runtime.hpp"
#include "cuda/streams.hpp"
#include "kiln/errors.hpp"

namespace kiln::gpu::matmul {
namespace {

// What cuBLASLt may use as a work area; 32 MiB is what NVIDIA recommends for Hopper.
constexpr uint64_t kMaxWorkspace = uint64_t{32} << 20;
constexpr size_t kDefaultMaxPlans = 256;

// One handle per device, made on first use and kept for the process (cuBLASLt's handle holds
// no device memory).
cublasLtHandle_t handle(int device) {
  static PerDevice<cublasLtHandle_t> handles;
  return handles.get(
      device, [](cublasLtHandle_t& h) { check(lt::api().cublasLtCreate(&h), "cublasLtCreate"); });
}

struct Types {
  cudaDataType_t data, scale;
  cublasComputeType_t compute;
};

Types types_of(DType t, bool tf32) {
  switch (t) {
    case DType::Float32:
      return {CUDA_R_32F, CUDA_R_32F, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F};
    case DType::Float64:
      return {CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F};
    case DType::Complex64:
      return {CUDA_C_32F, CUDA_C_32F, CUBLAS_COMPUTE_32F};
    case DType::Complex128:
      return {CUDA_C_64F, CUDA_C_64F, CUBLAS_COMPUTE_64F};
    case DType::Float16:
      return {CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case DType::BFloat16:
      return {CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    default:
      throw Error(
          std::string("matmul: cuBLASLt was asked for ") + dtype_name(t) +
          ", which kiln multiplies in a fused kernel; this is a kiln bug, please report it");
  }
}

template <class T>
void set(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, T value) {
  check(lt::api().cublasLtMatmulDescSetAttribute(d, attr, &value, sizeof value),
        "cublasLtMatmulDescSetAttribute");
}
template <class T>
void set(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr, T value) {
  check(lt::api().cublasLtMatrixLayoutSetAttribute(l, attr, &value, sizeof value),
        "cublasLtMatrixLayoutSetAttribute");
}
template <class T>
void set(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t attr, T value) {
  check(lt::api().cublasLtMatmulPreferenceSetAttribute(p, attr, &value, sizeof value),
        "cublasLtMatmulPreferenceSetAttribute");
}

// A stored matrix of rows x cols (column-major, leading dimension ld), repeated `batch` times.
cublasLtMatrixLayout_t layout(cudaDataType_t t, int64_t rows, int64_t cols, int64_t ld,
                              int64_t batch, int64_t batch_stride) {
  cublasLtMatrixLayout_t l = nullptr;
  check(lt::api().cublasLtMatrixLayoutCreate(&l, t, static_cast<uint64_t>(rows),
                                             static_cast<uint64_t>(cols), ld),
        "cublasLtMatrixLayoutCreate");
  try {
    set(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, static_cast<int32_t>(batch));
    set(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, batch_stride);
  } catch (...) {
    lt::api().cublasLtMatrixLayoutDestroy(l);
    throw;
  }
  return l;
}

// Operand x of the row-major product, rows x cols, as cuBLASLt's column-major operand: a
// row-major matrix is the transpose stored column-major, so it needs no op; a column-major one
// (a transposed view) is read with op T.
struct Operand {
  cublasOperation_t op;
  int64_t rows, cols;  // of the stored column-major matrix
};
Operand operand(const Side& s, int64_t rows, int64_t cols) {
  return s.col_major ? Operand{CUBLAS_OP_T, rows, cols} : Operand{CUBLAS_OP_N, cols, rows};
}

std::string spec_str(const Spec& s) {
  return std::string(dtype_name(s.dtype)) + " (" + std::to_string(s.batch) + " x " +
         std::to_string(s.m) + " x " + std::to_string(s.k) + ") @ (" + std::to_string(s.k) + " x " +
         std::to_string(s.n) + ")" + plan::epilogue_str(s.epilogue);
}

// cuBLASLt's epilogue for kiln's. Its bias runs along the rows of its column-major D (n x m,
// Descriptors), which are kiln's n axis: one value per column of the row-major product.
cublasLtEpilogue_t epilogue_of(plan::Epilogue e) {
  switch (e) {
    case plan::Epilogue::Bias:
      return CUBLASLT_EPILOGUE_BIAS;
    case plan::Epilogue::Relu:
      return CUBLASLT_EPILOGUE_RELU;
    case plan::Epilogue::BiasRelu:
      return CUBLASLT_EPILOGUE_RELU_BIAS;
    default:
      return CUBLASLT_EPILOGUE_DEFAULT;
  }
}

// Sets the epilogue of a spec that has one; the bias's type is D's (cuBLASLt's default), and
// its batch stride 0: every batch entry adds the same n values.
void set_epilogue(cublasLtMatmulDesc_t op, const Spec& s) {
  if (s.epilogue == plan::Epilogue::None) return;
  set(op, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue_of(s.epilogue));
  if (plan::has_bias(s.epilogue)) set(op, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, int64_t{0});
}

LruCache<Plan>& cache() {
  static auto* c = new LruCache<Plan>(kDefaultMaxPlans);  // leaked: see the cuFFT plan cache
  return *c;
}

}  // namespace

void check(cublasStatus_t s, const char* call) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  std::string msg = std::string(call) + " failed: " + lt::api().cublasLtGetStatusName(s) + " (" +
                    lt::api().cublasLtGetStatusString(s) + ")";
  if (s == CUBLAS_STATUS_ALLOC_FAILED)
    throw OutOfMemory(msg + "; free arrays you no longer need or multiply smaller pieces");
  throw CudaError(msg + "; please report the shapes, strides and dtypes of the product");
}

std::vector<int64_t> Spec::key(int device) const {
  return {static_cast<int64_t>(dtype),
          tf32,
          m,
          n,
          k,
          batch,
          a.col_major,
          a.ld,
          a.batch_stride,
          b.col_major,
          b.ld,
          b.batch_stride,
          out_batch_stride,
          align_a,
          align_b,
          align_out,
          static_cast<int64_t>(epilogue),
          align_bias,
          device};
}

Descriptors::Descriptors(const Spec& s) {
  Types t = types_of(s.dtype, s.tf32);
  double_scale = t.scale == CUDA_R_64F || t.scale == CUDA_C_64F;
  try {
    check(lt::api().cublasLtMatmulDescCreate(&op, t.compute, t.scale), "cublasLtMatmulDescCreate");
    Operand x = operand(s.b, s.k, s.n), y = operand(s.a, s.m, s.k);
    set(op, CUBLASLT_MATMUL_DESC_TRANSA, x.op);
    set(op, CUBLASLT_MATMUL_DESC_TRANSB, y.op);
    set_epilogue(op, s);
    a = layout(t.data, x.rows, x.cols, s.b.ld, s.batch, s.b.batch_stride);
    b = layout(t.data, y.rows, y.cols, s.a.ld, s.batch, s.a.batch_stride);
    d = layout(t.data, s.n, s.m, s.n, s.batch, s.out_batch_stride);
    check(lt::api().cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate");
    set(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, kMaxWorkspace);
    set(preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, s.align_b);
    set(preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, s.align_a);
    set(preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, s.align_out);
    set(preference, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, s.align_out);
  } catch (...) {
    release();
    throw;
  }
}

void Descriptors::release() noexcept {
  if (!op) return;                // made first: without it nothing was (and cuBLASLt may not
  const lt::Api& lt = lt::api();  // have loaded); with it, the library is loaded
  if (preference) lt.cublasLtMatmulPreferenceDestroy(preference);
  if (d) lt.cublasLtMatrixLayoutDestroy(d);
  if (b) lt.cublasLtMatrixLayoutDestroy(b);
  if (a) lt.cublasLtMatrixLayoutDestroy(a);
  if (op) lt.cublasLtMatmulDescDestroy(op);
  preference = nullptr, d = b = a = nullptr, op = nullptr;
}

Plan::Plan(const Spec& s, int device, const void* bias) : device_(device), desc_(s) {
  ScopedDevice scoped(device);
  if (plan::has_bias(s.epilogue)) set(desc_.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  cublasStatus_t status =
      lt::api().cublasLtMatmulAlgoGetHeuristic(handle(device), desc_.op, desc_.a, desc_.b, desc_.d,
                                               desc_.d, desc_.preference, 1, &result, &found);
  // With an epilogue, no algorithm (or a refusal: "not supported", or a value it rejects)
  // means none of the kernels for this dtype and layout has it: the caller multiplies without
  // it (available()), and a plain product that fails reports the error.
  if (s.epilogue != plan::Epilogue::None && (status != CUBLAS_STATUS_SUCCESS || found == 0)) {
    available_ = false;
    return;
  }
  check(status, "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0)
    throw CudaError("matmul: cuBLASLt has no algorithm for " + spec_str(s) +
                    "; please report the shapes, strides and dtypes of the product");
  algo_ = result.algo;
  workspace_ = result.workspaceSize;
}

void Plan::run(const void* a, const void* b, const void* bias, void* out) const {
  // Real and complex ones (1 + 0i); beta 0, so D is not read first.
  static const float kOneF[2] = {1, 0}, kZeroF[2] = {0, 0};
  static const double kOneD[2] = {1, 0}, kZeroD[2] = {0, 0};
  const void* alpha = desc_.double_scale ? static_cast<const void*>(kOneD) : kOneF;
  const void* beta = desc_.double_scale ? static_cast<const void*>(kZeroD) : kZeroF;
  std::shared_ptr<graph::Buffer> work;  // freed in stream order once enqueued
  if (workspace_ > 0) work = allocate(device_, workspace_);
  // cuBLASLt reads the descriptor while it enqueues, not after: the lock covers only that.
  std::unique_lock<std::mutex> lock(bias_mutex_, std::defer_lock);
  if (bias) {
    lock.lock();
    set(desc_.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
  }
  check(lt::api().cublasLtMatmul(handle(device_), desc_.op, alpha, b, desc_.a, a, desc_.b, beta,
                                 out, desc_.d, out, desc_.d, &algo_, work ? work->data() : nullptr,
                                 workspace_, current_stream(device_)),
        "cublasLtMatmul");
}

std::shared_ptr<Plan> acquire_plan(const Spec& spec, int device, const void* bias) {
  return cache().acquire(spec.key(device),
                         [&] { return std::make_shared<Plan>(spec, device, bias); });
}

MatmulPlanCacheInfo plan_cache_info() {
  auto i = cache().info();
  return {i.entries, i.max_entries, i.hits, i.misses};
}
void set_plan_cache_limit(size_t max_plans) { cache().set_limits(max_plans); }
void clear_plan_cache() { cache().clear(); }

}  // namespace kiln::gpu::matmul
