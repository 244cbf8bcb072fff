// Two operations with constants applied to a temporary (x * 0.999f + 0.001f) are one Affine node
// (graph::fuse_constant_step): it must give, bit for bit, what the two operations give when the
// intermediate is held (two nodes), on the host and on the GPU, and follow the graph's rules
// (hash-consing, the plan cache's rebinding of both constants, eager mode, growth limits).
#include <doctest/doctest.h>

#include <cstring>
#include <initializer_list>
#include <kiln/kiln.hpp>
#include <string>
#include <vector>

#include "graph/node.hpp"
#include "runtime/plan_cache.hpp"
#include "support/gpu.hpp"

namespace {

using kiln::Array;
using kiln::DType;
using kiln::Scalar;
using kiln::graph::OpKind;

enum class Op { Add, Sub, Mul, Div };
constexpr Op kOps[] = {Op::Add, Op::Sub, Op::Mul, Op::Div};

// x op c, or c op x when `left`: the public operators, consuming x.
Array apply(Op op, Array x, const Scalar& c, bool left) {
  switch (op) {
    case Op::Add:
      return left ? c + std::move(x) : std::move(x) + c;
    case Op::Sub:
      return left ? c - std::move(x) : std::move(x) - c;
    case Op::Mul:
      return left ? c * std::move(x) : std::move(x) * c;
    default:
      return left ? c / std::move(x) : std::move(x) / c;
  }
}

struct Steps {
  Op op1, op2;
  bool left1, left2;
};

std::vector<Steps> every_pair() {
  std::vector<Steps> out;
  for (Op a : kOps)
    for (Op b : kOps)
      for (int sides = 0; sides < 4; ++sides) out.push_back({a, b, (sides & 1) != 0, sides >= 2});
  return out;
}

// The two steps on a temporary (one node when they fuse).
Array fused(const Array& x, const Steps& s, const Scalar& c1, const Scalar& c2) {
  return apply(s.op2, apply(s.op1, x, c1, s.left1), c2, s.left2);
}
// The same with the intermediate held: two nodes.
Array unfused(const Array& x, const Steps& s, const Scalar& c1, const Scalar& c2) {
  Array held = apply(s.op1, x, c1, s.left1);
  Array copy = held;
  return apply(s.op2, copy, c2, s.left2);
}

std::vector<unsigned char> bytes(const Array& a) {
  Array h = a.get();  // on the host
  std::vector<unsigned char> out(h.nbytes());
  std::memcpy(out.data(), h.data(), out.size());
  return out;
}

// Values of dtype t with zeros, negatives and fractions where the dtype has them.
Array sample(DType t, kiln::Device d) {
  std::vector<double> v;
  for (int i = 0; i < 37; ++i) v.push_back(std::sin(0.9 * i) * 7.0);
  v[3] = 0.0;
  return kiln::asarray(v, d).astype(t).eval();
}

// Whether the second step computes in the first's result dtype, so they fuse: all but an
// integer result divided (a true division, in float64; an integer divided first is float64
// already, and the second step stays there).
bool fuses(DType t, const Steps& s) {
  return !(kiln::is_integer(t) && s.op1 != Op::Div && s.op2 == Op::Div);
}

// The 16 pairs of operations with both constants on the right (x * c + c').
std::vector<Steps> right_sides() {
  std::vector<Steps> out;
  for (const Steps& s : every_pair())
    if (!s.left1 && !s.left2) out.push_back(s);
  return out;
}

// Each pair of steps on each dtype, on device d: the fused result has the bytes of the unfused
// one, and fuses exactly where the second step stays in the first's dtype.
void check_pairs(kiln::Device d, std::initializer_list<DType> dtypes,
                 const std::vector<Steps>& pairs) {
  for (DType t : dtypes) {
    const Array x = sample(t, d);
    for (const Steps& s : pairs) {
      CAPTURE(std::string(kiln::dtype_name(t)));
      CAPTURE(static_cast<int>(s.op1));
      CAPTURE(static_cast<int>(s.op2));
      CAPTURE(s.left1);
      CAPTURE(s.left2);
      const Scalar c1 = kiln::is_integer(t) ? Scalar(3) : Scalar(0.75f),
                   c2 = kiln::is_integer(t) ? Scalar(5) : Scalar(-1.5f);
      Array f = fused(x, s, c1, c2), u = unfused(x, s, c1, c2);
      CHECK((f.node()->kind == OpKind::Affine) == fuses(t, s));
      CHECK(u.node()->kind != OpKind::Affine);
      REQUIRE(f.dtype() == u.dtype());
      CHECK(bytes(f) == bytes(u));
    }
  }
}

}  // namespace

