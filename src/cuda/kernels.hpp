// Running fused groups on a GPU: code generation, the JIT/kernel cache, module loading through
// the runtime API (cudaLibraryLoadData / cudaLibraryGetKernel), and the launch.
#pragma once
#include <functional>
#include <string>

#include "codegen/kernel_source.hpp"
#include "jit/jit.hpp"
#include "plan/plan.hpp"

namespace kiln::gpu {

// What happened when a group's kernel was looked up, for KILN_DEBUG and explain().
struct LaunchRecord {
  const std::string* name;  // the kernel's, owned by the plan (no copy on the launch path)
  jit::Origin origin;
  const std::string* source = nullptr;  // the generated source, when it was generated now
};

// The JIT request for a generated kernel (the options every kiln kernel is compiled with).
jit::Request kernel_request(const codegen::KernelSource& src, const std::string& arch);

// Launches the step's group on `device`'s stream. `data(id)` is the device address of plan
// buffer id. The generated source, loaded kernel and launch shape are kept in step.compiled.
void run_group(const plan::KernelStep& step, const std::vector<Scalar>& params, int device,
               const std::function<void*(int)>& data);

// Generates, compiles and loads the group's kernel for `device` without launching it, so that
// the engine compiles a plan's kernels before it runs any of them.
LaunchRecord prepare_group(const plan::KernelStep& step, int device);

// Generates and compiles the group's kernel for `arch` without launching it: how a machine
// without a GPU (KILN_JIT_ARCH=sm_90) checks code generation and NVRTC for everything it runs.
LaunchRecord compile_group(const plan::KernelStep& step, const std::string& arch);

}  // namespace kiln::gpu
