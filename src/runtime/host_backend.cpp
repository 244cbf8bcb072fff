#include "runtime/host_backend.hpp"

#include "cuda/executor.hpp"
#include "cuda/kernels.hpp"
#include "cuda/runtime.hpp"
#include "jit/jit.hpp"
#include "kiln/device.hpp"

namespace kiln::runtime {

const std::string& compile_only_arch() {
  static const std::string arch = cuda_available() ? "" : jit::target_arch();
  return arch;
}

std::shared_ptr<graph::Buffer> HostBackend::allocate(size_t nbytes) {
  return cuda_available() ? gpu::allocate_pinned(nbytes) : cpu::Executor::allocate(nbytes);
}

plan::PreparedGroup HostBackend::prepare(const plan::KernelStep& step) {
  if (compile_only_arch().empty()) return cpu::Executor::prepare(step);
  return gpu::prepared_group(gpu::compile_group(step, compile_only_arch()));
}

bool HostBackend::needs_compile(const plan::KernelStep& step) const {
  return !compile_only_arch().empty() && !step.compiled->value;
}

plan::PreparedGroup HostBackend::compile_kernel(const plan::KernelStep& step) {
  return gpu::prepared_group(gpu::compile_group(step, compile_only_arch()));
}

}  // namespace kiln::runtime
