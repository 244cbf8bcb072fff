// Matmul steps on a GPU through cuBLASLt. The step's batch axes are merged where every
// operand's strides allow; the innermost merged axis is cuBLASLt's strided batch, and any axes
// left outside it (a batch broadcast one way for a and another for b) are a loop of calls.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "cuda/kernels.hpp"
#include "cuda/library.hpp"
#include "cuda/matmul_calls.hpp"
#include "cuda/matmul_plan_cache.hpp"
#include "cuda/per_device.hpp"
#include "cuda/runtime.hpp"
#include "cuda/streams.hpp"
#include "kiln/errors.hpp"

namespace kiln::gpu {
namespace {

struct BatchAxis {
  int64_t size, a, b, out;  // length, and each matrix's stride along it (elements)
};

// The step's batch axes without those of length 1, merged where a, b and out all step
// through them as through one axis.
std::vector<BatchAxis> batch_axes(const plan::MatmulStep& s) {
  std::vector<BatchAxis> axes;
  int64_t out_stride = s.m * s.n;
  for (size_t d = s.batch.size(); d-- > 0;) {
    if (s.batch[d] == 1) continue;
    BatchAxis ax{s.batch[d], s.a.strides[d], s.b.strides[d], out_stride};
    out_stride *= s.batch[d];
    if (!axes.empty()) {
      BatchAxis& in = axes.back();  // the axis inside this one
      if (ax.a == in.a * in.size && ax.b == in.b * in.size && ax.out == in.out * in.size) {
        in.size *= ax.size;
        continue;
      }
    }
    axes.push_back(ax);
  }
  std::reverse(axes.begin(), axes.end());  // outermost first
  return axes;
}

// The largest power of two, at most 256, dividing an address and every step from it.
// (Batch strides are never negative: plan::blas_readable.)
uint32_t alignment(const void* p, const std::vector<int64_t>& byte_steps) {
  uint64_t bits = reinterpret_cast<uintptr_t>(p) | 256;
  for (int64_t s : byte_steps) bits |= static_cast<uint64_t>(s);
  return static_cast<uint32_t>(uint64_t{1} << std::countr_zero(bits));
}

matmul::Side side(const plan::MatmulOperand& o, int64_t rows, int64_t cols, int64_t batch_stride) {
  const size_t r = o.strides.size();
  auto l = plan::matrix_layout(rows, cols, o.strides[r - 2], o.strides[r - 1]);
  if (!l)
    throw Error(
        "matmul: an operand's strides reached cuBLASLt unreadable by it; this is a kiln "
        "bug, please report it");
  return {l->col_major, l->ld, batch_stride};
}

}  // namespace

namespace matmul {

const void* bias_at(const plan::MatmulStep& s, DType t, const void* bias) {
  if (!bias || !plan::has_bias(s.epilogue)) return nullptr;
  return static_cast<const char*>(bias) + s.bias_offset * itemsize(t);
}

// cuBLASLt's relu epilogue turned a NaN into 0 for float16 (GPU fuzz seed 5853: a NaN bias
// through maximum(., 0) gave 0 against the host's NaN) where kiln's maximum propagates NaN, as
// NumPy's does; for float32 it kept the NaN (test_matmul_epilogue's GPU case). Other dtypes
// run the relu in the kernel after the plain product.
plan::Epilogue cublaslt_epilogue(plan::Epilogue e, DType t) {
  const bool relu = e == plan::Epilogue::Relu || e == plan::Epilogue::BiasRelu;
  return relu && t != DType::Float32 ? plan::Epilogue::None : e;
}

Calls calls_for(const plan::MatmulStep& s, DType t, const void* a, const void* b, const void* out,
                const void* bias) {
  const int64_t esize = itemsize(t);
  std::vector<BatchAxis> axes = batch_axes(s);
  BatchAxis inner = axes.empty() ? BatchAxis{1, 0, 0, 0} : axes.back();
  if (!axes.empty()) axes.pop_back();
  if (inner.size > INT32_MAX)
    throw Error("matmul: more than 2^31 - 1 products in one batch axis; split the batch");
  const int64_t a0 = s.a.offset * esize, b0 = s.b.offset * esize;
  // Every address a call can reach shares the alignment of the first and of the steps.
  std::vector<int64_t> a_steps{inner.a * esize}, b_steps{inner.b * esize},
      o_steps{inner.out * esize};
  for (const auto& ax : axes) {
    a_steps.push_back(ax.a * esize);
    b_steps.push_back(ax.b * esize);
    o_steps.push_back(ax.out * esize);
  }
  Calls c{Spec{t, s.tf32, s.m, s.n, s.k, inner.size, side(s.a, s.m, s.k, inner.a),
               side(s.b, s.k, s.n, inner.b), inner.out,
               alignment(static_cast<const char*>(a) + a0, a_steps),
               alignment(static_cast<const char*>(b) + b0, b_steps), alignment(out, o_steps),
               cublaslt_epilogue(s.epilogue, t), 0},
          {}};
  const void* at = plan::has_bias(c.spec.epilogue) ? bias_at(s, t, bias) : nullptr;
  if (at) c.spec.align_bias = alignment(at, {});
  int64_t loops = 1;
  for (const auto& ax : axes) loops *= ax.size;
  for (int64_t i = 0; i < loops; ++i) {
    Calls::At at{a0, b0, 0};
    int64_t rest = i;
    for (size_t d = axes.size(); d-- > 0;) {
      int64_t coord = rest % axes[d].size;
      rest /= axes[d].size;
      at.a += coord * axes[d].a * esize;
      at.b += coord * axes[d].b * esize;
      at.out += coord * axes[d].out * esize;
    }
    c.at.push_back(at);
  }
  return c;
}

}  // namespace matmul

namespace {

// The step's epilogue as the unfused program's kernel, over out in place.
void run_unfused(const plan::MatmulStep& s, const void* bias, void* out, int device) {
  if (!s.unfused) return;
  auto data = [&](int id) { return id == s.out ? out : const_cast<void*>(bias); };
  run_group(*s.unfused, s.unfused->group.params, device, data);
}

// The plan of `spec`, with its epilogue where cuBLASLt has an algorithm for it (the epilogue is
// part of the plan's key, so the heuristic is asked once per shape); else that of the plain
// product, `spec` and `bias` then saying so.
std::shared_ptr<matmul::Plan> fused_or_plain(matmul::Spec& spec, const void*& bias, int device) {
  auto plan = matmul::acquire_plan(spec, device, bias);
  if (plan->available()) return plan;
  spec.epilogue = plan::Epilogue::None;
  spec.align_bias = 0;
  bias = nullptr;
  return matmul::acquire_plan(spec, device);
}

}  // namespace

// Without an algorithm for the epilogue, the plain product runs and then the kernel the
// program would have run without the fold: a pass more, the unfused program's numbers.
void run_matmul(const plan::MatmulStep& s, const plan::PlanBuffer& out_desc, const void* a,
                const void* b, const void* bias, void* out, int device) {
  ScopedDevice scoped(device);
  const int64_t count = shape_size(s.batch);
  if (count == 0 || s.m == 0 || s.n == 0) return;
  if (s.k == 0) {  // an empty sum: zeros, as NumPy, then the epilogue
    KILN_CUDA_CHECK(
        cudaMemsetAsync(out, 0, static_cast<size_t>(count * s.m * s.n * itemsize(out_desc.dtype)),
                        gpu::current_stream(device)));
    return run_unfused(s, bias, out, device);
  }
  matmul::Calls calls = matmul::calls_for(s, out_desc.dtype, a, b, out, bias);
  const void* fused_bias =
      plan::has_bias(calls.spec.epilogue) ? matmul::bias_at(s, out_desc.dtype, bias) : nullptr;
  auto plan = fused_or_plain(calls.spec, fused_bias, device);
  for (const auto& at : calls.at)
    plan->run(static_cast<const char*>(a) + at.a, static_cast<const char*>(b) + at.b, fused_bias,
              static_cast<char*>(out) + at.out);
  if (calls.spec.epilogue != s.epilogue) run_unfused(s, bias, out, device);
}

}  // namespace kiln::gpu
