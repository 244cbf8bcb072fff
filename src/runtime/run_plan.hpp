// Runs a Plan: owns its buffers and sends each step to the backend of its device (host:
// Eigen/FFTW/cuRAND-host; cuda: generated kernels, copies). Plans may span devices.
#pragma once
#include <vector>

#include "plan/plan.hpp"

namespace kiln::api {

// Runs every step with the values `sig` carries bound through p.bindings (buffers, scalars,
// random draws); returns the buffers of plan.outputs, in order.
std::vector<graph::BufferRef> run_plan(const plan::Plan& p, const graph::Signature& sig);

}  // namespace kiln::api
