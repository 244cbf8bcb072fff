// kiln::matmul, dot, vdot, inner, outer and tensordot (kiln/linalg.hpp) against NumPy's answers in
// tests/data/matmul.txt, written by tests/data/make_matmul_fixtures.py: result dtypes and shapes as
// NumPy's, bool and integer values exactly, float and complex values within the dtype's error bound
// of a float64 / complex128 product of the same operands; the plans it makes (a BLAS step reading
// views in place, elementwise neighbours fused around it); bad input. GPU cases run the same
// fixtures through cuBLASLt (or the fused kernel for integers) and check them the same way.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <fstream>
#include <kiln/kiln.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cuda/cublaslt.hpp"
#include "cuda/matmul_calls.hpp"
#include "plan/planner.hpp"
#include "support/fixture_cases.hpp"
#include "support/gpu.hpp"
#include "support/matmul_step.hpp"

namespace {

using kiln::Array;
using kiln::DType;
using kiln::Shape;
using cd = std::complex<double>;
using Case = fixtures::Case<cd>;

const std::vector<Case>& cases() {
  static const std::vector<Case> all =
      fixtures::read_cases<cd>(KILN_TEST_DATA "/matmul.txt", "tests/data/make_matmul_fixtures.py");
  return all;
}

Array swap_last(const Array& x) {
  std::vector<int> perm;
  for (int i = 0; i < x.ndim(); ++i) perm.push_back(i);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return x.transpose(perm);
}

// The script's VIEWS, in kiln.
Array view(const Array& x, const std::string& v) {
  using kiln::_;
  using kiln::ellipsis;
  using kiln::Slice;
  if (v == "T") return swap_last(x);
  if (v == "rows2") return x(ellipsis, "::2", _);
  if (v == "cols2") return x(ellipsis, "::2");
  if (v == "rev") return x(ellipsis, "::-1", _);
  if (v == "Tsub") return swap_last(x)(ellipsis, "1:", "1:");
  return x;
}

struct Operands {
  Array a, b;
};
Operands operands(const Case& c, kiln::Device d) {
  // c.kw, not fixtures::kw, which gives nothing for "none"
  return {view(fixtures::make_array(c.in[0], d), c.kw.at("a_view")),
          view(fixtures::make_array(c.in[1], d), c.kw.at("b_view"))};
}

// Machine epsilon of the arithmetic a product of dtype t does (float16 and bfloat16 accumulate
// in float32; tf32: inputs rounded to 10 mantissa bits) and of the dtype it is stored in.
double compute_eps(DType t, bool tf32) {
  if (t == DType::Float64 || t == DType::Complex128) return std::ldexp(1.0, -52);
  return tf32 ? std::ldexp(1.0, -10) : std::ldexp(1.0, -23);
}
double storage_eps(DType t) {
  if (t == DType::Float16) return std::ldexp(1.0, -10);
  if (t == DType::BFloat16) return std::ldexp(1.0, -7);
  return 0;
}

// Exact for bool and integers; floats within the classic dot-product bound
// (k + 2) eps (|a| @ |b|), four times that for complex products, plus one rounding to the
// stored dtype. `ref`: the values to compare with (NumPy's float64 product, or another
// device's result, which may be off by the bound itself: `spread` 2).
void check_values(const Case& c, const std::vector<cd>& v, const std::vector<cd>& ref, int64_t k,
                  bool tf32, double spread, const char* what) {
  const auto& expect = c.out[0];
  REQUIRE(v.size() == ref.size());
  if (kiln::is_integer_or_bool(expect.dtype)) {
    for (size_t i = 0; i < v.size(); ++i) {
      INFO("element " << i << " against " << what);
      CHECK(v[i] == ref[i]);
    }
    return;
  }
  const auto& mag = c.out[2].v;
  double scale = spread * (kiln::is_complex(expect.dtype) ? 4.0 : 1.0) *
                 static_cast<double>(k + 2) * compute_eps(expect.dtype, tf32);
  int bad = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    double bound = scale * mag[i].real() +
                   spread * storage_eps(expect.dtype) * std::abs(c.out[1].v[i]) + 1e-300;
    if (!(std::abs(v[i] - ref[i]) <= bound) && bad++ < 3)
      FAIL_CHECK("element " << i << ": " << v[i] << ", " << what << " " << ref[i] << ", bound "
                            << bound);
  }
}