TEST_CASE("constant steps: every pair of + - * / on every dtype, fused, as the two operations") {
  check_pairs(kiln::host(),
              {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int32,
               DType::Int64, DType::UInt8, DType::Int8, DType::Complex64, DType::Complex128},
              every_pair());
}

// A kernel per dtype and pair: float32 on every pair and side, other dtypes on the right-sided
// pairs. The host's bits too for real dtypes; complex results may differ from the host's in
// the last bit, fused or not (tests/test_gpu.cpp compares them within a tolerance).
GPU_TEST_CASE("gpu: constant steps fused give the two operations' bits, and the host's") {
  check_pairs(kiln::cuda(), {DType::Float32}, every_pair());
  check_pairs(kiln::cuda(), {DType::Float64, DType::Float16, DType::Int32, DType::Complex64},
              right_sides());
  for (DType t : {DType::Float32, DType::Float64, DType::Float16, DType::Int32}) {
    const Array xh = sample(t, kiln::host()), xd = sample(t, kiln::cuda());
    for (const Steps& s : right_sides()) {
      CAPTURE(std::string(kiln::dtype_name(t)));
      const Scalar c1 = kiln::is_integer(t) ? Scalar(3) : Scalar(0.75f),
                   c2 = kiln::is_integer(t) ? Scalar(5) : Scalar(-1.5f);
      CHECK(bytes(fused(xd, s, c1, c2)) == bytes(unfused(xh, s, c1, c2)));
    }
  }
}

TEST_CASE("constant steps: float values against the two roundings written out") {
  const std::vector<float> v = {1.0f, -2.5f, 0.1f, 3.0e7f, -7.0e-8f, 0.0f};
  const Array x = kiln::asarray(v);
  auto got = (x * 0.999f + 0.001f).to_vector<float>();
  auto quotient = (1.5f - x / 3.0f).to_vector<float>();
  for (size_t i = 0; i < v.size(); ++i) {
    volatile float product = v[i] * 0.999f;  // (volatile: rounded, never contracted)
    CHECK(got[i] == product + 0.001f);
    volatile float divided = v[i] / 3.0f;
    CHECK(quotient[i] == 1.5f - divided);
  }
  const Array ints = kiln::asarray(std::vector<int32_t>{2147483647, -7, 0});
  auto wrapped = (ints * 2 - 1).to_vector<int32_t>();  // wraps as int32 arithmetic does
  CHECK(wrapped == std::vector<int32_t>{-3, -15, -1});
}

TEST_CASE("constant steps: what does not fuse stays two nodes") {
  const Array x = kiln::asarray(std::vector<float>{1, 2, 3});
  Array held = x * 2.0f;
  Array y = held + 1.0f;  // the product is held: it stays, y reads it
  CHECK(y.node()->kind == OpKind::Binary);
  CHECK(held.node()->kind == OpKind::Binary);
  CHECK(held.to_vector<float>() == std::vector<float>{2, 4, 6});
  CHECK(y.to_vector<float>() == std::vector<float>{3, 5, 7});
  // A step outside + - * / (a power, a comparison, a maximum) or one that changes the dtype.
  CHECK(kiln::pow(x * 2.0f, 2.0f).node()->kind == OpKind::Binary);
  CHECK(((x * 2.0f) < 3.0f).node()->kind == OpKind::Binary);
  CHECK(kiln::maximum(x * 2.0f, 3.0f).node()->kind == OpKind::Binary);
  const Array i = kiln::asarray(std::vector<int32_t>{1, 2, 3});
  Array widened = i * 2 + 1.5;  // the second step computes in float64
  CHECK(widened.node()->kind == OpKind::Binary);
  CHECK(widened.to_vector<double>() == std::vector<double>{3.5, 5.5, 7.5});
  // Three steps: the third reads the Affine node, which has no single constant to join.
  Array three = x * 2.0f + 1.0f - 4.0f;
  CHECK(three.node()->kind == OpKind::Binary);
  CHECK(three.node()->inputs[0]->kind == OpKind::Affine);
  CHECK(three.to_vector<float>() == std::vector<float>{-1, 1, 3});
}

