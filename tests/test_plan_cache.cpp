// The plan cache: a graph whose structure was planned before reuses that plan, bound to its own
// buffers, scalars and random draws. Every rebinding must give this graph's values. Reuse, the
// bound on the cache's size and the guard against hash collisions are seen through the cache's
// counters (runtime/plan_cache.hpp); each structure below is used by one test case only, so that
// its first evaluation is a miss.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <kiln/kiln.hpp>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "graph/node.hpp"
#include "plan/planner.hpp"
#include "runtime/host_backend.hpp"
#include "runtime/pipeline.hpp"
#include "runtime/plan_cache.hpp"
#include "support/gpu.hpp"

using kiln::Array;
using kiln::DType;
namespace runtime = kiln::runtime;

namespace {

// The cache's counters from zero, and no forced hash after the test, whatever it did.
struct CountFromZero {
  CountFromZero() { runtime::reset_plan_cache_counters(); }
  ~CountFromZero() { runtime::force_plan_hash_for_testing(std::nullopt); }
  CountFromZero(const CountFromZero&) = delete;
  CountFromZero& operator=(const CountFromZero&) = delete;
};

void check_counters(int64_t misses, int64_t hits, int64_t collisions = 0) {
  auto c = runtime::plan_cache_counters();
  CHECK(c.misses == misses);
  CHECK(c.hits == hits);
  CHECK(c.collisions == collisions);
}

}  // namespace

// What each run reads of a plan, worked out once by make_plan (plan::RunIndex), against the
// plan's own buffers and steps.
TEST_CASE("plan index: bytes and devices per buffer, bytes per step") {
  auto x = kiln::arange(0, 1001, 1, DType::Float64).eval();
  auto y = x("1:") * 2 + x(":-1");  // one kernel reading x twice
  auto hold = runtime::hold_evaluation();
  kiln::graph::Signature sig;
  runtime::Request req = runtime::to_realize({y.node()}, &sig);
  kiln::plan::Plan p = runtime::cached_plan(req.nodes, sig, req.held);
  const auto& index = p.index;
  REQUIRE(index.buffer_bytes.size() == p.buffers.size());
  REQUIRE(index.step_bytes.size() == p.steps.size());
  int64_t written = 0;
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const auto& b = p.buffers[i];
    CHECK(index.buffer_bytes[i] == kiln::shape_size(b.shape) * kiln::itemsize(b.dtype));
    CHECK(index.devices[index.buffer_device[i]] == b.device);
  }
  CHECK(index.devices == std::vector<kiln::Device>{kiln::host()});
  for (size_t i = 0; i < p.steps.size(); ++i)
    if (std::holds_alternative<kiln::plan::KernelStep>(p.steps[i])) written += index.step_bytes[i];
  CHECK(written == 8008 + 8000);  // x once, the result once
  CHECK(index.checked_steps.empty());
}

TEST_CASE("plan cache: same structure, new scalars") {
  auto x = kiln::arange(0, 10, 1, DType::Float64).eval();
  CountFromZero counting;
  kiln::reset_engine_stats();
  for (int k = 1; k <= 5; ++k) {
    auto y = (x * k + (2 * k)).to_vector<double>();  // one structure, five sets of scalars
    for (int i = 0; i < 10; ++i) CHECK(y[i] == i * k + 2 * k);
  }
  check_counters(1, 4);  // planned once, then reused
  CHECK(kiln::engine_stats().plans == 5);
}

TEST_CASE("plan cache: same structure, new buffers") {
  std::vector<Array> inputs;
  for (int k = 0; k < 4; ++k) inputs.push_back(kiln::full({3, 4}, k, DType::Int64).eval());
  CountFromZero counting;
  for (int k = 0; k < 4; ++k) {
    auto v = kiln::sum(inputs[k] * inputs[k], {1}).to_vector<int64_t>();
    for (auto e : v) CHECK(e == 4 * k * k);
  }
  check_counters(1, 3);
}

TEST_CASE("plan cache: the structural signature tells a+a from a+b") {
  auto a = kiln::arange(5).eval(), b = (kiln::arange(5) * 10).eval();
  auto s1 = kiln::graph::signature({(a + a).node()});
  auto s2 = kiln::graph::signature({(a + b).node()});
  CHECK(s1.hash != s2.hash);
  CHECK((a + a).to_vector<int64_t>()[4] == 8);
  CHECK((a + b).to_vector<int64_t>()[4] == 44);
  // Same structure, other values: same hash.
  auto c = kiln::arange(5).eval();
  CHECK(kiln::graph::signature({(c + b * 3).node()}).hash ==
        kiln::graph::signature({(a + c * 7).node()}).hash);
}

