// The one interface through which the engine (src/runtime) runs a plan's steps on a device.
// The host executor (src/host, the reference) and the CUDA executor (src/cuda) implement it;
// it sits here, below both, so that neither includes the other and the plan runner drives any
// device the same way.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graph/buffer.hpp"
#include "plan/plan.hpp"

namespace kiln::plan {

// Where a group's kernel came from, for KILN_DEBUG. An executor that compiles nothing for the
// group (the host executor) says None.
enum class KernelOrigin : uint8_t { None, Compiled, Memory, Disk };

struct PreparedGroup {
  const std::string* name;  // the kernel's, owned by the plan (no copy per evaluation)
  KernelOrigin origin = KernelOrigin::None;
  const std::string* source = nullptr;  // the generated source, when it was generated now
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Memory for a plan buffer. It is freed when its last reference drops (a FreeStep drops the
  // runner's), so there is no free() to call.
  virtual std::shared_ptr<graph::Buffer> allocate(size_t nbytes) = 0;
  // Zeroed memory for a plan's range-check words (PlanBuffer::check_words), which this
  // backend's steps write and the host reads in place once synchronize() has returned: no copy
  // and no zeroing step on the device's queue (the CUDA executor: page-locked host memory,
  // which kernels address directly).
  virtual std::shared_ptr<graph::Buffer> allocate_check_words(size_t nbytes) = 0;

  // Generates and compiles the group's kernel (kept in step.compiled), before any step runs.
  virtual PreparedGroup prepare(const KernelStep& step) = 0;
  // Whether prepare() would generate and compile the group's kernel now (one this process has
  // not met), and that work alone, without loading the kernel anywhere: the plan runner calls
  // compile_kernel for a plan's new kernels on threads of their own (different steps at once),
  // then prepare() on its own thread (whose report then says where the kernel came from as
  // compile_kernel's did). An executor that compiles nothing keeps the defaults.
  virtual bool needs_compile(const KernelStep&) const { return false; }
  virtual PreparedGroup compile_kernel(const KernelStep& step) { return {&step.group.name}; }
  // Throws DeviceError when the group's user code (kiln::elementwise) cannot run here; called
  // before any step runs, so a plan that cannot finish does no work.
  virtual void check_user_code(const KernelStep& step) = 0;
  // Runs a prepared group. `data(id)` is the address of plan buffer id (inputs filled, outputs
  // allocated); `params` the values of its Param instructions (its own, or rebound).
  virtual void run_group(const KernelStep& step, const std::vector<Scalar>& params,
                         const std::function<void*(int)>& data) = 0;

  // Library steps: both executors give the same numbers for the same step.
  virtual void run_fft(const FftStep& step, const PlanBuffer& in_desc, const void* in,
                       const PlanBuffer& out_desc, void* out) = 0;
  virtual void run_random(const RandomStep& step, const PlanBuffer& out_desc, void* out) = 0;
  // out (out_desc: x's dtype and shape) = x with the `count` values placed at their flat
  // positions (int64, in range; a negative one skips its value) by step.op. A set keeps the last of
  // repeated positions; the other operations apply every update (float sums may round differently
  // between backends). Value k is values[k * step.values_stride] (values: at the step's offset).
  // With step.indices the positions are indices (a negative one from the end), and the
  // backend folds into the two words at `check` (zero, from allocate_check_words) every index
  // outside the range (below_word, above_word), whose update it leaves out.
  virtual void run_scatter(const ScatterStep& step, const PlanBuffer& out_desc, const void* x,
                           const int64_t* positions, const void* values, int64_t count, void* out,
                           uint64_t* check) = 0;
  // out = the inclusive scan of in along the step's axis, both of out_desc's dtype and shape
  // (step.outer x step.n x step.inner around the axis). Backends may associate float sums and
  // products differently.
  virtual void run_scan(const ScanStep& step, const PlanBuffer& out_desc, const void* in,
                        void* out) = 0;
  // out (out_desc: step.count * step.width values) = the rows of `values` (step.rows x
  // step.width, C order) whose byte in `mask` is not zero, in order; with no values (null), the
  // positions of those bytes as int64. step.count is exactly how many there are.
  virtual void run_compress(const CompressStep& step, const PlanBuffer& out_desc, const bool* mask,
                            const void* values, void* out) = 0;

  // out (out_desc) = each row of in (step.rows x step.n, of step.dtype) sorted stably in NumPy's
  // order (kernels/sort_keys.cuh), as values or as int64 positions along the row. Exact: both
  // backends give the same bits.
  virtual void run_sort(const SortStep& step, const PlanBuffer& out_desc, const void* in,
                        void* out) = 0;

  // out (dense, out_desc: batch... x m x n) = a @ b per batch entry, the operands read in place
  // through step.a's and step.b's offsets and strides from `a` and `b` (their buffers' starts),
  // then step.epilogue with the bias at step.bias_offset of `bias` (null without one).
  // Float or complex dtypes only; float sums may associate differently between backends.
  virtual void run_matmul(const MatmulStep& step, const PlanBuffer& out_desc, const void* a,
                          const void* b, const void* bias, void* out) = 0;

  // Ordering one run with other work on the device (the CUDA executor's streams, see
  // cuda/streams.hpp): before the first step, for each buffer the plan reads that it did not
  // write, and after the last step. A backend with one queue keeps the defaults.
  virtual void begin_run() {}
  virtual void read_from(const graph::Buffer&) {}
  virtual void end_run() {}

  // Copies between host memory and this backend's memory (a host backend: a memcpy).
  // copy_from_host returns true when the copy may still be reading `src` on return (a pinned
  // source): synchronize() before that memory is reused.
  virtual bool copy_from_host(void* dst, const void* src, size_t nbytes, bool src_pinned) = 0;
  // Returns once dst holds the data.
  virtual void copy_to_host(void* dst, const void* src, size_t nbytes, bool dst_pinned) = 0;

  // Waits until everything queued on this backend has finished.
  virtual void synchronize() = 0;
};

}  // namespace kiln::plan
