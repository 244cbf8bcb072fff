// Streams and events (kiln/stream.hpp): kiln's work inside a StreamScope of the program's stream
// is ordered after what the program queued before and before what it queues after, with no
// device synchronisation; events order kiln streams; memory read on one stream and freed on
// another is not reused early; threads evaluate on streams of their own at once; eval() returns
// while the GPU is still held back. Expected values are direct formulas or the host executor.
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <kiln/kiln.hpp>
#include <thread>
#include <vector>

#include "graph/node.hpp"
#include "support/gpu.hpp"
#include "support/stream_gate.hpp"

namespace {

using kiln::Array;
using kiln::DType;
using kiln::test_support::Gate;

// The program's own stream and device memory, as a program using CUDA has them.
struct CallerStream {
  cudaStream_t s = nullptr;
  CallerStream() { REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess); }
  ~CallerStream() { cudaStreamDestroy(s); }
};
struct DeviceMemory {
  void* p = nullptr;
  explicit DeviceMemory(size_t bytes) { REQUIRE(cudaMalloc(&p, bytes) == cudaSuccess); }
  ~DeviceMemory() { cudaFree(p); }
};
// Page-locked host memory: a copy to pageable memory returns only when it is done, so queued
// behind a closed gate it would wait for the gate the calling thread opens after it.
struct PinnedFloats {
  float* p = nullptr;
  explicit PinnedFloats(int64_t n) {
    REQUIRE(cudaMallocHost(reinterpret_cast<void**>(&p), n * sizeof(float)) == cudaSuccess);
    std::fill(p, p + n, -1.0f);
  }
  ~PinnedFloats() { cudaFreeHost(p); }
};

// The float every byte of which is `byte` (what cudaMemset writes), from its bits.
float float_of_bytes(unsigned char byte) {
  const uint32_t bits = 0x01010101u * byte;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// The device address of an evaluated array without waiting for it (Array::data() would wait).
const void* address(const Array& a) { return a.node()->storage()->data(); }

}  // namespace

TEST_CASE("streams are for GPUs: the host, a null stream and a missing GPU are clear errors") {
  CHECK_THROWS_WITH_AS(kiln::Stream::create(kiln::host()), doctest::Contains("is the host"),
                       kiln::DeviceError);
  CHECK_THROWS_AS(kiln::stream(kiln::host()), kiln::DeviceError);
  if (kiln::cuda_available())
    CHECK_THROWS_WITH_AS(kiln::Stream::wrap(nullptr, kiln::cuda()),
                         doctest::Contains("the stream is null"), kiln::Error);
  else
    CHECK_THROWS_AS(kiln::Stream::create(kiln::cuda()), kiln::DeviceError);
}

