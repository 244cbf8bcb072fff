#include "cuda/kernels.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "codegen/kernel_source.hpp"
#include "cuda/library.hpp"
#include "cuda/runtime.hpp"
#include "cuda/streams.hpp"
#include "kiln/errors.hpp"

namespace kiln::gpu {
namespace {

using codegen::Arg;
using codegen::Form;

struct Loaded {
  cudaKernel_t main = nullptr;
  int64_t max_shared = 48 * 1024;  // dynamic shared memory a launch may ask for
};

// Modules loaded per (cache key, device). Libraries stay loaded for the process's life: a
// kernel handle must outlive every launch that may still be queued.
Loaded load(const jit::Kernel& k, int device) {
  static std::mutex mu;
  static std::map<std::pair<std::string, int>, Loaded> loaded;
  std::lock_guard lock(mu);
  auto key = std::make_pair(k.key, device);
  if (auto it = loaded.find(key); it != loaded.end()) return it->second;
  set_device(device);
  cudaLibrary_t lib;
  KILN_CUDA_CHECK(
      cudaLibraryLoadData(&lib, k.cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  Loaded l;
  KILN_CUDA_CHECK(cudaLibraryGetKernel(&l.main, lib, k.name.c_str()));
  loaded.emplace(key, l);
  return l;
}

// Kernel arguments in 16-byte slots of one buffer (a layout takes several); the runtime
// reads as many bytes from each as the kernel's parameter has.
class ArgPack {
 public:
  void add(const void* p, size_t n) {
    size_t slots = (n + sizeof(Slot) - 1) / sizeof(Slot);
    std::memcpy(reserve(slots), p, n);
  }
  // An address or a scalar (most arguments): one slot, copied with its size known here.
  template <class T>
  void add(const T& v) {
    static_assert(sizeof(T) <= sizeof(Slot));
    std::memcpy(reserve(1), &v, sizeof v);
  }
  void add_index(int64_t v, bool index64) {
    if (index64)
      add(v);
    else
      add(static_cast<int32_t>(v));
  }
  // Valid until the next add().
  void** pointers() {
    Slot* base = heap_.empty() ? inline_ : heap_.data();
    const size_t* starts = more_starts_.empty() ? starts_ : more_starts_.data();
    void** ptrs = ptrs_;
    if (count_ > kInlineArgs) {
      more_ptrs_.resize(count_);
      ptrs = more_ptrs_.data();
    }
    for (size_t i = 0; i < count_; ++i) ptrs[i] = &base[starts[i]];
    return ptrs;
  }

 private:
  struct alignas(16) Slot {
    unsigned char bytes[16];
  };
  // Most launches fit inline (no allocation on the hot path); a big layout, or more arguments
  // than kInlineArgs (a concatenate of many arrays, a loop of many scalars), moves to the heap.
  // CUDA itself takes up to 32764 bytes of parameters per kernel (since 12.1); past that,
  // NVRTC refuses to compile the kernel.
  static constexpr size_t kInline = 48;
  static constexpr size_t kInlineArgs = 64;
  // Where the next argument's `slots` slots go, now counted. Inline, without touching the
  // heap lists, for all but the largest launches (every argument of every launch comes here).
  [[gnu::always_inline]] Slot* reserve(size_t slots) {
    if (heap_.empty() && used_ + slots <= kInline && count_ < kInlineArgs) [[likely]] {
      Slot* at = &inline_[used_];
      starts_[count_++] = used_;
      used_ += slots;
      return at;
    }
    return reserve_spilled(slots);
  }
  [[gnu::noinline]] Slot* reserve_spilled(size_t slots) {
    if (!heap_.empty() || used_ + slots > kInline) spill(slots);
    Slot* at = heap_.empty() ? &inline_[used_] : &heap_[used_];
    if (count_ == kInlineArgs) more_starts_.assign(starts_, starts_ + kInlineArgs);
    if (count_ < kInlineArgs)
      starts_[count_] = used_;
    else
      more_starts_.push_back(used_);
    ++count_;
    used_ += slots;
    return at;
  }
  void spill(size_t more) {
    if (heap_.empty()) heap_.assign(inline_, inline_ + used_);
    heap_.resize(used_ + more);
  }
  Slot inline_[kInline];
  std::vector<Slot> heap_;
  size_t used_ = 0;
  size_t starts_[kInlineArgs];
  void* ptrs_[kInlineArgs];
  std::vector<size_t> more_starts_;
  std::vector<void*> more_ptrs_;
  size_t count_ = 0;
};

// The collapsed layout as kiln::layout<R, A> lays it out: shape[R], then strides[A][R].
std::vector<int64_t> layout_values(const codegen::KernelSource& src) {
  size_t r = std::max<size_t>(src.space.shape.size(), 1);
  size_t a = std::max<size_t>(src.space.strides.size(), 1);
  std::vector<int64_t> out(r + a * r, 0);
  for (size_t d = 0; d < src.space.shape.size(); ++d) out[d] = src.space.shape[d];
  for (size_t k = 0; k < src.space.strides.size(); ++k)
    for (size_t d = 0; d < src.space.shape.size(); ++d)
      out[r + k * r + d] = src.space.strides[k][d];
  return out;
}

// Whether every dense pointer is aligned for V-lane vector access.
bool vector_aligned(const plan::FusedGroup& g, const codegen::KernelSource& src,
                    const std::function<void*(int)>& data) {
  if (src.vec == 1) return false;
  for (size_t a = 0; a < g.accesses.size(); ++a) {
    // Column reductions load along their outputs, where their strided inputs are contiguous.
    bool loaded_as_vectors = src.access_kinds[a] == codegen::AccessKind::Dense ||
                             (src.form == codegen::Form::ReduceColumns &&
                              src.access_kinds[a] == codegen::AccessKind::Strided);
    if (!loaded_as_vectors || g.accesses[a].buffer < 0) continue;
    size_t isz = itemsize(g.load_dtype(static_cast<int>(a)));
    auto addr =
        reinterpret_cast<uintptr_t>(data(g.accesses[a].buffer)) + g.accesses[a].offset * isz;
    if (addr % (isz * src.vec)) return false;
  }
  // RowFused stores one at a time unless it holds its rows in registers
  if (!g.reduction && (src.form != codegen::Form::RowFused || src.row_registers))
    for (const auto& o : g.outputs)
      if (reinterpret_cast<uintptr_t>(data(o.buffer)) % (itemsize(g.code[o.instr].dtype) * src.vec))
        return false;
  return true;
}

// Zeroed completion counters per device and stream for reductions that merge across blocks: each
// launch's last block sets its counter back to zero, and launches on one stream never overlap,
// so the counters are zero whenever a launch starts (streams run at once: one set each). Grown on
// demand; the smaller buffers are kept, since a queued launch may still use them.
void* completion_counters(int device, int64_t count) {
  struct Counters {
    std::shared_ptr<graph::Buffer> buffer;
    int64_t capacity = 0;
    std::vector<std::shared_ptr<graph::Buffer>> retired;
  };
  static std::mutex mu;
  static auto* counters = new std::map<std::pair<int, cudaStream_t>, Counters>;  // kept to exit
  cudaStream_t stream = current_stream(device);
  std::lock_guard lock(mu);
  auto& c = (*counters)[{device, stream}];
  if (c.capacity < count) {
    int64_t capacity = std::max<int64_t>(count, 2 * c.capacity);
    if (c.buffer) c.retired.push_back(std::move(c.buffer));
    c.buffer = allocate(device, capacity * sizeof(unsigned));
    KILN_CUDA_CHECK(cudaMemsetAsync(c.buffer->data(), 0, capacity * sizeof(unsigned), stream));
    c.capacity = capacity;
  }
  return c.buffer->data();
}

// A kernel over long rows or down columns opts in to all the shared memory a block may have on
// the device, less its static shared memory (merges); the launch asks for what it stages.
Loaded with_shared_memory(Loaded l, const codegen::KernelSource& src, const DeviceInfo& info) {
  if (!src.long_rows && !src.tall_columns) return l;
  cudaFuncAttributes attr{};
  KILN_CUDA_CHECK(cudaFuncGetAttributes(&attr, reinterpret_cast<const void*>(l.main)));
  l.max_shared = info.shared_optin - static_cast<int64_t>(attr.sharedSizeBytes);
  KILN_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(l.main),
                                       cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(l.max_shared)));
  return l;
}

// A group's kernel on one device, with its launch shape, which depends only on the kernel
// and the device.
struct OnDevice {
  Loaded kernel;
  codegen::Launch launch;
};

// What a group needs at launch, derived once per cached plan: a cached plan's launches only
// bind addresses and scalars.
struct Prepared {
  codegen::KernelSource src;
  const jit::Kernel* kernel = nullptr;
  jit::Origin origin = jit::Origin::Compiled;
  std::vector<std::unique_ptr<OnDevice>> loaded;  // per device index (null: not loaded there)
  std::vector<int64_t> layout;                    // Arg::Layout's values (layout_values)
  // (param index, dtype) of the group's Param instructions, in code order (Arg::Param).
  std::vector<std::pair<int, DType>> param_types;
};

// NVRTC's message for a kernel with user expressions starts by naming them, with the C++ type
// each name has, since the user's text (not kiln's) is then the likely culprit.
std::string user_compile_error(const plan::FusedGroup& g, const std::string& nvrtc_message) {
  std::string msg;
  for (const auto& call : g.user_calls) {
    msg += "kiln::elementwise: the kernel with the user expression \"" + call.code->expr + "\" (";
    for (size_t k = 0; k < call.operands.size(); ++k)
      msg +=
          (k ? ", " : "") + call.code->names[k] + ": " + dtype_name(g.code[call.operands[k]].dtype);
    msg += ") did not compile\n";
  }
  return msg + "(names are const C++ variables of their input's type: float32 is float, int64 " +
         "long long, complex64 kiln::complex<float>; use CUDA's math functions, e.g. sinf)\n" +
         nvrtc_message;
}

// The step's Prepared once it has one (every launch but its kernel's first), else null.
Prepared* already_prepared(const plan::KernelStep& step) {
  return static_cast<Prepared*>(step.compiled->value.get());
}

// `fresh` (optional) tells whether this call made it.
Prepared& prepared(const plan::KernelStep& step, const std::string& arch, bool* fresh = nullptr) {
  auto& slot = step.compiled->value;
  if (fresh) *fresh = !slot;
  if (!slot) {
    auto p = std::make_shared<Prepared>();
    p->src = codegen::generate(step.group);
    p->layout = layout_values(p->src);
    for (const auto& ins : step.group.code)
      if (ins.kind == plan::InstrKind::Param)
        p->param_types.push_back({ins.param_index(), ins.dtype});
    jit::Result r{};
    try {
      r = jit::get(kernel_request(p->src, arch));
    } catch (const CompileError& e) {
      if (step.group.user_calls.empty()) throw;
      throw CompileError(user_compile_error(step.group, e.what()));
    }
    p->kernel = r.kernel;
    p->origin = r.origin;
    slot = p;
  }
  return *static_cast<Prepared*>(slot.get());
}

}  // namespace

// No FMA contraction: every operation rounds on its own, as in NumPy and the host executor,
// so fused and eager kernels give the same bits (the cost is nil for memory-bound kernels).
jit::Request kernel_request(const codegen::KernelSource& src, const std::string& arch) {
  return {src.name, src.source, src.summary, arch, {"--fmad=false"}, src.dtypes};
}

LaunchRecord compile_group(const plan::KernelStep& step, const std::string& arch) {
  bool fresh;
  Prepared& p = prepared(step, arch, &fresh);
  return {&p.src.name, fresh ? p.origin : jit::Origin::Memory, fresh ? &p.src.source : nullptr};
}

namespace {

// Thread block clusters (and distributed shared memory) came with compute capability 9.0.
bool has_clusters(const DeviceInfo& info) { return info.cc_major >= 9; }

// The first launch of p's kernel on `device`: its module loaded, its launch shape derived.
[[gnu::noinline]] const OnDevice& load_on(Prepared& p, int device) {
  const auto i = static_cast<size_t>(device);
  const DeviceInfo& info = gpu::device(device);  // validates the index
  Loaded k = with_shared_memory(load(*p.kernel, device), p.src, info);
  if (p.loaded.size() <= i) p.loaded.resize(i + 1);
  p.loaded[i] = std::make_unique<OnDevice>(
      OnDevice{k, codegen::launch_for(p.src, info.sm_count, k.max_shared, has_clusters(info))});
  return *p.loaded[i];
}

const OnDevice& loaded_on(Prepared& p, int device) {
  const auto i = static_cast<size_t>(device);
  if (device >= 0 && i < p.loaded.size() && p.loaded[i]) [[likely]]
    return *p.loaded[i];
  return load_on(p, device);
}

// Packs the launch's arguments into `args`: the buffers' addresses and the bound scalars are
// this launch's; everything else comes from what was derived once (Prepared, OnDevice).
// `scratch` keeps the scratch of a split reduction (its partials) or of a scan's look-back
// alive until the launch is queued.
void pack(ArgPack& args, std::shared_ptr<graph::Buffer>& scratch, const plan::FusedGroup& g,
          const std::vector<Scalar>& params, const Prepared& p, const codegen::Launch& shape,
          int device, const std::function<void*(int)>& data) {
  const codegen::KernelSource& src = p.src;
  if (shape.partials) scratch = allocate(device, shape.partials * src.partial_bytes);
  if (shape.scan_tiles)
    scratch = look_back_status(device, src.scan.outer * src.scan.inner, shape.scan_tiles);
  for (const Arg& a : src.args) {
    switch (a.kind) {
      case Arg::Input: {
        const auto& acc = g.accesses[a.index];
        auto* base = static_cast<char*>(data(acc.buffer));
        args.add(static_cast<void*>(base + acc.offset * itemsize(g.load_dtype(a.index))));
        break;
      }
      case Arg::Output:
        args.add(data(g.outputs[a.index].buffer));
        break;
      case Arg::Param:
        for (const auto& [index, dtype] : p.param_types)
          if (index == a.index)
            visit_dtype(dtype, [&](auto z) { args.add(params[index].as<decltype(z)>()); });
        break;
      case Arg::IotaOffset:
        args.add_index(g.accesses[a.index].offset, src.index64);
        break;
      case Arg::Count:
        args.add_index(shape.count, src.index64);
        break;
      case Arg::RowLength:
        args.add_index(src.row, src.index64);
        break;
      case Arg::VecFlag:
        args.add(static_cast<int>(vector_aligned(g, src, data)));
        break;
      case Arg::Layout:
        args.add(p.layout.data(), p.layout.size() * sizeof(int64_t));
        break;
      case Arg::Partials:  // none when the kernel merges within its blocks
        args.add(scratch ? scratch->data() : nullptr);
        break;
      case Arg::ScanExtent: {
        const int64_t extents[] = {src.scan.outer, src.scan.n, src.scan.inner};
        args.add(static_cast<long long>(extents[a.index]));
        break;
      }
      case Arg::ScanTiles:
        args.add(static_cast<long long>(shape.scan_tiles));
        break;
      case Arg::LookBack:  // none for a thread per lane
        args.add(scratch ? scratch->data() : nullptr);
        break;
      case Arg::RowsPerBlock:
        args.add_index(shape.rows_per_block, src.index64);
        break;
      case Arg::StagedLength:
        args.add_index(shape.staged_length, src.index64);
        break;
      case Arg::Counter:
        args.add(shape.counters ? completion_counters(device, shape.counters) : nullptr);
        break;
      case Arg::CheckWords:
        args.add(data(g.check_buffer));
        break;
    }
  }
}

}  // namespace

LaunchRecord prepare_group(const plan::KernelStep& step, int device) {
  bool fresh;
  Prepared& p = prepared(step, gpu::device(device).arch, &fresh);
  loaded_on(p, device);
  return {&p.src.name, fresh ? p.origin : jit::Origin::Memory, fresh ? &p.src.source : nullptr};
}

void run_group(const plan::KernelStep& step, const std::vector<Scalar>& params, int device,
               const std::function<void*(int)>& data) {
  Prepared* prepared_before = already_prepared(step);
  Prepared& p = prepared_before ? *prepared_before : prepared(step, gpu::device(device).arch);
  const OnDevice& on = loaded_on(p, device);  // (validates the device index)
  const codegen::Launch& s = on.launch;
  set_device(device);
  if (s.grid_x == 0) return;
  ArgPack args;
  std::shared_ptr<graph::Buffer> scratch;
  pack(args, scratch, step.group, params, p, s, device, data);
  const dim3 grid(static_cast<unsigned>(s.grid_x), static_cast<unsigned>(s.grid_y));
  const dim3 block(s.block_x, s.block_y);
  const auto* kernel = reinterpret_cast<const void*>(on.kernel.main);
  if (s.cluster == 1) {
    KILN_CUDA_CHECK(cudaLaunchKernel(kernel, grid, block, args.pointers(),
                                     static_cast<size_t>(s.shared_bytes), current_stream(device)));
    return;
  }
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = static_cast<unsigned>(s.cluster);
  cluster.val.clusterDim.y = cluster.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = static_cast<size_t>(s.shared_bytes);
  config.stream = current_stream(device);
  config.attrs = &cluster;
  config.numAttrs = 1;
  KILN_CUDA_CHECK(cudaLaunchKernelExC(&config, kernel, args.pointers()));
}

}  // namespace kiln::gpu
