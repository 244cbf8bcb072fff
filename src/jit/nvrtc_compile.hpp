// NVRTC: CUDA C++ source to SASS (cubin) for one arch, with the embedded kernels/ headers.
#pragma once
#include <string>
#include <vector>

#include "jit/jit.hpp"

namespace kiln::jit {

// Every option NVRTC gets: --gpu-architecture=<arch>, kiln's defaults, then `extra`. The key
// hashes this full list, so changing a default invalidates old entries.
std::vector<std::string> compile_options(const std::string& arch,
                                         const std::vector<std::string>& extra);

// The archs this NVRTC can target, as numbers (75, 80, ...), ascending.
const std::vector<int>& nvrtc_supported_archs();

struct CompileOutput {
  std::vector<char> binary;  // cubin for sm_XX, NUL-terminated PTX for compute_XX, LTO-IR (-dlto)
  double ms = 0;             // wall time of the whole NVRTC job
};

// Throws kiln::CompileError naming the kernel, with NVRTC's log and the path where the source
// was saved: `failed_dir` when it is writable, else <temp dir>/kiln-failed-<uid>.
CompileOutput compile_with_nvrtc(const Request& r, const std::vector<std::string>& options,
                                 const std::string& key, const std::string& failed_dir);

}  // namespace kiln::jit
