#include "cuda/helper_kernels.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

#include "cuda/runtime.hpp"
#include "cuda/streams.hpp"

namespace kiln::gpu::helpers {
namespace {

// What launch() launches for h on device: h's built-in kernel where it runs, else the JIT's
// (compiled, or found in the kernel cache, and loaded). Decided once per device and kernel;
// the key says whether h came with a built-in kernel, so h asked for without one (the FFT's
// under KILN_FFT_AOT=0) gets the JIT's.
const void* kernel_for(const Helper& h, int device) {
  using Key = std::tuple<std::string, int, bool>;
  static std::mutex mu;
  static auto* kernels = new std::map<Key, const void*>;  // kept to exit
  Key key{h.name, device, h.built_in != nullptr};
  {
    std::lock_guard lock(mu);
    if (auto it = kernels->find(key); it != kernels->end()) return it->second;
  }
  if (h.built_in && built_in_runs_on(h.built_in, device)) {
    std::lock_guard lock(mu);
    return kernels->emplace(key, h.built_in).first->second;
  }
  const jit::Kernel& k = *compile(h, gpu::device(device).arch).kernel;
  std::lock_guard lock(mu);
  if (auto it = kernels->find(key); it != kernels->end()) return it->second;
  set_device(device);
  cudaLibrary_t lib;
  KILN_CUDA_CHECK(
      cudaLibraryLoadData(&lib, k.cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  cudaKernel_t kernel;
  KILN_CUDA_CHECK(cudaLibraryGetKernel(&kernel, lib, k.name.c_str()));
  return kernels->emplace(key, reinterpret_cast<const void*>(kernel)).first->second;
}

}  // namespace

Helper wrap(const std::string& header, const std::string& name, const std::string& params,
            const std::string& call, const std::string& summary, const std::string& dtypes,
            int block) {
  return {name,
          "#include \"kiln/" + header +
              "\"\n"
              "extern \"C\" __global__ void __launch_bounds__(" +
              std::to_string(block) + ") " + name + "(" + params + ") {\n  " + call + ";\n}\n",
          summary,
          dtypes,
          {},
          block};
}

jit::Result compile(const Helper& h, const std::string& arch,
                    const std::vector<std::string>& extra) {
  std::vector<std::string> options = h.options;
  options.insert(options.end(), extra.begin(), extra.end());
  return jit::get({h.name, h.source, h.summary, arch, std::move(options), h.dtypes});
}

bool built_in_runs_on(const void* fn, int device) {
  set_device(device);
  cudaFuncAttributes attributes;
  if (cudaFuncGetAttributes(&attributes, fn) == cudaSuccess) return true;
  cudaGetLastError();  // no image for this arch: expected on other GPUs, not an error to keep
  return false;
}

int64_t max_blocks(int device) { return int64_t{gpu::device(device).sm_count} * 16; }

void launch(const Helper& h, int device, dim3 grid, void** args) {
  KILN_CUDA_CHECK(cudaLaunchKernel(kernel_for(h, device), grid, dim3(h.block), args, 0,
                                   gpu::current_stream(device)));
}

void launch(const Helper& h, int device, int64_t n, void** args) {
  int64_t blocks = std::clamp<int64_t>((n + h.block - 1) / h.block, 1, max_blocks(device));
  launch(h, device, dim3(static_cast<unsigned>(blocks)), args);
}

}  // namespace kiln::gpu::helpers
