#include "host/executor.hpp"

#include <cstring>

#include "host/fft.hpp"
#include "host/fused.hpp"
#include "host/memory.hpp"
#include "host/random.hpp"
#include "kiln/errors.hpp"

namespace kiln::cpu {
namespace {

class Executor {
 public:
  explicit Executor(const plan::Plan& p) : p_(p), bufs_(p.buffers.size()) {
    for (size_t i = 0; i < p.buffers.size(); ++i) {
      const auto& b = p.buffers[i];
      if (!b.device.is_host())
        throw DeviceError("the host executor was given a plan with a buffer on " +
                          b.device.str() + "; this is a kiln bug, please report it");
      if (b.external) bufs_[i] = b.external;
    }
  }

  std::vector<graph::BufferRef> run() {
    for (const auto& step : p_.steps) std::visit([this](const auto& s) { run_step(s); }, step);
    std::vector<graph::BufferRef> out;
    for (int id : p_.outputs) out.push_back(get(id));
    return out;
  }

 private:
  graph::BufferRef get(int id) {
    if (!bufs_[id]) {
      const auto& b = p_.buffers[id];
      bufs_[id] = allocate(static_cast<size_t>(shape_size(b.shape)) * itemsize(b.dtype));
    }
    return bufs_[id];
  }
  void* data(int id) { return get(id)->data(); }

  void run_step(const plan::KernelStep& s) {
    // Allocate before the group runs: its worker threads only read the buffer table.
    for (const auto& o : s.group.outputs) get(o.buffer);
    run_group(s.group, [this](int id) { return bufs_[id]->data(); });
  }
  void run_step(const plan::FftStep& s) {
    run_fft(s, p_.buffers[s.in], data(s.in), p_.buffers[s.out], data(s.out));
  }
  void run_step(const plan::RandomStep& s) { run_random(s, p_.buffers[s.out], data(s.out)); }
  void run_step(const plan::CopyStep& s) {
    // Host to host: the buffers are both here; a plain copy.
    auto src = get(s.src);
    std::memcpy(data(s.dst), src->data(), src->nbytes);
  }
  void run_step(const plan::FreeStep& s) { bufs_[s.buffer].reset(); }

  const plan::Plan& p_;
  std::vector<graph::BufferRef> bufs_;
};

}  // namespace

std::vector<graph::BufferRef> execute(const plan::Plan& p) { return Executor(p).run(); }

}  // namespace kiln::cpu
