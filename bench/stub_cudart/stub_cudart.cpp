// A stand-in for the CUDA runtime that does no GPU work, to profile the host side of kiln's GPU
// path on a machine without a GPU (the GPU machines have no perf):
//
//   LD_PRELOAD=build/lib/libkiln_stub_cudart.so KILN_JIT_ARCH=sm_90 perf record ... gpu_bench tiny
//
// Preloaded, it answers the runtime calls kiln makes (bench/stub_cudart/README.md lists them):
// one device shaped like an H200, device memory from malloc, copies and sets done by memcpy and
// memset at once, launches, events and streams that return at once. Kernels do not run, so
// results are garbage and nothing here is a test: what it measures is kiln's own host time
// around each CUDA call (a real launch adds the runtime's ~2-4 us). Only kiln's figures under it
// mean anything; gpu_bench's bare launches time a call that does nothing.
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>

#include <sys/mman.h>

namespace {

int current_device = 0;
thread_local cudaError_t last_error = cudaSuccess;

// Opaque handles: distinct non-null addresses that are never dereferenced.
char handles[64];
template <class T>
T handle(int k) {
  return reinterpret_cast<T>(&handles[k]);
}

// A real launch runs ~2-4 us of the driver's code, which evicts much of what kiln's host path
// keeps in the CPU's caches, code and data; on a GPU machine each evaluation then finds its
// own cold. To model that, each launch touches KILN_STUB_LAUNCH_KB KiB of the stub's own memory
// (a line at a time) and runs KILN_STUB_LAUNCH_CODE_KB KiB of no-ops: kiln's time per
// evaluation beside the bare launch's, both under the same eviction, says what kiln's
// footprint costs. Unset or 0: launches touch nothing.
struct Eviction {
  size_t lines = 0;
  char* data = nullptr;
  void (*code)() = nullptr;

  static size_t kib(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::strtoul(v, nullptr, 10) * 1024 : 0;
  }
  Eviction() {
    lines = kib("KILN_STUB_LAUNCH_KB") / 64;
    if (lines) data = static_cast<char*>(std::calloc(lines, 64));
    if (size_t n = kib("KILN_STUB_LAUNCH_CODE_KB")) {
      void* p = mmap(nullptr, n + 1, PROT_READ | PROT_WRITE | PROT_EXEC,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) return;
      std::memset(p, 0x90, n);                   // nop
      static_cast<unsigned char*>(p)[n] = 0xc3;  // ret
      code = reinterpret_cast<void (*)()>(p);
    }
  }
  void run() const {
    for (size_t i = 0; i < lines; ++i) {
      volatile char* c = data + 64 * i;
      *c = static_cast<char>(*c + 1);
    }
    if (code) code();
  }
};
const Eviction eviction;

void* aligned(size_t n) {
  void* p = nullptr;
  return posix_memalign(&p, 256, n ? n : 1) == 0 ? p : nullptr;
}

}  // namespace

