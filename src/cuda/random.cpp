// Random steps on a GPU. cuRAND's device generator (Philox4_32_10, LEGACY ordering, as the host
// executor's host generator) writes the step's 32-bit words; one kernel of kernels/random.cuh
// maps them to the output dtype exactly as src/host/random.cpp does. Both run on the device's
// kiln stream, so nothing waits here.
#include "cuda/random.hpp"

#include <curand.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "cuda/library.hpp"
#include "cuda/per_device.hpp"
#include "cuda/runtime.hpp"
#include "kiln/errors.hpp"

namespace kiln::gpu {
namespace {

using graph::RandomDist;
using plan::RandomStep;

const char* status_name(curandStatus_t s) {
  switch (s) {
    case CURAND_STATUS_SUCCESS:
      return "CURAND_STATUS_SUCCESS";
    case CURAND_STATUS_VERSION_MISMATCH:
      return "CURAND_STATUS_VERSION_MISMATCH";
    case CURAND_STATUS_NOT_INITIALIZED:
      return "CURAND_STATUS_NOT_INITIALIZED";
    case CURAND_STATUS_ALLOCATION_FAILED:
      return "CURAND_STATUS_ALLOCATION_FAILED";
    case CURAND_STATUS_TYPE_ERROR:
      return "CURAND_STATUS_TYPE_ERROR";
    case CURAND_STATUS_OUT_OF_RANGE:
      return "CURAND_STATUS_OUT_OF_RANGE";
    case CURAND_STATUS_LENGTH_NOT_MULTIPLE:
      return "CURAND_STATUS_LENGTH_NOT_MULTIPLE";
    case CURAND_STATUS_DOUBLE_PRECISION_REQUIRED:
      return "CURAND_STATUS_DOUBLE_PRECISION_REQUIRED";
    case CURAND_STATUS_LAUNCH_FAILURE:
      return "CURAND_STATUS_LAUNCH_FAILURE";
    case CURAND_STATUS_PREEXISTING_FAILURE:
      return "CURAND_STATUS_PREEXISTING_FAILURE";
    case CURAND_STATUS_INITIALIZATION_FAILED:
      return "CURAND_STATUS_INITIALIZATION_FAILED";
    case CURAND_STATUS_ARCH_MISMATCH:
      return "CURAND_STATUS_ARCH_MISMATCH";
    case CURAND_STATUS_INTERNAL_ERROR:
      return "CURAND_STATUS_INTERNAL_ERROR";
  }
  return "unknown cuRAND status";
}

void check(curandStatus_t s, const char* call, int device) {
  if (s == CURAND_STATUS_SUCCESS) return;
  std::string hint = s == CURAND_STATUS_ALLOCATION_FAILED
                         ? "; free arrays you no longer need or draw smaller arrays"
                         : "; check that the GPU driver supports the libcurand kiln was built with";
  throw CudaError(std::string(call) + " failed: " + status_name(s) + " (" + std::to_string(s) +
                  ") while drawing random numbers on cuda:" + std::to_string(device) + hint);
}
#define KILN_CURAND_CHECK(expr, device) check((expr), #expr, (device))

// The generator and the loaded mapping kernels of one device. A cuRAND generator is not
// thread-safe and its position is state, so the mutex covers every step's use of both.
struct DeviceRandom {
  std::mutex mu;
  curandGenerator_t gen = nullptr;
  cudaKernel_t kernels[kRandomKernels] = {};
  // Where the generator stands: a step that starts where the previous one ended (the usual
  // case: a Generator's arrays evaluated in order) needs no reseed or offset.
  bool placed = false;
  uint64_t seed = 0, next = 0;
};

std::string device_arch(int device) {
  const DeviceInfo& info = gpu::device(device);
  return "sm_" + std::to_string(info.cc_major * 10 + info.cc_minor);
}

// The library stays loaded for the process's life: queued launches may still use it.
void load_kernels(DeviceRandom& s, int device) {
  jit::Result r = jit::get(random_kernels_request(device_arch(device)));
  cudaLibrary_t lib;
  KILN_CUDA_CHECK(
      cudaLibraryLoadData(&lib, r.kernel->cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  for (int k = 0; k < kRandomKernels; ++k)
    KILN_CUDA_CHECK(cudaLibraryGetKernel(&s.kernels[k], lib, kRandomKernelNames[k]));
}

void create_generator(DeviceRandom& s, int device) {
  curandGenerator_t gen;
  KILN_CURAND_CHECK(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10), device);
  std::unique_ptr<curandGenerator_st, decltype(&curandDestroyGenerator)> guard(
      gen, curandDestroyGenerator);
  // LEGACY: the one ordering cuRAND keeps across releases, and the one the host uses.
  KILN_CURAND_CHECK(curandSetGeneratorOrdering(gen, CURAND_ORDERING_PSEUDO_LEGACY), device);
  KILN_CURAND_CHECK(curandSetStream(gen, gpu::device(device).stream), device);
  s.gen = guard.release();
}

// Built on a device's first random step. Never destroyed: at exit the CUDA runtime may be
// gone before static destructors run (as with the device streams).
DeviceRandom& state(int device) {
  static auto* all = new PerDevice<DeviceRandom>;
  gpu::device(device);  // DeviceError for a bad index, before PerDevice indexes with it
  return all->get(device, [device](DeviceRandom& s) {
    ScopedDevice on(device);  // the generator belongs to the device current at creation
    load_kernels(s, device);
    create_generator(s, device);
  });
}

// Queues words [offset, offset + n) of seed's stream into out. Call with s.mu held.
void generate(DeviceRandom& s, uint64_t seed, uint64_t offset, unsigned* out, uint64_t n,
              int device) {
  if (!s.placed || seed != s.seed || offset != s.next) {
    s.placed = false;
    KILN_CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(s.gen, seed), device);
    KILN_CURAND_CHECK(curandSetGeneratorOffset(s.gen, offset), device);
    s.seed = seed;
  }
  s.placed = false;  // unknown until the call succeeds
  KILN_CURAND_CHECK(curandGenerate(s.gen, out, n), device);
  s.next = offset + n;
  s.placed = true;
}

// Grid-stride kernels: enough blocks to fill the device, no more.
constexpr int kBlock = 256;  // the kernels' __launch_bounds__
constexpr int64_t kBlocksPerSm = 32;

// Launches kernel k over `threads` threads with args, whose types match its parameters.
template <class... A>
void launch(cudaKernel_t k, int device, int64_t threads, A... args) {
  const DeviceInfo& info = gpu::device(device);
  int64_t blocks = std::clamp<int64_t>((threads + kBlock - 1) / kBlock, 1,
                                       int64_t{info.sm_count} * kBlocksPerSm);
  void* params[] = {&args...};
  KILN_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(k), dim3(blocks), dim3(kBlock),
                                   params, 0, info.stream));
}

