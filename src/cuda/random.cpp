// Placeholder until the cuRAND executor lands (issue 4).
#include "cuda/library.hpp"
#include "kiln/errors.hpp"

namespace kiln::gpu {

void run_random(const plan::RandomStep&, const plan::PlanBuffer&, void*, int) {
  throw DeviceError("random numbers on a GPU are not available yet in this build; draw them on "
                    "the host and copy them");
}

}  // namespace kiln::gpu
