// FFT steps on a GPU through cuFFT. fft_program.cpp decides the passes (see its header for the
// scheme that covers any set of axes); this file runs them on the device's kiln stream: plans
// from the cache, helper kernels for padding, C2R clean-up, Hermitian expansion and scaling,
// and the temporary buffers the program asks for, from kiln's allocator (freed in stream order).
#include <cufft.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <variant>
#include <vector>

#include "cuda/cufft_api.hpp"
#include "cuda/fft_kernels.hpp"
#include "cuda/fft_plan_cache.hpp"
#include "cuda/fft_program.hpp"
#include "cuda/library.hpp"
#include "cuda/runtime.hpp"
#include "cuda/streams.hpp"
#include "kiln/errors.hpp"

namespace kiln::gpu {
namespace {

using fft::BufferId;
using fft::Precision;
using fft::Transform;

char* at(void* base, int64_t elements, size_t element_bytes) {
  return static_cast<char*>(base) + static_cast<size_t>(elements) * element_bytes;
}

// One cufftExec* call; the pointer types follow the plan's type.
void exec_once(cufftHandle h, const fft::PlanSpec& s, void* in, void* out, bool inverse) {
  int dir = inverse ? CUFFT_INVERSE : CUFFT_FORWARD;
  bool single = s.precision == Precision::Single;
  auto c = [](void* p) { return static_cast<cufftComplex*>(p); };
  auto z = [](void* p) { return static_cast<cufftDoubleComplex*>(p); };
  switch (s.transform) {
    case Transform::C2C:
      if (single)
        fft::check(fft::cufft().cufftExecC2C(h, c(in), c(out), dir), "cufftExecC2C");
      else
        fft::check(fft::cufft().cufftExecZ2Z(h, z(in), z(out), dir), "cufftExecZ2Z");
      break;
    case Transform::R2C:
      if (single)
        fft::check(fft::cufft().cufftExecR2C(h, static_cast<cufftReal*>(in), c(out)),
                   "cufftExecR2C");
      else
        fft::check(fft::cufft().cufftExecD2Z(h, static_cast<cufftDoubleReal*>(in), z(out)),
                   "cufftExecD2Z");
      break;
    case Transform::C2R:
      if (single)
        fft::check(fft::cufft().cufftExecC2R(h, c(in), static_cast<cufftReal*>(out)),
                   "cufftExecC2R");
      else
        fft::check(fft::cufft().cufftExecZ2D(h, z(in), static_cast<cufftDoubleReal*>(out)),
                   "cufftExecZ2D");
      break;
  }
}

class Runner {
 public:
  Runner(const fft::Program& p, int device, const void* in, void* out)
      : p_(p), device_(device), in_(in), out_(out) {}

  void run() {
    for (const auto& op : p_.ops) std::visit([this](const auto& o) { step(o); }, op);
  }

 private:
  // The input is only ever read: by pads, and by the first pass, which is C2C or R2C out of
  // place (cuFFT leaves their input intact); C2R always reads the scratch copy.
  void* data(BufferId b) {
    if (b == BufferId::In) return const_cast<void*>(in_);
    if (b == BufferId::Out) return out_;
    auto& temp = b == BufferId::Scratch     ? scratch_
                 : b == BufferId::Half      ? half_
                 : b == BufferId::Converted ? converted_
                                            : staging_;
    if (!temp)
      temp = allocate(device_, static_cast<size_t>(p_.info(b).elements) * p_.element_bytes(b));
    return temp->data();
  }
  fft::Elements kind(BufferId b) const { return {p_.info(b).complex, p_.precision}; }

  void step(const fft::PadOp& op) {
    if (op.src_shape == op.dst_shape && kind(op.src).complex == kind(op.dst).complex) {
      size_t bytes = static_cast<size_t>(shape_size(op.src_shape)) * p_.element_bytes(op.src);
      if (bytes)
        KILN_CUDA_CHECK(cudaMemcpyAsync(data(op.dst), data(op.src), bytes, cudaMemcpyDeviceToDevice,
                                        current_stream(device_)));
      return;
    }
    fft::pad_copy(device_, data(op.src), kind(op.src), op.src_shape, data(op.dst), kind(op.dst),
                  op.dst_shape);
  }

