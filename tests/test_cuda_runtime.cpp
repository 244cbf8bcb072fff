// The CUDA runtime layer: errors, device contexts, the device and pinned allocators, copies,
// the LRU cache of library plans.
// GPU cases say they are skipped when no GPU is found; the no-GPU cases run everywhere.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cuda/lru_cache.hpp"
#include "cuda/runtime.hpp"
#include "cuda/warm_up.hpp"
#include "kiln/device.hpp"
#include "kiln/errors.hpp"
#include "support/child_case.hpp"
#include "support/gpu.hpp"

using namespace kiln;

namespace {

constexpr size_t kMiB = size_t{1} << 20, kGiB = size_t{1} << 30;

std::vector<unsigned char> pattern(size_t n, uint32_t seed) {
  std::vector<unsigned char> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& c : v) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<unsigned char>(x >> 24);
  }
  return v;
}

template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// Host memory of one kind: pinned (kiln's cache) or pageable (a vector).
struct HostBytes {
  std::shared_ptr<graph::Buffer> pinned;
  std::vector<unsigned char> pageable;
  unsigned char* data() {
    return pinned ? static_cast<unsigned char*>(pinned->data()) : pageable.data();
  }
};

HostBytes host_bytes(size_t n, bool pinned) {
  HostBytes h;
  if (pinned)
    h.pinned = gpu::allocate_pinned(n);
  else
    h.pageable.resize(n);
  return h;
}

}  // namespace

TEST_CASE("check() names the call, the error and CUDA's message") {
  CHECK_NOTHROW(gpu::check(cudaSuccess, "fine()"));
  std::string msg = message_of([] { gpu::check(cudaErrorInvalidValue, "x()"); });
  CHECK(msg.find("x()") != std::string::npos);
  CHECK(msg.find("cudaErrorInvalidValue") != std::string::npos);
  CHECK(msg.find("invalid argument") != std::string::npos);
  CHECK_THROWS_AS(gpu::check(cudaErrorInvalidValue, "x()"), CudaError);
  CHECK_THROWS_AS(KILN_CUDA_CHECK(cudaErrorMemoryAllocation), OutOfMemory);
  msg = message_of([] { KILN_CUDA_CHECK(cudaErrorIllegalAddress); });
  CHECK(msg.find("restart") != std::string::npos);
}

TEST_CASE("device() rejects indices that name no device, saying how many there are") {
  int n = cuda_device_count();
  for (int bad : {-1, n, n + 7}) {
    std::string msg = message_of([bad] { gpu::device(bad); });
    CHECK_THROWS_AS(gpu::device(bad), DeviceError);
    CHECK(msg.find(std::to_string(n) + " ") != std::string::npos);
  }
}

TEST_CASE("library plan cache: hits, least recently used evicted first, by count and by cost") {
  kiln::gpu::LruCache<int> cache(2, 100);
  int made = 0;
  auto get = [&](int64_t key, size_t cost = 10) {
    return *cache.acquire(
        {key}, [&] { return std::make_shared<int>(static_cast<int>(key) * 10 + made++); },
        [cost](const int&) { return cost; });
  };
  CHECK(get(1) == 10);
  CHECK(get(2) == 21);
  CHECK(get(1) == 10);  // a hit: 1 is now the most recently used
  CHECK(get(3) == 32);  // evicts 2, the least recently used
  auto i = cache.info();
  CHECK((i.entries == 2 && i.cost == 20 && i.hits == 1 && i.misses == 3));
  CHECK(get(1) == 10);
  CHECK(get(2) == 23);      // made again
  CHECK(get(4, 95) == 44);  // over the cost cap: evicts until the sum fits, 4 itself stays
  i = cache.info();
  CHECK((i.entries == 1 && i.cost == 95));
  cache.set_limits(0);  // caching off: each value is made anew, and still handed out
  CHECK(get(4) == 45);
  CHECK(cache.info().entries == 0);
  cache.set_limits(8);
  get(5);
  get(6);
  cache.clear();
  i = cache.info();
  CHECK((i.entries == 0 && i.cost == 0 && i.max_entries == 8));
}

