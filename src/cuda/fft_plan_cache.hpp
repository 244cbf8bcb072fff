// cuFFT plans in an LRU cache keyed by the plan's arguments (shape, embeds, strides,
// distances, batch, type) and the device, capped on the number of plans and on the bytes of
// their work areas. Work areas come from kiln's allocator (cuFFT's own allocation is off) and
// every plan runs on its device's kiln stream, so all of it stays in kiln's stream order.
#pragma once
#include <cufft.h>

#include <memory>
#include <mutex>
#include <vector>

#include "cuda/fft_program.hpp"
#include "graph/buffer.hpp"
#include "kiln/fft.hpp"

namespace kiln::gpu::fft {

// Throws kiln::CudaError naming the call and the cufftResult; kiln::OutOfMemory for
// CUFFT_ALLOC_FAILED.
void check(cufftResult r, const char* call);

class CachedPlan {
 public:
  CachedPlan(const PlanSpec& spec, int device);
  ~CachedPlan();
  CachedPlan(const CachedPlan&) = delete;
  CachedPlan& operator=(const CachedPlan&) = delete;

  cufftHandle handle() const { return handle_; }
  size_t work_bytes() const { return work_bytes_; }
  // Held while enqueuing with the handle: cuFFT does not promise that one plan may be
  // executed from two threads at once.
  std::mutex& exec_mutex() { return exec_; }

 private:
  void set_load_callback(const PlanSpec& spec);

  int device_;
  cudaStream_t stream_;  // the kiln stream it runs on: its work area is used by one at a time
  cufftHandle handle_ = 0;
  size_t work_bytes_ = 0;
  std::shared_ptr<graph::Buffer> work_;  // freed after cufftDestroy, stream-ordered
  std::mutex exec_;
};
using PlanRef = std::shared_ptr<CachedPlan>;

// The cached plan for spec on device and the calling thread's current stream (a plan's work area
// serves one stream), created on a miss. A plan evicted while a caller still
// holds it lives until that caller lets go.
PlanRef acquire_plan(const PlanSpec& spec, int device);

// Whether every plan of specs is cached for device and the calling thread's current stream
// (counting neither a hit nor a miss).
bool plans_cached(const std::vector<PlanSpec>& specs, int device);

// True the first time a set of plans is asked about for device and the calling thread's
// current stream, false after.
bool first_request(const std::vector<PlanSpec>& specs, int device);

kiln::fft::PlanCacheInfo plan_cache_info();
void set_plan_cache_limits(size_t max_plans, size_t max_work_bytes);
void clear_plan_cache();

}  // namespace kiln::gpu::fft
