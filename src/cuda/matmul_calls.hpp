// The cuBLASLt calls one matmul step makes, worked out on the host alone (no CUDA call), so
// that tests check them on machines without a GPU: the step's batch axes merged where a, b
// and out all allow it, the innermost one as cuBLASLt's strided batch, the others a loop.
#pragma once
#include <cstdint>
#include <vector>

#include "cuda/matmul_plan_cache.hpp"
#include "plan/plan.hpp"

namespace kiln::gpu::matmul {

struct Calls {
  Spec spec;  // the one plan every call runs
  // Per call, the byte offsets of its a, b and out from the buffers' starts.
  struct At {
    int64_t a, b, out;
  };
  std::vector<At> at;
};

// For a step of dtype t with a non-empty product over k > 0 (the caller handles the rest);
// a, b, out and bias are the buffers' starts (their alignment is part of the spec; bias: null
// without one).
Calls calls_for(const plan::MatmulStep& s, DType t, const void* a, const void* b, const void* out,
                const void* bias = nullptr);

// The address of the step's bias in `bias`, its buffer's start (null without one).
const void* bias_at(const plan::MatmulStep& s, DType t, const void* bias);

}  // namespace kiln::gpu::matmul
