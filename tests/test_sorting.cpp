// sort, argsort, unique, searchsorted, median, quantile, percentile against NumPy 1.24 (stable
// sorts), in every dtype NumPy has (tests/data/sorting_cases.py writes NumPy's answers at test
// time): ties, NaNs of both signs, -0.0, infinities, empty, 0-d and one-element arrays, every
// axis; views (transposes, steps) against the same answers; the errors; and on a GPU (CUB's radix
// sort) the host executor's bits.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <kiln/kiln.hpp>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "support/gpu.hpp"

namespace {

namespace fs = std::filesystem;
using kiln::Array;
using kiln::DType;
using kiln::Slice;

struct Case {
  std::string name, op, axis, arg;
};

// NumPy's answers, written once per process into a temporary folder.
struct Fixtures {
  fs::path dir = fs::temp_directory_path() / ("kiln_test_sorting_" + std::to_string(getpid()));
  std::vector<Case> cases;
  Fixtures() {
    fs::create_directories(dir);
    const std::string cmd = std::string(KILN_PYTHON) + " " + KILN_TEST_DATA + "/sorting_cases.py " +
                            dir.string() + " > /dev/null";
    if (std::system(cmd.c_str()) != 0) return;
    std::ifstream in(dir / "cases.txt");
    for (Case c; in >> c.name >> c.op >> c.axis >> c.arg;) cases.push_back(c);
  }
  ~Fixtures() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
  Array load(const Case& c, const std::string& part) const {
    return kiln::load_npy((dir / (c.name + "_" + part + ".npy")).string());
  }
};

const Fixtures& fixtures() {
  static Fixtures f;
  REQUIRE_MESSAGE(f.cases.size() > 1000, KILN_PYTHON
                  " with NumPy could not write the fixtures ("
                  "tests/data/sorting_cases.py); install python3-numpy");
  return f;
}

std::optional<int> axis_of(const Case& c) {
  if (c.axis == "none") return std::nullopt;
  return std::stoi(c.axis);
}

std::vector<double> qs_of(const std::string& arg) {
  std::vector<double> q;
  std::stringstream in(arg);
  for (std::string t; std::getline(in, t, ',');) q.push_back(std::stod(t));
  return q;
}

// Same dtype, shape and bytes (NaN payloads and the sign of zero included).
bool same_bits(const Array& got, const Array& want) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) return false;
  if (want.nbytes() == 0) return true;  // empty arrays may have no storage (data() is null)
  Array g = got.get(), w = want.get();
  return std::memcmp(g.data(), w.data(), static_cast<size_t>(w.nbytes())) == 0;
}

// NaNs equal each other, -0.0 equals 0.0 (unique keeps either of equal values: NumPy's unique
// uses an unstable sort). Exact otherwise.
bool same_values(const Array& got, const Array& want) {
  return got.dtype() == want.dtype() && got.shape() == want.shape() &&
         kiln::array_equal(got, want, true);
}

// What kiln gives for a case (the first result; unique's counts in `second`).
Array run(const Case& c, const Array& x, const Array* v, Array* second) {
  const auto axis = axis_of(c);
  if (c.op == "sort") return kiln::sort(x, axis);
  if (c.op == "argsort") return kiln::argsort(x, axis);
  if (c.op == "unique") {
    auto r = kiln::unique_counts(x);
    if (second) *second = r.counts;
    return r.values;
  }
  if (c.op == "searchsorted")
    return kiln::searchsorted(x, *v, c.arg == "left" ? kiln::Side::Left : kiln::Side::Right);
  if (c.op == "median") return kiln::median(x, axis);
  const auto q = qs_of(c.arg);
  const bool vec = c.arg.find(',') != std::string::npos;
  if (c.op == "quantile") return vec ? kiln::quantile(x, q, axis) : kiln::quantile(x, q[0], axis);
  return kiln::percentile(x, q, axis);
}

}  // namespace

TEST_CASE(
    "every case matches NumPy: sort and argsort bit for bit, unique, searchsorted, "
    "median and quantiles") {
  const auto& f = fixtures();
  int checked = 0;
  for (const Case& c : f.cases) {
    CAPTURE(c.name);
    Array x = f.load(c, "in"), want = f.load(c, "out");
    Array v = c.op == "searchsorted" ? f.load(c, "v") : x;
    Array counts;
    Array got = run(c, x, &v, &counts);
    if (c.op == "unique") {
      CHECK(same_values(got, want));
      CHECK(same_bits(counts, f.load(c, "out2")));
    } else if (c.op != "sort" && c.op != "argsort" && c.op != "searchsorted") {
      // Statistics: NumPy's NaN bits and the sign of a zero median (its partition is not
      // stable) are not part of the answer.
      CHECK_MESSAGE(same_values(got, want), "kiln " << got << "\nNumPy " << want);
    } else {
      CHECK_MESSAGE(same_bits(got, want), "kiln " << got << "\nNumPy " << want);
    }
    ++checked;
  }
  CHECK(checked == static_cast<int>(f.cases.size()));
}

