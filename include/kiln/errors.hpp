// kiln's exceptions. Every message says what was wrong and what to do about it.
#pragma once
#include <stdexcept>
#include <string>

namespace kiln {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Shapes that cannot broadcast, bad axes, out-of-range indices, reshape size mismatch.
struct ShapeError : Error {
  using Error::Error;
};
// A dtype an operation does not accept, or a value that does not fit a dtype.
struct DTypeError : Error {
  using Error::Error;
};
// Arrays on different devices in one operation, or a CUDA device where none exists.
struct DeviceError : Error {
  using Error::Error;
};
// NVRTC rejected generated or user source; the message carries the log and the saved source.
struct CompileError : Error {
  using Error::Error;
};
// A CUDA runtime or library call failed: names the call, the code and the message.
struct CudaError : Error {
  using Error::Error;
};
// Device or pinned memory exhausted after the allocator released its cache and retried.
struct OutOfMemory : Error {
  using Error::Error;
};

}  // namespace kiln
