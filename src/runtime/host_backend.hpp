// The host as the engine runs it: the host executor, with two things it cannot know from below
// the CUDA layer. Its arrays are pinned when a GPU is present (copies to and from the GPU then
// run at DMA speed). Without a GPU but with KILN_JIT_ARCH set, every group it runs is also
// generated and compiled for that arch, so code generation and NVRTC are exercised by
// everything that runs (this is how CI covers them).
#pragma once
#include <string>

#include "host/executor.hpp"

namespace kiln::runtime {

class HostBackend final : public cpu::Executor {
 public:
  std::shared_ptr<graph::Buffer> allocate(size_t nbytes) override;
  plan::PreparedGroup prepare(const plan::KernelStep& step) override;
  bool needs_compile(const plan::KernelStep& step) const override;
  plan::PreparedGroup compile_kernel(const plan::KernelStep& step) override;
};

// The arch every host group is compiled for; empty when a GPU is present or none is set.
const std::string& compile_only_arch();

}  // namespace kiln::runtime
