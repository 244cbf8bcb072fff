// Where the next evaluation will find a group's kernel, for kiln::explain, without compiling
// anything: the host executor runs it (nothing to compile), or the kernel cache has it, or not.
#pragma once
#include <string>

#include "codegen/kernel_source.hpp"
#include "kiln/device.hpp"

namespace kiln::runtime {

// "host executor", "cached in <where>" or "not compiled yet"; for a group with user code
// (kiln::elementwise) on the host, that it cannot run there.
std::string kernel_state(const codegen::KernelSource& src, const Device& d, bool user_code);

}  // namespace kiln::runtime