TEST_CASE("constant steps: eager mode evaluates each step, as before") {
  const Array x = kiln::asarray(std::vector<double>{1, 2, 3});
  kiln::EagerScope eager;
  Array y = x * 2.0 + 1.0;
  CHECK(y.node()->kind != OpKind::Affine);  // the product was evaluated when built
  CHECK(y.to_vector<double>() == std::vector<double>{3, 5, 7});
}

TEST_CASE("constant steps: an Affine node is hash-consed like any node") {
  const Array x = kiln::asarray(std::vector<double>{1, 2, 3});
  const size_t live0 = kiln::graph::live_node_count();
  Array a = x * 2.0 + 1.0;
  Array b = x * 2.0 + 1.0;
  CHECK(a.node() == b.node());
  CHECK(kiln::graph::live_node_count() == live0 + 1);
  Array c = x * 2.0 + 1.5;  // another constant: another node
  CHECK(c.node() != a.node());
  Array d = 1.0 + x * 2.0;  // the constant on the other side: another node
  CHECK(d.node() != a.node());
  CHECK(kiln::graph::live_node_count() == live0 + 3);
  Array s = x;
  for (int k = 0; k < 100; ++k) s = s * 0.5 + 1.0;  // a node a step
  CHECK(kiln::graph::live_node_count() == live0 + 103);
  CHECK(s.node()->depth == 200);  // two operations a step, for the forcing depth
}

TEST_CASE("constant steps: a cached plan rebinds both constants of every step") {
  const Array x = kiln::asarray(std::vector<double>{1, 2, 3});
  kiln::runtime::reset_plan_cache_counters();
  auto loop = [&](double m, double a) {
    Array s = x;
    for (int k = 0; k < 3; ++k) s = s * m + a;
    return s.to_vector<double>();
  };
  auto expect = [](double v, double m, double a) {
    for (int k = 0; k < 3; ++k) v = v * m + a;
    return v;
  };
  for (auto [m, a] : {std::pair{2.0, 3.0}, {5.0, 7.0}, {0.5, -1.0}}) {
    auto got = loop(m, a);
    for (int i = 0; i < 3; ++i) CHECK(got[i] == expect(i + 1.0, m, a));
  }
  auto counters = kiln::runtime::plan_cache_counters();
  CHECK(counters.misses == 1);  // one structure: three evaluations, one plan
  CHECK(counters.hits == 2);
  // Equal constants are one parameter, so * 4 + 4 is another structure: another plan, right.
  auto equal = loop(4.0, 4.0);
  for (int i = 0; i < 3; ++i) CHECK(equal[i] == expect(i + 1.0, 4.0, 4.0));
  CHECK(kiln::runtime::plan_cache_counters().misses == 2);
  // The chain's shortcut and the general walk agree on an Affine chain's signature.
  Array s = x;
  for (int k = 0; k < 4; ++k) s = s * (k + 1.0) + 2.0;
  auto fast = kiln::graph::signature({s.node()});
  auto walked = kiln::graph::walked_signature({s.node()}, nullptr);
  CHECK(fast.hash == walked.hash);
  CHECK(fast.values == walked.values);
  CHECK(fast.values.size() == 5);  // x, then 1 and 2 of the first step, 3 and 4 (2 is shared)
}
