#include "cuda/fft_kernels.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "codegen/expressions.hpp"
#include "cuda/fft_helpers_aot.hpp"
#include "cuda/helper_kernels.hpp"
#include "cuda/runtime.hpp"
#include "jit/jit.hpp"
#include "kiln/errors.hpp"
#include "plan/naming.hpp"

namespace kiln::gpu::fft {
namespace {

constexpr int kMaxRank = 8;

// Mirrors kiln::fft::PadLayout in kernels/fft.cuh (all 64-bit, so both sides lay it out alike).
struct PadLayout {
  int64_t rank = 0;
  int64_t src[kMaxRank] = {};
  int64_t dst[kMaxRank] = {};
};

// Mirrors kiln::fft::HermitianLayout in kernels/fft.cuh (all 64-bit, like PadLayout).
struct HermitianLayout {
  int64_t rank = 0;
  int64_t outer[kMaxRank] = {};
  int64_t mirror[kMaxRank] = {};
  int64_t rows = 1, n = 0, half = 0, src_extent = 0, inner = 1, write_half = 0;
};

using helpers::compile;
using helpers::Helper;
using helpers::kBlock;
using helpers::launch;
using helpers::max_blocks;

std::string real_type(Precision p) { return p == Precision::Single ? "float" : "double"; }
std::string type_of(Elements e) {
  return e.complex ? "kiln::complex<" + real_type(e.precision) + ">" : real_type(e.precision);
}
std::string tag_of(Elements e) {
  bool single = e.precision == Precision::Single;
  return e.complex ? (single ? "c64" : "c128") : (single ? "f32" : "f64");
}

// KILN_FFT_AOT=0 launches the JIT's helpers even where kiln's build has them (a test compares
// the two paths).
std::atomic<bool>& built_in_on() {
  static std::atomic<bool> on = [] {
    const char* v = std::getenv("KILN_FFT_AOT");
    return !(v && std::string(v) == "0");
  }();
  return on;
}

// One extern "C" kernel calling a template of kernels/fft.cuh, and its built-in twin.
Helper wrap(const std::string& name, const std::string& params, const std::string& call,
            const std::string& summary, const std::string& dtypes) {
  Helper h = helpers::wrap("fft.cuh", name, params, call, summary, dtypes);
  if (built_in_on()) h.built_in = aot::kernel(name);
  return h;
}

Helper pad_helper(Elements s, Elements d) {
  return wrap("kiln_fft_pad_" + tag_of(s) + "_" + tag_of(d),
              "const " + type_of(s) + "* src, " + type_of(d) +
                  "* dst, kiln::fft::PadLayout layout, long long n",
              "kiln::fft::pad_copy(src, dst, layout, n)",
              "FFT input crop / zero-pad, " + tag_of(s) + " -> " + tag_of(d),
              tag_of(s) + " -> " + tag_of(d));
}

Helper zero_imag_helper(Precision p) {
  Elements c{true, p};
  return wrap("kiln_fft_zero_imag_" + tag_of(c),
              type_of(c) +
                  "* data, long long outer, long long extent, long long inner, long long first, "
                  "long long second",
              "kiln::fft::zero_imag(data, outer, extent, inner, first, second)",
              "C2R input: zero the imaginary parts of the DC and Nyquist terms",
              tag_of(c) + " -> " + tag_of(c));
}

Helper hermitian_helper(Precision p) {
  Elements c{true, p};
  return wrap("kiln_fft_hermitian_" + tag_of(c),
              "const " + type_of(c) + "* src, " + type_of(c) +
                  "* dst, kiln::fft::HermitianLayout layout, " + real_type(p) + " factor",
              "kiln::fft::expand_hermitian(src, dst, layout, factor)",
              "full spectrum of real input from its half (Hermitian symmetry)",
              tag_of(c) + " -> " + tag_of(c));
}

Helper convert_helper(DType from, Precision p) {
  std::string type = codegen::cuda_type(from), tag = plan::dtype_short(from);
  std::string real = real_type(p), to = tag_of({false, p});
  return wrap(
      "kiln_fft_convert_" + tag + "_" + to,
      "const " + type + "* src, " + real + "* dst, kiln::fft::PadLayout layout, long long n",
      "kiln::fft::pad_copy(src, dst, layout, n)",
      "FFT input: integers to reals, " + tag + " -> " + to, tag + " -> " + to);
}

// cuFFT's load callback for integer input, as LTO-IR (-dlto) for cufftXtSetJITCallback. Its
// name stays a C++ name (no extern "C"): cuFFT looks the callback up by its declared name.
Helper load_callback_helper(DType from, Precision p) {
  std::string type = codegen::cuda_type(from), tag = plan::dtype_short(from);
  std::string real = real_type(p), to = tag_of({false, p});
  std::string name = "kiln_fft_load_" + tag + "_" + to;
  return {name,
          "__device__ " + real + " " + name +
              "(void* in, unsigned long long i, void*, void*) {\n  return (" + real +
              ")static_cast<const " + type + "*>(in)[i];\n}\n",
          "cuFFT load callback: integers to reals as cuFFT reads them, " + tag + " -> " + to,
          tag + " -> " + to};
}

Helper scale_helper(Precision p) {
  std::string t = real_type(p);
  return wrap("kiln_fft_scale_" + tag_of({false, p}), t + "* data, long long n, " + t + " factor",
              "kiln::fft::scale(data, n, factor)", "FFT normalisation scale",
              tag_of({false, p}) + " -> " + tag_of({false, p}));
}

// Every helper an FFT step may launch. Integers are only ever converted to float64: the planner
// hands an FFT integers only in place of their cast to float64 (plan/planner.cpp, fft_source).
std::vector<Helper> every_helper() {
  std::vector<Helper> all;
  for (Precision p : {Precision::Single, Precision::Double}) {
    Elements r{false, p}, c{true, p};
    for (auto [s, d] : {std::pair{r, r}, {c, c}, {r, c}, {c, r}}) all.push_back(pad_helper(s, d));
    all.push_back(zero_imag_helper(p));
    all.push_back(hermitian_helper(p));
    all.push_back(scale_helper(p));
  }
  for (DType t : kAllDTypes)
    if (is_integer_or_bool(t)) all.push_back(convert_helper(t, Precision::Double));
  return all;
}

// LTO-IR, relocatable: what cuFFT links into its kernels when it makes a callback plan.
jit::Result compile_lto(const Helper& h, const std::string& arch) {
  return compile(h, arch, {"-dlto", "--relocatable-device-code=true"});
}

// Merges a dimension into the one inside it whenever that inner part is whole on both sides
// (equal extents), so the usual pad along one axis indexes in at most three dimensions.
PadLayout collapse(const Shape& src, const Shape& dst) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // innermost first
  for (size_t d = src.size(); d-- > 0;) {
    if (!dims.empty() && dims.back().first == dims.back().second) {
      dims.back().first *= src[d];
      dims.back().second *= dst[d];
    } else {
      dims.push_back({src[d], dst[d]});
    }
  }
  if (dims.size() > kMaxRank)
    throw ShapeError("FFT padding supports at most 8 dimensions; reshape the array first");
  PadLayout l;
  l.rank = static_cast<int64_t>(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    l.src[dims.size() - 1 - i] = dims[i].first;
    l.dst[dims.size() - 1 - i] = dims[i].second;
  }
  return l;
}

}  // namespace