void check_result(const Case& c, const Array& got, int64_t k, bool tf32 = false) {
  const auto& expect = c.out[0];
  CHECK(kiln::dtype_name(got.dtype()) == std::string(kiln::dtype_name(expect.dtype)));
  REQUIRE(got.shape() == expect.shape);
  const auto& ref = kiln::is_integer_or_bool(expect.dtype) ? expect.v : c.out[1].v;
  check_values(c, got.to_vector<cd>(), ref, k, tf32, 1, "NumPy's float64 product");
}

std::vector<int> ints(const std::string& text) {
  std::vector<int> r;
  std::istringstream is(text);
  std::string t;
  while (std::getline(is, t, ',')) r.push_back(std::stoi(t));
  return r;
}

// The case's function of (a, b).
Array call(const Case& c, const Array& a, const Array& b) {
  const std::string& f = c.func;
  if (f == "matmul") return kiln::matmul(a, b);
  if (f == "dot") return kiln::dot(a, b);
  if (f == "vdot") return kiln::vdot(a, b);
  if (f == "inner") return kiln::inner(a, b);
  if (f == "outer") return kiln::outer(a, b);
  if (f == "tensordot") {
    if (auto axes = fixtures::kw(c, "axes")) return kiln::tensordot(a, b, std::stoi(*axes));
    return kiln::tensordot(a, b, ints(*fixtures::kw(c, "a_axes")),
                           ints(*fixtures::kw(c, "b_axes")));
  }
  FAIL("no function " << f);
  return a;
}

void run_case(const Case& c, kiln::Device d, bool tf32 = false) {
  INFO("case " << c.name << " on " << d.str());
  auto [a, b] = operands(c, d);
  if (c.error) {
    CHECK_THROWS_AS(call(c, a, b).eval(), kiln::ShapeError);
    return;
  }
  Array r = call(c, a, b);
  CHECK(r.device() == d);
  const int64_t k = std::stoll(*fixtures::kw(c, "k"));
  if (d.is_host()) return check_result(c, r, k, tf32);
  Array got = r.get();
  check_result(c, got, k, tf32);
  auto [ha, hb] = operands(c, kiln::host());  // and against the host executor's answer
  check_values(c, got.to_vector<cd>(), call(c, ha, hb).to_vector<cd>(), k, tf32, 2, "the host's");
}

int count(const std::string& text, const std::string& word) {
  int n = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

Array sample(Shape s, DType t, double start = 0.25) {
  int64_t n = kiln::shape_size(s);
  return kiln::arange(start, start + static_cast<double>(n) * 0.5, 0.5, DType::Float64)
      .reshape(s)
      .astype(t);
}

}  // namespace

TEST_CASE("matmul, dot, vdot, inner, outer and tensordot match NumPy's fixtures on the host") {
  REQUIRE(cases().size() > 500);
  for (const auto& c : cases()) run_case(c, kiln::host());
}

TEST_CASE(
    "matmul: the product is one Eigen step; transposed and row-sliced views are read in place") {
  Array a = sample({4, 3}, DType::Float32).eval(), b = sample({4, 5}, DType::Float32).eval();
  std::string plan = kiln::explain({kiln::matmul(a.T(), b)});
  INFO(plan);
  CHECK(plan.find("matmul (Eigen) float32 (3, 4)^T @ (4, 5) -> (3, 5)") != std::string::npos);
  CHECK(count(plan, "step ") == 1);  // no kernel copies the transpose
  Array tall = sample({2, 9, 4}, DType::Float64).eval();
  plan +=
      kiln::explain({kiln::matmul(tall(kiln::ellipsis, "::2", kiln::_), b.astype(DType::Float64))});
  CHECK(count(plan, "kernel ") == 1);  // b's cast only: the slice is strides
  CHECK(plan.find("matmul (Eigen) float64 (2, 5, 4) @ (2, 4, 5) -> (2, 5, 5)") !=
        std::string::npos);
}