NO_GPU_TEST_CASE("without a GPU: devices are refused, pinned memory falls back to host memory") {
  CHECK_THROWS_AS(gpu::device(0), DeviceError);
  CHECK_THROWS_AS(gpu::set_device(0), DeviceError);
  CHECK_THROWS_AS(gpu::allocate(0, 16), DeviceError);
  CHECK_THROWS_AS(gpu::cached_bytes(0), DeviceError);
  CHECK_THROWS_AS(gpu::synchronize(0), DeviceError);
  std::vector<char> bytes(8);
  CHECK_THROWS_AS(gpu::copy_to_device(0, bytes.data(), bytes.data(), 8, false), DeviceError);
  CHECK_THROWS_AS(gpu::copy_to_host(0, bytes.data(), bytes.data(), 8, true), DeviceError);
  CHECK(message_of([] { gpu::device(0); }).find("0 devices") != std::string::npos);
  CHECK(gpu::initialized_device(0) == nullptr);

  auto b = gpu::allocate_pinned(1000);
  REQUIRE(b->data() != nullptr);
  CHECK(b->nbytes == 1000);
  CHECK(b->device == kiln::host());
  CHECK_FALSE(b->pinned);
  CHECK(reinterpret_cast<uintptr_t>(b->data()) % 64 == 0);
  std::memset(b->data(), 7, 1000);
  CHECK(static_cast<unsigned char*>(b->data())[999] == 7);
  CHECK(gpu::allocate_pinned(0)->data() == nullptr);
  CHECK(gpu::pinned_cached_bytes() == 0);
  gpu::release_pinned_cache();
}

GPU_TEST_CASE("device contexts: initialised once, even when threads race for it") {
  std::vector<const gpu::DeviceInfo*> seen(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) threads.emplace_back([&, t] { seen[t] = &gpu::device(0); });
  for (auto& t : threads) t.join();
  for (auto* p : seen) CHECK(p == seen[0]);
  const gpu::DeviceInfo& d = *seen[0];
  CHECK(gpu::initialized_device(0) == &d);
  CHECK(d.index == 0);
  CHECK(d.sm_count > 0);
  CHECK(d.cc_major >= 5);
  CHECK(d.total_memory > 0);
  CHECK(d.stream != nullptr);
  unsigned flags = 0;
  CHECK(cudaStreamGetFlags(d.stream, &flags) == cudaSuccess);
  CHECK(flags == cudaStreamNonBlocking);
  MESSAGE("cuda:0: ", d.sm_count, " SMs, sm_", d.cc_major, d.cc_minor, ", ", d.total_memory / kMiB,
          " MiB");
}

GPU_TEST_CASE("allocate: zero bytes, device tag, cache grows on free and is reused") {
  auto empty = gpu::allocate(0, 0);
  CHECK(empty->data() == nullptr);
  CHECK(empty->device == kiln::cuda(0));

  gpu::release_cache(0);
  const size_t n = 64 * kMiB;
  auto a = gpu::allocate(0, n);
  REQUIRE(a->data() != nullptr);
  CHECK(a->nbytes == n);
  CHECK(a->device == kiln::cuda(0));
  a.reset();
  gpu::synchronize(0);
  size_t cached = gpu::cached_bytes(0);
  CHECK(cached >= n);
  auto b = gpu::allocate(0, n);  // served from the cache: nothing new is reserved
  CHECK(gpu::cached_bytes(0) + n <= cached);
  b.reset();
  gpu::release_cache(0);
  CHECK(gpu::cached_bytes(0) < n);
}