// The signature walks a node reached through its only reference without recording it
// (graph/signature.cpp): a node the graph reaches twice, and nothing else holds, must still be
// told from two distinct nodes of its structure, and its values bound once.
TEST_CASE("plan cache: a subexpression shared by two edges, its handle dropped") {
  auto x = kiln::arange(0, 6, 1, DType::Float64).eval();
  auto shared = [&](double c) {
    Array t = x * c + 1;
    return t * t;  // t's only references are now the product's two inputs
  };
  auto apart = [&](double c, double d) { return (x * c + 1) * (x * d + 1); };
  CHECK(kiln::graph::signature({shared(2).node()}).hash ==
        kiln::graph::signature({shared(3).node()}).hash);
  CHECK(kiln::graph::signature({shared(2).node()}).hash !=
        kiln::graph::signature({apart(2, 3).node()}).hash);
  CHECK(kiln::graph::signature({shared(2).node()}).values.size() == 3);  // x, 2 and 1
  CountFromZero counting;
  for (double c : {2.0, 3.0, 5.0}) {
    auto v = shared(c).to_vector<double>();
    for (int i = 0; i < 6; ++i) CHECK(v[i] == (i * c + 1) * (i * c + 1));
    auto w = apart(c, c + 1).to_vector<double>();
    for (int i = 0; i < 6; ++i) CHECK(w[i] == (i * c + 1) * (i * (c + 1) + 1));
  }
  check_counters(2, 4);  // one plan each for the two structures
}

// A constant operand is the binary node's immediate (graph::ImmediateAttrs). Equal constants of
// a dtype are one kernel parameter, so which constants are equal is structure: x * 2 + 2 and
// x * 3 + 3 share a plan of one parameter, x * 2 + 3 has its own of two. Each rebinding must
// give this graph's values.
TEST_CASE("plan cache: equal constants are one parameter, and the structure says which") {
  auto x = kiln::arange(0, 8, 1, DType::Float32).eval();
  auto params = [](const Array& a) {
    kiln::plan::Plan p = kiln::plan::make_plan({a.node()});
    REQUIRE(p.steps.size() == 1);
    return std::get<kiln::plan::KernelStep>(p.steps[0]).group.params.size();
  };
  CHECK(params(x * 2.0f + 2.0f) == 1);
  CHECK(params(x * 2.0f + 3.0f) == 2);
  auto hash = [](const Array& a) { return kiln::graph::signature({a.node()}).hash; };
  CHECK(hash(x * 2.0f + 2.0f) == hash(x * 3.0f + 3.0f));
  CHECK(hash(x * 2.0f + 2.0f) != hash(x * 2.0f + 3.0f));
  CountFromZero counting;
  // Equal, unequal, equal, unequal: each pattern planned once.
  using Pair = std::pair<float, float>;
  for (auto [a, b] : {Pair{2.0f, 2.0f}, Pair{2.0f, 3.0f}, Pair{5.0f, 5.0f}, Pair{0.5f, -1.0f}}) {
    auto v = (x * a + b).to_vector<float>();
    for (int i = 0; i < 8; ++i) CHECK(v[i] == float(i) * a + b);
  }
  check_counters(2, 2);
}

TEST_CASE("plan cache: a constant's side is structure, its value and Python kind are not") {
  auto x = kiln::arange(0, 6, 1, DType::Float64).eval();
  auto hash = [](const Array& a) { return kiln::graph::signature({a.node()}).hash; };
  CHECK(hash(2.0 - x) != hash(x - 2.0));
  CHECK(hash(2.0 - x) == hash(7.0 - x));
  CHECK(hash(x > 2) == hash(x > 2.5));  // an int and a float constant, both float64 here
  CountFromZero counting;
  for (double c : {2.0, 7.0}) {
    auto left = (c - x).to_vector<double>(), right = (x - c).to_vector<double>();
    for (int i = 0; i < 6; ++i) {
      CHECK(left[i] == c - i);
      CHECK(right[i] == i - c);
    }
  }
  check_counters(2, 2);
  // A comparison's constant has the compared dtype, not the result's (bool).
  auto gt_int = (x > 2).to_vector<bool>(), gt_float = (x > 2.5).to_vector<bool>();
  for (int i = 0; i < 6; ++i) {
    CHECK(gt_int[i] == (i > 2));
    CHECK(gt_float[i] == (i > 2.5));
  }
  check_counters(3, 3);
}