void pad_copy(int device, const void* src, Elements src_kind, const Shape& src_shape, void* dst,
              Elements dst_kind, const Shape& dst_shape) {
  int64_t n = shape_size(dst_shape);
  if (n == 0) return;
  PadLayout l = collapse(src_shape, dst_shape);
  void* args[] = {&src, &dst, &l, &n};
  launch(pad_helper(src_kind, dst_kind), device, n, args);
}

void zero_imag(int device, void* data, Precision p, const ZeroImagOp& op) {
  int64_t n = op.outer * op.inner * (op.second >= 0 ? 2 : 1);
  if (n == 0) return;
  int64_t outer = op.outer, extent = op.extent, inner = op.inner, first = op.first,
          second = op.second;
  void* args[] = {&data, &outer, &extent, &inner, &first, &second};
  launch(zero_imag_helper(p), device, n, args);
}

void expand_hermitian(int device, const void* src, void* dst, Precision p, const HermitianOp& op) {
  HermitianLayout l;
  if (op.outer.size() > kMaxRank)
    throw ShapeError("FFT of real input supports at most 8 dimensions; reshape the array first");
  l.rank = static_cast<int64_t>(op.outer.size());
  for (size_t d = 0; d < op.outer.size(); ++d) {
    l.outer[d] = op.outer[d];
    l.mirror[d] = op.mirror[d] ? 1 : 0;
    l.rows *= op.outer[d];
  }
  l.n = op.n;
  l.half = op.n / 2 + 1;
  l.src_extent = op.src_extent;
  l.inner = op.inner;
  l.write_half = src != dst || op.factor != 1.0;
  int64_t cols = l.half * l.inner;
  if (l.rows == 0 || cols == 0) return;
  // x: along a line's half (coalesced), y: lines, so each line's mirror image is found once
  // per line and not once per element. About max_blocks in all.
  int64_t bx = std::clamp<int64_t>((cols + kBlock - 1) / kBlock, 1, max_blocks(device));
  int64_t by = std::clamp<int64_t>(max_blocks(device) / bx, 1, std::min<int64_t>(l.rows, 65535));
  float f32 = static_cast<float>(op.factor);
  double f64 = op.factor;
  void* f = p == Precision::Single ? static_cast<void*>(&f32) : static_cast<void*>(&f64);
  void* args[] = {&src, &dst, &l, f};
  launch(hermitian_helper(p), device, dim3(static_cast<unsigned>(bx), static_cast<unsigned>(by)),
         args);
}