// Blocks up to 32 MiB are recycled by kiln on the stream that freed them (a size class is 512
// bytes up to 1 MiB, then an eighth of the power of two below the size), so a mid-sized
// evaluation makes no pool call: the block comes back to an allocation of its class, it counts
// as cached while it waits, and release_cache hands it back.
GPU_TEST_CASE("allocate: a freed block up to 32 MiB goes to the next allocation of its class") {
  gpu::release_cache(0);
  const size_t before = gpu::cached_bytes(0);
  auto a = gpu::allocate(0, 3 * kMiB + 1);  // class 3.25 MiB (steps of 256 KiB above 2 MiB)
  void* p = a->data();
  a.reset();
  CHECK(gpu::cached_bytes(0) >= before + 3 * kMiB + kMiB / 4);
  auto b = gpu::allocate(0, 3 * kMiB + kMiB / 5);  // the same class: the same block
  CHECK(b->data() == p);
  CHECK(b->nbytes == 3 * kMiB + kMiB / 5);
  b.reset();
  auto c = gpu::allocate(0, 3 * kMiB + kMiB / 2);  // the next class: not that block
  CHECK(c->data() != p);
  c.reset();
  gpu::release_cache(0);
  CHECK(gpu::cached_bytes(0) < 3 * kMiB);
  // A recycled block holds all it was asked for: written and read back whole, twice.
  const size_t n = 5 * kMiB + 3;
  std::vector<unsigned char> in(n), out(n);
  for (size_t i = 0; i < n; ++i) in[i] = static_cast<unsigned char>(i * 7 + 1);
  for (int round = 0; round < 2; ++round) {
    auto d = gpu::allocate(0, n);
    gpu::copy_to_device(0, d->data(), in.data(), n, false);
    gpu::copy_to_host(0, out.data(), d->data(), n, false);
    CHECK(out == in);
  }
}

GPU_TEST_CASE("allocate: out of memory is a clear error, and later allocations still work") {
  const size_t total = gpu::device(0).total_memory;
  std::string msg = message_of([&] { gpu::allocate(0, 2 * total); });
  CHECK_THROWS_AS(gpu::allocate(0, 2 * total), OutOfMemory);
  CHECK(msg.find("asked for " + std::to_string(2 * total)) != std::string::npos);
  CHECK(msg.find("free of") != std::string::npos);
  MESSAGE(msg);
  CHECK(cudaGetLastError() == cudaSuccess);

  // Fill the card in 4 GiB pieces until it refuses, then check that freeing makes room again.
  std::vector<std::shared_ptr<graph::Buffer>> held;
  bool refused = false;
  for (size_t i = 0; i < total / (4 * kGiB) + 4 && !refused; ++i) {
    try {
      held.push_back(gpu::allocate(0, 4 * kGiB));
    } catch (const OutOfMemory&) {
      refused = true;
    }
  }
  CHECK(refused);
  MESSAGE("held ", held.size(), " x 4 GiB before running out");
  held.clear();
  auto after = gpu::allocate(0, 4 * kGiB);
  CHECK(after->data() != nullptr);
  std::vector<unsigned char> in = pattern(4096, 1), out(4096);
  gpu::copy_to_device(0, after->data(), in.data(), in.size(), false);
  gpu::copy_to_host(0, out.data(), after->data(), out.size(), false);
  CHECK(in == out);
  after.reset();
  gpu::release_cache(0);
}

// The child half of the next case, run only by it (in a fresh process): device set-up, then
// what the pinned cache holds.
TEST_CASE("fresh process child: the pinned cache after device set-up" * doctest::skip()) {
  gpu::device(0);
  CHECK(gpu::pinned_cached_bytes() == 64 * 1024);
}

// The process's first page-locked allocation costs about a millisecond: device set-up makes it
// on a thread of its own and leaves its block cached for a first small result.
GPU_TEST_CASE("device set-up leaves one 64 KiB pinned block in the cache") {
  CHECK(
      test_support::run_case_in_child("fresh process child: the pinned cache after device set-up"));
}

TEST_CASE("KILN_PRELOAD: the libraries it names, in its order; none; unknown names left out") {
  using V = std::vector<std::string>;
  CHECK(gpu::preload_list(nullptr) == V{"nvrtc", "cufft"});
  CHECK(gpu::preload_list("cufft,nvrtc") == V{"cufft", "nvrtc"});
  CHECK(gpu::preload_list("nvrtc") == V{"nvrtc"});
  CHECK(gpu::preload_list("none").empty());
  CHECK(gpu::preload_list("").empty());
  CHECK(gpu::preload_list("cufft,cublas") == V{"cufft"});
}

namespace {

bool mapped(const std::string& library) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find(library) != std::string::npos) return true;
  return false;
}