TEST_CASE("matmul: views a BLAS cannot read are written densely first, then read") {
  Array a = sample({3, 8}, DType::Float32).eval(), b = sample({4, 2}, DType::Float32).eval();
  Array cols = a(kiln::_, "::2");  // (3, 4) with a column step of 2
  std::string plan = kiln::explain({kiln::matmul(cols, b)});
  INFO(plan);
  CHECK(count(plan, "kernel ") == 1);
  CHECK(count(plan, "matmul (Eigen)") == 1);
  CHECK(kiln::allclose(kiln::matmul(cols, b), kiln::matmul(cols.astype(DType::Float64), b)));
}

TEST_CASE("matmul: elementwise producers and consumers stay in fused kernels around the step") {
  Array x = sample({6, 5}, DType::Float32).eval(), w = sample({5, 4}, DType::Float32).eval();
  Array y = kiln::maximum(kiln::matmul(x * 2 - 1, w) + 0.5, 0) * 3;
  std::string plan = kiln::explain({y});
  INFO(plan);
  CHECK(count(plan, "step ") == 3);  // kernel (x * 2 - 1), matmul, kernel (+, max, *)
  CHECK(count(plan, "kernel ") == 2);
  // Against the same arithmetic done step by step.
  Array xs = (x * 2 - 1).eval();
  Array ps = kiln::matmul(xs, w).eval();
  CHECK(kiln::array_equal(y, kiln::maximum(ps + 0.5, 0) * 3));
}

TEST_CASE("matmul: a slice of an expression is written once and read as strides") {
  Array x = sample({7, 4}, DType::Float64).eval(), w = sample({4, 3}, DType::Float64).eval();
  Array view = (x * 3)("1::2", kiln::_);  // rows 1, 3, 5 of x * 3
  Array dense = (x * 3)("1::2", kiln::_).astype(DType::Float64) + 0.0;
  dense.eval();
  CHECK(kiln::array_equal(kiln::matmul(view, w), kiln::matmul(dense, w)));
}

TEST_CASE("matmul: integers wrap as NumPy's, in the result dtype") {
  // 2^62 * 2 + 2^62 * 2 + 3 = 2^64 + 3, which wraps to 3 in int64.
  int64_t big = int64_t{1} << 62;
  Array a = kiln::asarray(std::vector<int64_t>{big, big, 3});
  Array b = kiln::asarray(std::vector<int64_t>{2, 2, 1});
  CHECK(kiln::matmul(a, b).item<int64_t>() == 3);
  // int32: 2^30 * 2 + 2^30 * 2 = 2^32 wraps to 0; -2^31 * 1 stays.
  Array c = kiln::asarray(std::vector<int32_t>{1 << 30, 1 << 30, INT32_MIN});
  Array d = kiln::asarray(std::vector<int32_t>{2, 2, 1});
  CHECK(kiln::matmul(c, d).item<int32_t>() == INT32_MIN);
  std::string plan = kiln::explain({kiln::matmul(c, d)});
  CHECK(plan.find("matmul (") == std::string::npos);  // a fused reduction, not a BLAS
}

TEST_CASE("matmul: bad input names both shapes and evaluates nothing") {
  Array x = sample({3, 4}, DType::Float32) * 2, y = sample({5, 6}, DType::Float32) + 1;
  kiln::reset_engine_stats();
  CHECK_THROWS_WITH_AS(kiln::matmul(x, y),
                       doctest::Contains("shapes (3, 4) and (5, 6) do not align"),
                       kiln::ShapeError);
  CHECK_THROWS_WITH_AS(kiln::matmul(x, Array(sample({2}, DType::Float32))),
                       doctest::Contains("(3, 4) and (2,)"), kiln::ShapeError);
  CHECK_THROWS_WITH_AS(
      kiln::matmul(sample({2, 3, 4}, DType::Float32), sample({3, 4, 2}, DType::Float32)),
      doctest::Contains("batch axes"), kiln::ShapeError);
  CHECK_THROWS_WITH_AS(kiln::matmul(kiln::full({}, 2.0), x), doctest::Contains("0-d"),
                       kiln::ShapeError);
  CHECK(kiln::engine_stats().plans == 0);
}

