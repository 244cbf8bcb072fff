// On the GPU, every op x dtype, broadcasting, view and reduction form gives the host's result
// (exact for integers and bool, a tolerance by dtype otherwise); eager equals lazy; a second
// process finds the kernels on disk. Each case is skipped, and says so, without a GPU.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <kiln/cache.hpp>
#include <kiln/kiln.hpp>
#include <limits>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "graph/op_table.hpp"
#include "plan/planner.hpp"
#include "support/child_case.hpp"
#include "support/gpu.hpp"
#include "support/temp_cache.hpp"

namespace {

using kiln::Array;
using kiln::DType;
using kiln::Shape;
using kiln::Slice;
using Fn = std::function<Array(const std::vector<Array>&)>;

// Values with negatives, zeros and fractions, in the dtype t.
Array sample(const Shape& s, DType t, double scale = 1.0, double shift = 0.0) {
  int64_t n = kiln::shape_size(s);
  std::vector<double> re(n), im(n);
  for (int64_t i = 0; i < n; ++i) {
    re[i] = scale * (std::sin(0.7 * i + shift) * 3.0);
    im[i] = scale * std::cos(0.3 * i - shift);
  }
  if (t == DType::Bool) return (kiln::asarray(re, s) > 0).eval();
  if (kiln::is_integer(t)) return kiln::floor(kiln::asarray(re, s) * 10).astype(t).eval();
  Array a = kiln::asarray(re, s);
  if (kiln::is_complex(t)) a = a + kiln::asarray(im, s) * std::complex<double>(0, 1);
  return a.astype(t).eval();
}

// (A half rounds a float32 result: the two sides' float32 functions may differ in the last
// bit, which can move the rounded half by one of its ulps, 2^-10 or 2^-7 relative.)
double rtol_of(DType t) {
  switch (kiln::real_dtype(t)) {
    case DType::Float16:
      return 1e-3;
    case DType::BFloat16:
      return 8e-3;
    case DType::Float32:
      return 2e-5;
    default:
      return 1e-11;
  }
}

// Elementwise on host arrays: within the tolerance (NumPy's isclose), equal (so equal
// infinities, whose difference is NaN), or both NaN (for complex: NaN in either part).
Array near(const Array& a, const Array& b, double rtol, double atol) {
  return (kiln::abs(a - b) <= atol + rtol * kiln::abs(b)) | (a == b) | ((a != a) & (b != b));
}

// `atol` widens the tolerance for long float sums, whose rounding depends on the order.
// Complex values also pass part by part, so that (inf, 1) matches (inf, 1 + 1e-12).
void check_same(const std::string& what, const Array& host, const Array& gpu, double atol = 0) {
  INFO(what);
  REQUIRE(gpu.device() == kiln::cuda());
  Array back = gpu.get();
  REQUIRE(back.dtype() == host.dtype());
  REQUIRE(back.shape() == host.shape());
  DType t = host.dtype();
  if (t == DType::Bool || kiln::is_integer(t)) {
    CHECK(kiln::array_equal(host, back));
    return;
  }
  double rtol = rtol_of(t);
  atol = std::max(atol, rtol);
  Array ok = near(back, host, rtol, atol);
  if (kiln::is_complex(t))
    ok = ok | (near(kiln::real(back), kiln::real(host), rtol, atol) &
               near(kiln::imag(back), kiln::imag(host), rtol, atol));
  CHECK(kiln::all(ok).item<bool>());
}

std::vector<Array> on_gpu(const std::vector<Array>& inputs) {
  std::vector<Array> dev;
  for (const auto& a : inputs) dev.push_back(kiln::asarray(a, kiln::cuda()));
  return dev;
}

// Runs f on host inputs and on copies of them on the GPU; the results must agree. What the
// host refuses for these dtypes (DTypeError) the GPU must refuse too.
void same_on_gpu(const std::string& what, const Fn& f, const std::vector<Array>& inputs,
                 double atol = 0) {
  Array host;
  try {
    host = f(inputs).eval();
  } catch (const kiln::DTypeError&) {
    INFO(what << ": the host refuses it");
    CHECK_THROWS_AS(f(on_gpu(inputs)).eval(), kiln::DTypeError);
    return;
  }
  check_same(what, host, f(on_gpu(inputs)).eval(), atol);
}

using UnaryList = std::vector<std::pair<std::string, std::function<Array(const Array&)>>>;
using BinaryList =
    std::vector<std::pair<std::string, std::function<Array(const Array&, const Array&)>>>;

// Every Math row of graph/op_table.hpp, by its name, after the hand-spelled ops.
#define KILN_TEST_ROW(Enum, name, cfn, form, complex, heavy) KILN_TEST_##form(name)
#define KILN_TEST_Custom(name)
#define KILN_TEST_Arith(name)
#define KILN_TEST_Compare(name)
#define KILN_TEST_Bitwise(name)

UnaryList unary_ops() {
  UnaryList ops = {
      {"neg", [](const Array& a) { return -a; }},
      {"not", [](const Array& a) { return ~a; }},
      {"abs", [](const Array& a) { return kiln::abs(a); }},
      {"floor", [](const Array& a) { return kiln::floor(a); }},
      {"ceil", [](const Array& a) { return kiln::ceil(a); }},
      {"real", [](const Array& a) { return kiln::real(a); }},
      {"imag", [](const Array& a) { return kiln::imag(a); }},
      {"conj", [](const Array& a) { return kiln::conj(a); }},
      // Compositions of the ops above (src/api/composite.cpp) and of the Math rows.
      {"trunc", [](const Array& a) { return kiln::trunc(a); }},
      {"round", [](const Array& a) { return kiln::round(a); }},
      {"round(2)", [](const Array& a) { return kiln::round(a, 2); }},
      {"round(-1)", [](const Array& a) { return kiln::round(a * 37, -1); }},
      {"square", [](const Array& a) { return kiln::square(a); }},
      {"reciprocal", [](const Array& a) { return kiln::reciprocal(a); }},
      {"sign", [](const Array& a) { return kiln::sign(a); }},
      {"isnan", [](const Array& a) { return kiln::isnan(a); }},
      {"isinf", [](const Array& a) { return kiln::isinf(a); }},
      {"isfinite", [](const Array& a) { return kiln::isfinite(a); }},
      {"signbit", [](const Array& a) { return kiln::signbit(a); }},
      {"logical_not", [](const Array& a) { return kiln::logical_not(a); }},
      {"nan_to_num", [](const Array& a) { return kiln::nan_to_num(a); }},
      {"angle", [](const Array& a) { return kiln::angle(a, true); }},
      {"degrees", [](const Array& a) { return kiln::degrees(a); }},
      {"radians", [](const Array& a) { return kiln::radians(a); }},
      {"gelu", [](const Array& a) { return kiln::gelu(a); }},
      {"gelu(tanh)", [](const Array& a) { return kiln::gelu(a, kiln::GeluApproximate::Tanh); }},
  };
#define KILN_TEST_Math(name) ops.push_back({#name, [](const Array& a) { return kiln::name(a); }});
  KILN_UNARY_OPS(KILN_TEST_ROW)
#undef KILN_TEST_Math
  for (auto& [name, f] : ops)
    if (name == "tan") f = [](const Array& a) { return kiln::tan(a * 0.3); };  // off its poles
  return ops;
}

BinaryList binary_ops() {
  BinaryList ops = {
      {"add", [](const Array& a, const Array& b) { return a + b; }},
      {"sub", [](const Array& a, const Array& b) { return a - b; }},
      {"mul", [](const Array& a, const Array& b) { return a * b; }},
      {"div", [](const Array& a, const Array& b) { return a / b; }},
      {"pow", [](const Array& a, const Array& b) { return kiln::pow(a, kiln::abs(b)); }},
      {"minimum", [](const Array& a, const Array& b) { return kiln::minimum(a, b); }},
      {"maximum", [](const Array& a, const Array& b) { return kiln::maximum(a, b); }},
      {"eq", [](const Array& a, const Array& b) { return a == b; }},
      {"ne", [](const Array& a, const Array& b) { return a != b; }},
      {"lt", [](const Array& a, const Array& b) { return a < b; }},
      {"le", [](const Array& a, const Array& b) { return a <= b; }},
      {"gt", [](const Array& a, const Array& b) { return a > b; }},
      {"ge", [](const Array& a, const Array& b) { return a >= b; }},
      {"and", [](const Array& a, const Array& b) { return a & b; }},
      {"or", [](const Array& a, const Array& b) { return a | b; }},
      {"xor", [](const Array& a, const Array& b) { return a ^ b; }},
      {"floor_divide", [](const Array& a, const Array& b) { return kiln::floor_divide(a, b); }},
      {"remainder", [](const Array& a, const Array& b) { return a % b; }},
      {"fmod", [](const Array& a, const Array& b) { return kiln::fmod(a, b); }},
      {"left_shift", [](const Array& a, const Array& b) { return a << b; }},
      {"right_shift", [](const Array& a, const Array& b) { return a >> b; }},
      {"logical_and", [](const Array& a, const Array& b) { return kiln::logical_and(a, b); }},
      {"logical_or", [](const Array& a, const Array& b) { return kiln::logical_or(a, b); }},
      {"logical_xor", [](const Array& a, const Array& b) { return kiln::logical_xor(a, b); }},
  };
#define KILN_TEST_Math(name) \
  ops.push_back({#name, [](const Array& a, const Array& b) { return kiln::name(a, b); }});
  KILN_BINARY_OPS(KILN_TEST_ROW)
#undef KILN_TEST_Math
  return ops;
}

const UnaryList kUnary = unary_ops();
const BinaryList kBinary = binary_ops();

// What NumPy's wrapping int64 arithmetic gives: the exact sum or product modulo 2^64.
int64_t wrapped_sum(const std::vector<int64_t>& v) {
  uint64_t s = 0;
  for (int64_t x : v) s += static_cast<uint64_t>(x);
  return static_cast<int64_t>(s);
}
int64_t wrapped_prod(const std::vector<int64_t>& v) {
  uint64_t p = 1;
  for (int64_t x : v) p *= static_cast<uint64_t>(x);
  return static_cast<int64_t>(p);
}

// The rows (or, with columns, the columns) of a row-major rows x cols matrix.
std::vector<std::vector<int64_t>> lines(const std::vector<int64_t>& m, int64_t rows, int64_t cols,
                                        bool columns = false) {
  std::vector<std::vector<int64_t>> out(columns ? cols : rows);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[columns ? c : r].push_back(m[r * cols + c]);
  return out;
}

// f (int64 sum or product) of each line, and of all of them together.
std::vector<int64_t> each(const std::vector<std::vector<int64_t>>& ls,
                          int64_t (*f)(const std::vector<int64_t>&)) {
  std::vector<int64_t> out;
  for (const auto& l : ls) out.push_back(f(l));
  return out;
}

// A GPU result with dtype t and exactly the elements `want` (NaN matching NaN for floats).
template <class T>
void check_values(const std::string& what, const Array& gpu, DType t, const std::vector<T>& want) {
  INFO(what);
  REQUIRE(gpu.device() == kiln::cuda());
  Array back = gpu.get();
  REQUIRE(back.dtype() == t);
  std::vector<T> got = back.to_vector<T>();
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    if constexpr (std::is_floating_point_v<T>)
      CHECK((std::isnan(want[i]) ? std::isnan(got[i]) : got[i] == want[i]));
    else
      CHECK(got[i] == want[i]);
  }
}

Array gpu_array(const std::vector<int64_t>& v, DType t, const Shape& s) {
  return kiln::asarray(kiln::asarray(v, s).astype(t), kiln::cuda());
}

// The edges of floating point: NaN, both infinities and zeros, the largest float32 and float64
// magnitudes (float64's are infinite in float32), a subnormal, the int32 and int64 bounds and
// values just past them, and ordinary values.
std::vector<double> special_values() {
  const double inf = std::numeric_limits<double>::infinity(), two63 = 9223372036854775808.0;
  return {NAN,           inf,           -inf,   0.0,    -0.0,    1.0,    -1.0,         2.5,
          -2.7,          1e308,         -1e308, 3.4e38, -3.4e38, 5e-324, 2147483647.0, 2147483648.0,
          -2147483648.0, -2147483649.0, 3e9,    two63,  -two63,  1e19,   -1e19};
}

// special_values() in dtype t; for complex, paired with the same values in another order as
// the imaginary part, so that NaN and infinities meet finite values in the other part.
Array specials(DType t) {
  std::vector<double> re = special_values(), im(re.rbegin(), re.rend());
  Shape s{static_cast<int64_t>(re.size())};
  Array a = kiln::asarray(re, s);
  if (kiln::is_complex(t)) a = a + kiln::asarray(im, s) * std::complex<double>(0, 1);
  return a.astype(t).eval();
}

}  // namespace

GPU_TEST_CASE("gpu: every unary op and dtype matches the host") {
  for (DType t : kiln::kAllDTypes)
    for (const auto& [name, f] : kUnary)
      same_on_gpu(name + std::string(" ") + kiln::dtype_name(t),
                  [&](const std::vector<Array>& in) { return f(in[0]); }, {sample({3, 4, 5}, t)});
}

// Where gelu's result is tiny (x far below 0) both sides correct the rounding of the argument
// of erfc and exp (kernels/scalar.cuh), which would otherwise cost up to 195 ulps at x = -13:
// the device's erfcf and expf (4 and 2 ulps, CUDA's bounds) against glibc's leave a few ulps.
GPU_TEST_CASE("gpu: gelu's far tail within a few float32 ulps of the host's") {
  for (auto mode : {kiln::GeluApproximate::None, kiln::GeluApproximate::Tanh}) {
    INFO(std::string(mode == kiln::GeluApproximate::Tanh ? "tanh" : "erf"));
    Array x = kiln::linspace(-14.0, 12.0, 100001, true, DType::Float32).eval();
    auto host = kiln::gelu(x, mode).to_vector<float>();
    auto dev = kiln::gelu(x.to(kiln::cuda()), mode).get().to_vector<float>();
    REQUIRE(dev.size() == host.size());
    double worst = 0;
    for (size_t i = 0; i < host.size(); ++i)
      if (std::abs(host[i]) >= 1e-36f)
        worst = std::max(worst, std::abs(static_cast<double>(dev[i]) - host[i]) /
                                    std::ldexp(1.0, std::ilogb(host[i]) - 23));
    INFO("worst " << worst << " ulps");
    CHECK(worst <= 12);
  }
}

GPU_TEST_CASE("gpu: every binary op and dtype matches the host, arrays and scalars") {
  for (DType t : kiln::kAllDTypes)
    for (const auto& [name, f] : kBinary) {
      std::string what = name + std::string(" ") + kiln::dtype_name(t);
      same_on_gpu(what, [&](const std::vector<Array>& in) { return f(in[0], in[1]); },
                  {sample({4, 5}, t), sample({4, 5}, t, 0.5, 1.0)});
      same_on_gpu(what + " broadcast (4,1) (5,)",
                  [&](const std::vector<Array>& in) { return f(in[0], in[1]); },
                  {sample({4, 1}, t), sample({5}, t, 0.5, 2.0)});
    }
  same_on_gpu("f32 * 2.0 + 1", [](const std::vector<Array>& in) { return in[0] * 2.0 + 1; },
              {sample({100}, DType::Float32)});
  same_on_gpu("i32 + 7 (weak)", [](const std::vector<Array>& in) { return in[0] + 7; },
              {sample({100}, DType::Int32)});
  same_on_gpu(
      "mixed promotion", [](const std::vector<Array>& in) { return in[0] * in[1] + in[2]; },
      {sample({8}, DType::Int32), sample({8}, DType::Float32), sample({8}, DType::Complex64)});
  same_on_gpu("int overflow wraps",
              [](const std::vector<Array>& in) { return in[0] * 1000000 * 1000000; },
              {sample({16}, DType::Int32)});
}

GPU_TEST_CASE("gpu: where, clip, casts, arange, linspace") {
  same_on_gpu("where",
              [](const std::vector<Array>& in) { return kiln::where(in[0] > 0, in[0], -in[1]); },
              {sample({6, 7}, DType::Float64), sample({6, 7}, DType::Int64)});
  same_on_gpu("clip", [](const std::vector<Array>& in) { return kiln::clip(in[0], -1.5, 2); },
              {sample({50}, DType::Float32)});
  for (DType from : kiln::kAllDTypes)
    for (DType to : kiln::kAllDTypes)
      same_on_gpu(std::string("astype ") + kiln::dtype_name(from) + "->" + kiln::dtype_name(to),
                  [&](const std::vector<Array>& in) { return in[0].astype(to); },
                  {sample({33}, from, 1e3)});
  check_same("arange", kiln::arange(3, 1000, 7).eval(),
             kiln::arange(3, 1000, 7, std::nullopt, kiln::cuda()).eval());
  for (DType t : {DType::Int8, DType::Int32, DType::Float16, DType::Float32, DType::Float64,
                  DType::Complex64})  // float steps: NumPy's fill rule, in each compute dtype
    check_same("arange float step", kiln::arange(-2.5, 300.0, 0.3, t).eval(),
               kiln::arange(-2.5, 300.0, 0.3, t, kiln::cuda()).eval());
  check_same("linspace", kiln::linspace(-1, 1, 101).eval(),
             kiln::linspace(-1, 1, 101, true, DType::Float64, kiln::cuda()).eval());
  check_same("zeros", kiln::zeros({3, 3}, DType::Int32).eval(),
             kiln::zeros({3, 3}, DType::Int32, kiln::cuda()).eval());
}

// A loop that adds a new constant each step fuses into one kernel with a parameter per step:
// past 256 launch arguments the packer used to refuse it (the host took it).
GPU_TEST_CASE("gpu: a kernel with 300 scalar parameters launches and matches the host") {
  auto chain = [](kiln::Device d) {
    Array x = kiln::zeros({7, 13}, DType::Float32, d);
    for (int i = 0; i < 300; ++i) x = x * 0.5f + static_cast<float>(i);
    return x.eval();
  };
  check_same("300 scalars", chain(kiln::host()), chain(kiln::cuda()));
}

GPU_TEST_CASE("gpu: views inside fused kernels") {
  auto in = std::vector<Array>{sample({6, 8}, DType::Float32), sample({8, 6}, DType::Float32)};
  same_on_gpu(
      "transpose", [](const std::vector<Array>& v) { return v[0] + v[1].T(); }, in);
  same_on_gpu(
      "negative step",
      [](const std::vector<Array>& v) {
        return v[0](Slice(std::nullopt, std::nullopt, -2), Slice(1, 7, 3)) * 2;
      },
      in);
  same_on_gpu(
      "integer index",
      [](const std::vector<Array>& v) { return v[0](int64_t{2}) + v[1](Slice(), int64_t{0}); }, in);
  same_on_gpu(
      "reshape of a transpose",
      [](const std::vector<Array>& v) {
        return (v[1].T() + 1).reshape({4, 12}).T();
      },
      in);
  same_on_gpu(
      "broadcast_to",
      [](const std::vector<Array>& v) {
        return v[0](int64_t{0}).broadcast_to({5, 8}) * v[0](Slice(0, 5));
      },
      in);
  same_on_gpu(
      "misaligned slice (offset 1)",
      [](const std::vector<Array>& v) { return v[0].reshape({-1})(Slice(1, std::nullopt)) + 1; },
      in);
  same_on_gpu(
      "x + x.T shares one input",
      [](const std::vector<Array>& v) {
        auto s = v[0](Slice(0, 6), Slice(0, 6));
        return s * s.T();
      },
      in);
}

GPU_TEST_CASE("gpu: every reduction of every dtype over every axis subset, in its own dtype") {
  using R = Array (*)(const Array&, kiln::AxesArg, bool);
  const std::vector<std::pair<std::string, R>> reds = {
      {"sum", kiln::sum},   {"prod", kiln::prod}, {"max", kiln::max}, {"min", kiln::min},
      {"mean", kiln::mean}, {"any", kiln::any},   {"all", kiln::all}};
  // {}: no axes given, every axis reduced; Axes{}: an empty list, none reduced.
  const std::vector<kiln::AxesArg> subsets = {{},     kiln::Axes{}, {0},    {1},  {2},
                                              {0, 1}, {0, 2},       {1, 2}, {-1}, {0, 1, 2}};
  for (DType t : kiln::kAllDTypes) {
    // Integers in [-30, 30]: a product over 20 of them wraps around int64, as NumPy's does.
    // Floating products take a halved input, which keeps them far from overflow.
    Array in = sample({3, 4, 5}, t), halved = sample({3, 4, 5}, t, 0.5);
    for (const auto& [name, r] : reds)
      for (const auto& axes : subsets)
        for (bool keep : {false, true}) {
          std::string what =
              name + " " + kiln::dtype_name(t) + " axes " +
              (axes.given() ? std::to_string(axes.axes().size()) : "all") +
              (axes.axes().empty() ? "" : " first " + std::to_string(axes.axes()[0])) +
              (keep ? " keepdims" : "");
          bool halve = name == "prod" && !kiln::is_integer_or_bool(t);
          same_on_gpu(what, [&](const std::vector<Array>& v) { return r(v[0], axes, keep); },
                      {halve ? halved : in});
        }
    for (int axis : {0, 1, 2, -1})
      for (bool keep : {false, true}) {
        std::string what = std::string(kiln::dtype_name(t)) + " axis " + std::to_string(axis);
        same_on_gpu("argmax " + what,
                    [&](const std::vector<Array>& v) { return kiln::argmax(v[0], axis, keep); },
                    {in});
        same_on_gpu("argmin " + what,
                    [&](const std::vector<Array>& v) { return kiln::argmin(v[0], axis, keep); },
                    {in});
      }
    same_on_gpu(std::string("argmax flat ") + kiln::dtype_name(t),
                [](const std::vector<Array>& v) { return kiln::argmax(v[0]); }, {in});
    same_on_gpu(std::string("argmin flat ") + kiln::dtype_name(t),
                [](const std::vector<Array>& v) { return kiln::argmin(v[0]); }, {in});
  }
  // The integer input does wrap: its int64 products over (1, 2) are not the exact ones.
  Array ints = sample({3, 4, 5}, DType::Int64);
  CHECK_FALSE(kiln::array_equal(kiln::prod(ints, {1, 2}).astype(DType::Float64),
                                kiln::prod(ints.astype(DType::Float64), {1, 2})));
}

GPU_TEST_CASE("gpu: int32 and bool sums widen to int64; int64 sums and products wrap around") {
  constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();
  constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
  constexpr int64_t kRows = 3, kCols = 4099;  // rows long enough to need several blocks
  const Shape shape{kRows, kCols};
  std::vector<int64_t> near_max(kRows * kCols), odd(kRows * kCols), top(kRows * kCols);
  std::vector<bool> every_third(kRows * kCols);
  for (int64_t i = 0; i < kRows * kCols; ++i) {
    near_max[i] = kI32Max - i % 1000;  // fits int32; two of them overflow it
    odd[i] = 2 * i + 1;                // an odd product is never 0 after wrapping
    top[i] = kI64Max - i;
    every_third[i] = (i % kCols) % 3 == 0;
  }
  auto rows = [&](const std::vector<int64_t>& m) { return lines(m, kRows, kCols); };
  auto cols = [&](const std::vector<int64_t>& m) { return lines(m, kRows, kCols, true); };
  auto whole = [](const std::vector<int64_t>& m, auto f) { return std::vector<int64_t>{f(m)}; };
  Array i32 = gpu_array(near_max, DType::Int32, shape);
  // In int64 the sums of int32 values are exact (12289 values < 2^31 each): no wrap here.
  check_values("int32 sum, all", kiln::sum(i32), DType::Int64, whole(near_max, wrapped_sum));
  check_values("int32 sum, rows", kiln::sum(i32, {1}), DType::Int64,
               each(rows(near_max), wrapped_sum));
  check_values("int32 sum, columns", kiln::sum(i32, {0}), DType::Int64,
               each(cols(near_max), wrapped_sum));
  CHECK(kiln::sum(i32, {1}).get().to_vector<int64_t>()[0] > kI32Max);
  Array i32_odd = gpu_array(odd, DType::Int32, shape);
  check_values("int32 prod, rows (in int64, wrapping)", kiln::prod(i32_odd, {1}), DType::Int64,
               each(rows(odd), wrapped_prod));
  check_values("int32 prod, all", kiln::prod(i32_odd), DType::Int64, whole(odd, wrapped_prod));
  Array i64 = gpu_array(top, DType::Int64, shape);
  check_values("int64 sum wraps, all", kiln::sum(i64), DType::Int64, whole(top, wrapped_sum));
  check_values("int64 sum wraps, rows", kiln::sum(i64, {1}), DType::Int64,
               each(rows(top), wrapped_sum));
  check_values("int64 sum wraps, columns", kiln::sum(i64, {0}), DType::Int64,
               each(cols(top), wrapped_sum));
  Array i64_odd = gpu_array(odd, DType::Int64, shape);
  check_values("int64 prod wraps, rows", kiln::prod(i64_odd, {1}), DType::Int64,
               each(rows(odd), wrapped_prod));
  check_values("int64 prod wraps, columns", kiln::prod(i64_odd, {0}, true), DType::Int64,
               each(cols(odd), wrapped_prod));
  // A bool sum counts: 0, 3, ..., 4098 is 1367 values per row.
  Array b = kiln::asarray(kiln::asarray(every_third, shape), kiln::cuda());
  check_values("bool sum, rows", kiln::sum(b, {1}), DType::Int64,
               std::vector<int64_t>(kRows, 1367));
  check_values("bool sum, all", kiln::sum(b), DType::Int64, std::vector<int64_t>{3 * 1367});
  // By hand: 2^63 - 1 + 1 = -2^63; (2^32)^2 = 2^64 = 0; (2^32 + 1)^2 = 2^64 + 2^33 + 1.
  const int64_t two32 = int64_t{1} << 32;
  check_values("int64: max + 1", kiln::sum(gpu_array({kI64Max, 1}, DType::Int64, {2})),
               DType::Int64, std::vector<int64_t>{std::numeric_limits<int64_t>::min()});
  check_values(
      "int64: 2^32 * 2^32, (2^32+1)^2",
      kiln::prod(gpu_array({two32, two32 + 1, two32, two32 + 1}, DType::Int64, {2, 2}), {0}),
      DType::Int64, std::vector<int64_t>{0, (int64_t{1} << 33) + 1});
  check_values("int32: 65536 * 65536 * 3 in int64",
               kiln::prod(gpu_array({65536, 65536, 3}, DType::Int32, {3})), DType::Int64,
               std::vector<int64_t>{int64_t{3} << 32});
}

GPU_TEST_CASE("gpu: max, min, argmax, argmin of integers at their extremes; any and all") {
  constexpr int64_t kLo = std::numeric_limits<int64_t>::min(),
                    kHi = std::numeric_limits<int64_t>::max();
  constexpr int64_t kLo32 = std::numeric_limits<int32_t>::min(),
                    kHi32 = std::numeric_limits<int32_t>::max();
  constexpr int64_t kCols = 6000;
  // Row 0 holds both int64 extremes twice (the first of each counts), row 1 the int32 ones.
  std::vector<int64_t> m(2 * kCols, 0);
  m[4321] = m[5000] = kHi;
  m[17] = m[5999] = kLo;
  m[kCols + 3000] = m[kCols + 3001] = kHi32;
  m[kCols + 0] = kLo32;
  for (DType t : {DType::Int64, DType::Int32}) {
    std::vector<int64_t> v = m;
    if (t == DType::Int32)  // the int64 extremes wrap to 0 (low 32 bits); set them apart
      for (int64_t i = 0; i < kCols; ++i) v[i] = i == 4321 ? kHi32 : i == 17 ? kLo32 : 0;
    Array a = gpu_array(v, t, {2, kCols});
    std::string n = kiln::dtype_name(t);
    bool wide = t == DType::Int64;
    check_values(n + " max", kiln::max(a, {1}), t, std::vector<int64_t>{wide ? kHi : kHi32, kHi32});
    check_values(n + " min", kiln::min(a, {1}), t, std::vector<int64_t>{wide ? kLo : kLo32, kLo32});
    check_values(n + " argmax", kiln::argmax(a, 1), DType::Int64, std::vector<int64_t>{4321, 3000});
    check_values(n + " argmin", kiln::argmin(a, 1), DType::Int64, std::vector<int64_t>{17, 0});
    check_values(n + " argmax flat", kiln::argmax(a), DType::Int64, std::vector<int64_t>{4321});
    check_values(n + " max of all", kiln::max(a), t, std::vector<int64_t>{wide ? kHi : kHi32});
  }
  // any/all of numbers: non-zero is true, NaN too, -0.0 is not; rows of 5000 with one odd one
  // out at 4000.
  std::vector<double> zeros(5000, 0.0), ones(5000, 1.0);
  auto with = [](std::vector<double> v, double x) {
    v[4000] = x;
    return v;
  };
  std::vector<double> rows;
  for (const auto& r : {zeros, with(zeros, 7), with(zeros, NAN), with(zeros, -0.0), ones,
                        with(ones, 0), with(ones, NAN), with(ones, -0.0)})
    rows.insert(rows.end(), r.begin(), r.end());
  for (DType t : {DType::Bool, DType::Int32, DType::Int64, DType::Float32, DType::Float64,
                  DType::Complex128}) {
    Array a = kiln::asarray(kiln::asarray(rows, {8, 5000}).astype(t), kiln::cuda());
    std::string n = kiln::dtype_name(t);
    // (NaN cast to an integer is INT_MIN and to bool true: the same truth in every dtype.)
    check_values(n + " any", kiln::any(a, {1}), DType::Bool,
                 std::vector<bool>{false, true, true, false, true, true, true, true});
    check_values(n + " all", kiln::all(a, {1}), DType::Bool,
                 std::vector<bool>{false, false, false, false, true, false, true, false});
    check_values(n + " any of all", kiln::any(a), DType::Bool, std::vector<bool>{true});
    check_values(n + " all of all", kiln::all(a), DType::Bool, std::vector<bool>{false});
  }
  // A complex number is true when either part is non-zero (NumPy).
  Array c = kiln::asarray(std::vector<std::complex<double>>{{0, 0}, {0, 1e-300}, {0, -0.0}},
                          kiln::cuda());
  check_values("complex any, per element", kiln::any(c.reshape({3, 1}), {1}), DType::Bool,
               std::vector<bool>{false, true, false});
}

GPU_TEST_CASE("gpu: NaN, infinities, signed zeros and huge values match the host") {
  for (DType t : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16})
    for (const auto& [name, f] : kUnary)
      same_on_gpu(name + " of specials " + kiln::dtype_name(t),
                  [&](const std::vector<Array>& in) { return f(in[0]); }, {specials(t)});
  // Every pair of special values: a column against a row.
  for (DType t : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16})
    for (const auto& [name, f] : kBinary) {
      Array x = specials(t);
      same_on_gpu(name + " of special pairs " + kiln::dtype_name(t),
                  [&](const std::vector<Array>& in) { return f(in[0], in[1]); },
                  {x.reshape({-1, 1}), x});
    }
  // Complex numbers with NaN or infinite parts, where their meaning is settled (ordering,
  // equality, NaN propagation, parts and modulus).
  for (DType t : {DType::Complex64, DType::Complex128}) {
    for (const char* name :
         {"neg", "abs", "real", "imag", "conj", "isnan", "isinf", "isfinite", "nan_to_num"})
      for (const auto& [n, f] : kUnary)
        if (n == name)
          same_on_gpu(n + " of specials " + kiln::dtype_name(t),
                      [&](const std::vector<Array>& in) { return f(in[0]); }, {specials(t)});
    for (const char* name :
         {"add", "sub", "minimum", "maximum", "eq", "ne", "lt", "le", "gt", "ge"})
      for (const auto& [n, f] : kBinary)
        if (n == name) {
          Array x = specials(t);
          same_on_gpu(n + " of special pairs " + kiln::dtype_name(t),
                      [&](const std::vector<Array>& in) { return f(in[0], in[1]); },
                      {x.reshape({-1, 1}), x});
        }
  }
  // Every cast from the special values, to every dtype (float -> int: kernels/types.cuh).
  for (DType from : {DType::Float32, DType::Float64, DType::Complex64, DType::Complex128,
                     DType::Float16, DType::BFloat16})
    for (DType to : kiln::kAllDTypes)
      same_on_gpu(
          std::string("astype specials ") + kiln::dtype_name(from) + "->" + kiln::dtype_name(to),
          [&](const std::vector<Array>& in) { return in[0].astype(to); }, {specials(from)});
}