// Whether `library` is mapped within 20 s (the warm-up thread's loads take milliseconds).
bool mapped_soon(const std::string& library) {
  for (int i = 0; i < 2000 && !mapped(library); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return mapped(library);
}

}  // namespace

// The child half of the next case (a fresh process): device set-up loads what KILN_PRELOAD
// names on its thread, and nothing else. The thread loads in order, so once the last library
// named is mapped, an unnamed one would have been too.
TEST_CASE("fresh process child: device set-up loads what KILN_PRELOAD names" * doctest::skip()) {
  const std::string setting = std::getenv("KILN_PRELOAD");
  REQUIRE(!mapped("libcufft.so"));
  gpu::device(0);
  if (setting == "cufft") {
    CHECK(mapped_soon("libcufft.so"));
  } else {
    REQUIRE(setting == "nvrtc");
    CHECK(mapped_soon("libnvrtc.so"));
    CHECK_FALSE(mapped("libcufft.so"));
  }
}

GPU_TEST_CASE("device set-up loads cuFFT ahead when KILN_PRELOAD names it, only then") {
  const char* before = std::getenv("KILN_PRELOAD");
  const std::string saved = before ? before : "";
  for (const char* setting : {"cufft", "nvrtc"}) {
    CAPTURE(setting);
    ::setenv("KILN_PRELOAD", setting, 1);
    CHECK(test_support::run_case_in_child(
        "fresh process child: device set-up loads what KILN_PRELOAD names"));
  }
  if (before)
    ::setenv("KILN_PRELOAD", saved.c_str(), 1);
  else
    ::unsetenv("KILN_PRELOAD");
}

// The child half of the next case: the warm-up starts (as at a first GPU touch), then the
// process exits after KILN_TEST_EXIT_AFTER_US microseconds, while the thread may be loading.
TEST_CASE("fresh process child: exit while the warm-up loads" * doctest::skip()) {
  const auto after = std::chrono::microseconds(std::atoi(std::getenv("KILN_TEST_EXIT_AFTER_US")));
  gpu::warm_up_in_background();
  const auto end = std::chrono::steady_clock::now() + after;
  while (std::chrono::steady_clock::now() < end) {
  }
}

// A process that exits while the warm-up thread is inside a library's initialiser must end
// cleanly: exit destroys the statics a library registered while initialising, so it waits for
// the thread first (common/background.hpp). Exits spread over the loads' first 30 ms. (No GPU: the
// warm-up is started directly.)
TEST_CASE("a process exiting while the warm-up loads NVRTC and cuFFT ends cleanly") {
  int clean = 0;
  const int processes = 60;
  for (int i = 0; i < processes; ++i) {
    ::setenv("KILN_TEST_EXIT_AFTER_US", std::to_string(i * 30000 / processes).c_str(), 1);
    clean += test_support::run_case_in_child("fresh process child: exit while the warm-up loads",
                                             std::chrono::seconds(30));
  }
  ::unsetenv("KILN_TEST_EXIT_AFTER_US");
  CHECK(clean == processes);
}

GPU_TEST_CASE("pinned memory: host-tagged, cached by size class and reused") {
  gpu::release_pinned_cache();
  CHECK(gpu::pinned_cached_bytes() == 0);
  auto a = gpu::allocate_pinned(3 * kMiB - 100);
  REQUIRE(a->data() != nullptr);
  CHECK(a->device == kiln::host());
  CHECK(a->pinned);
  CHECK(a->nbytes == 3 * kMiB - 100);
  void* p = a->data();
  a.reset();
  CHECK(gpu::pinned_cached_bytes() >= 3 * kMiB - 100);
  auto b = gpu::allocate_pinned(3 * kMiB - 7);  // same class
  CHECK(b->data() == p);
  cudaPointerAttributes attr{};
  CHECK(cudaPointerGetAttributes(&attr, b->data()) == cudaSuccess);
  CHECK(attr.type == cudaMemoryTypeHost);
  b.reset();
  gpu::release_pinned_cache();
  CHECK(gpu::pinned_cached_bytes() == 0);
  CHECK(gpu::allocate_pinned(0)->data() == nullptr);
}