TEST_CASE("matmul: eager mode, repeated products of new data, inputs left unchanged") {
  Array w = sample({5, 3}, DType::Float64).eval();
  Array before = w + 0.0;
  before.eval();
  for (int i = 0; i < 3; ++i) {  // the cached plan is rebound to each new input
    Array x = sample({2, 5}, DType::Float64, i + 1.0);
    Array r = kiln::matmul(x, w);
    std::vector<double> xv = x.to_vector<double>(), wv = w.to_vector<double>(),
                        rv = r.to_vector<double>();
    for (int m = 0; m < 2; ++m)
      for (int n = 0; n < 3; ++n) {
        double s = 0;
        for (int k = 0; k < 5; ++k) s += xv[m * 5 + k] * wv[k * 3 + n];
        CHECK(rv[m * 3 + n] == doctest::Approx(s).epsilon(1e-14));
      }
  }
  CHECK(kiln::array_equal(w, before));
  kiln::EagerScope eager;
  Array e = kiln::matmul(sample({2, 5}, DType::Float32), w.astype(DType::Float32));
  CHECK(e.dtype() == DType::Float32);
  CHECK(kiln::allclose(e, kiln::matmul(sample({2, 5}, DType::Float64), w), 1e-5));
}

TEST_CASE("matmul: chained products and a power iteration in a lazy loop") {
  const int n = 6;
  std::vector<double> m(n * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) m[i * n + j] = 1.0 / (1 + i + j) + (i == j ? 1.0 : 0.0);
  Array a = kiln::asarray(m.data(), DType::Float64, {n, n});
  // (a @ a.T) @ a: the inner product is written once and read by the outer one.
  Array c = kiln::matmul(kiln::matmul(a, a.T()), a);
  std::vector<double> cv = c.to_vector<double>();
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int k = 0; k < n; ++k)
        for (int l = 0; l < n; ++l) s += m[i * n + l] * m[k * n + l] * m[k * n + j];
      CHECK(cv[i * n + j] == doctest::Approx(s).epsilon(1e-13));
    }
  // Power iteration, never evaluated inside the loop: the graph stays bounded and the
  // products run as steps of one plan after another.
  Array v = kiln::ones({n}, DType::Float64);
  std::vector<double> w(n, 1.0);
  for (int it = 0; it < 40; ++it) {
    v = kiln::matmul(a, v);
    v = v / kiln::sqrt(kiln::sum(v * v));
    std::vector<double> next(n, 0.0);
    double norm = 0;
    for (int i = 0; i < n; ++i) {
      for (int k = 0; k < n; ++k) next[i] += m[i * n + k] * w[k];
      norm += next[i] * next[i];
    }
    for (int i = 0; i < n; ++i) w[i] = next[i] / std::sqrt(norm);
  }
  std::vector<double> got = v.to_vector<double>();
  for (int i = 0; i < n; ++i) CHECK(got[i] == doctest::Approx(w[i]).epsilon(1e-12));
}

TEST_CASE("matmul precision: float32 exact by default, Tf32 on request, read back") {
  CHECK(kiln::get_matmul_precision() == kiln::MatmulPrecision::Float32);
  kiln::set_matmul_precision(kiln::MatmulPrecision::Tf32);
  CHECK(kiln::get_matmul_precision() == kiln::MatmulPrecision::Tf32);
  // The host has no TF32: Eigen computes in float32 either way.
  Array a = sample({3, 4}, DType::Float32), b = sample({4, 2}, DType::Float32);
  CHECK(kiln::explain({kiln::matmul(a, b)}).find("matmul (Eigen)") != std::string::npos);
  kiln::set_matmul_precision(kiln::MatmulPrecision::Float32);
  CHECK(kiln::get_matmul_precision() == kiln::MatmulPrecision::Float32);
}

