// Runs a Plan: owns its buffers and sends each step to the backend of its device
// (runtime/backends.hpp). Plans may span devices.
#pragma once
#include <span>
#include <vector>

#include "plan/backend.hpp"
#include "plan/plan.hpp"

namespace kiln::runtime {

// Runs under hold_evaluation() (runtime/pipeline.hpp), so one at a time: its tables are kept
// between runs rather than allocated for each evaluation.
class PlanRun {
 public:
  // Binds the values `sig` carries through p.bindings (buffers, scalars, random draws).
  PlanRun(const plan::Plan& p, const graph::Signature& sig);
  ~PlanRun();
  PlanRun(const PlanRun&) = delete;
  PlanRun& operator=(const PlanRun&) = delete;

  // Generates and compiles (or finds in the kernel cache) every group's kernel for its device,
  // and refuses user code that cannot run there: all before any step runs.
  void compile();
  // Runs every step; then throws ShapeError if a range check of take's or a scatter's indices
  // failed (plan::FusedGroup::checks, plan::ScatterStep::check_buffer), before any result is
  // stored.
  void run();
  // After run(): the buffer of plan.outputs[i] (null: a held value the plan does not write).
  graph::BufferRef output(size_t i);

 private:
  class Ordering;
  // Allocated on first use. A reference into the table: most callers only need the buffer to
  // exist, and a copy would count a reference up and down again (two locked instructions per
  // buffer of every launch).
  const graph::BufferRef& get(int id) {
    if (!bufs_[id]) allocate_buffer(id);
    return bufs_[id];
  }
  void allocate_buffer(int id);
  void* data(int id) { return get(id)->data(); }
  const Device& device_of(int id) const { return p_.buffers[id].device; }
  plan::Backend& backend_of(int id) const { return *backends_[p_.index.buffer_device[id]]; }
  int64_t bytes_of(int id) const { return p_.index.buffer_bytes[id]; }
  int64_t moved_bytes() const { return p_.index.step_bytes[current_]; }  // the current step's
  void check_user_code(const plan::KernelStep& k, plan::Backend& b) const;
  std::vector<plan::PreparedGroup> compile_new_kernels();
  void check_ranges();
  void check_words(int buffer, std::span<const plan::FusedGroup::IndexCheck> checks,
                   const char* what, const char* advice);

  void run_step(const plan::KernelStep& s);
  void run_step(const plan::CopyStep& s);
  void run_step(const plan::FftStep& s);
  void run_step(const plan::RandomStep& cached);
  void run_step(const plan::ScatterStep& s);
  void run_step(const plan::ScanStep& s);
  void run_step(const plan::CompressStep& s);
  void run_step(const plan::MatmulStep& s);
  void run_step(const plan::SortStep& s);
  void run_step(const plan::CollectiveStep& s);
  void run_step(const plan::FreeStep& s) { bufs_[s.buffer].reset(); }

  struct Tables {
    std::vector<graph::BufferRef> bufs;
    std::vector<std::vector<Scalar>> params;
    std::vector<plan::Backend*> backends;  // per device of the plan (RunIndex::devices)
  };
  static Tables& tables();
  PlanRun(const plan::Plan& p, const graph::Signature& sig, Tables& t);

  const plan::Plan& p_;
  const graph::Signature& sig_;
  std::vector<graph::BufferRef>& bufs_;       // per plan buffer (tables().bufs)
  std::vector<std::vector<Scalar>>& params_;  // per step: the bound scalar parameters
  std::vector<plan::Backend*>& backends_;     // per device of the plan (tables().backends)
  std::vector<plan::PreparedGroup> kernels_;  // per step, with KILN_DEBUG: what compile() found
  size_t current_ = 0;                        // the step being run
};

}  // namespace kiln::runtime