[[noreturn]] void bad_dtype(DType t) {
  throw Error(std::string("random step with dtype ") + dtype_name(t) +
              " reached the GPU executor; this is a kiln bug, please report it");
}

// The step's entry point, and the words it consumes (kiln/random.hpp's k per element).
struct Work {
  RandomKernel kernel;
  uint64_t words;
};

Work work_of(const RandomStep& s, DType t, uint64_t n) {
  const bool f32 = t == DType::Float32, f64 = t == DType::Float64;
  switch (s.dist) {
    case RandomDist::Randint: {
      uint64_t range = static_cast<uint64_t>(s.b.as_int()) - static_cast<uint64_t>(s.a.as_int());
      uint64_t words = n * (range <= (uint64_t{1} << 16) ? 1 : 2);
      if (t == DType::Int32) return {RandomKernel::RandintI32, words};
      if (t == DType::Int64) return {RandomKernel::RandintI64, words};
      break;
    }
    case RandomDist::Uniform:
      if (f32) return {RandomKernel::UniformF32, n};
      if (f64) return {RandomKernel::UniformF64, 2 * n};
      break;
    case RandomDist::Normal:  // whole pairs of 2 or 4 words, even for an odd n
      if (f32) return {RandomKernel::NormalF32, (n + 1) / 2 * 2};
      if (f64) return {RandomKernel::NormalF64, (n + 1) / 2 * 4};
      break;
  }
  bad_dtype(t);
}

