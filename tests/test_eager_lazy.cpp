// Eager and lazy evaluation agree (bit for bit: both run the same host executor), the graph
// stays bounded in loops, hash-consing shares equal expressions, and the planner fuses what
// DESIGN.md says it fuses (asserted on plan::make_plan's steps).
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <kiln/kiln.hpp>
#include <string>
#include <vector>

#include "api/build.hpp"
#include "graph/node.hpp"
#include "plan/planner.hpp"

namespace {

using kiln::Array;
using kiln::DType;
using kiln::Shape;
using kiln::Slice;
using std::nullopt;

Array ramp(const Shape& s, double scale, double shift, DType t = DType::Float64) {
  int64_t n = kiln::shape_size(s);
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<double>(i) * scale) + shift;
  return kiln::asarray(v, s).astype(t).eval();
}

// Builds the outputs lazily (one plan for all) and eagerly (every operation its own step);
// the results must have the same dtype, shape and bytes.
void check_eager_matches_lazy(const std::string& what,
                              const std::function<std::vector<Array>()>& build) {
  INFO(what);
  REQUIRE(kiln::get_mode() == kiln::Mode::Lazy);
  std::vector<Array> lazy = build();
  for (const Array& a : lazy) CHECK_FALSE(a.node()->is_leaf());  // nothing computed yet
  kiln::eval(lazy);
  std::vector<Array> eager;
  {
    kiln::EagerScope scope;
    CHECK(kiln::get_mode() == kiln::Mode::Eager);
    eager = build();
    for (const Array& a : eager) CHECK(a.node()->is_leaf());  // computed as built
  }
  CHECK(kiln::get_mode() == kiln::Mode::Lazy);
  REQUIRE(lazy.size() == eager.size());
  for (size_t i = 0; i < lazy.size(); ++i) {
    INFO("output " << i);
    REQUIRE(lazy[i].dtype() == eager[i].dtype());
    REQUIRE(lazy[i].shape() == eager[i].shape());
    const size_t bytes = static_cast<size_t>(lazy[i].nbytes());
    CHECK(std::memcmp(lazy[i].data(), eager[i].data(), bytes) == 0);
  }
}

// The performance chain of PERFORMANCE.md.
Array chain(const Array& x, const Array& y) {
  Array t = x * 2 + 1;
  t = kiln::sin(t) * kiln::cos(y);
  t = t * t + y / 3;
  return kiln::exp(-t) - x;
}

int count_kernels(const kiln::plan::Plan& p) {
  int n = 0;
  for (const auto& s : p.steps) n += std::holds_alternative<kiln::plan::KernelStep>(s);
  return n;
}
std::vector<const kiln::plan::FusedGroup*> kernels(const kiln::plan::Plan& p) {
  std::vector<const kiln::plan::FusedGroup*> out;
  for (const auto& s : p.steps)
    if (auto* k = std::get_if<kiln::plan::KernelStep>(&s)) out.push_back(&k->group);
  return out;
}
int count_unary(const kiln::plan::FusedGroup& g, kiln::graph::UnaryOp op) {
  int n = 0;
  for (const auto& ins : g.code)
    n += ins.kind == kiln::plan::InstrKind::Unary && ins.op == static_cast<uint8_t>(op);
  return n;
}

}  // namespace