// An immediate and a Scalar node (where's operand) of one value and dtype are one parameter too.
TEST_CASE("plan cache: an immediate and an equal Scalar node share a parameter") {
  auto x = kiln::arange(-3, 3, 1, DType::Float64).eval();
  kiln::plan::Plan p = kiln::plan::make_plan({kiln::where(x > 0, x, 0).node()});
  REQUIRE(p.steps.size() == 1);
  CHECK(std::get<kiln::plan::KernelStep>(p.steps[0]).group.params.size() == 1);
  CountFromZero counting;
  for (double c : {1.0, -1.0}) {
    auto v = kiln::where(x > c, x, c).to_vector<double>();
    for (int i = 0; i < 6; ++i) CHECK(v[i] == (i - 3 > c ? i - 3 : c));
  }
  for (double c : {1.0, -1.0}) {
    auto v = kiln::where(x > c, x, 2 * c).to_vector<double>();
    for (int i = 0; i < 6; ++i) CHECK(v[i] == (i - 3 > c ? i - 3 : 2 * c));
  }
  check_counters(2, 2);
}

TEST_CASE("plan cache: random draws are rebound, not repeated") {
  CountFromZero counting;
  kiln::random::Generator g(7);
  auto r1 = (g.randint(0, 1000000, {64}) * 2 + 1).to_vector<int64_t>();
  auto r2 = (g.randint(0, 1000000, {64}) * 2 + 1).to_vector<int64_t>();
  CHECK(r1 != r2);
  kiln::random::Generator h(7);
  CHECK((h.randint(0, 1000000, {64}) * 2 + 1).to_vector<int64_t>() == r1);
  check_counters(1, 2);  // the second and third draws ran the first one's plan
}

TEST_CASE("plan cache: when full it is emptied, and a structure planned before is planned again") {
  auto x = kiln::arange(0, 7, 1, DType::Int64).eval();
  // The oldest structure. (k must differ from 1000: equal scalars are one node, which is
  // another structure.)
  auto s0 = [&](int64_t k) {
    auto v = (x * k - 1000).to_vector<int64_t>();
    bool right = v.size() == 7;
    for (int64_t i = 0; right && i < 7; ++i) right = v[i] == i * k - 1000;
    return right;
  };
  CountFromZero counting;
  CHECK(s0(2));
  CHECK(s0(3));
  check_counters(1, 1);
  // New structures (random draws of every length: no kernel to compile) until the cache, which
  // holds s0's plan and those of the cases before, reaches its bound and is emptied.
  kiln::random::Generator g(11);
  int64_t n = 0;
  while (runtime::plan_cache_counters().clears == 0 && n <= int64_t{runtime::kMaxCachedPlans})
    g.uniform(0, 1, {++n}).eval();
  REQUIRE(runtime::plan_cache_counters().clears == 1);
  CHECK(n <= int64_t{runtime::kMaxCachedPlans});  // at the bound, not later
  check_counters(1 + n, 1);
  CHECK(s0(5));  // made again, and right
  check_counters(2 + n, 1);
  CHECK(s0(6));  // and cached again
  check_counters(2 + n, 2);
  CHECK(runtime::plan_cache_counters().clears == 1);
}

TEST_CASE("plan cache: two structures under one hash are told apart by their inputs' types") {
  auto a = kiln::arange(0, 5, 1, DType::Float64).eval();
  auto b = kiln::arange(0, 3, 1, DType::Int64).eval();
  CountFromZero counting;
  runtime::force_plan_hash_for_testing(0x5eed);  // every structure collides with every other
  CHECK((a * 2.5).to_vector<double>() == std::vector<double>{0, 2.5, 5, 7.5, 10});
  check_counters(1, 0);
  // Same hash, other input dtype and shape: the cached plan is not used; a new one replaces it.
  CHECK((b + 7).to_vector<int64_t>() == std::vector<int64_t>{7, 8, 9});
  check_counters(2, 0, 1);
  CHECK((a * 0.5).to_vector<double>() == std::vector<double>{0, 0.5, 1, 1.5, 2});
  check_counters(3, 0, 2);
  CHECK((a * 4.0).to_vector<double>() == std::vector<double>{0, 4, 8, 12, 16});
  check_counters(3, 1, 2);  // the same structure again: a hit under the shared hash
}

