#include "cuda/fft_plan_cache.hpp"

#include <mutex>
#include <set>
#include <string>
#include <utility>

#include <cufftXt.h>

#include "cuda/cufft_api.hpp"
#include "cuda/fft_kernels.hpp"
#include "cuda/lru_cache.hpp"
#include "cuda/runtime.hpp"
#include "cuda/streams.hpp"
#include "kiln/errors.hpp"

namespace kiln::gpu::fft {
namespace {

const char* result_name(cufftResult r) {
  static const std::pair<cufftResult, const char*> kNames[] = {
      {CUFFT_INVALID_PLAN, "CUFFT_INVALID_PLAN"},
      {CUFFT_ALLOC_FAILED, "CUFFT_ALLOC_FAILED"},
      {CUFFT_INVALID_TYPE, "CUFFT_INVALID_TYPE"},
      {CUFFT_INVALID_VALUE, "CUFFT_INVALID_VALUE"},
      {CUFFT_INTERNAL_ERROR, "CUFFT_INTERNAL_ERROR"},
      {CUFFT_EXEC_FAILED, "CUFFT_EXEC_FAILED"},
      {CUFFT_SETUP_FAILED, "CUFFT_SETUP_FAILED"},
      {CUFFT_INVALID_SIZE, "CUFFT_INVALID_SIZE"},
      {CUFFT_UNALIGNED_DATA, "CUFFT_UNALIGNED_DATA"},
      {CUFFT_INVALID_DEVICE, "CUFFT_INVALID_DEVICE"},
      {CUFFT_NO_WORKSPACE, "CUFFT_NO_WORKSPACE"},
      {CUFFT_NOT_IMPLEMENTED, "CUFFT_NOT_IMPLEMENTED"},
      {CUFFT_NOT_SUPPORTED, "CUFFT_NOT_SUPPORTED"},
      {CUFFT_MISSING_DEPENDENCY, "CUFFT_MISSING_DEPENDENCY"},
      {CUFFT_NVRTC_FAILURE, "CUFFT_NVRTC_FAILURE"},
      {CUFFT_NVJITLINK_FAILURE, "CUFFT_NVJITLINK_FAILURE"},
      {CUFFT_NVSHMEM_FAILURE, "CUFFT_NVSHMEM_FAILURE"},
  };
  for (const auto& [code, name] : kNames)
    if (code == r) return name;
  return "an unknown cufftResult";
}

cufftType type_of(const PlanSpec& s) {
  bool single = s.precision == Precision::Single;
  switch (s.transform) {
    case Transform::R2C:
      return single ? CUFFT_R2C : CUFFT_D2Z;
    case Transform::C2R:
      return single ? CUFFT_C2R : CUFFT_Z2D;
    default:
      return single ? CUFFT_C2C : CUFFT_Z2Z;
  }
}

// Defaults: room for the plans of a few dozen distinct transforms; the work-area cap keeps
// cached plans from holding more than 1 GiB of device memory between transforms.
constexpr size_t kDefaultMaxPlans = 64;
constexpr size_t kDefaultMaxWorkBytes = size_t{1} << 30;

using Cache = LruCache<CachedPlan>;

// Leaked on purpose: destroying plans from a static destructor at exit would call cuFFT after
// the CUDA runtime may already be gone.
Cache& cache() {
  static auto* c = new Cache(kDefaultMaxPlans, kDefaultMaxWorkBytes);
  return *c;
}

// On an allocation failure (cuFFT's own twiddle tables, or the work area) the memory other
// cached plans and kiln's allocator hold is given back, and the plan made once more.
PlanRef create(const PlanSpec& spec, int device) {
  try {
    return std::make_shared<CachedPlan>(spec, device);
  } catch (const OutOfMemory&) {
    cache().clear();
    release_cache(device);
  }
  return std::make_shared<CachedPlan>(spec, device);
}

}  // namespace

void check(cufftResult r, const char* call) {
  if (r == CUFFT_SUCCESS) return;
  std::string msg = std::string(call) + " failed: " + result_name(r) + " (cufftResult " +
                    std::to_string(static_cast<int>(r)) + ")";
  if (r == CUFFT_ALLOC_FAILED)
    throw OutOfMemory(msg +
                      "; free arrays you no longer need, lower the FFT plan cache's "
                      "limits (kiln::fft::set_plan_cache_limits) or transform smaller "
                      "pieces");
  throw CudaError(msg + "; please report the shapes, axes and dtype of the transform");
}

// Before planning, as cuFFT requires: the plan's kernels are then linked with the callback
// (JIT LTO), which adds tens of milliseconds to making the plan, once per cached plan.
void CachedPlan::set_load_callback(const PlanSpec& spec) {
  const jit::Kernel& cb = load_callback(*spec.load_from, spec.precision, device_);
  auto type = spec.precision == Precision::Single ? CUFFT_CB_LD_REAL : CUFFT_CB_LD_REAL_DOUBLE;
  check(cufft().cufftXtSetJITCallback(handle_, cb.name.c_str(), cb.cubin.data(), cb.cubin.size(),
                                      type, nullptr),
        "cufftXtSetJITCallback");
}

CachedPlan::CachedPlan(const PlanSpec& spec, int device)
    : device_(device), stream_(current_stream(device)) {
  set_device(device);
  check(cufft().cufftCreate(&handle_), "cufftCreate");
  try {
    check(cufft().cufftSetAutoAllocation(handle_, 0), "cufftSetAutoAllocation");
    long long n[3], inembed[3], onembed[3];
    for (int i = 0; i < 3; ++i) {
      n[i] = spec.n[i];
      inembed[i] = spec.inembed[i];
      onembed[i] = spec.onembed[i];
    }
    if (spec.load_from) set_load_callback(spec);
    size_t bytes = 0;
    check(cufft().cufftMakePlanMany64(handle_, spec.rank, n, inembed, spec.istride, spec.idist,
                                      onembed, spec.ostride, spec.odist, type_of(spec), spec.batch,
                                      &bytes),
          "cufftMakePlanMany64");
    check(cufft().cufftGetSize(handle_, &bytes), "cufftGetSize");
    if (bytes > 0) {
      work_ = allocate(device, bytes);
      check(cufft().cufftSetWorkArea(handle_, work_->data()), "cufftSetWorkArea");
    }
    work_bytes_ = bytes;
    check(cufft().cufftSetStream(handle_, stream_), "cufftSetStream");
  } catch (...) {
    cufft().cufftDestroy(handle_);
    throw;
  }
}

// cuFFT does not say whether cufftDestroy waits for launches still queued with the plan (its
// twiddle tables are freed with it), so its stream (kiln's, never destroyed) is drained first.
// Eviction is rare enough for that wait. Never throws: errors are cleared, as in kiln's device
// frees.
CachedPlan::~CachedPlan() {
  int previous = -1;
  bool switched = cudaGetDevice(&previous) == cudaSuccess && previous != device_;
  if (switched) cudaSetDevice(device_);
  cudaStreamSynchronize(stream_);
  cufft().cufftDestroy(handle_);
  if (switched) cudaSetDevice(previous);
  cudaGetLastError();
}

// A plan serves one stream (its work area), so the stream is part of its key.
Cache::Key key_of(const PlanSpec& spec, int device, cudaStream_t stream) {
  Cache::Key key = spec.key();
  key.push_back(device);
  key.push_back(static_cast<int64_t>(reinterpret_cast<intptr_t>(stream)));
  return key;
}

PlanRef acquire_plan(const PlanSpec& spec, int device) {
  return cache().acquire(
      key_of(spec, device, current_stream(device)), [&] { return create(spec, device); },
      [](const CachedPlan& p) { return p.work_bytes(); });
}

bool plans_cached(const std::vector<PlanSpec>& specs, int device) {
  const cudaStream_t stream = current_stream(device);
  for (const PlanSpec& s : specs)
    if (!cache().contains(key_of(s, device, stream))) return false;
  return true;
}

bool first_request(const std::vector<PlanSpec>& specs, int device) {
  static std::mutex mu;
  static std::set<Cache::Key> asked;
  const cudaStream_t stream = current_stream(device);
  Cache::Key set;
  for (const PlanSpec& s : specs) {
    Cache::Key k = key_of(s, device, stream);
    set.insert(set.end(), k.begin(), k.end());
  }
  std::lock_guard lock(mu);
  return asked.insert(std::move(set)).second;
}

kiln::fft::PlanCacheInfo plan_cache_info() {
  auto i = cache().info();
  return {i.entries, i.cost, i.max_entries, i.max_cost, i.hits, i.misses};
}
void set_plan_cache_limits(size_t max_plans, size_t max_work_bytes) {
  cache().set_limits(max_plans, max_work_bytes);
}
void clear_plan_cache() { cache().clear(); }

}  // namespace kiln::gpu::fft
