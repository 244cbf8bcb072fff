// Scatter steps on a GPU (kernels/scatter.cuh): x copied into the output on the device's
// stream, then one thread per update, atomically. A set first lets each position claim its last
// update, so repeated positions keep the one NumPy keeps.
#include <cuda_runtime_api.h>

#include <string>

#include "codegen/expressions.hpp"
#include "cuda/helper_kernels.hpp"
#include "cuda/library.hpp"
#include "cuda/per_device.hpp"
#include "cuda/runtime.hpp"
#include "cuda/streams.hpp"
#include "kiln/errors.hpp"
#include "plan/naming.hpp"

namespace kiln::gpu {
namespace {

using helpers::Helper;

const char* op_constant(graph::ScatterOp op) {
  constexpr const char* kOps[] = {"Set", "Add", "Multiply", "Min", "Max"};
  return kOps[static_cast<int>(op)];
}

Helper scatter_helper(DType t, graph::ScatterOp op) {
  const std::string type = codegen::cuda_type(t), tag = plan::dtype_short(t);
  const std::string name = std::string("kiln_scatter_") + graph::op_name(op) + "_" + tag;
  Helper h =
      helpers::wrap("scatter.cuh", name,
                    type + "* out, const long long* positions, const " + type +
                        "* values, long long stride, long long count, const long long* claims, "
                        "long long length, unsigned long long* check",
                    std::string("kiln::scatter::scatter<kiln::scatter::") + op_constant(op) +
                        ">(out, positions, values, stride, count, claims, length, check)",
                    std::string("scatter: ") + graph::op_name(op) + " at integer positions, " + tag,
                    tag + " -> " + tag);
  h.options = {"--fmad=false"};  // complex products round as the host's
  return h;
}

Helper claim_helper() {
  return helpers::wrap("scatter.cuh", "kiln_scatter_claim",
                       "long long* claims, const long long* positions, long long count, "
                       "long long length",
                       "kiln::scatter::claim_last(claims, positions, count, length)",
                       "scatter set: each position claims its last update", "i64 -> i64");
}

}  // namespace

void run_scatter(const plan::ScatterStep& step, const plan::PlanBuffer& out_desc, const void* x,
                 const int64_t* positions, const void* values, int64_t count, void* out,
                 uint64_t* check, int device) {
  const DType t = out_desc.dtype;
  if (t == DType::Complex128 && step.op == graph::ScatterOp::Multiply)
    throw DTypeError(
        "at(...).multiply with index arrays on a complex128 array cannot run on a GPU (no "
        "16-byte atomic update); evaluate it on the host (x.to(kiln::host())) first");
  ScopedDevice on(device);
  cudaStream_t stream = gpu::current_stream(device);
  const int64_t size = shape_size(out_desc.shape);
  const size_t bytes = static_cast<size_t>(size * itemsize(t));
  if (bytes && out != x)
    KILN_CUDA_CHECK(cudaMemcpyAsync(out, x, bytes, cudaMemcpyDeviceToDevice, stream));
  if (check)  // the range check's words start at zero
    KILN_CUDA_CHECK(cudaMemsetAsync(check, 0, 2 * sizeof(uint64_t), stream));
  if (count == 0) return;
  long long length = step.index_length;
  std::shared_ptr<graph::Buffer> claims;  // stream-ordered: freed after the launches below
  void* claims_data = nullptr;
  // Where every update stores one value, any order gives the last update's: nothing to claim.
  if (step.op == graph::ScatterOp::Set && step.values_stride != 0) {
    claims = allocate(device, static_cast<size_t>(size) * sizeof(long long));
    claims_data = claims->data();
    KILN_CUDA_CHECK(cudaMemsetAsync(claims_data, 0xff, size * sizeof(long long), stream));  // -1
    long long n = count;
    void* args[] = {&claims_data, &positions, &n, &length};
    helpers::launch(claim_helper(), device, count, args);
  }
  long long n = count, stride = step.values_stride;
  void* args[] = {&out, &positions, &values, &stride, &n, &claims_data, &length, &check};
  helpers::launch(scatter_helper(t, step.op), device, count, args);
}

std::vector<std::string> compile_scatter_helpers(const std::string& arch,
                                                 std::span<const DType> dtypes) {
  std::vector<std::string> names{helpers::compile(claim_helper(), arch).kernel->name};
  for (DType t : dtypes)
    for (int op = 0; op <= static_cast<int>(graph::ScatterOp::Max); ++op) {
      auto o = static_cast<graph::ScatterOp>(op);
      bool complex = is_complex(t);
      if (complex && (o == graph::ScatterOp::Min || o == graph::ScatterOp::Max)) continue;
      if (t == DType::Complex128 && o == graph::ScatterOp::Multiply) continue;
      names.push_back(helpers::compile(scatter_helper(t, o), arch).kernel->name);
    }
  return names;
}

}  // namespace kiln::gpu
