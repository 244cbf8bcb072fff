// Scan steps on a GPU (kernels/scan.cuh): a thread per lane walking the scanned axis in order
// where there are lanes to fill the device or the axis is short; otherwise tiles of each lane
// folded, their totals scanned per lane, and each tile scanned from its prefix (three launches).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>

#include "codegen/expressions.hpp"
#include "cuda/helper_kernels.hpp"
#include "cuda/library.hpp"
#include "cuda/per_device.hpp"
#include "cuda/runtime.hpp"
#include "kiln/errors.hpp"
#include "plan/naming.hpp"

namespace kiln::gpu {
namespace {

using helpers::Helper;

constexpr int64_t kTile = 2048;  // kiln::scan::kTile

// kiln::scan::FORM<OP>(args) for dtype t.
Helper scan_helper(const std::string& form, const std::string& params, const std::string& args,
                   DType t, graph::ScanOp op) {
  const std::string type = codegen::cuda_type(t), tag = plan::dtype_short(t);
  std::string p = params;
  for (size_t at; (at = p.find("T")) != std::string::npos;) p.replace(at, 1, type);
  const char* which = op == graph::ScanOp::Sum ? "Add" : "Multiply";
  Helper h = helpers::wrap(
      "scan.cuh", std::string("kiln_scan_") + form + "_" + graph::op_name(op) + "_" + tag, p,
      "kiln::scan::" + form + "<kiln::scatter::" + which + ">(" + args + ")",
      std::string(graph::op_name(op)) + ": " + form + ", " + tag, tag + " -> " + tag);
  h.options = {"--fmad=false"};  // complex products round as the host's
  return h;
}

Helper lanes_helper(DType t, graph::ScanOp op) {
  return scan_helper("lanes", "const T* in, T* out, long long outer, long long n, long long inner",
                     "in, out, outer, n, inner", t, op);
}
Helper totals_helper(DType t, graph::ScanOp op) {
  return scan_helper(
      "tile_totals",
      "const T* in, T* totals, long long outer, long long n, long long inner, long long tiles",
      "in, totals, outer, n, inner, tiles", t, op);
}
Helper prefixes_helper(DType t, graph::ScanOp op) {
  return scan_helper("scan_totals", "T* totals, long long rows, long long tiles",
                     "totals, rows, tiles", t, op);
}
Helper tiles_helper(DType t, graph::ScanOp op) {
  return scan_helper("scan_tiles",
                     "const T* in, T* out, const T* prefixes, long long outer, long long n, "
                     "long long inner, long long tiles",
                     "in, out, prefixes, outer, n, inner, tiles", t, op);
}

dim3 blocks(int64_t work, int device) {
  return dim3(static_cast<unsigned>(std::clamp<int64_t>(work, 1, helpers::max_blocks(device))));
}

}  // namespace

void run_scan(const plan::ScanStep& step, const plan::PlanBuffer& out_desc, const void* in,
              void* out, int device) {
  const DType t = out_desc.dtype;
  long long outer = step.outer, n = step.n, inner = step.inner;
  if (outer * n * inner == 0) return;
  ScopedDevice on(device);
  // Tiles for a long axis that is contiguous (coalesced loads, where a thread per lane would
  // read one value per row) or has too few lanes to fill the device; otherwise a thread per lane,
  // in order: consecutive lanes read consecutive values when inner > 1.
  const long long lanes = outer * inner;
  const bool tiled =
      n > kTile && (inner == 1 || lanes < helpers::max_blocks(device) * helpers::kBlock / 4);
  if (!tiled) {
    void* args[] = {&in, &out, &outer, &n, &inner};
    return helpers::launch(lanes_helper(t, step.op), device, lanes, args);
  }
  long long tiles = (n + kTile - 1) / kTile;
  auto totals = allocate(device, static_cast<size_t>(lanes * tiles * itemsize(t)));
  void* totals_data = totals->data();
  void* a1[] = {&in, &totals_data, &outer, &n, &inner, &tiles};
  helpers::launch(totals_helper(t, step.op), device, blocks(lanes * tiles, device), a1);
  long long rows = lanes;
  void* a2[] = {&totals_data, &rows, &tiles};
  helpers::launch(prefixes_helper(t, step.op), device, blocks(rows, device), a2);
  void* a3[] = {&in, &out, &totals_data, &outer, &n, &inner, &tiles};
  helpers::launch(tiles_helper(t, step.op), device, blocks(lanes * tiles, device), a3);
}

std::vector<std::string> compile_scan_helpers(const std::string& arch,
                                              std::span<const DType> dtypes) {
  std::vector<std::string> names;
  for (DType t : dtypes) {
    if (t == DType::Bool) continue;  // the API scans bool as int64
    for (auto op : {graph::ScanOp::Sum, graph::ScanOp::Prod})
      for (const Helper& h :
           {lanes_helper(t, op), totals_helper(t, op), prefixes_helper(t, op), tiles_helper(t, op)})
        names.push_back(helpers::compile(h, arch).kernel->name);
  }
  return names;
}

}  // namespace kiln::gpu