TEST_CASE("eager and lazy give identical bits") {
  const Array x32 = ramp({300, 70}, 0.013, 0.1, DType::Float32);
  const Array y32 = ramp({300, 70}, 0.007, -0.2, DType::Float32);
  const Array x = ramp({40, 33}, 0.11, 0.3);
  const Array y = ramp({40, 33}, 0.05, -0.4);
  const Array i32 = (kiln::arange(0, 1320, 1, DType::Int32) * 7 - 600).reshape({40, 33}).eval();
  const Array i64 = (kiln::arange(1320) * 3 - 100).eval();

  check_eager_matches_lazy("the PERFORMANCE.md chain",
                           [&] { return std::vector{chain(x32, y32)}; });
  check_eager_matches_lazy("the chain in float64", [&] { return std::vector{chain(x, y)}; });
  check_eager_matches_lazy("normalisation", [&] {
    return std::vector{(x - kiln::mean(x, {1}, true)) / kiln::max(kiln::abs(x))};
  });
  check_eager_matches_lazy("shared subexpressions", [&] {
    Array s = kiln::sin(x) * y;
    Array u = kiln::exp(s);
    return std::vector{s * s + u, kiln::sum(u * s), kiln::tanh(u) - s};
  });
  check_eager_matches_lazy("reductions of views", [&] {
    return std::vector{kiln::sum(x.T(), {0}), kiln::max(x(Slice(nullopt, nullopt, -1)), {1}, true),
                       kiln::argmax(x.T(), 0), kiln::mean(x(Slice(1, nullopt, 3), 5)),
                       kiln::min(x.reshape({-1})(Slice(nullopt, nullopt, 7)))};
  });
  check_eager_matches_lazy("reductions of expressions", [&] {
    return std::vector{kiln::sum(kiln::exp(x) * y), kiln::prod(x * 0.5 + 1, {0}),
                       kiln::sum(x32 * y32),        kiln::mean(x32 * x32, {0}),
                       kiln::argmin(x * y - 1, 1),  kiln::any(x > 1.2, {1}),
                       kiln::all(y < 0.6)};
  });
  check_eager_matches_lazy("where and clip", [&] {
    return std::vector{kiln::where(x > 0.5, x, y * 2), kiln::clip(x - y, -0.5, 0.5),
                       kiln::where(y < 0, 0.0, kiln::sqrt(y)), kiln::clip(i32, -100, 100)};
  });
  check_eager_matches_lazy("integers", [&] {
    Array a = i32 * 3 - 7;
    return std::vector{a * a + i32,           (a ^ i32) & 1023,
                       kiln::sum(a, {1}),     kiln::prod(a(Slice(0, 4)), {0}),
                       kiln::max(a.T(), {1}), kiln::sum(i64 * 5 + (a.reshape({-1}) > 0))};
  });
  check_eager_matches_lazy("complex", [&] {
    Array z = x + y * std::complex<double>(0, 1);
    return std::vector{z * kiln::conj(z) + kiln::exp(z), kiln::abs(z) - kiln::real(z),
                       kiln::sum(z * z, {0})};
  });
  check_eager_matches_lazy("broadcasting and arange", [&] {
    Array col = kiln::arange(0.0, 40.0, 1.0).reshape({40, 1});
    return std::vector{x * col + kiln::linspace(0, 1, 33), kiln::sum(col * y, {0})};
  });
}

TEST_CASE("multi-output evaluation computes every output, once, as separate evaluation does") {
  const Array x = ramp({500, 20}, 0.03, 0.1);
  const Array y = ramp({500, 20}, 0.02, 0.4);
  Array a = kiln::sin(x) * y + 1, b = kiln::exp(x - y), c = kiln::sum(a * b, {1});
  // Once: across the plan's kernels sin and exp each appear once (the reduction reads a and b
  // rather than recomputing them), and evaluating runs that one plan and its kernels, no more.
  auto p = kiln::plan::make_plan({a.node(), b.node(), c.node()});
  int sin_total = 0, exp_total = 0;
  for (const auto* g : kernels(p)) {
    sin_total += count_unary(*g, kiln::graph::UnaryOp::Sin);
    exp_total += count_unary(*g, kiln::graph::UnaryOp::Exp);
  }
  CHECK(sin_total == 1);
  CHECK(exp_total == 1);
  REQUIRE(p.outputs.size() == 3);
  kiln::reset_engine_stats();
  kiln::eval({a, b, c});
  CHECK(kiln::engine_stats().plans == 1);
  CHECK(kiln::engine_stats().kernels == count_kernels(p));
  CHECK(a.node()->is_leaf());
  CHECK(b.node()->is_leaf());
  CHECK(c.node()->is_leaf());
  const void* pa = a.data();
  a.eval();
  kiln::eval({a, b, c});
  CHECK(a.data() == pa);  // evaluating again reuses the stored result
  CHECK(kiln::engine_stats().plans == 1);
  // Built again (the evaluated nodes left the hash-cons table) and evaluated one by one.
  Array a2 = kiln::sin(x) * y + 1, b2 = kiln::exp(x - y), c2 = kiln::sum(a2 * b2, {1});
  CHECK(a2.node() != a.node());
  CHECK(std::memcmp(a2.data(), a.data(), a.nbytes()) == 0);
  CHECK(std::memcmp(b2.data(), b.data(), b.nbytes()) == 0);
  CHECK(std::memcmp(c2.data(), c.data(), c.nbytes()) == 0);
  // Against values computed here.
  auto xv = x.to_vector<double>(), yv = y.to_vector<double>(), cv = c.to_vector<double>();
  for (int64_t i = 0; i < 500; i += 37) {
    double s = 0;
    for (int64_t j = 0; j < 20; ++j) {
      double u = xv[i * 20 + j], v = yv[i * 20 + j];
      s += (std::sin(u) * v + 1) * std::exp(u - v);
    }
    CHECK(cv[i] == doctest::Approx(s).epsilon(1e-12));
  }
  // Duplicates and already-evaluated arrays in the list are fine, and d is computed once.
  Array d = x * 3;
  kiln::reset_engine_stats();
  kiln::eval({d, d, a, x});
  CHECK(kiln::engine_stats().plans == 1);
  CHECK(kiln::engine_stats().kernels == 1);
  CHECK(d.to_vector<double>()[5] == xv[5] * 3);
}

