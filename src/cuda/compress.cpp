// Compress steps on a GPU (kernels/compress.cuh): one launch over tiles of the mask.
#include <cuda_runtime_api.h>

#include <string>

#include "cuda/helper_kernels.hpp"
#include "cuda/library.hpp"
#include "cuda/per_device.hpp"
#include "cuda/runtime.hpp"
#include "cuda/streams.hpp"
#include "kiln/dtype.hpp"

namespace kiln::gpu {
namespace {

using helpers::Helper;

constexpr int64_t kTile = kLookBackBlock * 16;  // kiln::compress::kTile: mask bytes a block

// The kernel copying rows in units of `unit` (a CUDA type of `bytes` bytes), or writing
// positions (unit "long long", positions).
Helper select_helper(const std::string& unit, const std::string& tag, bool positions) {
  Helper h = helpers::wrap(
      "compress.cuh", "kiln_compress_" + std::string(positions ? "positions" : "rows_" + tag),
      "const bool* mask, const " + unit + "* values, " + unit +
          "* out, long long rows, long long width, long long tiles, void* scratch",
      // As scan.cpp's: the kernel does not compile where kTile drifts from the header's.
      "static_assert(kiln::compress::kTile == " + std::to_string(kTile) +
          ", \"src/cuda/compress.cpp's kTile\"); kiln::compress::select<" + unit + ", " +
          (positions ? "true" : "false") + ">(mask, values, out, rows, width, tiles, scratch)",
      positions ? "flatnonzero" : "compress rows of " + tag, positions ? "b -> i64" : tag,
      kLookBackBlock);
  return h;
}

struct Unit {
  const char* type;
  const char* tag;
  int bytes;
};
constexpr Unit kUnits[] = {{"uint4", "16B", 16},
                           {"unsigned long long", "8B", 8},
                           {"unsigned", "4B", 4},
                           {"unsigned short", "2B", 2},
                           {"unsigned char", "1B", 1}};

bool aligned(const void* p, int bytes) { return reinterpret_cast<uintptr_t>(p) % bytes == 0; }

}  // namespace

void run_compress(const plan::CompressStep& step, const plan::PlanBuffer& out_desc,
                  const bool* mask, const void* values, void* out, int device) {
  if (step.count == 0 || step.rows == 0) return;
  ScopedDevice on(device);
  long long rows = step.rows, tiles = (step.rows + kTile - 1) / kTile;
  auto scratch = look_back_status(device, 1, tiles);
  void* status = scratch->data();
  const dim3 grid(static_cast<unsigned>(tiles));
  if (!values) {
    long long width = 1;
    void* args[] = {&mask, &values, &out, &rows, &width, &tiles, &status};
    return helpers::launch(select_helper("long long", "i64", true), device, grid, args);
  }
  const int64_t row_bytes = step.width * itemsize(out_desc.dtype);
  for (const Unit& u : kUnits)
    if (row_bytes % u.bytes == 0 && aligned(values, u.bytes) && aligned(out, u.bytes)) {
      long long width = row_bytes / u.bytes;
      void* args[] = {&mask, &values, &out, &rows, &width, &tiles, &status};
      return helpers::launch(select_helper(u.type, u.tag, false), device, grid, args);
    }
}

std::vector<std::string> compile_compress_helpers(const std::string& arch) {
  std::vector<std::string> names{
      helpers::compile(select_helper("long long", "i64", true), arch).kernel->name};
  for (const Unit& u : kUnits)
    names.push_back(helpers::compile(select_helper(u.type, u.tag, false), arch).kernel->name);
  return names;
}

}  // namespace kiln::gpu
