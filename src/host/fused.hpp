// Runs one fused group on the host: chunk by chunk (chunks sized to stay in cache), each
// instruction as a vectorised column operation, chunks spread over the cores.
#pragma once
#include <functional>

#include "plan/plan.hpp"

namespace kiln::cpu {

// `data(id)` gives the address of plan buffer id (inputs filled, outputs allocated).
// `params` are the values of the group's Param instructions (the group's own, or rebound).
void run_group(const plan::FusedGroup& g, const std::vector<Scalar>& params,
               const std::function<void*(int)>& data);

// DeviceError when the group holds a user CUDA expression (kiln::elementwise): the host has no
// CUDA compiler to run it. run_group checks this itself; the plan runner calls it before any
// step runs, so a plan that cannot finish does no work.
void check_runs_on_host(const plan::FusedGroup& g);

}  // namespace kiln::cpu
