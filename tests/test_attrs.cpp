// Typed node attributes (graph/attrs.hpp): each kind's fields reach hash-consing (equal
// attributes are one node, any differing field another), the structural hash (structure in,
// values out: the plan cache rebinds those) and the planner's steps, which read them by name.
#include <doctest/doctest.h>

#include <cmath>
#include <kiln/kiln.hpp>
#include <limits>
#include <utility>
#include <variant>
#include <vector>

#include "graph/attrs.hpp"
#include "graph/node.hpp"
#include "plan/planner.hpp"

using kiln::Array;
using kiln::DType;
using kiln::Slice;
namespace graph = kiln::graph;
namespace plan = kiln::plan;

namespace {

size_t hash_of(const Array& a) { return graph::structural_hash({a.node()}); }
size_t h_matmul(const graph::Attrs& a) { return graph::hash_attrs(0, a); }

// The one step of kind S in the plan of `a`.
template <class S>
S only_step(const Array& a) {
  plan::Plan p = plan::make_plan({a.node()});
  std::vector<S> found;
  for (const auto& s : p.steps)
    if (const S* x = std::get_if<S>(&s)) found.push_back(*x);
  REQUIRE(found.size() == 1);
  return found[0];
}

}  // namespace

TEST_CASE("attributes: a transpose's and a slice's fields tell nodes and structures apart") {
  Array cube = kiln::arange(0, 64, 1, DType::Float64).reshape({4, 4, 4}).eval();
  Array t102 = cube.transpose({1, 0, 2}), t021 = cube.transpose({0, 2, 1});
  CHECK(t102.node() == cube.transpose({1, 0, 2}).node());
  CHECK(t102.node() != t021.node());
  CHECK(hash_of(t102) != hash_of(t021));     // same shape: only the permutation differs
  CHECK(t102.to_vector<double>()[4] == 16);  // t102[0, 1, 0] = cube[1, 0, 0]
  CHECK(t021.to_vector<double>()[4] == 1);   // t021[0, 1, 0] = cube[0, 0, 1]

  // Three slices of one length: start, step or both differ.
  Array x = kiln::arange(0, 10, 1, DType::Float64).eval();
  Array s02 = x(Slice(0, 6, 2)), s12 = x(Slice(1, 7, 2)), s03 = x(Slice(0, 9, 3));
  CHECK(s12.node() == x(Slice(1, 7, 2)).node());
  CHECK(s02.node() != s12.node());
  CHECK(s02.node() != s03.node());
  CHECK(hash_of(s02) != hash_of(s12));
  CHECK(hash_of(s02) != hash_of(s03));
  CHECK(s12.to_vector<double>() == std::vector<double>{1, 3, 5});
  CHECK(s03.to_vector<double>() == std::vector<double>{0, 3, 6});
}

TEST_CASE("attributes: a reduction's axes and keepdims") {
  Array x = kiln::arange(0, 36, 1, DType::Float64).reshape({6, 6}).eval();
  Array rows = kiln::sum(x, {1}), cols = kiln::sum(x, {0});
  CHECK(rows.node() != cols.node());
  CHECK(hash_of(rows) != hash_of(cols));  // same shape, other axis
  CHECK(kiln::sum(x, {1}, true).node() != kiln::sum(x, {1}).node());
  const auto& a = rows.node()->attr<graph::ReduceAttrs>();
  CHECK(a.axes == std::vector<int>{1});
  CHECK_FALSE(a.keepdims);
  CHECK(kiln::sum(x, {-1}, true).node()->attr<graph::ReduceAttrs>().keepdims);
  CHECK(rows.to_vector<double>()[0] == 15);  // 0 + 1 + ... + 5
  CHECK(cols.to_vector<double>()[0] == 90);  // 0 + 6 + ... + 30
}