  void step(const fft::ExecOp& op) {
    fft::PlanRef plan = fft::acquire_plan(op.plan, device_);
    std::lock_guard lock(plan->exec_mutex());
    size_t in_bytes = p_.element_bytes(op.in), out_bytes = p_.element_bytes(op.out);
    for (int64_t i = 0; i < op.loops; ++i)
      exec_once(plan->handle(), op.plan, at(data(op.in), i * op.in_step, in_bytes),
                at(data(op.out), i * op.out_step, out_bytes), op.inverse);
  }

  void step(const fft::ConvertOp& op) {
    fft::convert_input(device_, in_, op.from, data(BufferId::Converted), p_.precision,
                       p_.in.elements);
  }

  void step(const fft::ZeroImagOp& op) { fft::zero_imag(device_, data(op.buf), p_.precision, op); }

  void step(const fft::HermitianOp& op) {
    fft::expand_hermitian(device_, data(op.src), data(op.dst), p_.precision, op);
  }

  void step(const fft::ScaleOp& op) {
    int64_t reals = p_.info(op.buf).elements * (p_.info(op.buf).complex ? 2 : 1);
    fft::scale(device_, data(op.buf), p_.precision, reals, op.factor);
  }

  const fft::Program& p_;
  int device_;
  const void* in_;
  void* out_;
  std::shared_ptr<graph::Buffer> scratch_, staging_, half_, converted_;  // freed in stream order
};

// Load callbacks (integer input converted as cuFFT reads it) need cuFFT to JIT-link kiln's
// LTO-IR, which needs nvJitLink at run time. KILN_FFT_LOAD_CALLBACKS=0 turns them off (a
// cast pass instead; no JIT link when plans are made); a failed link turns them off for the
// rest of the process, with one warning.
std::atomic<bool>& load_callbacks_on() {
  static std::atomic<bool> on = [] {
    const char* v = std::getenv("KILN_FFT_LOAD_CALLBACKS");
    return !(v && std::string(v) == "0");
  }();
  return on;
}

void turn_load_callbacks_off(const std::exception& why) {
  if (load_callbacks_on().exchange(false))
    std::fprintf(stderr,
                 "kiln: cuFFT could not use kiln's load callback (%s); integer FFT input is "
                 "now cast in a pass of its own\n",
                 why.what());
}

std::vector<fft::PlanSpec> callback_plans(const fft::Program& p) {
  std::vector<fft::PlanSpec> specs;
  for (const fft::Op& op : p.ops)
    if (const auto* exec = std::get_if<fft::ExecOp>(&op); exec && exec->plan.load_from)
      specs.push_back(exec->plan);
  return specs;
}

}  // namespace

void run_fft(const plan::FftStep& step, const plan::PlanBuffer& in_desc, const void* in,
             const plan::PlanBuffer& out_desc, void* out, int device) {
  if (shape_size(out_desc.shape) == 0) return;  // an empty batch: nothing to transform
  fft::Program program = fft::make_program(step, in_desc, out_desc, load_callbacks_on());
  set_device(device);
  const auto callbacks = callback_plans(program);
  // A plan with a load callback takes cuFFT's JIT link to make (the process's first one also
  // loads nvJitLink: about 600 ms on the H200 machine, against about 400 for the whole first
  // transform without it). The first result must not wait for that: the first transform of a
  // layout casts its input in a pass of its own, and the next one makes the callback plan. (A
  // worker thread making it at once was tried on the H200: one of four benchmark processes died
  // in glibc's mutex owner assertion, likely exiting while the worker was inside cuFFT's link;
  // static destructors of what the link loads cannot be ordered after joining it.)
  if (!callbacks.empty() && !fft::plans_cached(callbacks, device) &&
      fft::first_request(callbacks, device)) {
    Runner(fft::make_program(step, in_desc, out_desc, false), device, in, out).run();
    return;
  }
  try {
    Runner(program, device, in, out).run();
  } catch (const OutOfMemory&) {
    throw;
  } catch (const CudaError& e) {
    // The callback plan is made before anything is written (its ExecOp is the first to read
    // the input), so the step can run again from the start without callbacks.
    if (callbacks.empty()) throw;
    turn_load_callbacks_off(e);
    Runner(fft::make_program(step, in_desc, out_desc, false), device, in, out).run();
  }
}

}  // namespace kiln::gpu
