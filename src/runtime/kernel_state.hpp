// Where the next evaluation will find a group's kernel, for kiln::explain, without compiling
// anything: the host executor runs it (nothing to compile), or the kernel cache has it, or not.
#pragma once
#include <string>

#include "codegen/kernel_source.hpp"
#include "kiln/device.hpp"

namespace kiln::runtime {

// "host executor", "cached in <where>" or "not compiled yet".
std::string kernel_state(const codegen::KernelSource& src, const Device& d);

}  // namespace kiln::runtime