TEST_CASE("attributes: an FFT's axes, lengths, direction and norm reach its step") {
  Array x = kiln::arange(0, 24, 1, DType::Complex128).reshape({4, 6}).eval();
  plan::FftStep s = only_step<plan::FftStep>(kiln::fft::fft(x, 8, 0, "ortho"));
  CHECK(s.axes == std::vector<int>{0});
  CHECK(s.lengths == std::vector<int64_t>{8});
  CHECK_FALSE(s.inverse);
  CHECK(s.scale == doctest::Approx(1 / std::sqrt(8.0)));
  plan::FftStep inv = only_step<plan::FftStep>(kiln::fft::ifft2(x, std::vector<int64_t>{4, 5}));
  CHECK(inv.axes == std::vector<int>{0, 1});
  CHECK(inv.lengths == std::vector<int64_t>{4, 5});
  CHECK(inv.inverse);
  CHECK(inv.scale == doctest::Approx(1 / 20.0));  // "backward": 1/n on the inverse

  // The norm is structure: another scale is another node and another plan.
  Array backward = kiln::fft::fft(x, 8, 0), ortho = kiln::fft::fft(x, 8, 0, "ortho");
  CHECK(backward.node() == kiln::fft::fft(x, 8, 0, "backward").node());
  CHECK(backward.node() != ortho.node());
  CHECK(hash_of(backward) != hash_of(ortho));
  CHECK(hash_of(kiln::fft::fft(x, 8, 0)) != hash_of(kiln::fft::fft(x, 8, 1)));
}

TEST_CASE("attributes: a matmul's precision is structure and reaches its step with the views") {
  Array a = kiln::arange(0, 12, 1, DType::Float32).reshape({4, 3}).eval();
  Array b = kiln::arange(0, 20, 1, DType::Float32).reshape({4, 5}).eval();
  Array exact = kiln::matmul(a.T(), b);
  kiln::set_matmul_precision(kiln::MatmulPrecision::Tf32);
  Array tf32 = kiln::matmul(a.T(), b);
  kiln::set_matmul_precision(kiln::MatmulPrecision::Float32);
  CHECK(exact.node() == kiln::matmul(a.T(), b).node());
  CHECK(exact.node() != tf32.node());
  CHECK(hash_of(exact) != hash_of(tf32));
  CHECK(h_matmul(graph::MatmulAttrs{false}) != h_matmul(graph::MatmulAttrs{true}));
  plan::MatmulStep s = only_step<plan::MatmulStep>(tf32);
  CHECK(s.tf32);
  CHECK_FALSE(only_step<plan::MatmulStep>(exact).tf32);
  CHECK((s.m == 3 && s.n == 5 && s.k == 4));
  CHECK(s.a.strides == std::vector<int64_t>{1, 3});  // a.T() read in place, column-major
  CHECK(s.b.strides == std::vector<int64_t>{5, 1});
  // float64 ignores the setting: no TF32 for it, one node either way.
  kiln::set_matmul_precision(kiln::MatmulPrecision::Tf32);
  Array wide = kiln::matmul(a.T().astype(DType::Float64), b);
  kiln::set_matmul_precision(kiln::MatmulPrecision::Float32);
  CHECK(wide.node() == kiln::matmul(a.T().astype(DType::Float64), b).node());
}

TEST_CASE("attributes: a random draw's seed, offset and bounds are values, not structure") {
  kiln::random::Generator g(7);
  Array first = g.uniform(2, 5, {10}), second = g.uniform(2, 5, {10});
  // Seed 7, offset 0, bounds (2, 5); two 32-bit words per float64, so the second draw sits
  // 20 words on.
  plan::RandomStep s = only_step<plan::RandomStep>(first);
  CHECK(s.seed == 7);
  CHECK(s.offset == 0);
  CHECK(s.a.as_double() == 2);
  CHECK(s.b.as_double() == 5);
  CHECK(only_step<plan::RandomStep>(second).offset == 20);

  kiln::random::Generator h(7);
  CHECK(h.uniform(2, 5, {10}).node() == first.node());  // same draw: one node
  CHECK(second.node() != first.node());
  Array other_seed = kiln::random::Generator(8).uniform(2, 5, {10});
  Array other_bounds = kiln::random::Generator(7).uniform(1, 5, {10});
  CHECK(other_seed.node() != first.node());
  CHECK(other_bounds.node() != first.node());
  // One structure for all of them: a cached plan is rebound to each draw's values.
  CHECK(hash_of(second) == hash_of(first));
  CHECK(hash_of(other_seed) == hash_of(first));
  CHECK(hash_of(other_bounds) == hash_of(first));
  CHECK(hash_of(kiln::random::Generator(7).normal(2, 5, {10})) != hash_of(first));
}