TEST_CASE("a loop chaining t = t * 1.0001 + 1 10,000 times stays bounded and is right") {
  const int64_t n = 10000;
  const double c = 1.0001;
  std::vector<double> x0 = {0.0, 1.0, -2.5, 1e3};
  for (kiln::Mode mode : {kiln::Mode::Lazy, kiln::Mode::Eager}) {
    INFO((mode == kiln::Mode::Lazy ? "lazy" : "eager"));
    kiln::set_mode(mode);
    Array t = kiln::asarray(x0);
    const size_t live_before = kiln::graph::live_node_count();
    size_t live_max = 0;
    uint32_t depth_max = 0;
    for (int64_t i = 0; i < n; ++i) {
      t = t * c + 1;
      depth_max = std::max(depth_max, t.node()->depth);
      if (i % 97 == 0) live_max = std::max(live_max, kiln::graph::live_node_count());
    }
    kiln::set_mode(kiln::Mode::Lazy);
    CHECK(depth_max <= kiln::api::kMaxGraphDepth);
    CHECK(live_max < live_before + 4 * kiln::api::kMaxGraphDepth);  // not ~2 * n nodes
    auto got = t.to_vector<double>();
    const double cn = std::pow(c, static_cast<double>(n));
    for (size_t k = 0; k < x0.size(); ++k)
      CHECK(got[k] == doctest::Approx(x0[k] * cn + (cn - 1) / (c - 1)).epsilon(1e-10));
  }
}

TEST_CASE("hash-consing: the same expression built twice is the same node") {
  const Array x = ramp({10, 6}, 0.3, 0);
  const Array y = ramp({6}, 0.2, 1);
  Array a = kiln::exp(x * 2 + y) - 1, b = kiln::exp(x * 2 + y) - 1;
  CHECK(a.node() == b.node());
  CHECK(kiln::sum(a, {1}).node() == kiln::sum(b, {-1}).node());
  CHECK(x.T().node() == x.T().node());
  CHECK(x(Slice(1, 8, 3), 2).node() == x(Slice(1, 8, 3), 2).node());
  CHECK(x.reshape({-1, 3}).node() == x.reshape({20, 3}).node());
  CHECK(y.broadcast_to({10, 6}).node() == y.broadcast_to({10, 6}).node());
  CHECK(kiln::where(x > 0, x, 0.0).node() == kiln::where(x > 0, x, 0.0).node());
  // Different scalars, axes, dtypes or operands give different nodes.
  CHECK((x * 2).node() != (x * 3).node());
  CHECK(kiln::sum(x, {0}).node() != kiln::sum(x, {1}).node());
  CHECK(kiln::sum(x, {0}).node() != kiln::sum(x, {0}, true).node());
  CHECK((x + 1).node() != (x.astype(DType::Float32) + 1).node());
  CHECK((x + y).node() != (y + x).node());  // operand order is kept
  // Equal expressions evaluate once: evaluating one handle evaluates the other.
  a.eval();
  CHECK(b.node()->is_leaf());
  // Evaluating twice gives the same result; building and evaluating again too.
  auto first = a.to_vector<double>();
  a.eval();
  CHECK(a.to_vector<double>() == first);
  Array again = kiln::exp(x * 2 + y) - 1;
  CHECK(again.node() != a.node());  // a is evaluated: it left the table
  CHECK(again.to_vector<double>() == first);
}

