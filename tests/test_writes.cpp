// What an evaluation writes (DESIGN.md, "What a plan writes"): the arrays asked for, the values
// later steps read, each once, and the unevaluated arrays the program still holds; nothing
// else leaves registers. Counted from the plan's kernel outputs and checked against values
// computed here.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <kiln/kiln.hpp>
#include <vector>

#include "plan/planner.hpp"
#include "runtime/pipeline.hpp"
#include "runtime/plan_cache.hpp"

namespace {

using kiln::Array;
using kiln::DType;

Array ramp(int64_t rows, int64_t cols) {
  std::vector<double> v(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.37 * double(i)) * 2;
  return kiln::asarray(v, {rows, cols}).astype(DType::Float32).eval();
}

// The kernels of the plan that evaluating `r` runs, and what they write.
struct Writes {
  int kernels = 0, outputs = 0;
  int64_t elements = 0;
};
Writes writes_of(const Array& r) {
  auto req = kiln::runtime::to_realize({r.node()});
  auto p = kiln::plan::make_plan(req.nodes, nullptr, req.held);
  Writes w;
  for (const auto& s : p.steps)
    if (auto* k = std::get_if<kiln::plan::KernelStep>(&s)) {
      ++w.kernels;
      for (const auto& o : k->group.outputs) {
        ++w.outputs;
        w.elements += kiln::shape_size(p.buffers[o.buffer].shape);
      }
    }
  return w;
}

// The programs, built inside functions so that the program holds no intermediate.
Array softmax(const Array& x) {
  Array e = kiln::exp(x - kiln::max(x, {1}, true));
  return e / kiln::sum(e, {1}, true);
}
Array layernorm(const Array& x) {
  Array d = x - kiln::mean(x, {1}, true);
  return d / kiln::sqrt(kiln::mean(d * d, {1}, true) + 1e-5);
}
Array centred_peak(const Array& x) {
  Array y = kiln::sin(x) * 2 + kiln::cos(x) / 3;
  return y - kiln::max(y);
}

}  // namespace

TEST_CASE("a value two groups read is written once, its parts are not") {
  Array x = ramp(64, 256);
  // y is read by the max and by the subtraction: y is written; sin(x), cos(x) and the partial
  // sums are not (they were, as four more outputs of y's kernel).
  Writes w = writes_of(centred_peak(x));
  CHECK(w.kernels == 3);
  CHECK(w.outputs == 3);                  // y, max(y), the result
  CHECK(w.elements == 64 * 256 * 2 + 1);  // y and the result in full, one max
  // Something long or heavy that two groups read is written once rather than recomputed.
  auto heavy = [](const Array& a) {
    Array h = kiln::exp(kiln::sin(a)) * kiln::tanh(a);
    return h - kiln::max(h);
  };
  CHECK(writes_of(heavy(x)).elements == 64 * 256 * 2 + 1);
}

TEST_CASE("softmax and layernorm write their result, nothing else") {
  Array x = ramp(64, 256);
  // The row statistics are folded inside the kernel that reads them (a row of 256 fits on
  // chip), and exp(x - max) and x - mean are computed there too: one kernel, one write.
  for (const auto& f : {softmax, layernorm}) {
    Writes w = writes_of(f(x));
    CHECK(w.kernels == 1);
    CHECK(w.outputs == 1);
    CHECK(w.elements == 64 * 256);
  }
  // Rows too long to stay on chip: the statistics in kernels of their own, then the result;
  // exp(x - max) and x - mean are recomputed where they are read, never written.
  Array wide = ramp(3, 9000);
  for (const auto& f : {softmax, layernorm}) {
    Writes w = writes_of(f(wide));
    CHECK(w.kernels == 3);
    CHECK(w.outputs == 3);
    CHECK(w.elements == 3 * 9000 + 3 + 3);
  }
  // The values: softmax against a direct computation.
  auto sm = softmax(x).to_vector<float>();
  auto xv = x.to_vector<float>();
  for (int r = 0; r < 64; r += 9) {
    double mx = -1e30, total = 0;
    for (int c = 0; c < 256; ++c) mx = std::max<double>(mx, xv[r * 256 + c]);
    for (int c = 0; c < 256; ++c) total += std::exp(double(xv[r * 256 + c]) - mx);
    for (int c = 0; c < 256; c += 31)
      CHECK(sm[r * 256 + c] ==
            doctest::Approx(std::exp(double(xv[r * 256 + c]) - mx) / total).epsilon(1e-5));
  }
}