// make_node hashes a node's own structure once (Node::local_hash) and its constant's value
// (Node::value_hash); the signature uses them instead of hashing those fields on every walk.
// What is kept must be what the fields hash to, for every kind of node, whether the node was
// just made, found again by hash-consing, or has had its input evaluated since; and it must
// hold a node's structure but none of its values.
TEST_CASE("plan cache: the hashes a node keeps are those of its fields") {
  namespace graph = kiln::graph;
  auto x = kiln::arange(0, 6, 1, DType::Float64).eval();
  auto m = kiln::arange(0, 6, 1, DType::Float32).reshape({2, 3});
  kiln::random::Generator g(3);
  std::vector<Array> nodes{x * 2.0,
                           2.0 - x,
                           x * 2.0,  // found again
                           kiln::where(x > 1, x, 0),
                           x.astype(DType::Float32),
                           kiln::sum(m, {1}),
                           m.transpose({1, 0}),
                           m(kiln::Slice(0, 2), kiln::Slice(1, 3)),
                           kiln::roll(x, 2),
                           g.uniform(0, 1, {4}),
                           kiln::sqrt(x + 1)};
  auto kept_is_fresh = [](const Array& a) {
    const graph::Node& n = *a.node();
    CHECK(n.local_hash == graph::local_structure_hash(n));
    CHECK(n.leaf_hash == graph::leaf_data_hash(n));
    bool constant = n.kind == graph::OpKind::Scalar || n.immediate();
    CHECK(n.value_hash == (constant ? graph::constant_hash(n) : 0));
  };
  for (const auto& a : nodes) kept_is_fresh(a);
  // Its input evaluated: the node's own part is unchanged (the signature sees the input anew).
  Array y = x + 1, z = y * 3.0;
  size_t local = z.node()->local_hash;
  y.eval();
  kept_is_fresh(z);
  kept_is_fresh(y);  // a leaf now: its data hash is its token in a signature
  CHECK(z.node()->local_hash == local);

  // Values are not structure: the constant, the draw.
  auto local_of = [](const Array& a) { return a.node()->local_hash; };
  CHECK(local_of(x * 2.0) == local_of(x * 3.0));
  CHECK((x * 2.0).node()->value_hash != (x * 3.0).node()->value_hash);
  CHECK(local_of(g.uniform(0, 1, {4})) == local_of(g.uniform(5, 7, {4})));
  // Structure is: side, operation, dtype, shape, attributes.
  CHECK(local_of(2.0 - x) != local_of(x - 2.0));
  CHECK(local_of(x * 2.0) != local_of(x + 2.0));
  CHECK(local_of(x * 2.0) != local_of(x.astype(DType::Float32) * 2.0f));
  CHECK(local_of(x * 2.0) != local_of(kiln::arange(0, 7, 1, DType::Float64) * 2.0));
  CHECK(local_of(kiln::sum(m, {1})) != local_of(kiln::sum(m, {0})));
  CHECK(local_of(g.uniform(0, 1, {4})) != local_of(g.uniform(0, 1, {5})));
}

// A node's kept hash leaves its inputs out, so an input evaluated after the node was built
// (its history dropped: a leaf now) counts as a leaf: the graph has the signature, and shares
// the plan, of the same structure built afresh on a leaf.
TEST_CASE(
    "plan cache: an input evaluated after its consumer was built is a leaf to the signature") {
  auto x = kiln::arange(0, 7, 1, DType::Float64).eval();
  // (7 elements: a structure no other case evaluates.)
  auto hash = [](const Array& a) { return kiln::graph::signature({a.node()}).hash; };
  Array y = x * 2.0;
  Array z = y + 1.0;
  const size_t built = hash(z);
  Array y3 = x * 3.0;  // held, as y is (a temporary's step would join it: an Affine node)
  CHECK(built == hash(y3 + 1.5));
  y.eval();
  CHECK(hash(z) != built);
  Array leaf = kiln::asarray(std::vector<double>{7, 6, 5, 4, 3, 2, 1});  // a Buffer leaf
  CHECK(hash(z) == hash(leaf + 4.0));
  CHECK(hash(z) == hash((x * 5.0).eval() + 4.0));  // an evaluated product: a leaf as well
  CountFromZero counting;
  auto v = z.to_vector<double>();
  for (int i = 0; i < 7; ++i) CHECK(v[i] == 2.0 * i + 1);
  auto w = (leaf + 4.0).to_vector<double>();
  for (int i = 0; i < 7; ++i) CHECK(w[i] == 11.0 - i);
  check_counters(1, 1);  // one plan: z's, reused for leaf + 4
}

