// The kernels of GPU random steps (kernels/random.cuh: Philox words computed in registers and
// mapped straight into the output), exposed so that a machine without a GPU can check that they
// compile (tests/test_gpu_random.cpp).
#pragma once
#include <array>
#include <string>

#include "jit/jit.hpp"

namespace kiln::gpu {

// One entry point per (distribution, dtype) the host executor supports.
enum class RandomKernel { RandintI32, RandintI64, UniformF32, UniformF64, NormalF32, NormalF64 };
inline constexpr int kRandomKernels = 6;
// The extern "C" names, indexed by RandomKernel.
inline constexpr std::array<const char*, kRandomKernels> kRandomKernelNames = {
    "k_random_randint_i32", "k_random_randint_i64", "k_random_uniform_f32",
    "k_random_uniform_f64", "k_random_normal_f32",  "k_random_normal_f64"};

// The NVRTC request for all six: a fixed source, so one compile (one cache entry) per arch
// serves every random step.
jit::Request random_kernels_request(const std::string& arch);

}  // namespace kiln::gpu