void convert_input(int device, const void* src, DType from, void* dst, Precision p, int64_t n) {
  if (n == 0) return;
  PadLayout l = collapse({n}, {n});
  void* args[] = {&src, &dst, &l, &n};
  launch(convert_helper(from, p), device, n, args);
}

const jit::Kernel& load_callback(DType from, Precision p, int device) {
  return *compile_lto(load_callback_helper(from, p), gpu::device(device).arch).kernel;
}

void scale(int device, void* data, Precision p, int64_t count, double factor) {
  if (count == 0) return;
  float f32 = static_cast<float>(factor);
  void* f = p == Precision::Single ? static_cast<void*>(&f32) : static_cast<void*>(&factor);
  void* args[] = {&data, &count, f};
  launch(scale_helper(p), device, count, args);
}

std::vector<std::string> helper_names() {
  std::vector<std::string> names;
  for (const Helper& h : every_helper()) names.push_back(h.name);
  return names;
}

bool built_in_helpers_enabled() { return built_in_on(); }
void enable_built_in_helpers(bool on) { built_in_on() = on; }

bool built_in_helpers_run_on(int device) {
  const void* k = aot::kernel(scale_helper(Precision::Double).name);  // any one of them
  return k && helpers::built_in_runs_on(k, device);
}

std::vector<std::string> compile_helpers(const std::string& arch) {
  std::vector<std::string> names;
  for (const Helper& h : every_helper()) names.push_back(compile(h, arch).kernel->name);
  for (DType t : {DType::Bool, DType::Int32, DType::Int64})
    names.push_back(compile_lto(load_callback_helper(t, Precision::Double), arch).kernel->name);
  return names;
}

}  // namespace kiln::gpu::fft