GPU_TEST_CASE("round trips through the device, pinned and pageable, are byte-exact") {
  const size_t stage = 16 * kMiB;  // transfer.cpp's staging buffer size
  for (size_t n : {size_t{0}, size_t{1}, size_t{4095}, 10 * kMiB + 3, 2 * stage, 3 * stage + 1,
                   stage + 10 * kMiB + 3})
    for (bool src_pinned : {false, true})
      for (bool dst_pinned : {false, true}) {
        CAPTURE(n);
        CAPTURE(src_pinned);
        CAPTURE(dst_pinned);
        std::vector<unsigned char> expect = pattern(n, static_cast<uint32_t>(n));
        HostBytes src = host_bytes(n, src_pinned), dst = host_bytes(n, dst_pinned);
        if (n) std::memcpy(src.data(), expect.data(), n);
        auto dev = gpu::allocate(0, n);
        gpu::copy_to_device(0, dev->data(), src.data(), n, src_pinned);
        gpu::copy_to_host(0, dst.data(), dev->data(), n, dst_pinned);
        CHECK((n == 0 || std::memcmp(dst.data(), expect.data(), n) == 0));
      }
}

GPU_TEST_CASE("copy_to_device: the source may be reused as soon as the call returns") {
  const size_t n = 10 * kMiB + 3;
  std::vector<unsigned char> expect = pattern(n, 42), back(n);
  auto dev = gpu::allocate(0, n);

  // Pageable: returns only after the source was read, so overwriting it is harmless.
  std::vector<unsigned char> pageable = expect;
  gpu::copy_to_device(0, dev->data(), pageable.data(), n, false);
  std::memset(pageable.data(), 0xAB, n);
  gpu::copy_to_host(0, back.data(), dev->data(), n, false);
  CHECK(back == expect);

  // Pinned: the copy may still be queued, but a freed block is not handed out again (and so
  // not overwritten) before the stream has passed the copy.
  auto big = gpu::allocate(0, 256 * kMiB);  // queue work ahead of the copy
  std::vector<unsigned char> junk(256 * kMiB, 1);
  gpu::copy_to_device(0, big->data(), junk.data(), junk.size(), false);
  auto pinned = gpu::allocate_pinned(n);
  std::memcpy(pinned->data(), expect.data(), n);
  void* p = pinned->data();
  gpu::copy_to_device(0, dev->data(), pinned->data(), n, true);
  pinned.reset();
  auto reused = gpu::allocate_pinned(n);
  CHECK(reused->data() == p);
  std::memset(reused->data(), 0xCD, n);
  gpu::copy_to_host(0, back.data(), dev->data(), n, false);
  CHECK(back == expect);
}

GPU_TEST_CASE("many threads allocate, copy and free concurrently") {
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      try {
        std::vector<std::shared_ptr<graph::Buffer>> keep;
        for (int i = 0; i < 200; ++i) {
          size_t n = size_t{1} << (10 + (i * 7 + t) % 13);  // 1 KiB .. 4 MiB
          auto b = gpu::allocate(0, n);
          if (i % 3 == 0) keep.push_back(b);
          if (i % 50 == 0) {
            auto in = pattern(n, static_cast<uint32_t>(t * 1000 + i));
            std::vector<unsigned char> out(n);
            auto pinned = gpu::allocate_pinned(n);
            std::memcpy(pinned->data(), in.data(), n);
            gpu::copy_to_device(0, b->data(), pinned->data(), n, true);
            gpu::copy_to_host(0, out.data(), b->data(), n, false);
            if (out != in) ++failures;
          }
        }
      } catch (...) {
        ++failures;
      }
    });
  for (auto& t : threads) t.join();
  CHECK(failures == 0);
  gpu::release_cache(0);
}

MULTI_GPU_TEST_CASE("kiln's calls leave the caller's current device alone") {
  gpu::set_device(1);
  auto b = gpu::allocate(0, kMiB);
  b.reset();
  int current = -1;
  CHECK(cudaGetDevice(&current) == cudaSuccess);
  CHECK(current == 1);
  gpu::set_device(0);
}