TEST_CASE("attributes: hash_attrs and equality, field by field") {
  auto h = [](const graph::Attrs& a) { return graph::hash_attrs(0, a); };
  // Attributes of different kinds differ, even where their fields mix the same numbers (an
  // empty list mixes its length, 0, as a user code 0 mixes 0).
  CHECK(h(graph::PermuteAttrs{}) != h(graph::UserAttrs{0}));
  CHECK(h(graph::PermuteAttrs{}) != h(graph::SliceAttrs{}));
  CHECK(h(graph::PermuteAttrs{}) != h(std::monostate{}));
  // Where one vector ends and the next begins is part of the hash.
  graph::FftAttrs ab{{0, 1}, {}, false, 1}, a_b{{0}, {1}, false, 1};
  CHECK_FALSE(ab == a_b);
  CHECK(h(ab) != h(a_b));
  CHECK(h(graph::ReduceAttrs{{0}, false}) != h(graph::ReduceAttrs{{0}, true}));
  CHECK(h(graph::SliceAttrs{{{0, 2}}}) != h(graph::SliceAttrs{{{2, 0}}}));

  // Scalars and scales compare bit for bit, as hash-consing needs: NaN is itself, -0 is not 0.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(graph::ScalarAttrs{nan} == graph::ScalarAttrs{nan});
  CHECK_FALSE(graph::ScalarAttrs{0.0} == graph::ScalarAttrs{-0.0});
  CHECK(graph::FftAttrs{{0}, {4}, false, nan} == graph::FftAttrs{{0}, {4}, false, nan});
  CHECK_FALSE(graph::FftAttrs{{0}, {4}, false, 0.0} == graph::FftAttrs{{0}, {4}, false, -0.0});
  CHECK(h(graph::FftAttrs{{0}, {4}, false, 0.0}) != h(graph::FftAttrs{{0}, {4}, false, -0.0}));
  CHECK_FALSE(graph::RandomAttrs{1, 0, 0.0, 1.0} == graph::RandomAttrs{1, 0, -0.0, 1.0});

  Array x = kiln::arange(0, 4, 1, DType::Float64).eval();
  CHECK((x * nan).node() == (x * nan).node());
  CHECK((x * 0.0).node() != (x * -0.0).node());

  // An immediate: the constant, its dtype and its side, each telling nodes apart.
  using graph::ImmediateAttrs;
  const ImmediateAttrs two{2.0, DType::Float64, false};
  CHECK(two == ImmediateAttrs{2.0, DType::Float64, false});
  CHECK_FALSE(two == ImmediateAttrs{2.0, DType::Float32, false});
  CHECK_FALSE(two == ImmediateAttrs{2.0, DType::Float64, true});
  CHECK_FALSE(two == ImmediateAttrs{int64_t{2}, DType::Float64, false});  // 2 is not 2.0
  CHECK(h(two) != h(ImmediateAttrs{2.0, DType::Float64, true}));
  CHECK(h(two) != h(ImmediateAttrs{2.0, DType::Float32, false}));
  CHECK(h(two) != h(graph::ScalarAttrs{2.0}));
}

TEST_CASE("attributes: a constant operand is the binary node's immediate, on its side") {
  Array x = kiln::arange(0, 4, 1, DType::Float32).eval();
  Array right = x - 2, left = 2 - x;
  for (const Array* a : {&right, &left}) {
    const graph::Node& n = *a->node();
    CHECK(n.kind == graph::OpKind::Binary);
    REQUIRE(n.immediate());
    REQUIRE(n.inputs.size() == 1);  // no Scalar node
    CHECK(n.inputs[0] == x.node());
    CHECK(n.scalar_dtype() == DType::Float32);  // x's: a weak Python int
    CHECK(n.scalar_value().as_int() == 2);
  }
  CHECK_FALSE(right.node()->immediate()->left);
  CHECK(left.node()->immediate()->left);
  CHECK(right.node() == (x - 2).node());  // hash-consed as before
  CHECK(right.node() != left.node());
  CHECK(right.to_vector<float>() == std::vector<float>{-2, -1, 0, 1});
  CHECK(left.to_vector<float>() == std::vector<float>{2, 1, 0, -1});
  // A comparison's node is bool; its constant keeps the compared dtype.
  CHECK((x < 2).node()->scalar_dtype() == DType::Float32);
  // Two arrays: no immediate.
  CHECK_FALSE((x * x).node()->immediate());
}