TEST_CASE("views sort as their values: transposes, steps and offsets against NumPy's answers") {
  const auto& f = fixtures();
  int checked = 0;
  for (const Case& c : f.cases) {
    if ((c.op != "sort" && c.op != "argsort") || c.axis == "none") continue;
    Array x = f.load(c, "in");
    if (x.ndim() != 2 || x.size() == 0 || x.shape()[0] < 3) continue;
    CAPTURE(c.name);
    const int axis = std::stoi(c.axis);
    const bool values = c.op == "sort";
    Array want = f.load(c, "out");
    // The transpose along the other axis: the transposed answer.
    Array t =
        values ? kiln::sort(x.T(), 1 - (axis + 2) % 2) : kiln::argsort(x.T(), 1 - (axis + 2) % 2);
    CHECK(same_bits(t, want.T()));
    // Every other row of a row-wise sort: those rows of the answer (rows are independent).
    if ((axis + 2) % 2 == 1) {
      Slice every_other(std::nullopt, std::nullopt, 2);
      Array s = values ? kiln::sort(x(every_other), -1) : kiln::argsort(x(every_other), -1);
      CHECK(same_bits(s, want(every_other)));
      // Reversed rows: the answer's rows reversed.
      Slice reversed(std::nullopt, std::nullopt, -1);
      Array r = values ? kiln::sort(x(reversed), -1) : kiln::argsort(x(reversed), -1);
      CHECK(same_bits(r, want(reversed)));
    }
    ++checked;
  }
  CHECK(checked > 50);
}

TEST_CASE("argsort is stable: ties keep their order; NaNs of any sign last in input order") {
  Array x = kiln::asarray(std::vector<int32_t>{2, 1, 2, 1, 2, 0});
  CHECK(kiln::argsort(x).to_vector<int64_t>() == std::vector<int64_t>{5, 1, 3, 0, 2, 4});
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = INFINITY;
  Array y = kiln::asarray(std::vector<float>{nan, 0.0f, -nan, -0.0f, -inf, 1.0f, inf, 0.0f});
  CHECK(kiln::argsort(y).to_vector<int64_t>() == std::vector<int64_t>{4, 1, 3, 7, 5, 6, 0, 2});
  // The values: -0.0 keeps its place among the zeros, each NaN its bits.
  auto s = kiln::sort(y).to_vector<float>();
  CHECK(std::signbit(s[1]) == false);
  CHECK(std::signbit(s[2]) == true);
  CHECK((std::isnan(s[6]) && !std::signbit(s[6]) && std::isnan(s[7]) && std::signbit(s[7])));
}

TEST_CASE("partition and argpartition put kth in its sorted place, smaller before, larger after") {
  std::mt19937 g(3);
  std::vector<double> v(60);
  for (double& e : v) e = static_cast<double>(g() % 9);
  v[7] = std::nan("");
  Array x = kiln::asarray(v).reshape({6, 10});
  for (int64_t k : {0, 4, 9, -1}) {
    const int64_t kk = k < 0 ? k + 10 : k;
    auto p = kiln::partition(x, {k}).to_vector<double>();
    auto i = kiln::argpartition(x, {k}).to_vector<int64_t>();
    auto s = kiln::sort(x).to_vector<double>();
    for (int r = 0; r < 6; ++r) {
      const double pivot = p[r * 10 + kk];
      CHECK((pivot == s[r * 10 + kk] || (std::isnan(pivot) && std::isnan(s[r * 10 + kk]))));
      for (int j = 0; j < 10; ++j) {
        const double e = p[r * 10 + j];
        if (j < kk) CHECK((std::isnan(pivot) || e <= pivot));
        if (j > kk) CHECK((std::isnan(e) || e >= pivot));
        // argpartition's positions read the same values
        const double at = v[r * 10 + i[r * 10 + j]];
        CHECK((at == e || (std::isnan(at) && std::isnan(e))));
      }
    }
  }
  CHECK_THROWS_AS(kiln::partition(x, {10}), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::argpartition(x, {-7}, 0), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::partition(x, {0}, 2), kiln::ShapeError);
}

