// Scatter steps on a GPU (kernels/scatter.cuh): x copied into the output on the device's
// stream, then one thread per update, atomically. A set first lets each position claim its last
// update, so repeated positions keep the one NumPy keeps; a set of values of at most 4 bytes packs
// the update's index and value into one 64-bit word instead, in one pass, and writes the output
// from the words; a wider one keeps each position's last update number in a 32-bit word and
// writes the output reading those updates' values. Other updates of 1- and 2-byte integers run
// on 32-bit words of their own where those fit in L2 or the updates crowd (widens).
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

// A set of values of at most 4 bytes in one pass (kernels/scatter.cuh: set_packed), and the pass
// that writes its output.
Helper packed_set_helper(DType t) {
  const std::string type = codegen::cuda_type(t), tag = plan::dtype_short(t);
  return helpers::wrap("scatter.cuh", "kiln_scatter_set_packed_" + tag,
                       "unsigned long long* words, const long long* positions, const " + type +
                           "* values, long long stride, long long count, long long length, "
                           "unsigned long long* check",
                       "kiln::scatter::set_packed(words, positions, values, stride, count, "
                       "length, check)",
                       "scatter set: each update offers its index and value to one word, " + tag,
                       tag + " -> u64");
}
Helper unpack_set_helper(DType t) {
  const std::string type = codegen::cuda_type(t), tag = plan::dtype_short(t);
  return helpers::wrap(
      "scatter.cuh", "kiln_scatter_unpack_" + tag,
      type + "* out, const " + type + "* x, const unsigned long long* words, long long n",
      "kiln::scatter::unpack_set(out, x, words, n)",
      "scatter set: the last update's value where one landed, else x's, " + tag,
      "u64 " + tag + " -> " + tag);
}
// Whether a set keeps each position's last update by its number in one word (set_packed,
// claim_index): one value per update, update numbers that fit in 32 bits, something to update.
bool numbers_updates(const plan::ScatterStep& step, int64_t count, int64_t size) {
  return step.op == graph::ScatterOp::Set && step.values_stride != 0 && count > 0 &&
         count < (int64_t{1} << 32) - 1 && size > 0;
}
// Values of at most 4 bytes share the number's 64-bit word (set_packed); wider ones are read
// through it (claim_index, gather_set).
bool packs(const plan::ScatterStep& step, DType t, int64_t count, int64_t size) {
  return numbers_updates(step, count, size) && itemsize(t) <= 4;
}
bool claims_index(const plan::ScatterStep& step, DType t, int64_t count, int64_t size) {
  return numbers_updates(step, count, size) && itemsize(t) > 4;
}
Helper claim_index_helper() {
  return helpers::wrap("scatter.cuh", "kiln_scatter_claim_index",
                       "unsigned int* words, const long long* positions, long long count, "
                       "long long length, unsigned long long* check",
                       "kiln::scatter::claim_index(words, positions, count, length, check)",
                       "scatter set: each position keeps its last update's number", "i64 -> u32");
}
Helper gather_set_helper(DType t) {
  const std::string type = codegen::cuda_type(t), tag = plan::dtype_short(t);
  return helpers::wrap("scatter.cuh", "kiln_scatter_gather_set_" + tag,
                       type + "* out, const " + type + "* x, const unsigned int* words, const " +
                           type + "* values, long long stride, long long n",
                       "kiln::scatter::gather_set(out, x, words, values, stride, n)",
                       "scatter set: the last update's value where one landed, else x's, " + tag,
                       "u32 " + tag + " -> " + tag);
}