bool cublaslt_mapped() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find("libcublasLt") != std::string::npos) return true;
  return false;
}

TEST_CASE("cuBLASLt is opened by the first GPU matmul, not at start; its descriptors build") {
  // Nothing before this case opens cuBLASLt (the host cases run Eigen; the next case builds
  // descriptors, which loads it).
  CHECK_FALSE(cublaslt_mapped());
  const auto& lt = kiln::gpu::lt::api();
  CHECK(cublaslt_mapped());
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t layout = nullptr;
  CHECK(lt.cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) ==
        CUBLAS_STATUS_SUCCESS);
  CHECK(lt.cublasLtMatrixLayoutCreate(&layout, CUDA_R_32F, 4, 3, 4) == CUBLAS_STATUS_SUCCESS);
  CHECK(std::string(lt.cublasLtGetStatusName(CUBLAS_STATUS_NOT_SUPPORTED)) ==
        "CUBLAS_STATUS_NOT_SUPPORTED");
  lt.cublasLtMatrixLayoutDestroy(layout);
  lt.cublasLtMatmulDescDestroy(desc);
}

// The cuBLASLt calls of a step, for buffers at these (fake, never read) addresses.
kiln::gpu::matmul::Calls calls_of(const Array& r) {
  auto* base = reinterpret_cast<const char*>(uintptr_t{1} << 20);
  return kiln::gpu::matmul::calls_for(step_of(r), r.dtype(), base, base + 4096, base + 8192);
}

using At = kiln::gpu::matmul::Calls::At;
bool same(const std::vector<At>& x, const std::vector<At>& y) {
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i].a != y[i].a || x[i].b != y[i].b || x[i].out != y[i].out) return false;
  return true;
}