template <class T>
void map_randint(cudaKernel_t k, const RandomStep& s, const unsigned* w, void* out, long long n,
                 int device) {
  unsigned long long low = static_cast<uint64_t>(s.a.as_int());
  unsigned long long range = static_cast<uint64_t>(s.b.as_int()) - low;
  launch(k, device, n, w, static_cast<T*>(out), n, low, range);
}

// The bounds as the host executor derives them, in T on the host: bit for bit the same.
template <class T>
void map_uniform(cudaKernel_t k, const RandomStep& s, const unsigned* w, void* out, long long n,
                 int device) {
  const T lo = static_cast<T>(s.a.as_double()), hi = static_cast<T>(s.b.as_double());
  const T span = hi - lo, below_hi = std::nextafter(hi, lo);
  launch(k, device, n, w, static_cast<T*>(out), n, lo, span, hi, below_hi);
}

template <class T>
void map_normal(cudaKernel_t k, const RandomStep& s, const unsigned* w, void* out, long long n,
                int device) {
  const T mean = static_cast<T>(s.a.as_double()), sd = static_cast<T>(s.b.as_double());
  launch(k, device, (n + 1) / 2, w, static_cast<T*>(out), n, mean, sd);
}

void map(const DeviceRandom& st, RandomKernel which, const RandomStep& s, const unsigned* w,
         void* out, long long n, int device) {
  cudaKernel_t k = st.kernels[static_cast<int>(which)];
  switch (which) {
    case RandomKernel::RandintI32:
      return map_randint<int>(k, s, w, out, n, device);
    case RandomKernel::RandintI64:
      return map_randint<long long>(k, s, w, out, n, device);
    case RandomKernel::UniformF32:
      return map_uniform<float>(k, s, w, out, n, device);
    case RandomKernel::UniformF64:
      return map_uniform<double>(k, s, w, out, n, device);
    case RandomKernel::NormalF32:
      return map_normal<float>(k, s, w, out, n, device);
    case RandomKernel::NormalF64:
      return map_normal<double>(k, s, w, out, n, device);
  }
}

}  // namespace

jit::Request random_kernels_request(const std::string& arch) {
  // No FMA contraction: every operation rounds as the host's does.
  return {"k_random_map",
          "#include \"kiln/random.cuh\"\n",
          "random steps: Philox words to randint/uniform/normal values",
          arch,
          {"--fmad=false"}};
}

void run_random(const RandomStep& step, const plan::PlanBuffer& out_desc, void* out, int device) {
  const int64_t n = shape_size(out_desc.shape);
  if (n == 0) return;
  const DType t = out_desc.dtype;
  const Work work = work_of(step, t, static_cast<uint64_t>(n));
  DeviceRandom& s = state(device);
  ScopedDevice on(device);
  std::lock_guard lock(s.mu);
  // When the words are exactly the output's bytes (uniform, randint whose words fill its
  // dtype, normal of even size) they go straight into it and the kernel maps them in place;
  // otherwise through scratch, which returns to the allocator stream-ordered, after the kernel.
  std::shared_ptr<graph::Buffer> scratch;
  auto* w = static_cast<unsigned*>(out);
  if (work.words * 4 != static_cast<uint64_t>(n) * itemsize(t)) {
    scratch = allocate(device, work.words * 4);
    w = static_cast<unsigned*>(scratch->data());
  }
  generate(s, step.seed, step.offset, w, work.words, device);
  map(s, work.kernel, step, w, out, n, device);
}

}  // namespace kiln::gpu
