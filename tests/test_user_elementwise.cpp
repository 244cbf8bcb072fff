// kiln::elementwise on a machine with or without a GPU: names and expressions are checked,
// equal calls share a node, a plan and a kernel while different texts never do, the planner
// fuses the expression with kiln's own operations, the host refuses to run it, and NVRTC
// compiles the generated kernels for sm_90 (good expressions compile, bad ones raise
// CompileError naming the expression). With a GPU, results are checked against kiln's own ops.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <cstdlib>
#include <functional>
#include <kiln/kiln.hpp>
#include <string>
#include <vector>

#include "cuda/kernels.hpp"
#include "graph/node.hpp"
#include "plan/planner.hpp"
#include "support/gpu.hpp"

namespace {

using kiln::Array;
using kiln::DType;
namespace plan = kiln::plan;

// Kernels compiled here stay in memory: nothing is written to the user's cache. Set before
// main(), since the JIT and the executor read the environment once.
const bool kEnvSet = [] {
  ::setenv("KILN_CACHE", "memory", 1);
  ::setenv("KILN_JIT_ARCH", "sm_90", 0);
  return true;
}();

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

Array ramp(int64_t n, double scale, double shift, DType t = DType::Float32) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<double>(i) * scale) + shift;
  return kiln::asarray(v).astype(t).eval();
}

plan::Plan plan_of(const std::vector<Array>& outputs) {
  std::vector<kiln::graph::NodeRef> nodes;
  for (const auto& a : outputs) nodes.push_back(a.node());
  return plan::make_plan(nodes);
}

std::vector<const plan::KernelStep*> kernel_steps(const plan::Plan& p) {
  std::vector<const plan::KernelStep*> out;
  for (const auto& s : p.steps)
    if (auto* k = std::get_if<plan::KernelStep>(&s)) out.push_back(k);
  return out;
}