TEST_CASE("cuBLASLt calls, worked out without a GPU: batches, broadcasts, transposes, offsets") {
  auto f32 = [](Shape s) { return sample(s, DType::Float32).eval(); };
  {  // (2,1,3,4) @ (5,4,2): the inner batch axis (5) is cuBLASLt's, a broadcast along it
     // (stride 0); the outer one (2), along which b is broadcast, a loop of two calls.
    auto c = calls_of(kiln::matmul(f32({2, 1, 3, 4}), f32({5, 4, 2})));
    CHECK((c.spec.m == 3 && c.spec.n == 2 && c.spec.k == 4 && c.spec.batch == 5));
    CHECK((!c.spec.a.col_major && c.spec.a.ld == 4 && c.spec.a.batch_stride == 0));
    CHECK((!c.spec.b.col_major && c.spec.b.ld == 2 && c.spec.b.batch_stride == 8));
    CHECK(c.spec.out_batch_stride == 6);
    CHECK(same(c.at, {{0, 0, 0}, {48, 0, 120}}));  // bytes: a's 12 floats, out's 30
    CHECK((c.spec.align_a == 16 && c.spec.align_b == 32 && c.spec.align_out == 8));
  }
  {  // contiguous batch axes merge into one strided batch: one call
    auto c = calls_of(kiln::matmul(f32({2, 3, 4, 5}), f32({2, 3, 5, 6})));
    CHECK((c.spec.batch == 6 && c.spec.a.batch_stride == 20 && c.spec.b.batch_stride == 30 &&
           c.spec.out_batch_stride == 24));
    CHECK(same(c.at, {{0, 0, 0}}));
    CHECK((c.spec.align_a == 16 && c.spec.align_b == 8 && c.spec.align_out == 32));
  }
  {  // a.T() read in place: column-major, leading dimension a's row length
    Array a = f32({4, 3});
    auto c = calls_of(kiln::matmul(a.T(), f32({4, 5})));
    CHECK((c.spec.m == 3 && c.spec.k == 4 && c.spec.batch == 1));
    CHECK((c.spec.a.col_major && c.spec.a.ld == 3));
    CHECK(same(c.at, {{0, 0, 0}}));
  }
  {  // a row slice: an offset into its buffer, which lowers the alignment cuBLASLt may assume
    Array x = f32({5, 4});
    auto c = calls_of(kiln::matmul(x("1:", kiln::_), f32({4, 2})));
    CHECK(same(c.at, {{16, 0, 0}}));
    CHECK(c.spec.align_a == 16);
    auto d = calls_of(kiln::matmul(x("1::2", kiln::_), f32({4, 2})));  // every other row
    CHECK((!d.spec.a.col_major && d.spec.a.ld == 8));
  }
  {  // 1-d operands: a row and a column of length-1 axes, leading dimensions at least 1
    auto c = calls_of(kiln::matmul(f32({4}), f32({4})));
    CHECK((c.spec.m == 1 && c.spec.n == 1 && c.spec.k == 4));
    CHECK((c.spec.a.ld >= 1 && c.spec.b.ld >= 1));
  }
  // cuBLASLt accepts every dtype's descriptors, layouts and preference (host objects, built
  // here without a GPU; choosing the algorithm needs one).
  for (DType t : {DType::Float32, DType::Float64, DType::Complex64, DType::Complex128,
                  DType::Float16, DType::BFloat16})
    for (bool tf32 : {false, true}) {
      const std::string what = std::string(kiln::dtype_name(t)) + (tf32 ? " tf32" : "");
      INFO(what);
      if (tf32) kiln::set_matmul_precision(kiln::MatmulPrecision::Tf32);
      Array a = sample({3, 4, 6}, t).eval(), b = sample({2, 4}, t).eval();
      auto c = calls_of(kiln::matmul(swap_last(a)(kiln::_, "1:", kiln::_), b.T()));
      kiln::set_matmul_precision(kiln::MatmulPrecision::Float32);
      CHECK(c.spec.tf32 == (tf32 && t == DType::Float32));
      CHECK((c.spec.a.col_major && c.spec.b.col_major));
      CHECK_NOTHROW(kiln::gpu::matmul::Descriptors{c.spec});
    }
  {  // float64 and complex: 8- and 16-byte elements in the offsets
    Array x = sample({3, 2, 4}, DType::Complex128).eval();
    Array y = sample({4, 2}, DType::Complex128).eval();
    auto c = calls_of(kiln::matmul(x, y));
    CHECK((c.spec.batch == 3 && c.spec.a.batch_stride == 8 && c.spec.b.batch_stride == 0));
    CHECK(c.spec.dtype == DType::Complex128);
  }
}

GPU_TEST_CASE("gpu matmul: every fixture through cuBLASLt (integers: the fused kernel)") {
  for (const auto& c : cases()) run_case(c, kiln::cuda());
}

GPU_TEST_CASE("gpu matmul: Tf32 float32 products within TF32's bound; explain says which") {
  kiln::set_matmul_precision(kiln::MatmulPrecision::Tf32);
  for (const auto& c : cases())
    if (!c.error && c.out[0].dtype == DType::Float32) run_case(c, kiln::cuda(), true);
  Array a = sample({64, 32}, DType::Float32, 0.0).to(kiln::cuda());
  std::string tf32 = kiln::explain({kiln::matmul(a, a.T())});
  kiln::set_matmul_precision(kiln::MatmulPrecision::Float32);
  std::string exact = kiln::explain({kiln::matmul(a, a.T())});
  CHECK(tf32.find("matmul (cuBLASLt, TF32) float32 (64, 32) @ (32, 64)^T") != std::string::npos);
  CHECK(exact.find("matmul (cuBLASLt, FP32) float32 (64, 32) @ (32, 64)^T") != std::string::npos);
  INFO(tf32 << exact);
}