TEST_CASE("transfer policy: explicit by default, and settable") {
  CHECK(kiln::get_transfer_policy() == kiln::TransferPolicy::Explicit);
  kiln::set_transfer_policy(kiln::TransferPolicy::Auto);
  CHECK(kiln::get_transfer_policy() == kiln::TransferPolicy::Auto);
  kiln::set_transfer_policy(kiln::TransferPolicy::Explicit);
  CHECK(kiln::get_transfer_policy() == kiln::TransferPolicy::Explicit);
}

GPU_TEST_CASE("transfer policy: Explicit refuses mixed devices, Auto copies the smaller operand") {
  auto big = kiln::arange(0, 1000, 1, DType::Float32, kiln::cuda());
  auto small = kiln::full({1000}, 2.0f, DType::Float32);
  CHECK_THROWS_AS((void)(big + small), kiln::DeviceError);
  kiln::set_transfer_policy(kiln::TransferPolicy::Auto);
  auto r = big * small;
  kiln::set_transfer_policy(kiln::TransferPolicy::Explicit);
  CHECK(r.device() == kiln::cuda());
  CHECK(r.get().to_vector<float>()[10] == 20.0f);
}

namespace {

// Four programs of one kernel each (different shapes, so four groups), used by this test only,
// on the device where kiln compiles kernels: the GPU, or the host under KILN_JIT_ARCH.
std::vector<Array> four_new_kernels(kiln::Device d) {
  auto x = kiln::linspace(-1, 1, 11, true, DType::Float32, d);
  auto y = kiln::linspace(0, 2, 13, true, DType::Float64, d);
  auto m = kiln::linspace(1, 6, 12, true, DType::Float32, d).reshape({3, 4});
  return {kiln::hypot(x, 0.75f) * kiln::cosh(x), kiln::sum(kiln::expm1(m) * 0.5f, {0}),
          kiln::log1p(y) - kiln::sinh(y), kiln::max(kiln::arctan(y * 3.0))};
}

}  // namespace

TEST_CASE("compile() plans and compiles without running; the evaluation after compiles nothing") {
  const bool gpu = kiln::cuda_available();
  if (!gpu && kiln::runtime::compile_only_arch().empty()) {
    MESSAGE("skipped: no GPU and no KILN_JIT_ARCH, so kiln compiles no kernel here");
    return;
  }
  const kiln::Device d = gpu ? kiln::cuda() : kiln::host();
  std::vector<Array> out = four_new_kernels(d);
  CountFromZero counting;
  kiln::cache::reset_stats();
  kiln::compile(out);
  // Each of the four kernels looked up once (compiled, or found on disk from an earlier run of
  // the suite), in one plan; nothing evaluated.
  auto s = kiln::cache::stats();
  CHECK(s.compiles + s.disk_hits + s.memory_hits == 4);
  check_counters(1, 0);
  for (const Array& a : out) CHECK(!a.node()->is_leaf());
  kiln::cache::reset_stats();
  kiln::eval(out);
  s = kiln::cache::stats();
  CHECK(s.compiles + s.disk_hits + s.memory_hits == 0);  // the plan's kernels were ready
  check_counters(1, 1);
  // The values, against the same arithmetic in double.
  auto v0 = out[0].get().to_vector<float>();
  for (int i = 0; i < 11; ++i) {
    double x = -1 + 0.2 * i;
    CHECK(v0[i] == doctest::Approx(std::hypot(x, 0.75) * std::cosh(x)).epsilon(1e-5));
  }
  auto v1 = out[1].get().to_vector<float>();
  for (int c = 0; c < 4; ++c) {
    double t = 0;
    for (int r = 0; r < 3; ++r) t += std::expm1(1 + 5.0 * (r * 4 + c) / 11) * 0.5;
    CHECK(v1[c] == doctest::Approx(t).epsilon(1e-5));
  }
  auto v2 = out[2].get().to_vector<double>();
  for (int i = 0; i < 13; ++i) {
    double y = 2.0 * i / 12;
    CHECK(v2[i] == doctest::Approx(std::log1p(y) - std::sinh(y)).epsilon(1e-12));
  }
  CHECK(out[3].get().item<double>() == doctest::Approx(std::atan(6.0)).epsilon(1e-12));
}

