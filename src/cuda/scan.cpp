// Scan steps on a GPU (kernels/scan.cuh): a thread per lane walking the scanned axis in order
// where there are lanes to fill the device or the axis is short; otherwise one single-pass
// launch over tiles of each lane (decoupled look-back), which reads each value once.
#include <cuda_runtime_api.h>

#include <string>

#include "codegen/expressions.hpp"
#include "codegen/kernel_source.hpp"
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

// kiln::scan::kTileBytes: a tile of the single-pass form, whatever the dtype (4 16-byte
// vectors a thread).
constexpr int64_t kTileBytes = codegen::kScanTileBytes;
static_assert(kLookBackBlock == codegen::kScanBlock, "kernels/scan.cuh has one block size");

// kiln::scan::FORM<OP>(args) for dtype t.
Helper scan_helper(const std::string& form, const std::string& params, const std::string& args,
                   DType t, graph::ScanOp op) {
  const std::string type = codegen::cuda_type(t), tag = plan::dtype_short(t);
  std::string p = params, a = args;
  for (size_t at; (at = p.find("T")) != std::string::npos;) p.replace(at, 1, type);
  for (size_t at; (at = a.find("T")) != std::string::npos;) a.replace(at, 1, type);
  const char* which = op == graph::ScanOp::Sum ? "Add" : "Multiply";
  Helper h = helpers::wrap(
      "scan.cuh", std::string("kiln_scan_") + form + "_" + graph::op_name(op) + "_" + tag, p,
      // The kernel fails to compile (CI compiles every helper) where the constants above drift
      // from kernels/scan.cuh's.
      "static_assert(kiln::scan::kThreads == " + std::to_string(kLookBackBlock) +
          " && kiln::scan::kTileBytes == " + std::to_string(kTileBytes) +
          ", \"src/cuda/scan.cpp's constants\"); kiln::scan::" + form + "<kiln::scatter::" + which +
          ">(" + a + ")",
      std::string(graph::op_name(op)) + ": " + form + ", " + tag, tag + " -> " + tag,
      form == "single_pass" ? kLookBackBlock : helpers::kBlock);
  h.options = {"--fmad=false"};  // complex products round as the host's
  return h;
}

Helper lanes_helper(DType t, graph::ScanOp op) {
  return scan_helper("lanes", "const T* in, T* out, long long outer, long long n, long long inner",
                     "kiln::scan::Dense<T>{in}, out, outer, n, inner", t, op);
}
Helper single_pass_helper(DType t, graph::ScanOp op) {
  return scan_helper("single_pass",
                     "const T* in, T* out, long long outer, long long n, long long inner, "
                     "long long tiles, void* scratch, int vectors",
                     "kiln::scan::Dense<T>{in}, out, outer, n, inner, tiles, scratch, vectors", t,
                     op);
}

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

std::shared_ptr<graph::Buffer> look_back_status(int device, int64_t rows, int64_t row_tiles) {
  // kernels/scan.cuh's Status: a 16-byte value slot a tile and a group (kiln::scan::groups_of: a
  // row's tiles in groups of the kernels' block size), the tile counter, a 64-bit word a tile
  // and a group; the counter and words start at zero (stream-ordered, before the launch).
  const int64_t groups = (row_tiles + kLookBackBlock - 1) / kLookBackBlock;
  const size_t values = static_cast<size_t>(rows * (row_tiles + groups));
  const size_t slots = values * 16, zeroed = 8 + 8 * values;
  auto scratch = allocate(device, slots + zeroed);  // freed after the launch, stream-ordered
  KILN_CUDA_CHECK(cudaMemsetAsync(static_cast<char*>(scratch->data()) + slots, 0, zeroed,
                                  current_stream(device)));
  return scratch;
}

void run_scan(const plan::ScanStep& step, const plan::PlanBuffer& out_desc, const void* in,
              void* out, int device) {
  const DType t = out_desc.dtype;
  long long outer = step.outer, n = step.n, inner = step.inner;
  if (outer * n * inner == 0) return;
  ScopedDevice on(device);
  const long long lanes = outer * inner;
  long long tiles = codegen::scan_tiles(plan::ScanFold{step.op, outer, n, inner}, itemsize(t),
                                        gpu::device(device).sm_count);
  if (!tiles) {
    void* args[] = {&in, &out, &outer, &n, &inner};
    return helpers::launch(lanes_helper(t, step.op), device, lanes, args);
  }
  const long long total = lanes * tiles;
  auto scratch = look_back_status(device, lanes, tiles);
  void* status = scratch->data();
  int vectors = inner == 1 && aligned(in) && aligned(out) && n * itemsize(t) % 16 == 0;
  void* args[] = {&in, &out, &outer, &n, &inner, &tiles, &status, &vectors};
  helpers::launch(single_pass_helper(t, step.op), device, dim3(static_cast<unsigned>(total)), args);
}

std::vector<std::string> compile_scan_helpers(const std::string& arch,
                                              std::span<const DType> dtypes) {
  std::vector<std::string> names;
  for (DType t : dtypes) {
    if (t == DType::Bool) continue;  // the API scans bool as int64
    for (auto op : {graph::ScanOp::Sum, graph::ScanOp::Prod})
      for (const Helper& h : {lanes_helper(t, op), single_pass_helper(t, op)})
        names.push_back(helpers::compile(h, arch).kernel->name);
  }
  return names;
}

}  // namespace kiln::gpu
