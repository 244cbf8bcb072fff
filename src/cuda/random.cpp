// Random steps on a GPU: one kernel of kernels/random.cuh per step computes the step's Philox
// words in registers and maps them to the output dtype exactly as src/host/random.cpp does, so
// the output is written once and nothing else touches memory. The kernel runs on the device's
// kiln stream, so nothing waits here. No cuRAND on the device: its words are a closed form of
// (seed, word index) (kernels/random.cuh), and computing them in place saves writing and
// re-reading them.
#include "cuda/random.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "cuda/library.hpp"
#include "cuda/per_device.hpp"
#include "cuda/runtime.hpp"
#include "cuda/streams.hpp"
#include "kiln/errors.hpp"

namespace kiln::gpu {
namespace {

using graph::RandomDist;
using plan::RandomStep;

// The loaded kernels of one device. Launches need no lock: a step's position in the stream
// travels with it (seed, offset), so the device holds no generator state.
struct DeviceRandom {
  cudaKernel_t kernels[kRandomKernels] = {};
};

// Built on a device's first random step. The library stays loaded for the process's life:
// queued launches may still use it.
DeviceRandom& state(int device) {
  static auto* all = new PerDevice<DeviceRandom>;  // never destroyed, like the device streams
  gpu::device(device);  // DeviceError for a bad index, before PerDevice indexes with it
  return all->get(device, [device](DeviceRandom& s) {
    ScopedDevice on(device);
    jit::Result r = jit::get(random_kernels_request(gpu::device(device).arch));
    cudaLibrary_t lib;
    KILN_CUDA_CHECK(cudaLibraryLoadData(&lib, r.kernel->cubin.data(), nullptr, nullptr, 0, nullptr,
                                        nullptr, 0));
    for (int k = 0; k < kRandomKernels; ++k)
      KILN_CUDA_CHECK(cudaLibraryGetKernel(&s.kernels[k], lib, kRandomKernelNames[k]));
  });
}

constexpr int kBlock = 256;  // the kernels' __launch_bounds__
// Grid-stride kernels: enough blocks to fill the device several times over, no more.
constexpr int64_t kBlocksPerSm = 32;

// Words per element (per pair for normal) of kiln/random.hpp: the K of kernels/random.cuh.
int words_per_unit(const RandomStep& s, DType t) {
  switch (s.dist) {
    case RandomDist::Randint: {
      uint64_t range = static_cast<uint64_t>(s.b.as_int()) - static_cast<uint64_t>(s.a.as_int());
      return range <= (uint64_t{1} << 16) ? 1 : 2;
    }
    case RandomDist::Uniform:
      return t == DType::Float64 ? 2 : 1;
    case RandomDist::Normal:
      return t == DType::Float64 ? 4 : 2;
  }
  return 1;
}

// Launches kernel k for the step's n elements with args, whose types match its parameters
// after (out, n, seed, offset). One warp per 31 Philox blocks, the fewest a warp owns
// (kernels/random.cuh); the grid-stride loop covers the rest when the cap binds.
template <class T, class... A>
void launch(cudaKernel_t k, const RandomStep& s, DType t, void* out, long long n, int device,
            A... args) {
  const DeviceInfo& info = gpu::device(device);
  const uint64_t units =
      s.dist == RandomDist::Normal ? (static_cast<uint64_t>(n) + 1) / 2 : static_cast<uint64_t>(n);
  const uint64_t philox_blocks = ((s.offset & 3) + units * words_per_unit(s, t) + 3) / 4;
  const uint64_t threads = (philox_blocks + 30) / 31 * 32;
  const int64_t blocks = std::clamp<int64_t>(static_cast<int64_t>((threads + kBlock - 1) / kBlock),
                                             1, int64_t{info.sm_count} * kBlocksPerSm);
  T* dst = static_cast<T*>(out);
  unsigned long long seed = s.seed, offset = s.offset;
  void* params[] = {&dst, &n, &seed, &offset, &args...};
  KILN_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(k), dim3(blocks), dim3(kBlock),
                                   params, 0, current_stream(device)));
}

template <class T>
void randint(cudaKernel_t k, const RandomStep& s, DType t, void* out, long long n, int device) {
  unsigned long long low = static_cast<uint64_t>(s.a.as_int());
  unsigned long long range = static_cast<uint64_t>(s.b.as_int()) - low;
  launch<T>(k, s, t, out, n, device, low, range);
}

// The bounds as the host executor derives them, in T on the host: bit for bit the same.
template <class T>
void uniform(cudaKernel_t k, const RandomStep& s, DType t, void* out, long long n, int device) {
  const T lo = static_cast<T>(s.a.as_double()), hi = static_cast<T>(s.b.as_double());
  const T span = hi - lo, below_hi = std::nextafter(hi, lo);
  launch<T>(k, s, t, out, n, device, lo, span, hi, below_hi);
}

template <class T>
void normal(cudaKernel_t k, const RandomStep& s, DType t, void* out, long long n, int device) {
  const T mean = static_cast<T>(s.a.as_double()), sd = static_cast<T>(s.b.as_double());
  launch<T>(k, s, t, out, n, device, mean, sd);
}

[[noreturn]] void bad_dtype(DType t) {
  throw Error(std::string("random step with dtype ") + dtype_name(t) +
              " reached the GPU executor; this is a kiln bug, please report it");
}

RandomKernel kernel_of(const RandomStep& s, DType t) {
  const bool f32 = t == DType::Float32, f64 = t == DType::Float64;
  switch (s.dist) {
    case RandomDist::Randint:
      if (t == DType::Int32) return RandomKernel::RandintI32;
      if (t == DType::Int64) return RandomKernel::RandintI64;
      break;
    case RandomDist::Uniform:
      if (f32) return RandomKernel::UniformF32;
      if (f64) return RandomKernel::UniformF64;
      break;
    case RandomDist::Normal:
      if (f32) return RandomKernel::NormalF32;
      if (f64) return RandomKernel::NormalF64;
      break;
  }
  bad_dtype(t);
}

}  // namespace

jit::Request random_kernels_request(const std::string& arch) {
  // No FMA contraction: every operation rounds as the host's does.
  return {"k_random",
          "#include \"kiln/random.cuh\"\n",
          "random steps: Philox4x32-10 words computed in place, mapped to "
          "randint/uniform/normal values",
          arch,
          {"--fmad=false"},
          "-> i32 i64 f32 f64"};
}

void run_random(const RandomStep& step, const plan::PlanBuffer& out_desc, void* out, int device) {
  const int64_t n = shape_size(out_desc.shape);
  if (n == 0) return;
  const DType t = out_desc.dtype;
  const RandomKernel which = kernel_of(step, t);
  DeviceRandom& s = state(device);
  ScopedDevice on(device);
  cudaKernel_t k = s.kernels[static_cast<int>(which)];
  switch (which) {
    case RandomKernel::RandintI32:
      return randint<int>(k, step, t, out, n, device);
    case RandomKernel::RandintI64:
      return randint<long long>(k, step, t, out, n, device);
    case RandomKernel::UniformF32:
      return uniform<float>(k, step, t, out, n, device);
    case RandomKernel::UniformF64:
      return uniform<double>(k, step, t, out, n, device);
    case RandomKernel::NormalF32:
      return normal<float>(k, step, t, out, n, device);
    case RandomKernel::NormalF64:
      return normal<double>(k, step, t, out, n, device);
  }
}

}  // namespace kiln::gpu