TEST_CASE("an array the program holds is written by the evaluation that computes it") {
  Array x = ramp(64, 256);
  Array e = kiln::exp(x - kiln::max(x, {1}, true));  // held
  Array s = e / kiln::sum(e, {1}, true);
  // e is written as well (once), and after the evaluation it is evaluated.
  CHECK(writes_of(s).elements == 2 * 64 * 256);  // as one more output of the one kernel
  s.eval();
  CHECK(e.node()->is_leaf());
  CHECK(kiln::allclose(e, kiln::exp(x - kiln::max(x, {1}, true))));
  // Off: only what the plan needs.
  kiln::set_materialize_held(false);
  Array e2 = kiln::exp(x * 2 - kiln::max(x, {1}, true));
  Array s2 = e2 / kiln::sum(e2, {1}, true);
  CHECK(writes_of(s2).elements == 64 * 256);
  s2.eval();
  CHECK_FALSE(e2.node()->is_leaf());
  kiln::set_materialize_held(true);
  CHECK(kiln::get_materialize_held());
  // Views and constants the program holds are not written: they cost nothing to redo.
  Array t = x.T();
  CHECK(writes_of(t * 2).elements == 64 * 256);
}

TEST_CASE("a temporary that an operator or elementwise function consumes is not held") {
  // The operators and the functions up to `where` in array.hpp take their operands by value:
  // a C++ temporary is moved into the new node, so while its statement runs nothing but the
  // graph refers to it, and the evaluation writes only the result.
  Array x = ramp(64, 256);
  const int64_t n = 64 * 256;
  CHECK(writes_of(kiln::sin(x) * 2 + kiln::exp(-x)).elements == n);
  CHECK(writes_of(kiln::where(x > 0, kiln::sqrt(x * 3), -x)).elements == n);
  CHECK(writes_of(kiln::maximum(kiln::abs(x) - 1, x * 2)).elements == n);
  // A named intermediate is still the program's: written too, once.
  Array t = kiln::sin(x) * 2;
  CHECK(writes_of(t + kiln::exp(-x)).elements == 2 * n);
  // The temporaries' values: the same as built step by step.
  auto got = (kiln::sin(x) * 2 + kiln::exp(-x)).to_vector<float>();
  auto xs = x.to_vector<float>();
  for (size_t i = 0; i < xs.size(); i += 97)
    CHECK(got[i] == doctest::Approx(std::sin(xs[i]) * 2 + std::exp(-xs[i])).epsilon(1e-6));
}

TEST_CASE("a convergence loop keeps its history short and its plans cached") {
  // x = x * 0.999 + 0.001 until max(x) says stop. The program holds x, which only the max's
  // prologue computes: it is written once its unevaluated history reaches the planner's depth
  // bound (8 levels; each iteration adds a multiply and an add over broadcast scalars), so no
  // evaluation recomputes more than a few iterations' worth, and the loop cycles through a few
  // plan structures, each planned once (it planned one per iteration, ever longer, before).
  Array x = kiln::asarray(std::vector<double>(100000, 20.0)).eval();
  kiln::runtime::reset_plan_cache_counters();
  int iterations = 0, written = 0;
  uint32_t deepest = 0;
  double m = 0;
  for (; iterations < 300; ++iterations) {
    x = x * 0.999 + 0.001;
    m = kiln::max(x).item<double>();
    deepest = std::max(deepest, x.node()->is_leaf() ? 0u : x.node()->depth);
    written += x.node()->is_leaf();
    if (m < 10) break;
  }
  // 20 * 0.999^k + (1 - 0.999^k) < 10 first at k = 694: the loop runs its 300 iterations.
  CHECK(iterations == 300);
  CHECK(m == doctest::Approx(19 * std::pow(0.999, 300) + 1).epsilon(1e-12));
  CHECK(deepest < 8);
  CHECK(written >= 300 / 4);
  auto c = kiln::runtime::plan_cache_counters();
  CHECK(c.misses <= 4);
  CHECK(c.hits + c.misses == 300);
  // Switched off, the history grows without bound (until the builder's own 256-level limit).
  kiln::set_materialize_held(false);
  Array y = kiln::asarray(std::vector<double>(1000, 20.0)).eval();
  for (int i = 0; i < 20; ++i) {
    y = y * 0.999 + 0.001;
    (void)kiln::max(y).item<double>();
  }
  kiln::set_materialize_held(true);
  CHECK_FALSE(y.node()->is_leaf());
  CHECK(y.node()->depth >= 40);
}
