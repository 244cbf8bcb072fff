#include "cuda/helper_kernels.hpp"

#include <algorithm>
#include <map>
#include <mutex>

#include "cuda/runtime.hpp"
#include "cuda/streams.hpp"

namespace kiln::gpu::helpers {
namespace {

cudaKernel_t kernel_for(const Helper& h, int device) {
  static std::mutex mu;
  static auto* loaded = new std::map<std::pair<std::string, int>, cudaKernel_t>;  // kept to exit
  auto key = std::make_pair(h.name, device);
  {
    std::lock_guard lock(mu);
    if (auto it = loaded->find(key); it != loaded->end()) return it->second;
  }
  const jit::Kernel& k = *compile(h, gpu::device(device).arch).kernel;
  std::lock_guard lock(mu);
  if (auto it = loaded->find(key); it != loaded->end()) return it->second;
  set_device(device);
  cudaLibrary_t lib;
  KILN_CUDA_CHECK(
      cudaLibraryLoadData(&lib, k.cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  cudaKernel_t kernel;
  KILN_CUDA_CHECK(cudaLibraryGetKernel(&kernel, lib, k.name.c_str()));
  loaded->emplace(key, kernel);
  return kernel;
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

int64_t max_blocks(int device) { return int64_t{gpu::device(device).sm_count} * 16; }

void launch(const Helper& h, int device, dim3 grid, void** args) {
  cudaKernel_t k = kernel_for(h, device);
  KILN_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(k), grid, dim3(h.block), args, 0,
                                   gpu::current_stream(device)));
}

void launch(const Helper& h, int device, int64_t n, void** args) {
  int64_t blocks = std::clamp<int64_t>((n + h.block - 1) / h.block, 1, max_blocks(device));
  launch(h, device, dim3(static_cast<unsigned>(blocks)), args);
}

}  // namespace kiln::gpu::helpers