TEST_CASE("compile() of evaluated arrays, or of none, does nothing") {
  Array done = (kiln::arange(0, 5, 1, DType::Float64) * 2.0).eval();
  CountFromZero counting;
  kiln::compile({done});
  kiln::compile({});
  check_counters(0, 0);
  CHECK(done.to_vector<double>()[4] == 8.0);
}

TEST_CASE("compile(): a kernel that fails among several compiling at once throws its error") {
  const bool gpu = kiln::cuda_available();
  if (!gpu && kiln::runtime::compile_only_arch().empty()) {
    MESSAGE("skipped: no GPU and no KILN_JIT_ARCH, so kiln compiles no kernel here");
    return;
  }
  const kiln::Device d = gpu ? kiln::cuda() : kiln::host();
  auto x = kiln::linspace(0, 1, 9, true, DType::Float32, d);
  auto y = kiln::linspace(0, 1, 10, true, DType::Float64, d);
  Array bad = kiln::elementwise("x +* 2", {{"x", x}}, DType::Float32);  // does not compile
  Array good = kiln::tanh(y) * kiln::sinh(y) + 0.125;
  CHECK_THROWS_AS(kiln::compile({good, bad}), kiln::CompileError);
  // The other kernel compiled and stays usable; the failing one fails the same way again.
  CHECK(good.get().to_vector<double>()[9] ==
        doctest::Approx(std::tanh(1.0) * std::sinh(1.0) + 0.125));
  CHECK_THROWS_AS(bad.eval(), kiln::CompileError);
}

// Storing a result turns its node into a leaf and lets go of its inputs (graph::set_realized):
// every input's count is back where it was, and the node keeps its short list's memory for the
// node that reuses its block from the pool. (A long list: test_mesh's ten-rank collective.)
TEST_CASE("plan cache: an evaluated node lets go of its inputs") {
  auto x = kiln::arange(0, 4, 1, DType::Float64).eval();
  const long x_refs = x.node().use_count();
  Array y = x * 2.0 + x;
  CHECK(x.node().use_count() > x_refs);
  y.eval();
  CHECK(y.node()->is_leaf());
  CHECK(y.node()->inputs.empty());
  CHECK(y.node()->inputs.capacity() >= 2);
  CHECK(x.node().use_count() == x_refs);
  CHECK(y.to_vector<double>() == std::vector<double>{0, 3, 6, 9});
}

// A node that dies goes to its thread's pool still constructed (graph/draft.hpp), and the next
// node built may be that very block: it must carry nothing of what the block was (a result, an
// immediate, attributes, inputs, a count), and what it keeps must be its own hashes.
TEST_CASE("plan cache: a node built from a pooled block is a new node") {
  namespace graph = kiln::graph;
  auto x = kiln::arange(0, 5, 1, DType::Float64).eval();
  const graph::Node* first = nullptr;
  {
    Array dead = (x * 2.5).eval();  // an evaluated node with an immediate: a result, attrs
    first = dead.node().get();
    CHECK(dead.node()->is_leaf());
  }
  // Built right after: the block just freed is on top of the pool, so this is most likely it
  // (either way the node must be a fresh one).
  Array y = kiln::sqrt(x);
  const graph::Node& n = *y.node();
  INFO("reused the freed block: " << (&n == first));
  CHECK(!n.is_leaf());
  CHECK(n.realized() == nullptr);
  CHECK(n.immediate() == nullptr);
  CHECK(std::holds_alternative<std::monostate>(n.attrs));
  CHECK(n.args().size() == 1);
  CHECK(n.args()[0] == x.node());
  CHECK(n.shape == kiln::Shape{5});
  CHECK(y.node().use_count() == 1);
  CHECK(n.local_hash == graph::local_structure_hash(n));
  CHECK(n.leaf_hash == graph::leaf_data_hash(n));
  CHECK(n.value_hash == 0);
  CHECK(y.to_vector<double>() == std::vector<double>{0, 1, std::sqrt(2.0), std::sqrt(3.0), 2});
  // An equal expression found by hash-consing: its draft goes back to the pool, x keeps its
  // count (the draft's reference to x is released).
  const long x_refs = x.node().use_count();
  Array z = kiln::sqrt(x + 0.0) * 1.0;
  Array w = kiln::sqrt(x + 0.0) * 1.0;
  CHECK(z.node() == w.node());
  z = w = Array();
  CHECK(x.node().use_count() == x_refs);
}