GPU_TEST_CASE("gpu: NaN, infinities and zeros give NumPy's values, derived by hand") {
  const double inf = std::numeric_limits<double>::infinity(), nan = NAN;
  auto dev = [](const std::vector<double>& v, DType t) {
    return kiln::asarray(kiln::asarray(v).astype(t), kiln::cuda());
  };
  for (DType t : {DType::Float32, DType::Float64}) {
    std::string n = std::string(" ") + kiln::dtype_name(t);
    Array a = dev({nan, nan, 1, inf, -inf, -0.0}, t), b = dev({nan, 1, nan, inf, inf, 0.0}, t);
    // A comparison with NaN is false, except !=; x != x finds NaN.
    check_values("==" + n, a == b, DType::Bool, std::vector<bool>{0, 0, 0, 1, 0, 1});
    check_values("!=" + n, a != b, DType::Bool, std::vector<bool>{1, 1, 1, 0, 1, 0});
    check_values("<" + n, a < b, DType::Bool, std::vector<bool>{0, 0, 0, 0, 1, 0});
    check_values("<=" + n, a <= b, DType::Bool, std::vector<bool>{0, 0, 0, 1, 1, 1});
    check_values(">" + n, a > b, DType::Bool, std::vector<bool>{0, 0, 0, 0, 0, 0});
    check_values(">=" + n, a >= b, DType::Bool, std::vector<bool>{0, 0, 0, 1, 0, 1});
    check_values("x != x" + n, a != a, DType::Bool, std::vector<bool>{1, 1, 0, 0, 0, 0});
    // maximum and minimum propagate NaN from either side.
    check_values("maximum" + n, kiln::maximum(a, b).astype(DType::Float64), DType::Float64,
                 std::vector<double>{nan, nan, nan, inf, inf, 0.0});
    check_values("minimum" + n, kiln::minimum(a, b).astype(DType::Float64), DType::Float64,
                 std::vector<double>{nan, nan, nan, inf, -inf, 0.0});
    // sqrt and log of negatives, zeros and infinities; 1/x shows the sign of a zero.
    Array x = dev({-1, -0.0, 0.0, inf, -inf, nan, 1}, t);
    check_values("sqrt" + n, kiln::sqrt(x).astype(DType::Float64), DType::Float64,
                 std::vector<double>{nan, 0, 0, inf, nan, nan, 1});
    check_values("1/sqrt" + n, (1 / kiln::sqrt(x)).astype(DType::Float64), DType::Float64,
                 std::vector<double>{nan, -inf, inf, 0, nan, nan, 1});
    check_values("log" + n, kiln::log(x).astype(DType::Float64), DType::Float64,
                 std::vector<double>{nan, -inf, -inf, inf, nan, nan, 0});
    // Division by zero and by infinity.
    Array num = dev({1, -1, 0, nan, inf, 1, -0.0}, t), den = dev({0, 0, 0, 0, inf, -0.0, 5}, t);
    check_values("/" + n, (num / den).astype(DType::Float64), DType::Float64,
                 std::vector<double>{inf, -inf, nan, nan, nan, -inf, -0.0});
    // The largest finite value doubled overflows.
    double big = t == DType::Float32 ? std::numeric_limits<float>::max()
                                     : std::numeric_limits<double>::max();
    Array h = dev({big, -big}, t);
    check_values("2 * max" + n, (h * 2).astype(DType::Float64), DType::Float64,
                 std::vector<double>{inf, -inf});
    check_values("sum of max, max" + n, kiln::sum(dev({big, big}, t)).astype(DType::Float64),
                 DType::Float64, std::vector<double>{inf});
  }
  // True division of integers is float64: by zero, inf, -inf or NaN.
  for (DType t : {DType::Int32, DType::Int64})
    check_values(std::string("int / 0 ") + kiln::dtype_name(t),
                 gpu_array({7, -7, 0}, t, {3}) / gpu_array({0, 0, 0}, t, {3}), DType::Float64,
                 std::vector<double>{inf, -inf, nan});
}