// A node of one input is kept by that input (Node::kept_user) while the input keeps no other,
// and in the table otherwise (graph/node.cpp): lookups must find it in either place, whichever
// of several users of one input came first, and after the first has gone.
TEST_CASE("hash-consing: nodes of one input are found whether their input keeps them or not") {
  const Array x = ramp({5}, 0.7, 0);
  const size_t live0 = kiln::graph::live_node_count();
  Array kept = x * 2.0;    // the first user of x: kept by x
  Array tabled = x * 3.0;  // x keeps one user: this one goes to the table
  Array cast = x.astype(DType::Float32);
  CHECK(kiln::graph::live_node_count() == live0 + 3);
  CHECK((x * 2.0).node() == kept.node());
  CHECK((x * 3.0).node() == tabled.node());
  CHECK(x.astype(DType::Float32).node() == cast.node());
  kept = Array();  // x keeps nothing now; the others stay findable, and a new user is kept
  CHECK(kiln::graph::live_node_count() == live0 + 2);
  CHECK((x * 3.0).node() == tabled.node());
  Array fresh = x * 4.0;
  CHECK((x * 4.0).node() == fresh.node());
  CHECK(kiln::graph::live_node_count() == live0 + 3);
  // A step of a chain turned into an Affine node in place (x * 4 + 1 from a temporary x * 4)
  // stays findable, and an evaluated kept node is found no more (it is a leaf now).
  Array affine = x * 5.0 + 1.0, again = x * 5.0 + 1.0;
  CHECK(affine.node() == again.node());
  fresh.eval();
  CHECK((x * 4.0).node() != fresh.node());
  for (int64_t k = 0; k < 5; ++k)
    CHECK((x * 4.0).to_vector<double>()[k] == fresh.to_vector<double>()[k]);
  fresh = Array(), affine = Array(), again = Array(), tabled = Array(), cast = Array();
  CHECK(kiln::graph::live_node_count() == live0);
}

// A scalar operand (where's 5) is a Scalar node that broadcasts with no Broadcast view; an equal
// full({}, 5) built later is the same node, and evaluating it writes that node: the pending
// expression then reads a 0-d buffer at every coordinate. Planning it crashed (an access with
// no strides in a 1-d kernel) until plan/lower.cpp broadcast it (found by a mesh of processes:
// argmax's candidates of an empty piece).
TEST_CASE("hash-consing: a scalar operand evaluated through an equal full({}) still broadcasts") {
  const int64_t big = 9223372036854775807;
  const Array v = kiln::arange(3);
  const Array picked = kiln::where(v > 0, v, big);
  const Array smallest = kiln::min(kiln::where(v > 1, v, big) - 1, 0);
  const Array shifted = kiln::where(v > 0, v, 5.5).reshape({3, 1}) + kiln::arange(2.0);
  Array constant = kiln::full({}, big, DType::Int64), half = kiln::full({}, 5.5);
  CHECK(constant.node().get() == picked.node()->inputs[2].get());
  constant.eval();
  half.eval();
  CHECK(picked.to_vector<int64_t>() == std::vector<int64_t>{big, 1, 2});
  CHECK(smallest.item<int64_t>() == 1);
  CHECK(shifted.to_vector<double>() == std::vector<double>{5.5, 6.5, 1, 2, 2, 3});
}