// One output above a chain of one-input nodes (a loop's steps) is hashed without the walk's
// tables (graph/signature.cpp): it must give exactly what the walk gives (the hash and the
// values, in order), and leave to the walk what is no chain: a node below held by the program
// (the walk finds it), more distinct constants than the shortcut searches, two inputs.
TEST_CASE("plan cache: a chain's signature is the walk's") {
  namespace graph = kiln::graph;
  auto x = kiln::arange(0, 9, 1, DType::Float32).eval();
  using Build = Array (*)(const Array&);
  const Build chains[] = {
      [](const Array& a) { return a + 1.0f; },
      [](const Array& a) { return (a * 0.5f + 0.5f) * 0.5f + 0.25f; },  // an equal constant again
      [](const Array& a) { return kiln::sqrt(a * 2.0f) - 1.0f; },
      [](const Array& a) { return 3.0f - a.astype(DType::Float64) * 2.0; },  // a cast, a left side
      [](const Array& a) {  // one value in two dtypes: two constants
        return (a * 2.0f).astype(DType::Float64) * 2.0 + 2.0;
      },
      [](const Array& a) {
        return a.reshape({3, 3}).T() * 2.0f;
      },
      [](const Array& a) {  // 8 distinct constants, then the first again: the most a chain takes
        Array s = a;
        for (int i = 1; i <= 8; ++i) s = s * static_cast<float>(i);
        return s + 1.0f;
      },
      [](const Array& a) {  // 9 distinct: the walk's
        Array s = a;
        for (int i = 1; i <= 9; ++i) s = s * static_cast<float>(i);
        return s;
      },
      [](const Array& a) { return (a + a) * 2.0f; },  // two inputs below: the walk's
      [](const Array&) { return kiln::full({9}, 2.0f, DType::Float32) * 3.0f; },  // no leaf
  };
  for (size_t i = 0; i < std::size(chains); ++i) {
    INFO("chain " << i);
    Array z = chains[i](x);
    std::vector<graph::NodeRef> held, walked_held;
    graph::Signature fast = graph::signature({z.node()}, &held);
    graph::Signature walked = graph::walked_signature({z.node()}, &walked_held);
    CHECK(held.empty());
    CHECK(walked_held.empty());
    CHECK(fast.hash == walked.hash);
    CHECK(fast.values == walked.values);
    if (i != 9) CHECK(fast.values.front().node == x.node().get());  // the leaf, first
  }
  // Chains that differ only in which constants are equal differ in structure.
  auto hash_of = [](const Array& a) { return graph::signature({a.node()}).hash; };
  CHECK(hash_of(x * 2.0f + 2.0f) != hash_of(x * 2.0f + 3.0f));
  CHECK(hash_of(x * 2.0f + 3.0f) == hash_of(x * 5.0f + 7.0f));
  CHECK(graph::signature({(x * 2.0f + 2.0f).node()}).values.size() == 2);  // x and 2
  // x, 2 as float32, 2 as float64 (the product's and the sum's, one parameter)
  CHECK(graph::signature({chains[3](x).node()}).values.size() == 3);
  // A node below the output held by the program: the walk runs and finds it.
  Array t = x * 2.0f;
  Array z = t + 1.0f;
  std::vector<graph::NodeRef> held;
  graph::signature({z.node()}, &held);
  REQUIRE(held.size() == 1);
  CHECK(held[0] == t.node());
  // Evaluated through the chain's signature: the plan is made once and then found again.
  auto y = kiln::arange(0, 7, 1, DType::Float32).eval();  // a structure no other case uses
  CountFromZero counting;
  auto step = [&](float a, float b) { return ((y * a + b) * a + b).to_vector<float>(); };
  CHECK(step(2, 1) == std::vector<float>{3, 7, 11, 15, 19, 23, 27});
  CHECK(step(3, 0) == std::vector<float>{0, 9, 18, 27, 36, 45, 54});
  auto c = runtime::plan_cache_counters();
  CHECK(c.misses == 1);
  CHECK(c.hits == 1);
}