extern "C" {

cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  *device = current_device;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (device != 0) return last_error = cudaErrorInvalidDevice;
  current_device = device;
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* version) {
  *version = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int device) {
  if (device != 0) return last_error = cudaErrorInvalidDevice;
  std::memset(p, 0, sizeof *p);
  std::strcpy(p->name, "kiln stub runtime (no GPU)");
  p->major = 9;
  p->minor = 0;
  p->multiProcessorCount = 132;
  p->totalGlobalMem = size_t{141} << 30;
  p->sharedMemPerBlock = 48 << 10;
  p->sharedMemPerBlockOptin = 227 << 10;
  p->sharedMemPerMultiprocessor = 228 << 10;
  p->maxThreadsPerBlock = 1024;
  p->maxThreadsPerMultiProcessor = 2048;
  p->regsPerBlock = 65536;
  p->warpSize = 32;
  p->l2CacheSize = 60 << 20;
  p->memoryBusWidth = 5120;
  p->maxGridSize[0] = 0x7fffffff;
  p->maxGridSize[1] = p->maxGridSize[2] = 65535;
  p->maxThreadsDim[0] = p->maxThreadsDim[1] = 1024;
  p->maxThreadsDim[2] = 64;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (device != 0) return last_error = cudaErrorInvalidDevice;
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  switch (attr) {
    case cudaDevAttrMultiProcessorCount:
      *value = p.multiProcessorCount;
      break;
    case cudaDevAttrComputeCapabilityMajor:
      *value = p.major;
      break;
    case cudaDevAttrComputeCapabilityMinor:
      *value = p.minor;
      break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
      *value = static_cast<int>(p.sharedMemPerBlockOptin);
      break;
    case cudaDevAttrMaxThreadsPerBlock:
      *value = p.maxThreadsPerBlock;
      break;
    default:
      *value = 1;  // supported (memory pools, ...)
  }
  return cudaSuccess;
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int) {
  *pool = handle<cudaMemPool_t>(0);
  return cudaSuccess;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t, cudaMemPoolAttr, void*) { return cudaSuccess; }

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t, cudaMemPoolAttr, void* value) {
  *static_cast<unsigned long long*>(value) = 0;
  return cudaSuccess;
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t, size_t) { return cudaSuccess; }

cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  *free = *total = size_t{141} << 30;
  return cudaSuccess;
}

cudaError_t cudaMalloc(void** p, size_t n) {
  *p = aligned(n);
  return *p ? cudaSuccess : (last_error = cudaErrorMemoryAllocation);
}

cudaError_t cudaMallocFromPoolAsync(void** p, size_t n, cudaMemPool_t, cudaStream_t) {
  return cudaMalloc(p, n);
}

cudaError_t cudaFree(void* p) {
  std::free(p);
  return cudaSuccess;
}

cudaError_t cudaFreeAsync(void* p, cudaStream_t) { return cudaFree(p); }

cudaError_t cudaHostAlloc(void** p, size_t n, unsigned) { return cudaMalloc(p, n); }

cudaError_t cudaFreeHost(void* p) { return cudaFree(p); }

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n, cudaMemcpyKind, cudaStream_t) {
  std::memcpy(dst, src, n);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* p, int value, size_t n, cudaStream_t) {
  std::memset(p, value, n);
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) {
  static int next = 1;
  *s = handle<cudaStream_t>(next++ % 32 + 1);
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned) { return cudaSuccess; }
cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned) {
  *e = handle<cudaEvent_t>(40);
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t) { return cudaSuccess; }
cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }

cudaError_t cudaLibraryLoadData(cudaLibrary_t* lib, const void*, cudaJitOption*, void**, unsigned,
                                cudaLibraryOption*, void**, unsigned) {
  *lib = handle<cudaLibrary_t>(50);
  return cudaSuccess;
}

cudaError_t cudaLibraryGetKernel(cudaKernel_t* k, cudaLibrary_t, const char*) {
  *k = handle<cudaKernel_t>(51);
  return cudaSuccess;
}

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* a, const void*) {
  std::memset(a, 0, sizeof *a);
  a->maxThreadsPerBlock = 1024;
  a->numRegs = 32;
  return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void*, cudaFuncAttribute, int) { return cudaSuccess; }

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* blocks, const void*,
                                                                   int block_size, size_t,
                                                                   unsigned) {
  *blocks = block_size > 0 ? 2048 / block_size : 1;
  return cudaSuccess;
}

cudaError_t cudaLaunchKernel(const void*, dim3, dim3, void**, size_t, cudaStream_t) {
  eviction.run();
  return cudaSuccess;
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t*, const void*, void**) {
  eviction.run();
  return cudaSuccess;
}

cudaError_t cudaGetLastError() {
  cudaError_t e = last_error;
  last_error = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError() { return last_error; }

const char* cudaGetErrorName(cudaError_t) { return "cudaErrorStub"; }
const char* cudaGetErrorString(cudaError_t) { return "an error of kiln's stub CUDA runtime"; }

}  // extern "C"