// The table erases by moving later entries of a probe run back (graph/node.cpp): nodes dropped
// in any order must leave every other node findable, and none behind.
TEST_CASE("hash-consing: nodes dropped in any order leave the others findable") {
  const Array x = ramp({4}, 0.3, 0);
  const int n = 3000;  // past the table's first size, so it also grows
  const size_t live0 = kiln::graph::live_node_count();
  std::vector<Array> kept;
  for (int i = 0; i < n; ++i) kept.push_back(x * double(i));  // a product each (its scalar inside)
  CHECK(kiln::graph::live_node_count() == live0 + n);
  // Drop every third, in an order unrelated to the building order (a fixed permutation).
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = int((int64_t{i} * 1237) % n);  // gcd(1237, 3000) = 1
  int dropped = 0;
  for (int i : order)
    if (i % 3 == 0) kept[i] = Array(), ++dropped;
  CHECK(kiln::graph::live_node_count() == live0 + (n - dropped));
  for (int i = 0; i < n; ++i) {
    Array again = x * double(i);
    if (i % 3)
      CHECK(again.node() == kept[i].node());
    else
      CHECK(kiln::graph::live_node_count() == live0 + (n - dropped) + 1);
  }
  kept.clear();
  CHECK(kiln::graph::live_node_count() == live0);
}

// A dropped graph leaves the table in batches, each under one lock (graph/node.cpp, release):
// a graph of more nodes than a batch (512, the forcing depth, so a step adds a node beside the
// chain's two: x * (i + 1) - 1 is one Affine node), nodes reached twice (t * t) and a node the
// program still holds in the middle of the chain must each leave exactly what nothing references.
TEST_CASE("hash-consing: a dropped graph larger than a release batch leaves the table") {
  const Array x = ramp({4}, 0.25, 0);
  const size_t live0 = kiln::graph::live_node_count();
  Array kept;
  {
    Array t = x;
    for (int i = 0; i < 200; ++i) {  // 600 nodes, 400 deep (below the forcing depth)
      t = t * 0.5 + (x * double(i + 1) - 1.0);
      if (i % 50 == 0) t = t * t;  // one node whose two inputs are the same node
      if (i == 40) kept = t;
    }
    CHECK(kiln::graph::live_node_count() == live0 + 600 + 4);
  }
  // kept's history stays: 41 steps of three nodes, one square; 480 nodes went at once.
  CHECK(kiln::graph::live_node_count() == live0 + 3 * 41 + 1);
  Array again = x;
  for (int i = 0; i <= 40; ++i) {
    again = again * 0.5 + (x * double(i + 1) - 1.0);
    if (i % 50 == 0) again = again * again;
  }
  CHECK(again.node() == kept.node());  // every node of it still found in the table
  CHECK(kiln::graph::live_node_count() == live0 + 3 * 41 + 1);
  auto v = kept.to_vector<double>();
  for (int k = 0; k < 4; ++k) {
    const double xk = std::sin(0.25 * k);  // ramp's
    double e = xk;
    for (int i = 0; i <= 40; ++i) {
      e = e * 0.5 + (xk * (i + 1) - 1.0);
      if (i % 50 == 0) e = e * e;
    }
    CHECK(v[k] == doctest::Approx(e).epsilon(1e-12));  // (this file may contract to an fma)
  }
  again = Array();
  kept = Array();  // evaluated: it left the table, and its history went with it
  CHECK(kiln::graph::live_node_count() == live0);
}

TEST_CASE("planner: the chain is one kernel") {
  const Array x = ramp({1000}, 0.01, 0, DType::Float32);
  const Array y = ramp({1000}, 0.02, 0, DType::Float32);
  Array out = chain(x, y);
  auto p = kiln::plan::make_plan({out.node()});
  REQUIRE(count_kernels(p) == 1);
  const auto& g = *kernels(p)[0];
  CHECK_FALSE(g.reduction.has_value());
  CHECK(g.outputs.size() == 1);
  CHECK(count_unary(g, kiln::graph::UnaryOp::Sin) == 1);
  CHECK(count_unary(g, kiln::graph::UnaryOp::Exp) == 1);
  // Broadcast and view operands fuse too.
  Array v = chain(x.reshape({20, 50}).T(), y(Slice(nullopt, 20)));
  CHECK(count_kernels(kiln::plan::make_plan({v.node()})) == 1);
}

