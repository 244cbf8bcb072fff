#include "cuda/fft_plan_cache.hpp"

#include <list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <cufftXt.h>

#include "cuda/fft_kernels.hpp"
#include "cuda/runtime.hpp"
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

class PlanCache {
 public:
  PlanRef acquire(const PlanSpec& spec, int device) {
    Key key = spec.key();
    key.push_back(device);
    {
      std::lock_guard lock(mu_);
      if (auto it = index_.find(key); it != index_.end()) {
        ++hits_;
        lru_.splice(lru_.begin(), lru_, it->second);  // most recently used first
        return it->second->second;
      }
      ++misses_;
    }
    PlanRef plan = create(spec, device);  // unlocked: planning takes milliseconds
    std::vector<PlanRef> evicted;         // destroyed after the lock is released
    std::lock_guard lock(mu_);
    if (auto it = index_.find(key); it != index_.end()) return it->second->second;  // a race
    lru_.emplace_front(key, plan);
    index_[key] = lru_.begin();
    work_bytes_ += plan->work_bytes();
    trim(evicted);
    return plan;
  }

  kiln::fft::PlanCacheInfo info() {
    std::lock_guard lock(mu_);
    return {lru_.size(), work_bytes_, max_plans_, max_work_bytes_, hits_, misses_};
  }

  void set_limits(size_t max_plans, size_t max_work_bytes) {
    std::vector<PlanRef> evicted;
    std::lock_guard lock(mu_);
    max_plans_ = max_plans;
    max_work_bytes_ = max_work_bytes;
    trim(evicted);
  }

  void clear() {
    std::vector<PlanRef> evicted;
    std::lock_guard lock(mu_);
    size_t keep = std::exchange(max_plans_, 0);  // trim everything, then restore the limit
    trim(evicted);
    max_plans_ = keep;
  }

 private:
  using Key = std::vector<int64_t>;
  using Lru = std::list<std::pair<Key, PlanRef>>;

  // On an allocation failure (cuFFT's own twiddle tables, or the work area) the memory other
  // cached plans and kiln's allocator hold is given back, and the plan made once more.
  PlanRef create(const PlanSpec& spec, int device) {
    try {
      return std::make_shared<CachedPlan>(spec, device);
    } catch (const OutOfMemory&) {
      clear();
      release_cache(device);
    }
    return std::make_shared<CachedPlan>(spec, device);
  }

  // Called with the lock held; the caller destroys `evicted` after unlocking, since
  // cufftDestroy may wait for the device.
  void trim(std::vector<PlanRef>& evicted) {
    while (!lru_.empty() && (lru_.size() > max_plans_ || work_bytes_ > max_work_bytes_)) {
      work_bytes_ -= lru_.back().second->work_bytes();
      evicted.push_back(std::move(lru_.back().second));
      index_.erase(lru_.back().first);
      lru_.pop_back();
    }
  }

  std::mutex mu_;
  Lru lru_;
  std::map<Key, Lru::iterator> index_;
  size_t work_bytes_ = 0;
  size_t max_plans_ = kDefaultMaxPlans, max_work_bytes_ = kDefaultMaxWorkBytes;
  int64_t hits_ = 0, misses_ = 0;
};

// Leaked on purpose: destroying plans from a static destructor at exit would call cuFFT after
// the CUDA runtime may already be gone.
PlanCache& cache() {
  static auto* c = new PlanCache;
  return *c;
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
  check(cufftXtSetJITCallback(handle_, cb.name.c_str(), cb.cubin.data(), cb.cubin.size(), type,
                              nullptr),
        "cufftXtSetJITCallback");
}

CachedPlan::CachedPlan(const PlanSpec& spec, int device) : device_(device) {
  set_device(device);
  check(cufftCreate(&handle_), "cufftCreate");
  try {
    check(cufftSetAutoAllocation(handle_, 0), "cufftSetAutoAllocation");
    long long n[3], inembed[3], onembed[3];
    for (int i = 0; i < 3; ++i) {
      n[i] = spec.n[i];
      inembed[i] = spec.inembed[i];
      onembed[i] = spec.onembed[i];
    }
    if (spec.load_from) set_load_callback(spec);
    size_t bytes = 0;
    check(cufftMakePlanMany64(handle_, spec.rank, n, inembed, spec.istride, spec.idist, onembed,
                              spec.ostride, spec.odist, type_of(spec), spec.batch, &bytes),
          "cufftMakePlanMany64");
    check(cufftGetSize(handle_, &bytes), "cufftGetSize");
    if (bytes > 0) {
      work_ = allocate(device, bytes);
      check(cufftSetWorkArea(handle_, work_->data()), "cufftSetWorkArea");
    }
    work_bytes_ = bytes;
    check(cufftSetStream(handle_, gpu::device(device).stream), "cufftSetStream");
  } catch (...) {
    cufftDestroy(handle_);
    throw;
  }
}

// cuFFT does not say whether cufftDestroy waits for launches still queued with the plan (its
// twiddle tables are freed with it), so the device's stream is drained first. Eviction is
// rare enough for that wait. Never throws: errors are cleared, as in kiln's device frees.
CachedPlan::~CachedPlan() {
  int previous = -1;
  bool switched = cudaGetDevice(&previous) == cudaSuccess && previous != device_;
  if (switched) cudaSetDevice(device_);
  if (const DeviceInfo* info = initialized_device(device_)) cudaStreamSynchronize(info->stream);
  cufftDestroy(handle_);
  if (switched) cudaSetDevice(previous);
  cudaGetLastError();
}

PlanRef acquire_plan(const PlanSpec& spec, int device) { return cache().acquire(spec, device); }
kiln::fft::PlanCacheInfo plan_cache_info() { return cache().info(); }
void set_plan_cache_limits(size_t max_plans, size_t max_work_bytes) {
  cache().set_limits(max_plans, max_work_bytes);
}
void clear_plan_cache() { cache().clear(); }

}  // namespace kiln::gpu::fft