// Add, multiply, min and max of 1- and 2-byte integers on 32-bit words of their own
// (kernels/scatter.cuh: widen, scatter_widened, narrow), where that pays: when the words fit
// in L2 with room to spare, or when updates crowd the elements. Otherwise the atomics' working
// set grows 2-4x for little contention. int8 adds on the H200 (twenty-third session, compare-
// and-swap in place / widened): 2^26 into 2^12 positions 766 / 2.0 ms, 2^22 into 2^22 0.157 /
// 0.091, 2^26 into 2^24 2.11 / 2.45, 2^24 into 2^26 0.72 / 1.24.
bool widens(graph::ScatterOp op, DType t) {
  return op != graph::ScatterOp::Set && itemsize(t) < 4 && is_integer(t);
}
bool widens(graph::ScatterOp op, DType t, int64_t count, int64_t size) {
  constexpr int64_t kWordsInL2 = int64_t{1} << 23;  // 32 MB of words; an H200 has 50 MB of L2
  return widens(op, t) && count > 0 && size > 0 && (size <= kWordsInL2 || count >= 16 * size);
}
Helper widen_helper(DType t) {
  const std::string type = codegen::cuda_type(t), tag = plan::dtype_short(t);
  return helpers::wrap(
      "scatter.cuh", "kiln_scatter_widen_" + tag, "int* words, const " + type + "* x, long long n",
      "kiln::scatter::widen(words, x, n)",
      "scatter: each element in a 32-bit word of its own, " + tag, tag + " -> i32");
}
Helper widened_scatter_helper(DType t, graph::ScatterOp op) {
  const std::string type = codegen::cuda_type(t), tag = plan::dtype_short(t);
  return helpers::wrap(
      "scatter.cuh", std::string("kiln_scatter_widened_") + graph::op_name(op) + "_" + tag,
      "int* words, const long long* positions, const " + type +
          "* values, long long stride, long long count, long long length, "
          "unsigned long long* check",
      std::string("kiln::scatter::scatter_widened<kiln::scatter::") + op_constant(op) +
          ">(words, positions, values, stride, count, length, check)",
      std::string("scatter: ") + graph::op_name(op) + " at integer positions on 32-bit words, " +
          tag,
      "i32 " + tag + " -> i32");
}
Helper narrow_helper(DType t) {
  const std::string type = codegen::cuda_type(t), tag = plan::dtype_short(t);
  return helpers::wrap("scatter.cuh", "kiln_scatter_narrow_" + tag,
                       type + "* out, const int* words, long long n",
                       "kiln::scatter::narrow(out, words, n)",
                       "scatter: each 32-bit word's low bits, " + tag, "i32 -> " + tag);
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
  // kernels/scatter.cuh: landing (-1: flat positions)
  long long n = count, stride = step.values_stride, length = step.indices ? size : -1;
  if (packs(step, t, count, size)) {
    // stream-ordered: freed after the launches below
    auto words = allocate(device, static_cast<size_t>(size) * sizeof(uint64_t));
    void* w = words->data();
    KILN_CUDA_CHECK(cudaMemsetAsync(w, 0, size * sizeof(uint64_t), stream));
    void* args[] = {&w, &positions, &values, &stride, &n, &length, &check};
    helpers::launch(packed_set_helper(t), device, count, args);
    long long elements = size;
    void* unpack_args[] = {&out, &x, &w, &elements};
    helpers::launch(unpack_set_helper(t), device, size, unpack_args);
    return;
  }
  if (claims_index(step, t, count, size)) {
    // stream-ordered: freed after the launches below
    auto words = allocate(device, static_cast<size_t>(size) * sizeof(unsigned));
    void* w = words->data();
    KILN_CUDA_CHECK(cudaMemsetAsync(w, 0, size * sizeof(unsigned), stream));
    void* args[] = {&w, &positions, &n, &length, &check};
    helpers::launch(claim_index_helper(), device, count, args);
    long long elements = size;
    void* gather_args[] = {&out, &x, &w, &values, &stride, &elements};
    helpers::launch(gather_set_helper(t), device, size, gather_args);
    return;
  }
  if (widens(step.op, t, count, size)) {
    // stream-ordered: freed after the launches below
    auto words = allocate(device, static_cast<size_t>(size) * sizeof(int));
    void* w = words->data();
    long long elements = size;
    void* widen_args[] = {&w, &x, &elements};
    helpers::launch(widen_helper(t), device, size, widen_args);
    void* args[] = {&w, &positions, &values, &stride, &n, &length, &check};
    helpers::launch(widened_scatter_helper(t, step.op), device, count, args);
    void* narrow_args[] = {&out, &w, &elements};
    helpers::launch(narrow_helper(t), device, size, narrow_args);
    return;
  }
  if (bytes && out != x)
    KILN_CUDA_CHECK(cudaMemcpyAsync(out, x, bytes, cudaMemcpyDeviceToDevice, stream));
  if (count == 0) return;
  std::shared_ptr<graph::Buffer> claims;  // stream-ordered: freed after the launches below
  void* claims_data = nullptr;
  // Where every update stores one value, any order gives the last update's: nothing to claim.
  if (step.op == graph::ScatterOp::Set && step.values_stride != 0 && size > 0) {
    claims = allocate(device, static_cast<size_t>(size) * sizeof(long long));
    claims_data = claims->data();
    KILN_CUDA_CHECK(cudaMemsetAsync(claims_data, 0xff, size * sizeof(long long), stream));  // -1
    void* args[] = {&claims_data, &positions, &n, &length};
    helpers::launch(claim_helper(), device, count, args);
  }
  void* args[] = {&out, &positions, &values, &stride, &n, &claims_data, &length, &check};
  helpers::launch(scatter_helper(t, step.op), device, count, args);
}

std::vector<std::string> compile_scatter_helpers(const std::string& arch,
                                                 std::span<const DType> dtypes) {
  std::vector<std::string> names{helpers::compile(claim_helper(), arch).kernel->name,
                                 helpers::compile(claim_index_helper(), arch).kernel->name};
  for (DType t : dtypes) {
    for (int op = 0; op <= static_cast<int>(graph::ScatterOp::Max); ++op) {
      auto o = static_cast<graph::ScatterOp>(op);
      bool complex = is_complex(t);
      if (complex && (o == graph::ScatterOp::Min || o == graph::ScatterOp::Max)) continue;
      if (t == DType::Complex128 && o == graph::ScatterOp::Multiply) continue;
      names.push_back(helpers::compile(scatter_helper(t, o), arch).kernel->name);
      if (widens(o, t))
        names.push_back(helpers::compile(widened_scatter_helper(t, o), arch).kernel->name);
    }
    if (itemsize(t) < 4 && is_integer(t))
      for (const Helper& h : {widen_helper(t), narrow_helper(t)})
        names.push_back(helpers::compile(h, arch).kernel->name);
    if (itemsize(t) <= 4)
      for (const Helper& h : {packed_set_helper(t), unpack_set_helper(t)})
        names.push_back(helpers::compile(h, arch).kernel->name);
    else
      names.push_back(helpers::compile(gather_set_helper(t), arch).kernel->name);
  }
  return names;
}

}  // namespace kiln::gpu