// Generates and NVRTC-compiles the one kernel of the plan of `a`, for sm_90, no GPU needed;
// returns the kernel's name.
std::string compile(const Array& a) {
  plan::Plan p = plan_of({a});
  auto steps = kernel_steps(p);
  REQUIRE(steps.size() == 1);
  return *kiln::gpu::compile_group(*steps[0], "sm_90").name;  // the name lives in p
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("names must be distinct C identifiers that the generated code does not use") {
  Array a = ramp(8, 0.1, 0);
  auto with_name = [&](const std::string& name) {
    return error_of([&] { kiln::elementwise("1", {{name, a}}, DType::Float32); });
  };
  CHECK(with_name("x_1").empty());
  CHECK(with_name("_x").empty());
  for (const char* bad : {"", "1x", "x-y", "x y", "float", "return", "kiln", "__x", "_X", "é"}) {
    INFO("name '" << bad << "'");
    std::string msg = with_name(bad);
    CHECK(contains(msg, "kiln::elementwise: the input name"));
    CHECK(contains(msg, "use a C identifier"));
  }
  CHECK(contains(with_name(std::string("x\0y", 3)), "input name \"x?y\" is not a C identifier"));
  CHECK(contains(error_of([&] {
                   kiln::elementwise("x", {{"x", a}, {"x", a}}, DType::Float32);
                 }),
                 "is given twice"));
}

TEST_CASE("an expression must be one expression with closed brackets, quotes and comments") {
  Array a = ramp(8, 0.1, 0);
  auto with_expr = [&](const std::string& e) {
    return error_of([&] { kiln::elementwise(e, {{"x", a}}, DType::Float32); });
  };
  for (const char* good : {"x", "fmaxf(x, 0.f) // relu", "x > 0 ? x : 0.1f * x",
                           "[](float v) { float w = v * v; return w; }(x)", "x /* ; ) */ + 1",
                           "x + (')' == 41)", "x +\n  1"})
    CHECK_MESSAGE(with_expr(good).empty(), good);
  struct Case {
    const char* expr;
    const char* says;
  };
  for (Case c : {Case{"", "is empty"}, Case{" \n\t", "is empty"}, Case{"x)", "unmatched ')'"},
                 Case{"(x", "unclosed '('"}, Case{"x[0}", "unmatched '}'"},
                 Case{"x; x", "outside brackets"}, Case{"x + \"a", "unterminated quote"},
                 Case{"x /* y", "unterminated /* comment"}, Case{"x \a", "control character"}}) {
    INFO("expression '" << c.expr << "'");
    CHECK(contains(with_expr(c.expr), c.says));
  }
  CHECK(contains(with_expr(std::string("x\0 + 1", 5)), "control character (code 0)"));
}

TEST_CASE("inputs broadcast, keep their dtypes and share one device; one array is needed") {
  Array a = ramp(6, 0.1, 0).reshape({2, 3});
  Array b = kiln::arange(0, 3, 1, DType::Int32);
  Array f = kiln::elementwise("x * y", {{"x", a}, {"y", b}, {"alpha", 0.5}}, DType::Float64);
  CHECK(f.shape() == kiln::Shape{2, 3});
  CHECK(f.dtype() == DType::Float64);
  CHECK(f.device() == kiln::host());
  auto p = plan_of({f});
  auto steps = kernel_steps(p);
  REQUIRE(steps.size() == 1);
  const auto& g = steps[0]->group;
  REQUIRE(g.user_calls.size() == 1);
  const auto& call = g.user_calls[0];
  CHECK(call.code->names == std::vector<std::string>{"x", "y", "alpha"});
  REQUIRE(call.operands.size() == 3);
  CHECK(g.code[call.operands[0]].dtype == DType::Float32);
  CHECK(g.code[call.operands[1]].dtype == DType::Int32);
  CHECK(g.code[call.operands[2]].kind == plan::InstrKind::Param);  // a scalar: a parameter
  CHECK(g.code[call.operands[2]].dtype == DType::Float64);

  CHECK_THROWS_AS(kiln::elementwise("x + y", {{"x", a}, {"y", ramp(4, 0.1, 0)}}, DType::Float32),
                  kiln::ShapeError);
  CHECK(contains(error_of([] {
                   kiln::elementwise("x", {{"x", 1.5}}, DType::Float32);
                 }),
                 "at least one input must be an Array"));
}

TEST_CASE("the text is part of the identity: equal calls share a node and a plan") {
  Array a = ramp(64, 0.1, 0), b = ramp(64, 0.2, 1);
  auto f = [&](const char* expr, const char* x = "x") {
    return kiln::elementwise(expr, {{x, a}, {"y", b}}, DType::Float32);
  };
  CHECK(f("x * y").node() == f("x * y").node());  // hash-consed
  CHECK(f("x * y").node() != f("x + y").node());
  CHECK(f("x * y").node() != f("x*y").node());  // the text, not its meaning
  CHECK(f("x * y").node() != f("z * y", "z").node());
  CHECK(f("x * y").node() !=
        kiln::elementwise("x * y", {{"x", a}, {"y", b}}, DType::Float64).node());

  // The plan cache's key: equal structure over other data hashes alike, another text not.
  Array c = ramp(64, 0.3, 2), d = ramp(64, 0.4, 3);
  auto hash = [](const Array& r) { return kiln::graph::structural_hash({r.node()}); };
  Array same = kiln::elementwise("x * y", {{"x", c}, {"y", d}}, DType::Float32);
  CHECK(hash(f("x * y")) == hash(same));
  CHECK(hash(f("x * y")) != hash(f("x + y")));
  CHECK(hash(f("x * y")) != hash(f("z * y", "z")));
}

TEST_CASE("the planner fuses a user expression with kiln's operations into one kernel") {
  Array a = ramp(1000, 0.01, 0), b = ramp(1000, 0.02, 1);
  Array f = kiln::elementwise("x * y + sinf(x)", {{"x", a * 2}, {"y", b}}, DType::Float32);
  Array y = kiln::exp(-f) + 1;
  plan::Plan p = plan_of({y});
  auto steps = kernel_steps(p);
  REQUIRE(steps.size() == 1);
  CHECK(steps[0]->group.user_calls.size() == 1);
  CHECK(contains(steps[0]->group.name, "user"));

  Array total = kiln::sum(kiln::elementwise("x * x", {{"x", a}}, DType::Float64) * 3);
  plan::Plan q = plan_of({total});
  steps = kernel_steps(q);
  REQUIRE(steps.size() == 1);  // a reduction with the expression as its prologue
  CHECK(steps[0]->group.reduction.has_value());

  std::string text = kiln::explain({y});
  CHECK(contains(text, "user[x * y + sinf(x)](x=mul(in0, s0), y=in1)"));
  CHECK(contains(text, "step 1: kernel k_user_mul_neg_exp_add_f32"));
  CHECK_FALSE(contains(text, "step 2"));
  CHECK(contains(kiln::to_dot({y}), "[label=\"y\"]"));
}

TEST_CASE("good expressions compile for sm_90 (no GPU needed), whatever the dtypes") {
  Array f32 = ramp(100, 0.1, 0), f64 = ramp(100, 0.1, 0, DType::Float64);
  Array i32 = kiln::arange(0, 100, 1, DType::Int32), i64 = kiln::arange(100);
  Array c64 = f32.astype(DType::Complex64), b = f32 > 0;
  struct Case {
    const char* expr;
    std::vector<kiln::ElementwiseInput> inputs;
    DType out;
  };
  std::vector<Case> cases = {
      {"x * y + sinf(x)", {{"x", f32}, {"y", f32 * 2}}, DType::Float32},
      {"exp(-x) * n", {{"x", f64}, {"n", i64}}, DType::Int32},  // float to int, as astype
      {"x * 3 + n", {{"x", i32}, {"n", 7}}, DType::Int64},
      {"z * z + kiln::complex<float>(0, 1)", {{"z", c64}}, DType::Complex64},
      {"kiln::abs(z)", {{"z", c64}}, DType::Float64},
      {"z", {{"z", c64}}, DType::Float32},  // complex to real keeps the real part
      {"p && x > 0.5f", {{"p", b}, {"x", f32}}, DType::Bool},
      {"x", {{"x", f32}}, DType::Complex128},
      {"alpha * x // scaled\n", {{"x", f32}, {"alpha", 0.5}}, DType::Float32},
      {"x + 1 // a comment ending in a backslash \\", {{"x", f32}}, DType::Float32},
      {"x + t0 + in0", {{"t0", f32}, {"in0", f32 * 3}, {"x", f32}}, DType::Float32},
  };
  for (const auto& c : cases) {
    INFO("expression: " << c.expr);
    Array r = kiln::elementwise(c.expr, c.inputs, c.out);
    std::string name;
    CHECK_NOTHROW(name = compile(r));
    CHECK(contains(name, "user"));
  }
  // Fused into a reduction too.
  CHECK_NOTHROW(compile(kiln::sum(kiln::elementwise("x * x", {{"x", f32}}, DType::Float32))));
}

TEST_CASE("equal expressions share one kernel; different texts never do") {
  Array a = ramp(256, 0.1, 0), b = ramp(256, 0.3, 1), c = ramp(256, 0.5, 2);
  auto name = [](const Array& r) { return compile(r); };
  std::string k1 = name(kiln::elementwise("x * y", {{"x", a}, {"y", b}}, DType::Float32));
  std::string k2 = name(kiln::elementwise("x * y", {{"x", c}, {"y", a}}, DType::Float32));
  std::string k3 = name(kiln::elementwise("x + y", {{"x", a}, {"y", b}}, DType::Float32));
  CHECK(k1 == k2);
  CHECK(k1 != k3);
}

TEST_CASE("an expression that does not compile raises CompileError naming it") {
  Array a = ramp(32, 0.1, 0);
  Array bad = kiln::elementwise("x * undefined_thing(x)", {{"x", a}}, DType::Float32);
  std::string msg;
  try {
    compile(bad);
  } catch (const kiln::CompileError& e) {
    msg = e.what();
  }
  REQUIRE_FALSE(msg.empty());
  CHECK(
      contains(msg, "the kernel with the user expression \"x * undefined_thing(x)\" (x: float32)"));
  CHECK(contains(msg, "source saved to: /"));
  CHECK(contains(msg, "NVRTC log:"));
  CHECK(contains(msg, "undefined_thing"));
  // The generated code is not reachable from the expression: `i` and `n` are kernel locals.
  CHECK_THROWS_AS(compile(kiln::elementwise("x + n", {{"x", a}}, DType::Float32)),
                  kiln::CompileError);
}

TEST_CASE("on the host a user expression is refused before anything runs") {
  Array a = ramp(32, 0.1, 0);
  Array f = kiln::elementwise("x * 2", {{"x", a}}, DType::Float32);
  std::string msg = error_of([&] { f.eval(); });
  CHECK(contains(msg, "the user CUDA expression \"x * 2\" (inputs x) runs only on a GPU"));
  CHECK(contains(msg, "kiln::asarray(x, kiln::cuda())"));
  CHECK_THROWS_AS(f.eval(), kiln::DeviceError);
  CHECK_FALSE(f.node()->is_leaf());
  // explain() says so before anything runs, instead of naming the host executor.
  std::string plan = kiln::explain({f});
  CHECK(contains(plan, "on host (cannot run on the host: kiln::elementwise's CUDA expression"));
  CHECK_FALSE(contains(plan, "host executor"));
}

// With KILN_JIT_ARCH and no GPU, the host compiles every group first, as for any group: a bad
// expression reports CompileError even there.
NO_GPU_TEST_CASE("without a GPU but with KILN_JIT_ARCH a bad user expression is a CompileError") {
  if (!std::getenv("KILN_JIT_ARCH")) {
    FAIL_CHECK("KILN_JIT_ARCH is not set: run the suite as .ci/run does (KILN_JIT_ARCH=sm_90)");
    return;
  }
  Array a = ramp(32, 0.1, 0);
  CHECK_THROWS_AS(kiln::elementwise("x +* 2", {{"x", a}}, DType::Float32).eval(),
                  kiln::CompileError);
}

GPU_TEST_CASE("on a GPU the results match kiln's own operations") {
  kiln::Device gpu = kiln::cuda();
  Array a = ramp(10000, 0.01, 0.5), b = ramp(10000, 0.02, -1);
  Array x = kiln::asarray(a, gpu), y = kiln::asarray(b, gpu);
  Array f = kiln::elementwise("x * y + sinf(x)", {{"x", x}, {"y", y}}, DType::Float32);
  // sinf in float32 against sin in float64: absolute differences near the zeros ~1e-7.
  CHECK(kiln::allclose(f.get(), a * b + kiln::sin(a), 1e-5, 1e-6));
  // Fused with kiln's operations before and after, and into a reduction.
  Array g = kiln::sum(
      kiln::exp(-kiln::elementwise("x * alpha", {{"x", x * 2}, {"alpha", 0.25}}, DType::Float64)));
  CHECK(g.item<double>() == doctest::Approx(kiln::sum(kiln::exp(-(a * 2 * 0.25))).item<double>()));
  // Broadcasting, an int32 input and float-to-int conversion as astype does it. In C++ float *
  // int is a float product (NumPy would promote to float64), so the reference multiplies in
  // float32 too.
  Array n = kiln::arange(0, 4, 1, DType::Int32).reshape({4, 1});
  Array h = kiln::elementwise(
      "x * n", {{"x", x.reshape({100, 100})(kiln::Slice(0, 4))}, {"n", kiln::asarray(n, gpu)}},
      DType::Int64);
  Array href =
      (a.reshape({100, 100})(kiln::Slice(0, 4)) * n.astype(DType::Float32)).astype(DType::Int64);
  CHECK(kiln::array_equal(h.get(), href));
}

// Not a user expression, but the same compile path: a chain whose every value is read twice
// (y = where(y > i, y, c)). Kernel temporaries were const locals, which NVRTC's front end tried
// to fold as constant expressions through every reader, in time doubling with each step (22
// steps took 20 s, 26 steps 33 s under the stub runtime): 40 steps would not finish. Its
// kernel must compile (the suite's timeout is what fails it otherwise).
TEST_CASE("a where chain that reads each value twice compiles: 40 steps in one kernel") {
  Array y = kiln::zeros({5}, DType::Float32);
  for (int i = 0; i < 40; ++i) y = kiln::where(y > static_cast<float>(i), y, i * 0.5f);
  CHECK(compile(y).find("where") != std::string::npos);
  // Step i keeps y only where y > i; y is (i - 1) / 2 then, below i, so each step sets i / 2.
  CHECK(kiln::array_equal(y.get(), kiln::full({5}, 19.5f)));
}
