// The host executor: runs a Plan with Eigen on this machine's cores. It interprets the same
// FusedGroup IR that codegen turns into CUDA, which makes it the reference for the GPU.
#pragma once
#include <vector>

#include "plan/plan.hpp"

namespace kiln::cpu {

// Runs every step; returns the buffers of plan.outputs, in order.
std::vector<graph::BufferRef> execute(const plan::Plan& p);

}  // namespace kiln::cpu