GPU_TEST_CASE("gpu: float to integer casts out of range and of NaN give the minimum integer") {
  // kernels/types.cuh float_to_int and src/host/convert.hpp: truncation inside
  // [-2^(bits-1), 2^(bits-1)), the minimum integer outside it and for NaN (NumPy on x86).
  const double inf = std::numeric_limits<double>::infinity(), two63 = 9223372036854775808.0;
  constexpr int64_t kMin32 = std::numeric_limits<int32_t>::min(),
                    kMin64 = std::numeric_limits<int64_t>::min();
  std::vector<double> v = {NAN,  inf,          -inf,         2.7,           -2.7,
                           -0.0, 2147483647.0, 2147483648.0, -2147483648.0, -2147483649.0,
                           3e9,  two63,        -two63,       1e19,          -1e19};
  std::vector<int32_t> to32 = {kMin32, kMin32, kMin32, 2,      -2,     0,      2147483647, kMin32,
                               kMin32, kMin32, kMin32, kMin32, kMin32, kMin32, kMin32};
  std::vector<int64_t> to64 = {kMin64,     kMin64,     kMin64,     2,           -2,
                               0,          2147483647, 2147483648, -2147483648, -2147483649,
                               3000000000, kMin64,     kMin64,     kMin64,      kMin64};
  Array f64 = kiln::asarray(kiln::asarray(v), kiln::cuda());
  check_values("float64 -> int32", f64.astype(DType::Int32), DType::Int32, to32);
  check_values("float64 -> int64", f64.astype(DType::Int64), DType::Int64, to64);
  // The same values through complex128 (the imaginary part is dropped) and through float32,
  // where 2147483647 rounds to 2^31 (out of int32's range) and 2147483649 to -2^31 (in it).
  Array c = f64 * std::complex<double>(1, 0) + std::complex<double>(0, 5);
  check_values("complex128 -> int64", c.astype(DType::Int64), DType::Int64, to64);
  std::vector<int32_t> f32_to32 = to32;
  f32_to32[6] = kMin32;
  f32_to32[9] = kMin32;
  check_values("float32 -> int32", f64.astype(DType::Float32).astype(DType::Int32), DType::Int32,
               f32_to32);
  // To bool: NaN and infinities are true, -0.0 false; to int32 from int64: the low 32 bits.
  check_values("float64 -> bool", f64.astype(DType::Bool), DType::Bool,
               std::vector<bool>{1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  check_values("int64 -> int32",
               gpu_array({(int64_t{1} << 32) + 5, int64_t{1} << 31, -(int64_t{1} << 31) - 1},
                         DType::Int64, {3})
                   .astype(DType::Int32),
               DType::Int32, std::vector<int32_t>{5, static_cast<int32_t>(kMin32), 2147483647});
}

GPU_TEST_CASE("gpu: max, min, argmax, argmin propagate NaN; sums meet infinities") {
  const double inf = std::numeric_limits<double>::infinity();
  constexpr int64_t kCols = 5000;  // rows long enough to need several blocks
  // Row 0: NaN at 3777 and 4000 (the first counts). Row 1: +inf at 2500, -inf at 100. Row 2:
  // all -inf. Row 3: an ordinary ramp. Columns 3777 and 4000 hold a NaN.
  std::vector<double> m(4 * kCols);
  for (int64_t c = 0; c < kCols; ++c) {
    m[c] = m[kCols + c] = m[3 * kCols + c] = 0.001 * c;
    m[2 * kCols + c] = -inf;
  }
  m[3777] = m[4000] = NAN;
  m[kCols + 2500] = inf;
  m[kCols + 100] = -inf;
  const double nan = NAN;
  for (DType t : {DType::Float32, DType::Float64, DType::Complex128}) {
    Array a = kiln::asarray(kiln::asarray(m, {4, kCols}).astype(t), kiln::cuda());
    std::string n = std::string(" ") + kiln::dtype_name(t);
    auto as_f64 = [&](const Array& r) { return kiln::real(r).astype(DType::Float64); };
    check_values("max" + n, as_f64(kiln::max(a, {1})), DType::Float64,
                 std::vector<double>{nan, inf, -inf, as_f64(a(3, kCols - 1)).item<double>()});
    check_values("min" + n, as_f64(kiln::min(a, {1})), DType::Float64,
                 std::vector<double>{nan, -inf, -inf, 0});
    check_values("argmax" + n, kiln::argmax(a, 1), DType::Int64,
                 std::vector<int64_t>{3777, 2500, 0, kCols - 1});
    check_values("argmin" + n, kiln::argmin(a, 1), DType::Int64,
                 std::vector<int64_t>{3777, 100, 0, 0});
    check_values("argmax flat" + n, kiln::argmax(a), DType::Int64, std::vector<int64_t>{3777});
    check_values("sum" + n, as_f64(kiln::sum(a, {1})) != as_f64(kiln::sum(a, {1})), DType::Bool,
                 std::vector<bool>{true, true, false, false});
    check_values("sum of -inf" + n, as_f64(kiln::sum(a(2))), DType::Float64,
                 std::vector<double>{-inf});
    // Over the columns, NaN appears where a column holds one, and only there.
    std::vector<bool> nan_cols(kCols, false);
    nan_cols[3777] = nan_cols[4000] = true;
    Array col_max = kiln::max(a, {0});
    check_values("max over columns is NaN" + n, col_max != col_max, DType::Bool, nan_cols);
    Array col_min = kiln::min(a, {0}, true);
    check_values("min over columns is NaN" + n, col_min != col_min, DType::Bool, nan_cols);
    check_values("argmax over columns" + n, kiln::argmax(a, 0)(Slice(3776, 3779)), DType::Int64,
                 std::vector<int64_t>{0, 0, 0});
  }
}

GPU_TEST_CASE("gpu: reduction forms at size: full, rows, per-thread, and prologues") {
  Array big = sample({1 << 20}, DType::Float32);
  // float32 sums of 2^20 values of size ~3 round differently by order: ~1e-7 * 3 * 2^10.
  same_on_gpu(
      "full sum 2^20", [](const std::vector<Array>& in) { return kiln::sum(in[0]); }, {big}, 2e-3);
  same_on_gpu("full max of an expression",
              [](const std::vector<Array>& in) { return kiln::max(kiln::exp(-in[0] * in[0])); },
              {big});
  same_on_gpu("argmax 2^20", [](const std::vector<Array>& in) { return kiln::argmax(in[0]); },
              {sample({(1 << 20) + 3}, DType::Int64)});
  Array m = sample({1000, 1000}, DType::Float64);
  same_on_gpu("rows: sum over the last axis",
              [](const std::vector<Array>& in) { return kiln::sum(in[0], {1}); }, {m});
  same_on_gpu("per-thread: sum over the first axis",
              [](const std::vector<Array>& in) { return kiln::sum(in[0], {0}); }, {m});
  same_on_gpu("tall: mean over axis 0 of (5000, 8)",
              [](const std::vector<Array>& in) { return kiln::mean(in[0], {0}); },
              {sample({5000, 8}, DType::Float32)});
  same_on_gpu("normalisation",
              [](const std::vector<Array>& in) {
                return (in[0] - kiln::mean(in[0], {1}, true)) / kiln::max(kiln::abs(in[0]));
              },
              {m});
  same_on_gpu("sum of a transpose",
              [](const std::vector<Array>& in) { return kiln::sum(in[0].T() * 2, {1}); }, {m});
  same_on_gpu("empty sum",
              [](const std::vector<Array>& in) { return kiln::sum(in[0](Slice(0, 0)), {0}); }, {m});
  same_on_gpu("elementwise tail 2^20+3",
              [](const std::vector<Array>& in) { return kiln::sin(in[0]) * 2; },
              {sample({(1 << 20) + 3}, DType::Float32)});
}

GPU_TEST_CASE("gpu: eager equals lazy, and several outputs from one plan") {
  auto x = kiln::asarray(sample({4096}, DType::Float32), kiln::cuda());
  auto y = kiln::asarray(sample({4096}, DType::Float32, 0.5, 1), kiln::cuda());
  auto chain = [&] {
    auto t = x * 2 + 1;
    t = kiln::sin(t) * kiln::cos(y);
    t = t * t + y / 3;
    return kiln::exp(-t) - x;
  };
  Array lazy = chain().eval();
  Array eager;
  {
    kiln::EagerScope e;
    eager = chain();
  }
  CHECK(kiln::array_equal(lazy.get(), eager.get()));  // no FMA contraction: the same bits
  auto a = x * 3, b = kiln::sum(x * 3), c = a + 1;
  kiln::eval({a, b, c});
  CHECK(kiln::allclose(c.get(), (x.get() * 3 + 1), 1e-6, 1e-6));
  CHECK(kiln::allclose(b.get(), kiln::sum(x.get() * 3), 1e-4, 1e-3));
}

GPU_TEST_CASE("gpu: mixing host and device arrays is a DeviceError that says what to do") {
  auto h = kiln::arange(4);
  auto d = kiln::arange(4, 8, 1, std::nullopt, kiln::cuda());
  CHECK_THROWS_AS(kiln::sum(h + d), kiln::DeviceError);
  try {
    (void)(h + d);
  } catch (const kiln::DeviceError& e) {
    CHECK(std::string(e.what()).find("explicit copy") != std::string::npos);
  }
  check_same("after the error the engine works", (h + 1).eval(), (d - 3).eval());
}

// The child half of the next test: evaluates the same expression in a fresh process
// (support/child_case.hpp).
const char* const kChildCase = "gpu: child process (run by the disk-cache test)";
static Array child_expression() {
  auto x = kiln::arange(0, 64, 1, DType::Float32, kiln::cuda());
  return kiln::tanh(x * 0.125) * 7 - 3;
}

GPU_TEST_CASE("gpu: child process (run by the disk-cache test)" * doctest::skip()) {
  auto v = child_expression().get().to_vector<float>();
  CHECK(v[8] == doctest::Approx(std::tanh(1.0) * 7 - 3).epsilon(1e-5));
  CHECK(kiln::cache::stats().compiles == 0);
  CHECK(kiln::cache::stats().disk_hits >= 1);
}

GPU_TEST_CASE("gpu: a second process gets disk hits and zero compiles") {
  // A cache of its own, so that the parent's compiles are what the child finds.
  kiln::test_support::TempDir dir("kiln-gpu-child");
  const char* old = std::getenv("KILN_CACHE_DIR");
  std::string saved = old ? old : "";
  kiln::test_support::use_cache(dir.path);
  child_expression().get().eval();
  CHECK(kiln::cache::stats().compiles >= 1);  // the cache was empty
  bool child_passed = kiln::test_support::run_case_in_child(kChildCase);
  if (old)
    kiln::test_support::use_cache(saved);
  else {
    ::unsetenv("KILN_CACHE_DIR");
    kiln::jit::reinitialize_for_testing();
  }
  CHECK(child_passed);
}

GPU_TEST_CASE(
    "gpu: copies are plan steps: a reduction comes back as a scalar, a source goes once") {
  auto count = [](const kiln::plan::Plan& p, auto pred) {
    int n = 0;
    for (const auto& s : p.steps) n += pred(s);
    return n;
  };
  auto d = kiln::asarray(sample({1000}, DType::Float32), kiln::cuda()).eval();
  auto m = kiln::sum(d * 2).get();
  auto plan = kiln::plan::make_plan({m.node()});
  int copies =
      count(plan, [](const auto& s) { return std::holds_alternative<kiln::plan::CopyStep>(s); });
  CHECK(copies == 1);
  for (const auto& s : plan.steps)
    if (auto* c = std::get_if<kiln::plan::CopyStep>(&s)) CHECK(plan.buffers[c->src].shape.empty());
  auto h = sample({256}, DType::Float64);
  auto twice = h.to(kiln::cuda()) + kiln::asarray(h, kiln::cuda()) * 2;
  auto p2 = kiln::plan::make_plan({twice.node()});
  CHECK(count(p2, [](const auto& s) { return std::holds_alternative<kiln::plan::CopyStep>(s); }) ==
        1);
  check_same("3h", (h * 3).eval(), twice.eval());
}

namespace {

// Each part's bits equal, or both parts NaN (a NaN's sign and payload differ between x86 and the
// GPU).
void check_same_bits(const std::string& what, const Array& host, const Array& gpu) {
  INFO(what);
  auto h = host.astype(DType::Complex128).to_vector<std::complex<double>>();
  auto g = gpu.get().astype(DType::Complex128).to_vector<std::complex<double>>();
  REQUIRE(h.size() == g.size());
  int64_t differ = 0;
  for (size_t i = 0; i < h.size(); ++i)
    for (auto [x, y] : {std::pair{h[i].real(), g[i].real()}, std::pair{h[i].imag(), g[i].imag()}})
      differ += !(std::isnan(x) && std::isnan(y)) && std::memcmp(&x, &y, sizeof x) != 0;
  CHECK(differ == 0);
}

}  // namespace

GPU_TEST_CASE("gpu: complex division and integer powers are the host's, bit for bit") {
  // Both executors run kernels/scalar.cuh's complex_divide and complex_pow (NumPy's Smith
  // division, npy_cpow's repeated multiplication for integer exponents below 100) without
  // contracting products into FMAs.
  std::vector<std::complex<double>> exps;
  for (int n : {-99, -7, -3, -2, -1, 1, 2, 3, 4, 5, 17, 99}) exps.emplace_back(n, 0);
  for (DType t : {DType::Complex64, DType::Complex128}) {
    std::string name = kiln::dtype_name(t);
    Array a = sample({4, 5}, t, 3.0, 0.25), b = sample({4, 5}, t, 0.5, 1.0);
    check_same_bits("a / b " + name, (a / b).eval(),
                    (kiln::asarray(a, kiln::cuda()) / kiln::asarray(b, kiln::cuda())).eval());
    Array x = specials(t);
    check_same_bits(
        "special pairs / " + name, (x.reshape({-1, 1}) / x).eval(),
        (kiln::asarray(x.reshape({-1, 1}), kiln::cuda()) / kiln::asarray(x, kiln::cuda())).eval());
    Array n = kiln::asarray(exps, {static_cast<int64_t>(exps.size())}).astype(t);
    Array base = a.reshape({20, 1}) * 0.3;
    check_same_bits(
        "a ** n " + name, kiln::pow(base, n).eval(),
        kiln::pow(kiln::asarray(base, kiln::cuda()), kiln::asarray(n, kiln::cuda())).eval());
    // Integers sum exactly in any order, so only the division by the count can differ.
    Array k = kiln::floor(kiln::real(a) * 7) +
              kiln::floor(kiln::imag(a) * 5) * std::complex<double>(0, 1);
    k = k.astype(t).reshape({4, 5})(kiln::Slice(), kiln::Slice(0, 3));
    check_same_bits("mean / 3 " + name, kiln::mean(k, {1}).eval(),
                    kiln::mean(kiln::asarray(k, kiln::cuda()), {1}).eval());
  }
}