TEST_CASE("attributes: an index map's mode, origin and step per axis") {
  Array x = kiln::arange(0, 5, 1, DType::Float64).eval();
  // roll by 1 and 2 differ only in the origin; pad's edge and wrap only in the mode.
  Array r1 = kiln::roll(x, 1), r2 = kiln::roll(x, 2);
  CHECK(r1.node() == kiln::roll(x, 1).node());
  CHECK(r1.node()->kind == graph::OpKind::Remap);
  CHECK(r1.node() != r2.node());
  CHECK(hash_of(r1) != hash_of(r2));
  Array edge = kiln::pad(x, 1, kiln::PadMode::Edge), wrap = kiln::pad(x, 1, kiln::PadMode::Wrap);
  CHECK(edge.node() != wrap.node());
  CHECK(hash_of(edge) != hash_of(wrap));
  const auto& ax = edge.node()->attr<graph::RemapAttrs>().axes;
  REQUIRE(ax.size() == 1);
  CHECK(ax[0].mode == graph::IndexMode::Clamp);
  CHECK(ax[0].origin == 1);
  // Slice assignment with steps 2 and 3: the step tells them apart.
  Array a2 = x.at("::2").set(0.0), a3 = x.at("::3").set(0.0);
  CHECK(a2.node() != a3.node());
  CHECK(hash_of(a2) != hash_of(a3));
  CHECK(r2.to_vector<double>() == std::vector<double>{3, 4, 0, 1, 2});
  CHECK(wrap.to_vector<double>() == std::vector<double>{4, 0, 1, 2, 3, 4, 0});
}

// An Affine node's steps (x * 2 + 1): each step's operation, side, constant and dtype, and
// their order, reach equality and hash_attrs; its structure keeps all but the constants.
TEST_CASE("attributes: an Affine node's steps, field by field, and its structure") {
  using graph::BinaryOp;
  auto h = [](const graph::Attrs& a) { return graph::hash_attrs(0, a); };
  const graph::ImmediateAttrs two{kiln::Scalar(2.0), DType::Float64, false},
      one{kiln::Scalar(1.0), DType::Float64, false};
  const graph::AffineAttrs a{{{BinaryOp::Mul, two}, {BinaryOp::Add, one}}};
  graph::AffineAttrs swapped = a, side = a, value = a, dtype = a;
  std::swap(swapped.steps[0].op, swapped.steps[1].op);
  side.steps[1].constant.left = true;
  value.steps[1].constant.value = kiln::Scalar(1.5);
  dtype.steps[0].constant.dtype = DType::Float32;
  CHECK(a == graph::AffineAttrs(a));
  CHECK(h(a) == h(graph::AffineAttrs(a)));
  for (const auto& other : {swapped, side, value, dtype}) {
    CHECK_FALSE(a == other);
    CHECK(h(a) != h(other));
  }
  // The structural signature: other constants, the same structure; another order of the
  // operations or another side, another one.
  const Array x = kiln::asarray(std::vector<double>{1, 2, 3});
  auto structure = [](const Array& y) {
    REQUIRE(y.node()->kind == graph::OpKind::Affine);
    return graph::signature({y.node()}).hash;
  };
  CHECK(structure(x * 2.0 + 1.0) == structure(x * 3.0 + 5.0));
  CHECK(structure(x * 2.0 + 1.0) != structure((x + 2.0) * 1.0));
  CHECK(structure(x * 2.0 + 1.0) != structure(1.0 + x * 2.0));
  CHECK(structure(x * 2.0 + 1.0) != structure(2.0 * x + 1.0));
  CHECK(structure(x * 2.0 + 1.0) != structure(x * 2.0 + 2.0));  // equal constants: one parameter
}