TEST_CASE("bfloat16 sorts as its float32 values (NumPy has no bfloat16)") {
  std::vector<float> v{3.5f, -0.0f, 0.0f, -2.0f, INFINITY, std::nanf(""), -INFINITY, 1.0f, 3.5f};
  for (int i = 0; i < 200; ++i) v.push_back(static_cast<float>((i * 37) % 23) - 11.0f);
  Array f = kiln::asarray(v).reshape({1, -1});
  Array b = f.astype(DType::BFloat16);  // each value exact in bfloat16
  CHECK(same_bits(kiln::sort(b).astype(DType::Float32), kiln::sort(f)));
  CHECK(same_bits(kiln::argsort(b), kiln::argsort(f)));
  CHECK(same_bits(kiln::median(b, 1).astype(DType::Float32), kiln::median(f, 1)));
}

// NumPy's median takes complex (its quantile does not): the middle of the lexicographic order,
// or the mean of the middle two; a NaN (sorted last) gives NaN. Values derived by hand.
TEST_CASE("median of complex values, as NumPy") {
  using C = std::complex<double>;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto median_of = [](std::vector<C> v) {
    Array m = kiln::median(kiln::asarray(v));
    CHECK(m.dtype() == DType::Complex128);
    return m.item<C>();
  };
  // sorted: 0+5j, 1-1j, 1+2j, 2+0j; the middle two's mean
  CHECK(median_of({{1, 2}, {1, -1}, {0, 5}, {2, 0}}) == C(1, 0.5));
  CHECK(median_of({{3, 1}, {3, -1}, {1, 0}}) == C(3, -1));  // sorted: 1, 3-1j, 3+1j
  CHECK(std::isnan(median_of({{1, 0}, {nan, 0}, {2, 0}}).real()));
  Array z = kiln::asarray(std::vector<std::complex<float>>{{4, 0}, {1, 1}, {2, 0}, {1, -1}})
                .reshape({2, 2});
  Array rows = kiln::median(z, 1, true);  // (4, 1+1j) and (2, 1-1j)
  CHECK(rows.dtype() == DType::Complex64);
  CHECK(rows.shape() == kiln::Shape{2, 1});
  auto v = rows.to_vector<std::complex<float>>();
  CHECK(v[0] == std::complex<float>(2.5f, 0.5f));
  CHECK(v[1] == std::complex<float>(1.5f, -0.5f));
}

// NumPy: an empty q gives an empty array whose leading axis has length 0; a 0-d array has no
// axis to take a statistic along (AxisError).
TEST_CASE("quantile of no q is empty; a 0-d array's median along an axis is refused") {
  Array x = kiln::arange(0, 6, 1, DType::Float64).reshape({2, 3});
  CHECK(kiln::quantile(x, std::vector<double>{}).shape() == kiln::Shape{0});
  CHECK(kiln::quantile(x, std::vector<double>{}, 1).shape() == kiln::Shape{0, 2});
  CHECK(kiln::percentile(x, std::vector<double>{}, 1, true).shape() == kiln::Shape{0, 2, 1});
  Array s = kiln::full({}, 3.0);
  CHECK(kiln::median(s).item<double>() == 3.0);
  CHECK_THROWS_WITH_AS(kiln::median(s, 0), doctest::Contains("axis 0 is out of bounds"),
                       kiln::ShapeError);
  CHECK_THROWS_AS(kiln::quantile(s, 0.5, -1), kiln::ShapeError);
}

TEST_CASE("bad input raises kiln's errors and names the fix") {
  Array x = kiln::arange(0, 6, 1, DType::Float32).reshape({2, 3});
  CHECK_THROWS_AS(kiln::sort(x, 2), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::argsort(x, -3), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::sort(kiln::full({}, 1.0), 0), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::median(x, 5), kiln::ShapeError);
  Array z = x.astype(DType::Complex64);
  CHECK_THROWS_WITH_AS(kiln::quantile(z, 0.5), doctest::Contains("real() or abs()"),
                       kiln::DTypeError);
  CHECK_THROWS_AS(kiln::percentile(z, 50.0), kiln::DTypeError);
  CHECK_THROWS_AS(kiln::quantile(x > 1, 0.5), kiln::DTypeError);
  CHECK_THROWS_WITH_AS(kiln::quantile(x, 1.5),
                       "quantile: q = 1.5 is outside [0, 1]; give q from 0 to 1", kiln::Error);
  CHECK_THROWS_AS(kiln::quantile(x, {0.5, -0.1}), kiln::Error);
  CHECK_THROWS_WITH_AS(kiln::percentile(x, 101.0), doctest::Contains("q = 101 is outside [0, 100]"),
                       kiln::Error);
  CHECK_THROWS_AS(kiln::quantile(kiln::zeros({0}), 0.5), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::searchsorted(x, x), kiln::ShapeError);
  // Complex sorts (NumPy's lexicographic order); only the statistics refuse it.
  CHECK(kiln::sort(z).dtype() == DType::Complex64);
}

