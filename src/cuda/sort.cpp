// Sort steps on a GPU: CUB's radix sort (cuda/sort_cub.cu) on the current stream, its
// temporaries from kiln's caching allocator, freed stream-ordered after the sort's launches.
#include <memory>
#include <vector>

#include "cuda/library.hpp"
#include "cuda/per_device.hpp"
#include "cuda/runtime.hpp"
#include "cuda/sort_cub.hpp"
#include "cuda/streams.hpp"
#include "kiln/errors.hpp"

namespace kiln::gpu {
namespace {

using cub_sort::Order;

Order order_of(DType t) {
  switch (t) {
    case DType::Bool:
    case DType::UInt8:
      return Order::U8;
    case DType::Int8:
      return Order::I8;
    case DType::UInt16:
      return Order::U16;
    case DType::Int16:
      return Order::I16;
    case DType::UInt32:
      return Order::U32;
    case DType::Int32:
      return Order::I32;
    case DType::UInt64:
      return Order::U64;
    case DType::Int64:
      return Order::I64;
    case DType::Float16:
      return Order::F16;
    case DType::BFloat16:
      return Order::BF16;
    case DType::Float32:
      return Order::F32;
    case DType::Float64:
      return Order::F64;
    case DType::Complex64:
      return Order::C64;
    case DType::Complex128:
      return Order::C128;
  }
  throw Error("sort: a dtype the CUDA executor does not sort; this is a kiln bug");
}

// Buffers from the allocator, held until the sort's work is queued; their frees are then
// ordered after it on the same stream.
class Temporaries final : public cub_sort::Scratch {
 public:
  explicit Temporaries(int device) : device_(device) {}
  void* get(size_t bytes) override {
    held_.push_back(allocate(device_, bytes == 0 ? 1 : bytes));
    return held_.back()->data();
  }
  void check(cudaError_t e, const char* call) override { gpu::check(e, call); }

 private:
  int device_;
  std::vector<std::shared_ptr<graph::Buffer>> held_;
};

}  // namespace

void run_sort(const plan::SortStep& step, const plan::PlanBuffer&, const void* in, void* out,
              int device) {
  if (step.rows * step.n == 0) return;
  ScopedDevice on(device);
  Temporaries scratch(device);
  const bool values = step.op == graph::SortOp::Values;
  cub_sort::sort_rows(order_of(step.dtype), in, values ? out : nullptr,
                      values ? nullptr : static_cast<int64_t*>(out), step.rows, step.n, scratch,
                      current_stream(device));
}

}  // namespace kiln::gpu
