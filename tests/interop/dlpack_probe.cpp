// A shared library through which tests/interop/dlpack_roundtrip.py (ctypes) hands kiln's DLPack
// tensors to NumPy, PyTorch and CuPy and theirs to kiln: a C interface with no Python in it.
// Errors come back as a null or -1 result, the message in kiln_probe_error().
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <kiln/kiln.hpp>
#include <string>
#include <vector>

namespace {

thread_local std::string last_error;

kiln::DType dtype_named(const char* name) {
  for (kiln::DType t : kiln::kAllDTypes)
    if (std::strcmp(kiln::dtype_name(t), name) == 0) return t;
  throw kiln::DTypeError(std::string("dlpack_probe: no dtype named ") + name);
}

kiln::Array import_tensor(void* tensor, int versioned) {
  return versioned ? kiln::from_dlpack(static_cast<DLManagedTensorVersioned*>(tensor))
                   : kiln::from_dlpack(static_cast<DLManagedTensor*>(tensor));
}

// The array's elements as float64 in C order into out[0, n); -1 when the sizes differ.
int copy_out(const kiln::Array& a, double* out, int64_t n) {
  if (a.size() != n)
    throw kiln::ShapeError("dlpack_probe: the array has " + std::to_string(a.size()) +
                           " elements, not " + std::to_string(n));
  kiln::Array values = kiln::is_complex(a.dtype()) ? kiln::real(a) : a;
  std::vector<double> v = values.to_vector<double>();
  std::copy(v.begin(), v.end(), out);
  return 0;
}

template <class F>
auto guarded(F&& f, decltype(f()) failed) {
  try {
    return f();
  } catch (const std::exception& e) {
    last_error = e.what();
    return failed;
  }
}

}  // namespace

extern "C" {

const char* kiln_probe_error() { return last_error.c_str(); }

// arange(rows * cols) as (rows, cols) in the named dtype, times `scale`, on the GPU when gpu is
// set: a DLManagedTensor (or a versioned one) the caller hands to a consumer.
void* kiln_probe_export(const char* dtype, int64_t rows, int64_t cols, double scale, int gpu,
                        int versioned) {
  return guarded(
      [&]() -> void* {
        kiln::Device d = gpu ? kiln::cuda() : kiln::host();
        kiln::Array a = (kiln::arange(0, rows * cols, 1, kiln::DType::Float64, d) * scale)
                            .reshape({rows, cols})
                            .astype(dtype_named(dtype));
        if (versioned) return kiln::to_dlpack_versioned(a);
        return kiln::to_dlpack(a);
      },
      nullptr);
}

// Imports a consumer's tensor (kiln owns it afterwards) and writes its elements as float64, the
// real parts of complex ones, in C order; `device` gets "host" or "cuda:0".
int kiln_probe_read(void* tensor, int versioned, double* out, int64_t n, char* device,
                    int64_t device_size) {
  return guarded(
      [&] {
        kiln::Array a = import_tensor(tensor, versioned);
        std::snprintf(device, static_cast<size_t>(device_size), "%s", a.device().str().c_str());
        return copy_out(a, out, n);
      },
      -1);
}

// Imports a tensor and keeps the array (a heap kiln::Array) for a later read, after the
// producer's own handle is gone.
void* kiln_probe_hold(void* tensor, int versioned) {
  return guarded([&]() -> void* { return new kiln::Array(import_tensor(tensor, versioned)); },
                 nullptr);
}
int kiln_probe_read_held(void* held, double* out, int64_t n) {
  return guarded([&] { return copy_out(*static_cast<kiln::Array*>(held), out, n); }, -1);
}
void kiln_probe_release(void* held) { delete static_cast<kiln::Array*>(held); }
}
