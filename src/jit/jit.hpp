// NVRTC compilation to SASS and the kernel cache (memory map in front of a disk directory).
// Inputs are hashed, never outputs: the key covers the source, the embedded kernels/ headers,
// the options, NVRTC's version, the target arch and the cache format version.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::jit {

enum class Origin : uint8_t { Compiled, Memory, Disk };

struct Request {
  std::string name;     // the __global__ function's name (extern "C"), e.g. k_sin_mul_f32_3fa2
  std::string source;   // complete CUDA C++ translation unit; may #include kernels/ headers
  std::string summary;  // one line saying what the kernel computes, kept in the cache entry
  std::string arch;     // "sm_90"; empty means target_arch()
  std::vector<std::string> options;  // extra NVRTC options beyond the arch
  std::string dtypes;  // what it reads and writes, "i64 f32 -> f64", kept in the cache entry
};

struct Kernel {
  std::string key;  // hex hash of the inputs
  std::string name;
  // SASS for the arch; NUL-terminated PTX for a compute_XX arch; LTO-IR when the options hold
  // -dlto (a device function for cuFFT's JIT callbacks).
  std::vector<char> cubin;
  double compile_ms = 0;  // what compiling it cost (when it was compiled)
};

struct Result {
  const Kernel* kernel;  // owned by the cache; lives until the process ends
  Origin origin;
};

// Finds or compiles the kernel. Thread-safe; concurrent requests for one key compile it once.
// Throws kiln::CompileError with NVRTC's log and the path where the failing source was saved,
// and kiln::DeviceError when the arch is empty and target_arch() finds none.
Result get(const Request& r);

// Where r's kernel is now, without compiling or counting a use: "memory", "disk", or "" when
// a first evaluation would compile it (what kiln::explain reports).
std::string cached_where(const Request& r);

// The embedded kernels/*.cuh headers (name, text), given to NVRTC as include files.
struct Header {
  const char* name;
  const char* text;
};
const std::vector<Header>& embedded_headers();

// The arch to compile for: KILN_JIT_ARCH when set, else the current device's (sm_XX);
// empty when there is neither a GPU nor KILN_JIT_ARCH.
std::string target_arch();

// Test hooks. clear_memory_cache() forgets the in-memory kernels, so the next get() goes to
// disk (pointers already handed out stay valid). reinitialize_for_testing() also appends the
// pending hits to the usage log, re-reads KILN_CACHE, KILN_CACHE_DIR and KILN_CACHE_MAX_BYTES,
// resets the stats and re-arms the once-per-process warning.
void clear_memory_cache();
void reinitialize_for_testing();

}  // namespace kiln::jit
