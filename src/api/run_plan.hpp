// Runs a Plan: owns its buffers and sends each step to the backend of its device (host:
// Eigen/FFTW/cuRAND-host; cuda: generated kernels, copies). Plans may span devices.
#pragma once
#include <vector>

#include "plan/plan.hpp"

namespace kiln::api {

// Runs every step; returns the buffers of plan.outputs, in order.
std::vector<graph::BufferRef> run_plan(const plan::Plan& p);

}  // namespace kiln::api
