// Runs one fused group on the host: chunk by chunk (chunks sized to stay in cache), each
// instruction as a vectorised column operation, chunks spread over the cores.
#pragma once
#include <functional>

#include "plan/plan.hpp"

namespace kiln::cpu {

// `data(id)` gives the address of plan buffer id (inputs filled, outputs allocated).
void run_group(const plan::FusedGroup& g, const std::function<void*(int)>& data);

}  // namespace kiln::cpu
