#include "runtime/kernel_state.hpp"

#include "cuda/kernels.hpp"
#include "cuda/runtime.hpp"
#include "jit/jit.hpp"
#include "kiln/device.hpp"

namespace kiln::runtime {

std::string kernel_state(const codegen::KernelSource& src, const Device& d, bool user_code) {
  if (d.is_host() && user_code)
    return "cannot run on the host: kiln::elementwise's CUDA expression runs only on a GPU; "
           "copy its inputs there with kiln::asarray(x, kiln::cuda())";
  // KILN_JIT_ARCH as it is set now (the engine reads it once, at its first evaluation).
  std::string arch = d.is_cuda() ? gpu::device(d.index).arch : jit::target_arch();
  if (d.is_host() && (cuda_available() || arch.empty())) return "host executor";
  std::string where = jit::cached_where(gpu::kernel_request(src, arch));
  return where.empty() ? "not compiled yet" : "cached in " + where;
}

}  // namespace kiln::runtime
