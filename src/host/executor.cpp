#include "host/executor.hpp"

#include <cstring>

#include "graph/host_buffer.hpp"
#include "host/compress.hpp"
#include "host/fft.hpp"
#include "host/fused.hpp"
#include "host/matmul.hpp"
#include "host/random.hpp"
#include "host/scan.hpp"
#include "host/scatter.hpp"
#include "host/sort.hpp"

namespace kiln::cpu {

std::shared_ptr<graph::Buffer> Executor::allocate(size_t nbytes) { return cpu::allocate(nbytes); }

std::shared_ptr<graph::Buffer> Executor::allocate_check_words(size_t nbytes) {
  auto b = allocate(nbytes);
  std::memset(b->data(), 0, nbytes);
  return b;
}

// Nothing to generate: the host interprets the group's instructions.
plan::PreparedGroup Executor::prepare(const plan::KernelStep& step) { return {&step.group.name}; }

void Executor::check_user_code(const plan::KernelStep& step) { check_runs_on_host(step.group); }

// A group with a fused scan (FusedGroup::scan) writes its value where the scan goes, by the
// interpretation that writes it unfused, and scans it there in place as the scan step scans its
// input: the unfused program's operations in its order, so the same bits.
void Executor::run_group(const plan::KernelStep& step, const std::vector<Scalar>& params,
                         const std::function<void*(int)>& data) {
  const plan::FusedGroup& g = step.group;
  cpu::run_group(g, params, data);
  if (!g.scan) return;
  void* out = data(g.outputs[0].buffer);
  const plan::PlanBuffer desc{g.out_dtype(0), g.shape, host(), nullptr};
  cpu::run_scan(plan::ScanStep{-1, -1, g.scan->op, g.scan->outer, g.scan->n, g.scan->inner}, desc,
                out, out);
}

void Executor::run_fft(const plan::FftStep& step, const plan::PlanBuffer& in_desc, const void* in,
                       const plan::PlanBuffer& out_desc, void* out) {
  cpu::run_fft(step, in_desc, in, out_desc, out);
}

void Executor::run_random(const plan::RandomStep& step, const plan::PlanBuffer& out_desc,
                          void* out) {
  cpu::run_random(step, out_desc, out);
}

void Executor::run_scatter(const plan::ScatterStep& step, const plan::PlanBuffer& out_desc,
                           const void* x, const int64_t* positions, const void* values,
                           int64_t count, void* out, uint64_t* check) {
  cpu::run_scatter(step, out_desc, x, positions, values, count, out, check);
}

void Executor::run_scan(const plan::ScanStep& step, const plan::PlanBuffer& out_desc,
                        const void* in, void* out) {
  cpu::run_scan(step, out_desc, in, out);
}

void Executor::run_compress(const plan::CompressStep& step, const plan::PlanBuffer& out_desc,
                            const bool* mask, const void* values, void* out) {
  cpu::run_compress(step, out_desc, mask, values, out);
}

void Executor::run_matmul(const plan::MatmulStep& step, const plan::PlanBuffer& out_desc,
                          const void* a, const void* b, const void* bias, void* out) {
  cpu::run_matmul(step, out_desc, a, b, out);
  // The epilogue as the unfused program's kernel, in place: the same roundings as that program.
  if (step.unfused) {
    auto data = [&](int id) { return id == step.out ? out : const_cast<void*>(bias); };
    cpu::run_group(step.unfused->group, step.unfused->group.params, data);
  }
}

void Executor::run_sort(const plan::SortStep& step, const plan::PlanBuffer& out_desc,
                        const void* in, void* out) {
  cpu::run_sort(step, out_desc, in, out);
}

bool Executor::copy_from_host(void* dst, const void* src, size_t nbytes, bool) {
  if (nbytes) std::memcpy(dst, src, nbytes);
  return false;
}

void Executor::copy_to_host(void* dst, const void* src, size_t nbytes, bool) {
  if (nbytes) std::memcpy(dst, src, nbytes);
}

}  // namespace kiln::cpu