// The tests' own instrument, with CUDA alone: work behind a gate, and work on another stream
// waiting for an event recorded behind it, has not run until the gate opens.
GPU_TEST_CASE("the gate holds a stream and what waits for it, until released") {
  CallerStream held, waiting;
  Gate gate;
  gate.close_on(held.s);
  cudaEvent_t behind = nullptr, done = nullptr;
  REQUIRE(cudaEventCreateWithFlags(&behind, cudaEventDisableTiming) == cudaSuccess);
  REQUIRE(cudaEventCreateWithFlags(&done, cudaEventDisableTiming) == cudaSuccess);
  DeviceMemory mem(1 << 20);
  REQUIRE(cudaEventRecord(behind, held.s) == cudaSuccess);
  REQUIRE(cudaStreamWaitEvent(waiting.s, behind, 0) == cudaSuccess);
  REQUIRE(cudaMemsetAsync(mem.p, 1, 1 << 20, waiting.s) == cudaSuccess);
  REQUIRE(cudaEventRecord(done, waiting.s) == cudaSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(cudaEventQuery(behind) == cudaErrorNotReady);
  CHECK(cudaEventQuery(done) == cudaErrorNotReady);
  cudaGetLastError();
  gate.release();
  REQUIRE(cudaEventSynchronize(done) == cudaSuccess);
  CHECK(gate.released_by_test);
  cudaEventDestroy(behind);
  cudaEventDestroy(done);
}

GPU_TEST_CASE("the current stream: kiln's own outside scopes, the scope's inside, nested") {
  kiln::Stream own = kiln::stream(kiln::cuda());
  kiln::Stream a = kiln::Stream::create(kiln::cuda()), b = kiln::Stream::create(kiln::cuda());
  CHECK(!(a == b));
  {
    kiln::StreamScope in_a(a);
    CHECK(kiln::stream(kiln::cuda()) == a);
    {
      kiln::StreamScope in_b(b);
      CHECK(kiln::stream(kiln::cuda()) == b);
    }
    CHECK(kiln::stream(kiln::cuda()) == a);
  }
  CHECK(kiln::stream(kiln::cuda()) == own);
  CallerStream caller;
  kiln::Stream wrapped = kiln::Stream::wrap(caller.s, kiln::cuda());
  CHECK(wrapped.native() == static_cast<void*>(caller.s));
  kiln::StreamScope in_caller(wrapped);
  CHECK(kiln::stream(kiln::cuda()).native() == static_cast<void*>(caller.s));
}

GPU_TEST_CASE("in a scope of the program's stream, kiln reads what the program wrote just before") {
  const int64_t n = int64_t{1} << 24;
  DeviceMemory mem(n * sizeof(float));
  REQUIRE(cudaMemset(mem.p, 0, n * sizeof(float)) == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  Array x = kiln::wrap(mem.p, DType::Float32, {n}, kiln::cuda());
  CallerStream caller;
  // The kernel loaded first: CUDA may wait for the device before it loads a module, and the
  // gate below is only opened by this thread.
  CHECK(kiln::sum(x.astype(DType::Float64) * 2.0).item<double>() == 0.0);
  Gate gate;
  gate.close_on(caller.s);  // the program's stream is busy...
  // ...then writes bytes 0x3f everywhere: each float is 0x3f3f3f3f.
  REQUIRE(cudaMemsetAsync(mem.p, 0x3f, n * sizeof(float), caller.s) == cudaSuccess);
  const float v = float_of_bytes(0x3f);
  Array total;
  {
    kiln::StreamScope scope(kiln::Stream::wrap(caller.s, kiln::cuda()));
    total = kiln::sum(x.astype(DType::Float64) * 2.0);  // exact: n * 2v needs 48 bits
    total.eval();  // queued behind the program's write: eval() returns with the GPU held back
    gate.release();
  }
  CHECK(gate.released_by_test);
  CHECK(total.item<double>() == 2.0 * static_cast<double>(v) * n);
}

// Without a gate: a long queue of the program's writes (64 of 256 MB, tens of milliseconds),
// the last one the pattern kiln must see, then kiln's evaluation in the program's scope.
GPU_TEST_CASE("in a scope of the program's stream, kiln reads after a long queue of its writes") {
  const int64_t n = int64_t{1} << 26;
  DeviceMemory mem(n * sizeof(float));
  Array x = kiln::wrap(mem.p, DType::Float32, {n}, kiln::cuda());
  CallerStream caller;
  const float v = float_of_bytes(0x3f);
  for (int round = 0; round < 3; ++round) {
    for (int k = 0; k < 64; ++k)  // bytes 0x00..0x3e, then 0x3f
      REQUIRE(cudaMemsetAsync(mem.p, k % 0x3f, n * sizeof(float), caller.s) == cudaSuccess);
    REQUIRE(cudaMemsetAsync(mem.p, 0x3f, n * sizeof(float), caller.s) == cudaSuccess);
    kiln::StreamScope scope(kiln::Stream::wrap(caller.s, kiln::cuda()));
    CHECK(kiln::sum(x.astype(DType::Float64)).item<double>() == static_cast<double>(v) * n);
    REQUIRE(cudaMemsetAsync(mem.p, 0, n * sizeof(float), caller.s) == cudaSuccess);
  }
  REQUIRE(cudaStreamSynchronize(caller.s) == cudaSuccess);
}

GPU_TEST_CASE("the program's work queued after kiln's in the scope sees kiln's results") {
  const int64_t n = int64_t{1} << 25;
  Array x = kiln::arange(0, n, 1, DType::Float32, kiln::cuda()).eval();
  kiln::synchronize(kiln::cuda());
  CallerStream caller;
  Gate gate;
  PinnedFloats back(n);
  {
    kiln::StreamScope scope(kiln::Stream::wrap(caller.s, kiln::cuda()));
    // Its kernel loaded first: CUDA may wait for the device when it loads a module.
    (x * 3.0f + 1.0f).eval();
    kiln::synchronize(kiln::cuda());
    gate.close_on(caller.s);  // kiln's evaluation below waits for this...
    Array y = (x * 3.0f + 1.0f).eval();
    // ...and the program's copy, queued on its own stream, waits for kiln's evaluation.
    REQUIRE(cudaMemcpyAsync(back.p, address(y), n * sizeof(float), cudaMemcpyDeviceToHost,
                            caller.s) == cudaSuccess);
    gate.release();
  }
  REQUIRE(cudaStreamSynchronize(caller.s) == cudaSuccess);
  CHECK(gate.released_by_test);
  for (int64_t i = 0; i < n; i += 99991) CHECK(back.p[i] == 3.0f * static_cast<float>(i) + 1.0f);
}

GPU_TEST_CASE("events: a point on one stream that another waits for, and the host") {
  kiln::Stream a = kiln::Stream::create(kiln::cuda()), b = kiln::Stream::create(kiln::cuda());
  CallerStream caller;
  kiln::Stream program = kiln::Stream::wrap(caller.s, kiln::cuda());
  (kiln::arange(0, 1000, 1, DType::Int64, kiln::cuda()) * 7).eval();  // its kernel loaded first
  Gate gate;
  gate.close_on(caller.s);
  kiln::Event held = kiln::Event::record(program);
  held.wait(a);  // a's next work starts after the program's gate opens
  Array x;
  {
    kiln::StreamScope in_a(a);
    x = (kiln::arange(0, 1000, 1, DType::Int64, kiln::cuda()) * 7).eval();
  }
  kiln::Event done = kiln::Event::record(a);
  CHECK(!done.ready());  // certain: a waits for the gate, which only this thread opens
  gate.release();
  done.synchronize();
  CHECK(done.ready());
  // b reads x (made on a) after an event, and without one: kiln orders both.
  done.wait(b);
  kiln::StreamScope in_b(b);
  CHECK(kiln::sum(x).item<int64_t>() == 7 * 999 * 1000 / 2);
}

GPU_TEST_CASE("memory read on one stream is not reused before that read, whoever frees it") {
  const int64_t n = int64_t{1} << 26;
  kiln::Stream a = kiln::Stream::create(kiln::cuda());
  Array x_host = kiln::sin(kiln::arange(0, n, 1, DType::Float32)) * 0.5f;
  // The same evaluation on kiln's own stream first: the expected bits (the GPU's exp may differ
  // from the host's in the last place) and its kernels loaded (see the first gated case).
  const double want =
      kiln::sum(kiln::exp(kiln::asarray(x_host, kiln::cuda())).astype(DType::Float64))
          .item<double>();
  kiln::full({n}, 1e30f, DType::Float32, kiln::cuda()).eval();
  Gate gate;
  CallerStream caller;
  Array result;
  {
    kiln::StreamScope in_a(a);
    Array x = kiln::asarray(x_host, kiln::cuda()).eval();
    {
      kiln::StreamScope in_b(kiln::Stream::wrap(caller.s, kiln::cuda()));
      gate.close_on(caller.s);  // b's read of x is held back...
      result = kiln::sum(kiln::exp(x).astype(DType::Float64)).eval();
    }
    x = Array();  // ...while x is dropped on stream a, and a allocates and writes again
    for (int i = 0; i < 4; ++i) kiln::full({n}, 1e30f, DType::Float32, kiln::cuda()).eval();
    gate.release();
  }
  CHECK(gate.released_by_test);
  CHECK(result.item<double>() == want);  // 1e30 read anywhere would make it inf
}

GPU_TEST_CASE("threads evaluate at once, each on a stream of its own") {
  constexpr int kThreads = 4, kRounds = 20;
  std::vector<int64_t> got(kThreads * kRounds, -1);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      kiln::StreamScope scope(kiln::Stream::create(kiln::cuda()));
      for (int r = 0; r < kRounds; ++r) {
        const int64_t n = 100000 + 1000 * t + r;
        Array x = kiln::arange(0, n, 1, DType::Int64, kiln::cuda());
        got[t * kRounds + r] = kiln::sum(x * (t + 1) + r).item<int64_t>();
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t)
    for (int r = 0; r < kRounds; ++r) {
      const int64_t n = 100000 + 1000 * t + r;
      CHECK(got[t * kRounds + r] == (t + 1) * n * (n - 1) / 2 + r * n);
    }
}

GPU_TEST_CASE("cuFFT, the random step and copies follow the scope's stream; eval() does not wait") {
  CallerStream caller;
  Gate gate;
  Array spectrum, draw, host_copy;
  const Array signal = kiln::cos(kiln::arange(0, 4096, 1, DType::Float64) * 0.25);
  {
    kiln::StreamScope scope(kiln::Stream::wrap(caller.s, kiln::cuda()));
    // Kernels loaded and cuFFT's plan for this stream made first (both may wait for the device).
    kiln::abs(kiln::fft::fft(kiln::asarray(signal, kiln::cuda()))).eval();
    kiln::random::Generator(1, kiln::cuda()).uniform(0.0, 1.0, {1000}).eval();
    kiln::synchronize(kiln::cuda());
    gate.close_on(caller.s);
    Array on_gpu = kiln::asarray(signal, kiln::cuda());  // a copy from pinned memory: no wait
    spectrum = kiln::abs(kiln::fft::fft(on_gpu)).eval();
    draw = kiln::random::Generator(1234, kiln::cuda()).uniform(0.0, 1.0, {1000}).eval();
    gate.release();
  }
  CHECK(gate.released_by_test);
  CHECK(kiln::allclose(spectrum.get(), kiln::abs(kiln::fft::fft(signal)), 1e-9, 1e-9));
  CHECK(kiln::array_equal(draw.get(),
                          kiln::random::Generator(1234, kiln::host()).uniform(0.0, 1.0, {1000})));
}
