// Placeholder until the cuFFT executor lands (issue 4).
#include "cuda/library.hpp"
#include "kiln/errors.hpp"

namespace kiln::gpu {

void run_fft(const plan::FftStep&, const plan::PlanBuffer&, const void*, const plan::PlanBuffer&,
             void*, int) {
  throw DeviceError("FFT on a GPU is not available yet in this build; compute it on the host");
}

}  // namespace kiln::gpu
