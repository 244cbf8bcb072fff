// A scan of an elementwise expression computes the expression as it loads it (the planner's
// fold_scan_producers, FusedGroup::scan): cumsum(x * 2 + 1) is one kernel that reads x and
// writes the scan, where it was a kernel writing x * 2 + 1 and a scan step reading it back.
// Checked against the unfused evaluation (eager mode writes every value, so its scan reads the
// producer from memory: the host's fused scan must give the same bits), against hand loops, and
// on a GPU against the host. Without a GPU, evaluation compiles each kernel through NVRTC under
// KILN_JIT_ARCH (set below, as in CI), so the generated scan kernels are compiled here too.
#include <doctest/doctest.h>

#include <stdlib.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <kiln/kiln.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "support/gpu.hpp"

namespace {

using kiln::Array;
using kiln::DType;
using kiln::Shape;

const bool kArchSet = [] { return ::setenv("KILN_JIT_ARCH", "sm_90", 0) == 0; }();

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// The steps explain() lists.
int steps(const std::string& text) { return count(text, "step "); }

// Uniform values in [0, 1) of `shape`, float64, evaluated (a leaf).
Array uniform(const Shape& shape, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int64_t size = 1;
  for (int64_t d : shape) size *= d;
  std::vector<double> v(size);
  for (double& x : v) x = unit(g);
  return kiln::asarray(v, shape).eval();
}

Array scan(const Array& x, bool product, std::optional<int> axis) {
  return product ? kiln::cumprod(x, axis) : kiln::cumsum(x, axis);
}

// The producers under test, each of x (float64 in [0, 1)) cast to t first: affine, a
// transcendental, a where, integer arithmetic, a comparison's running count. Builders, not
// arrays: a producer the program holds is not fused (the plan writes it, for later reads).
using Producer = std::pair<std::string, std::function<Array(const Array&)>>;
std::vector<Producer> producers(DType t) {
  std::vector<Producer> out;
  if (kiln::is_integer(t)) {
    out.push_back({"k * 3 - 7", [t](const Array& x) { return (x * 10).astype(t) * 3 - 7; }});
    out.push_back({"k % 4 + 1", [t](const Array& x) { return (x * 10).astype(t) % 4 + 1; }});
  } else {
    out.push_back({"y * 2 + 1", [t](const Array& x) { return x.astype(t) * 2 + 1; }});
    out.push_back({"exp(y)", [t](const Array& x) { return kiln::exp(x.astype(t)); }});
    out.push_back({"where(y > 0.5, y, 1 - y)", [t](const Array& x) {
                     Array y = x.astype(t);
                     return kiln::where(y > 0.5, y, 1 - y);
                   }});
  }
  out.push_back({"x > 0.5", [](const Array& x) { return x > 0.5; }});
  return out;
}

// The expression evaluated eagerly: every node written, so the scan is a scan step that reads
// its producer from memory (the unfused path).
Array eager(const std::function<Array()>& build) {
  kiln::EagerScope eager;
  return build().eval();
}

// The scan `build` makes is planned as one kernel step that says what it fuses, and its values
// are the unfused program's bit for bit.
void check_fused(const std::function<Array()>& build, const std::string& op) {
  Array fused = build();
  std::string plan = kiln::explain({fused});
  INFO(plan);
  CHECK(steps(plan) == 1);
  CHECK(count(plan, "kernel k_" + op) == 1);
  CHECK(count(plan, op + " (scan) of ") == 1);
  CHECK(count(plan, " fused, along ") == 1);
  fused.eval();
  Array unfused = eager(build);
  CHECK(fused.dtype() == unfused.dtype());
  CHECK(kiln::array_equal(fused, unfused));
}

}  // namespace

TEST_CASE("cumsum and cumprod of elementwise producers are one kernel, equal to the unfused") {
  const Shape shapes[] = {{7}, {5, 13}, {3, 4, 5}, {2, 1, 9}};
  for (const Shape& shape : shapes) {
    const Array x = uniform(shape, 3);
    const int nd = static_cast<int>(shape.size());
    std::vector<std::optional<int>> axes{std::nullopt, -1};
    for (int a = 0; a < nd; ++a) axes.push_back(a);
    for (DType t : {DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::Float16,
                    DType::Complex64})
      for (const auto& [name, build] : producers(t))
        for (auto axis : axes)
          for (bool product : {false, true}) {
            INFO(name << " in " << kiln::dtype_name(t) << (product ? ", cumprod" : ", cumsum")
                      << " along " << (axis ? std::to_string(*axis) : "None") << " of "
                      << kiln::shape_str(shape));
            check_fused([&] { return scan(build(x), product, axis); },
                        product ? "cumprod" : "cumsum");
          }
  }
}