GPU_TEST_CASE("gpu matmul: large and batched products match the host") {
  struct Shapes {
    Shape a, b;
  };
  for (auto s : {Shapes{{256, 512}, {512, 128}}, Shapes{{64, 96, 80}, {64, 80, 72}},
                 Shapes{{8, 1, 33, 17}, {5, 17, 9}}})
    for (DType t :
         {DType::Float32, DType::Float64, DType::Complex64, DType::Float16, DType::BFloat16}) {
      INFO(kiln::dtype_name(t) << " " << kiln::shape_str(s.a) << " @ " << kiln::shape_str(s.b));
      Array a = kiln::sin(sample(s.a, DType::Float64)).astype(t).eval();
      Array b = kiln::cos(sample(s.b, DType::Float64)).astype(t).eval();
      Array host = kiln::matmul(a, b);
      Array dev = kiln::matmul(a.to(kiln::cuda()), swap_last(swap_last(b).to(kiln::cuda())));
      double tol = t == DType::Float64 ? 1e-12 : kiln::is_half(t) ? 3e-2 : 1e-4;
      CHECK(kiln::allclose(dev.get(), host, tol, tol * 10));
    }
}

GPU_TEST_CASE("gpu matmul: plans are cached per shape and LRU-capped") {
  kiln::clear_matmul_plan_cache();
  auto before = kiln::matmul_plan_cache();
  CHECK(before.plans == 0);
  Array a = sample({16, 8}, DType::Float32).to(kiln::cuda()).eval();
  Array b = sample({8, 4}, DType::Float32).to(kiln::cuda()).eval();
  kiln::matmul(a, b).eval();
  auto one = kiln::matmul_plan_cache();
  CHECK(one.plans == 1);
  CHECK(one.misses == before.misses + 1);
  kiln::matmul(a + 1, b).eval();  // same shape, strides and alignment: a hit
  CHECK(kiln::matmul_plan_cache().hits >= one.hits + 1);
  kiln::set_matmul_plan_cache_limit(1);
  kiln::matmul(a.T(), a).eval();  // another shape evicts the first
  CHECK(kiln::matmul_plan_cache().plans == 1);
  kiln::set_matmul_plan_cache_limit(256);
  kiln::clear_matmul_plan_cache();
  CHECK(kiln::matmul_plan_cache().plans == 0);
}

// ---- linalg::norm against the definitions, written out -------------------------------------

namespace {

// x[r][c] = (r * 5 + c * 3) % 7 - 3 (some zeros, both signs), as float64.
std::vector<double> norm_values(int rows, int cols) {
  std::vector<double> v;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) v.push_back((r * 5 + c * 3) % 7 - 3);
  return v;
}

double item(const Array& a) { return a.astype(DType::Float64).item<double>(); }

}  // namespace

