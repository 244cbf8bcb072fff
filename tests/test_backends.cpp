// The engine's backends (src/plan/backend.hpp) seen directly: what the host backend and a CUDA
// backend copy, and what preparing a group reports, which KILN_DEBUG prints for each launch.
// Evaluation through them is what the rest of the suite tests.
#include <doctest/doctest.h>

#include <cstdint>
#include <kiln/kiln.hpp>
#include <numeric>
#include <vector>

#include "cuda/executor.hpp"
#include "cuda/kernels.hpp"
#include "graph/host_buffer.hpp"
#include "graph/node.hpp"
#include "plan/planner.hpp"
#include "runtime/backends.hpp"
#include "runtime/host_backend.hpp"
#include "support/gpu.hpp"

namespace {

namespace plan = kiln::plan;
namespace runtime = kiln::runtime;
using plan::KernelOrigin;

std::vector<uint8_t> bytes(size_t n) {
  std::vector<uint8_t> v(n);
  std::iota(v.begin(), v.end(), uint8_t{7});
  return v;
}

// Copies `src` into memory of backend b and back; returns what came back.
std::vector<uint8_t> round_trip(plan::Backend& b, const std::vector<uint8_t>& src,
                                bool* in_flight) {
  auto buf = b.allocate(src.size());
  *in_flight = b.copy_from_host(buf->data(), src.data(), src.size(), false);
  std::vector<uint8_t> back(src.size());
  b.copy_to_host(back.data(), buf->data(), src.size(), false);
  return back;
}

// The one kernel step of the plan that evaluates `a`.
plan::Plan plan_of(const kiln::Array& a) { return plan::make_plan({a.node()}); }
const plan::KernelStep& only_kernel(const plan::Plan& p) {
  const plan::KernelStep* k = nullptr;
  for (const auto& s : p.steps)
    if (auto* step = std::get_if<plan::KernelStep>(&s)) {
      REQUIRE(!k);
      k = step;
    }
  REQUIRE(k);
  return *k;
}

}  // namespace

TEST_CASE("each origin the kernel cache reports is the backend origin of the same name") {
  const std::string name = "k";
  using kiln::jit::Origin;
  CHECK(kiln::gpu::prepared_group({&name, Origin::Compiled}).origin == KernelOrigin::Compiled);
  CHECK(kiln::gpu::prepared_group({&name, Origin::Memory}).origin == KernelOrigin::Memory);
  CHECK(kiln::gpu::prepared_group({&name, Origin::Disk}).origin == KernelOrigin::Disk);
}

TEST_CASE("the host backend copies host bytes both ways, and no copy is left in flight") {
  plan::Backend& host = runtime::backend_for(kiln::host());
  auto src = bytes(1000);
  bool in_flight = true;
  CHECK(round_trip(host, src, &in_flight) == src);
  CHECK_FALSE(in_flight);
}

// A fresh large block costs the kernel zeroing its pages at first touch, so freed ones are
// kept (src/graph/host_buffer.cpp): the next request of that size gets the same memory, a
// request while it is held gets other memory, on a huge-page boundary.
TEST_CASE("host memory: a large block freed is handed out again at the same size") {
  const size_t big = (size_t{5} << 20) + 3;
  void* first = nullptr;
  {
    auto b = kiln::cpu::allocate(big);
    first = b->data();
    static_cast<char*>(first)[big - 1] = 1;
  }
  auto again = kiln::cpu::allocate(big);
  CHECK(again->data() == first);
  CHECK(again->nbytes == big);
  auto other = kiln::cpu::allocate(big);
  CHECK(other->data() != first);
  CHECK(reinterpret_cast<uintptr_t>(other->data()) % (size_t{2} << 20) == 0);
}

TEST_CASE("the host compiles a group's kernel for KILN_JIT_ARCH only where there is no GPU") {
  auto x = kiln::asarray(std::vector<float>{1, 2, 3}).eval();
  auto y = x * 3.0f + 0.5f;  // one fused group, never evaluated by another test
  plan::Plan p = plan_of(y);
  const plan::KernelStep& k = only_kernel(p);
  plan::Backend& host = runtime::backend_for(kiln::host());
  plan::PreparedGroup first = host.prepare(k);
  plan::PreparedGroup again = host.prepare(k);
  if (runtime::compile_only_arch().empty()) {  // a GPU, or no KILN_JIT_ARCH: nothing compiled
    CHECK(first.origin == KernelOrigin::None);
    CHECK(*first.name == k.group.name);
    CHECK(first.source == nullptr);
  } else {  // the kernel's name is the group's with its hash
    CHECK(first.origin != KernelOrigin::None);
    CHECK(first.name->starts_with(k.group.name + "_"));
    CHECK(again.origin == KernelOrigin::Memory);  // kept in the step
    CHECK(again.source == nullptr);               // generated once, by the first
  }
}

GPU_TEST_CASE("a CUDA backend copies host bytes to its device and back") {
  plan::Backend& gpu = runtime::backend_for(kiln::cuda());
  auto src = bytes(3 << 20);  // larger than one pinned staging block
  bool in_flight = true;
  CHECK(round_trip(gpu, src, &in_flight) == src);
  CHECK_FALSE(in_flight);  // a pageable source has been read when the copy returns
  // A pinned source may still be read by DMA: the caller must synchronize before reusing it.
  auto pinned = runtime::allocate(kiln::host(), 64);
  auto dev = gpu.allocate(64);
  CHECK(pinned->pinned);
  CHECK(gpu.copy_from_host(dev->data(), pinned->data(), 64, true));
  gpu.synchronize();
}