TEST_CASE("median keeps dims, the empty axis gives NaN, a 0-d array is its own median") {
  Array x = kiln::asarray(std::vector<double>{4, 1, 3, 2, 9, 7}).reshape({2, 3});
  CHECK(kiln::median(x, 1, true).shape() == kiln::Shape{2, 1});
  CHECK(kiln::median(x, 1).to_vector<double>() == std::vector<double>{3, 7});
  CHECK(kiln::median(x).item<double>() == 3.5);
  CHECK(std::isnan(kiln::median(kiln::zeros({0})).item<double>()));
  CHECK(kiln::median(kiln::full({}, 2.5)).item<double>() == 2.5);
  CHECK(kiln::quantile(x, {0.0, 1.0}, 0, true).shape() == kiln::Shape{2, 1, 3});
}

TEST_CASE("explain and to_dot show the sort as a library step") {
  Array x = kiln::arange(0, 12, 1, DType::Float32).reshape({3, 4});
  Array s = kiln::argsort(kiln::sin(x), 0);
  const std::string e = kiln::explain({s});
  CHECK(e.find("argsort (stable sort)") != std::string::npos);
  CHECK(e.find("4 rows of 3") != std::string::npos);
  CHECK(kiln::to_dot({s}).find("argsort (stable sort)") != std::string::npos);
  CHECK(kiln::explain({kiln::sort(x)}).find("sort (stable sort)") != std::string::npos);
}

// ---- GPU: CUB's radix sort against the host executor --------------------------------------

GPU_TEST_CASE("every NumPy case gives the host's bits on the GPU") {
  const auto& f = fixtures();
  int checked = 0;
  for (const Case& c : f.cases) {
    CAPTURE(c.name);
    Array x = f.load(c, "in"), v = c.op == "searchsorted" ? f.load(c, "v") : x;
    Array xg = kiln::asarray(x, kiln::cuda()), vg = kiln::asarray(v, kiln::cuda());
    Array counts_h, counts_g;
    Array host = run(c, x, &v, &counts_h), gpu = run(c, xg, &vg, &counts_g);
    CHECK(gpu.device().is_cuda());
    CHECK(same_bits(gpu, host));
    if (c.op == "unique") CHECK(same_bits(counts_g, counts_h));
    ++checked;
  }
  CHECK(checked == static_cast<int>(f.cases.size()));
}

GPU_TEST_CASE("long rows and many rows on the GPU: every dtype, ties and NaNs, as the host") {
  std::mt19937 g(7);
  const kiln::Shape shapes[] = {{(1 << 18) + 7}, {3, 100003}, {2000, 33}, {5, 1}};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (DType t : kiln::kAllDTypes) {
    for (const auto& shape : shapes) {
      for (bool nans : {true, false}) {
        CAPTURE(kiln::dtype_name(t));
        CAPTURE(shape.size());
        CAPTURE(nans);
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        // NaNs of both signs (the GPU's float sort puts those with the sign bit first, then
        // moves them), -0.0 among 0.0, and many ties.
        std::vector<double> re(static_cast<size_t>(n)), im(static_cast<size_t>(n));
        for (auto* v : {&re, &im})
          for (double& e : *v) {
            const unsigned r = g() % 1000;
            e = nans && r < 5    ? nan
                : nans && r < 10 ? -nan
                : r < 20         ? -0.0
                                 : static_cast<double>(g() % 2001) - 1000.0;
          }
        Array x = kiln::asarray(re).reshape(shape).astype(t);
        if (kiln::is_complex(t))
          x = x + kiln::asarray(im).reshape(shape).astype(t) * std::complex<double>(0, 1);
        REQUIRE(x.dtype() == t);
        Array xg = kiln::asarray(x, kiln::cuda());
        for (int axis : {-1, 0}) {
          CHECK(same_bits(kiln::sort(xg, axis), kiln::sort(x, axis)));
          CHECK(same_bits(kiln::argsort(xg, axis), kiln::argsort(x, axis)));
        }
        CHECK(same_bits(kiln::sort(xg, std::nullopt), kiln::sort(x, std::nullopt)));
        CHECK(same_bits(kiln::median(xg, -1), kiln::median(x, -1)));  // complex too
      }
    }
  }
}

GPU_TEST_CASE("explain names CUB's radix sort for a device array") {
  Array x = kiln::arange(0, 12, 1, DType::Float32, kiln::cuda()).reshape({3, 4});
  CHECK(kiln::explain({kiln::sort(x)}).find("sort (CUB radix sort)") != std::string::npos);
  CHECK(kiln::to_dot({kiln::argsort(x)}).find("argsort (CUB)") != std::string::npos);
}
