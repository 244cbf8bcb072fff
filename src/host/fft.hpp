// FFT steps on the host through FFTW.
#pragma once
#include "plan/plan.hpp"

namespace kiln::cpu {

// Reads `in` (dense, dtype and shape of plan buffer step.in) and writes `out` (dense, of
// plan buffer step.out), cropping or zero-padding each transformed axis to step.lengths.
void run_fft(const plan::FftStep& step, const plan::PlanBuffer& in_desc, const void* in,
             const plan::PlanBuffer& out_desc, void* out);

}  // namespace kiln::cpu