TEST_CASE("planner: sum(exp(x) * y) is one kernel with a reduction") {
  const Array x = ramp({100, 30}, 0.01, 0);
  const Array y = ramp({100, 30}, 0.02, 0);
  auto p = kiln::plan::make_plan({kiln::sum(kiln::exp(x) * y).node()});
  REQUIRE(count_kernels(p) == 1);
  const auto& g = *kernels(p)[0];
  REQUIRE(g.reduction.has_value());
  CHECK(g.reduction->op == kiln::graph::ReduceOp::Sum);
  CHECK(count_unary(g, kiln::graph::UnaryOp::Exp) == 1);
  // Along an axis, of a view, with a cast in the prologue: still one kernel.
  auto q = kiln::plan::make_plan({kiln::mean((x.T() > 0.5), {1}).node()});
  CHECK(count_kernels(q) == 1);
}

TEST_CASE("planner: two same-shape expressions evaluated together are one kernel, two outputs") {
  const Array x = ramp({64, 64}, 0.01, 0);
  const Array y = ramp({64, 64}, 0.02, 0);
  Array a = kiln::sin(x) + y, b = kiln::cos(x) * y;
  auto p = kiln::plan::make_plan({a.node(), b.node()});
  REQUIRE(count_kernels(p) == 1);
  CHECK(kernels(p)[0]->outputs.size() == 2);
  CHECK(p.outputs.size() == 2);
  CHECK(p.outputs[0] != p.outputs[1]);
  // And evaluating them that way gives what evaluating them apart gives.
  kiln::eval({a, b});
  auto av = (kiln::sin(x) + y).to_vector<double>(), bv = (kiln::cos(x) * y).to_vector<double>();
  CHECK(a.to_vector<double>() == av);
  CHECK(b.to_vector<double>() == bv);
}

TEST_CASE("planner: an expensive subexpression shared by two reductions is computed once") {
  const Array x = ramp({200, 50}, 0.01, 0);
  const Array y = ramp({200, 50}, 0.02, 0);
  Array e = kiln::exp(kiln::sin(x) * y);
  Array s = kiln::sum(e), m = kiln::max(e, {1});
  auto p = kiln::plan::make_plan({s.node(), m.node()});
  auto ks = kernels(p);
  REQUIRE(ks.size() == 3);  // e, then the two reductions reading it
  int sin_total = 0, exp_total = 0, reductions = 0;
  for (const auto* g : ks) {
    sin_total += count_unary(*g, kiln::graph::UnaryOp::Sin);
    exp_total += count_unary(*g, kiln::graph::UnaryOp::Exp);
    if (g->reduction) {
      ++reductions;
      CHECK(count_unary(*g, kiln::graph::UnaryOp::Sin) == 0);
    }
  }
  CHECK(sin_total == 1);
  CHECK(exp_total == 1);
  CHECK(reductions == 2);
  CHECK_FALSE(ks[0]->reduction.has_value());  // the shared producer runs first
  // A cheap shared input (a view of a leaf) is not materialised: each reduction reads it.
  auto q = kiln::plan::make_plan({kiln::sum(x.T()).node(), kiln::max(x.T()).node()});
  CHECK(count_kernels(q) == 2);
  // The values.
  kiln::eval({s, m});
  auto xv = x.to_vector<double>(), yv = y.to_vector<double>(), mv = m.to_vector<double>();
  double total = 0;
  for (int64_t i = 0; i < 200; ++i) {
    double row = -1e300;
    for (int64_t j = 0; j < 50; ++j) {
      double v = std::exp(std::sin(xv[i * 50 + j]) * yv[i * 50 + j]);
      total += v;
      row = std::max(row, v);
    }
    CHECK(mv[i] == doctest::Approx(row).epsilon(1e-14));
  }
  CHECK(s.item<double>() == doctest::Approx(total).epsilon(1e-12));
}

TEST_CASE("planner: the normalisation is two kernels (the full max, then the row mean folded)") {
  const Array x = ramp({128, 16}, 0.01, 0);
  Array norm = (x - kiln::mean(x, {1}, true)) / kiln::max(kiln::abs(x));
  auto p = kiln::plan::make_plan({norm.node()});
  auto ks = kernels(p);
  REQUIRE(ks.size() == 2);
  CHECK(ks[0]->reduction.has_value());  // max(abs(x)): read as a scalar, not along rows
  CHECK_FALSE(ks[1]->reduction.has_value());
  CHECK(ks[1]->row_axes == std::vector<int>{1});  // the mean, folded in the kernel that reads it
}