TEST_CASE("linalg::norm: vector and matrix orders, axes, keepdims and dtypes as NumPy's") {
  const int R = 4, C = 5;
  const std::vector<double> v = norm_values(R, C);
  Array x = kiln::asarray(v, {R, C});
  auto at = [&](int r, int c) { return v[r * C + c]; };
  // No order, no axis: the 2-norm of the flattened array.
  double sq = 0;
  for (double e : v) sq += e * e;
  CHECK(item(kiln::linalg::norm(x)) == doctest::Approx(std::sqrt(sq)).epsilon(1e-14));
  CHECK(kiln::linalg::norm(x, std::nullopt, {}, true).shape() == Shape{1, 1});
  // Matrix orders over both axes: column sums for 1 / -1, row sums for inf / -inf.
  std::vector<double> colsum(C, 0), rowsum(R, 0);
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) colsum[c] += std::abs(at(r, c)), rowsum[r] += std::abs(at(r, c));
  const double inf = INFINITY;
  CHECK(item(kiln::linalg::norm(x, 1.0)) == *std::max_element(colsum.begin(), colsum.end()));
  CHECK(item(kiln::linalg::norm(x, -1.0)) == *std::min_element(colsum.begin(), colsum.end()));
  CHECK(item(kiln::linalg::norm(x, inf)) == *std::max_element(rowsum.begin(), rowsum.end()));
  CHECK(item(kiln::linalg::norm(x, -inf)) == *std::min_element(rowsum.begin(), rowsum.end()));
  CHECK(item(kiln::linalg::norm(x, "fro")) == doctest::Approx(std::sqrt(sq)).epsilon(1e-14));
  // Axes swapped: the transpose's norms; keepdims keeps both as length 1.
  CHECK(item(kiln::linalg::norm(x, 1.0, {1, 0})) ==
        *std::max_element(rowsum.begin(), rowsum.end()));
  CHECK(kiln::linalg::norm(x, inf, {0, 1}, true).shape() == Shape{1, 1});
  // Vector orders along one axis.
  for (double p : {2.0, 1.0, 0.0, 3.0, 0.5, inf, -inf}) {
    INFO("ord " << p);
    auto got = kiln::linalg::norm(x, p, 1).to_vector<double>();
    REQUIRE(got.size() == size_t(R));
    for (int r = 0; r < R; ++r) {
      double want = 0;
      if (p == inf || p == -inf) {
        want = std::abs(at(r, 0));
        for (int c = 1; c < C; ++c)
          want = p > 0 ? std::max(want, std::abs(at(r, c))) : std::min(want, std::abs(at(r, c)));
      } else if (p == 0) {
        for (int c = 0; c < C; ++c) want += at(r, c) != 0;
      } else {
        for (int c = 0; c < C; ++c) want += std::pow(std::abs(at(r, c)), p);
        want = std::pow(want, 1 / p);
      }
      CHECK(got[r] == doctest::Approx(want).epsilon(1e-13));
    }
  }
  CHECK(kiln::linalg::norm(x, 3.0, 0, true).shape() == Shape{1, C});
  // Integers are taken as float64; float32 and complex64 give float32.
  CHECK(kiln::linalg::norm(x.astype(DType::Int16)).dtype() == DType::Float64);
  CHECK(kiln::linalg::norm(x.astype(DType::Float32), 1.0, 0).dtype() == DType::Float32);
  Array z = x.astype(DType::Complex64) * kiln::Scalar(std::complex<double>(0.6, 0.8));
  CHECK(kiln::linalg::norm(z).dtype() == DType::Float32);  // |0.6 + 0.8i| = 1
  CHECK(item(kiln::linalg::norm(z)) == doctest::Approx(std::sqrt(sq)).epsilon(1e-6));
  const double nonzeros =
      static_cast<double>(std::count_if(v.begin(), v.end(), [](double e) { return e != 0; }));
  CHECK(item(kiln::sum(kiln::linalg::norm(z, 0.0, 0))) == nonzeros);
  // Bad orders and axes.
  CHECK_THROWS_AS(kiln::linalg::norm(x, 2.0), kiln::Error);  // needs singular values
  CHECK_THROWS_AS(kiln::linalg::norm(x, "nuc"), kiln::Error);
  CHECK_THROWS_AS(kiln::linalg::norm(x, 3.0), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::linalg::norm(x, "fro", 0), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::linalg::norm(x, "max"), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::linalg::norm(x, 1.0, {0, 0}), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::linalg::norm(x.reshape({2, 2, 5}), 1.0), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::linalg::norm(x, 1.0, 2), kiln::ShapeError);
}

GPU_TEST_CASE("linalg::norm on the GPU matches the host") {
  Array x = kiln::asarray(norm_values(300, 7), {300, 7});
  Array xd = kiln::asarray(x, kiln::cuda());
  for (double p : {1.0, -1.0, double(INFINITY)})
    CHECK(kiln::allclose(kiln::linalg::norm(xd, p).get(), kiln::linalg::norm(x, p), 1e-12, 0));
  CHECK(kiln::allclose(kiln::linalg::norm(xd, 3.0, 1).get(), kiln::linalg::norm(x, 3.0, 1), 1e-12,
                       0));
  CHECK(kiln::allclose(kiln::linalg::norm(xd).get(), kiln::linalg::norm(x), 1e-12, 0));
}
