// repr() and operator<< against NumPy's repr. The fixtures in tests/data/print/ come from
// tests/data/make_print_fixtures.py (NumPy 1.24); see that script for their format.
#include <doctest/doctest.h>

#include <complex>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <kiln/kiln.hpp>

#include "support/fixture_cases.hpp"

namespace {

const std::string kFixtureDir = std::string(KILN_TEST_DATA) + "/print/";
constexpr int64_t kEdgeItems = 3;

struct Fixture {
  std::string name;
  kiln::DType dtype;
  bool edges_only;  // the .bin holds only the printed elements; see make_print_fixtures.py
  kiln::Shape shape;
};

std::vector<Fixture> read_fixtures() {
  std::ifstream in(kFixtureDir + "cases.txt");
  REQUIRE_MESSAGE(in.good(), "missing " << kFixtureDir << "cases.txt; run make_print_fixtures.py");
  std::vector<Fixture> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    std::string name, dtype, storage;
    int ndim = 0;
    fields >> name >> dtype >> storage >> ndim;
    kiln::Shape shape(ndim);
    for (auto& d : shape) fields >> d;
    REQUIRE_MESSAGE(!fields.fail(), "bad line in cases.txt: " << line);
    out.push_back({name, fixtures::parse_dtype(dtype), storage == "edges", shape});
  }
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// An element value that would change the printed text if it were printed or measured: it is
// wider than anything in the fixtures and forces scientific notation for floats.
std::vector<char> filler_element(kiln::DType t) {
  std::vector<char> bytes(kiln::itemsize(t));
  kiln::visit_dtype(t, [&](auto zero) {
    using T = decltype(zero);
    T v{};
    if constexpr (std::is_same_v<T, bool>) {
      v = true;
    } else if constexpr (std::is_unsigned_v<T>) {
      v = std::numeric_limits<T>::max();
    } else if constexpr (std::is_integral_v<T>) {
      v = std::numeric_limits<T>::min();
    } else if constexpr (std::is_same_v<T, kiln::float16> || std::is_same_v<T, kiln::bfloat16>) {
      v = T(-60000.0f);  // wide, and 1e-5 in a float16 fixture makes it scientific anyway
    } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, std::complex<float>>) {
      v = T(3e38f) * T(-1);
    } else {
      v = T(1e300) * T(-1);
    }
    std::memcpy(bytes.data(), &v, sizeof v);
  });
  return bytes;
}

// Positions along an axis of length n that a summarised repr prints.
std::vector<int64_t> edge_positions(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i)
    if (n <= 2 * kEdgeItems || i < kEdgeItems || i >= n - kEdgeItems) out.push_back(i);
  return out;
}

// The full array of an "edges" fixture: the stored block at the printed positions, the filler
// everywhere else.
std::vector<char> expand_edges(const std::string& block, const Fixture& f) {
  const size_t item = kiln::itemsize(f.dtype);
  const std::vector<char> filler = filler_element(f.dtype);
  std::vector<char> full(kiln::shape_size(f.shape) * item);
  for (size_t i = 0; i < full.size(); i += item) std::memcpy(&full[i], filler.data(), item);

  // Row-major offsets of the printed elements in the full array, in block order.
  std::vector<int64_t> offsets{0};
  for (int64_t n : f.shape) {
    std::vector<int64_t> next;
    for (int64_t base : offsets)
      for (int64_t i : edge_positions(n)) next.push_back(base * n + i);
    offsets = std::move(next);
  }
  REQUIRE(block.size() == offsets.size() * item);
  for (size_t k = 0; k < offsets.size(); ++k)
    std::memcpy(&full[offsets[k] * item], &block[k * item], item);
  return full;
}

kiln::Array load(const Fixture& f) {
  std::string bytes = read_file(kFixtureDir + f.name + ".bin");
  if (f.edges_only) {
    std::vector<char> full = expand_edges(bytes, f);
    return kiln::asarray(full.data(), f.dtype, f.shape);
  }
  REQUIRE(bytes.size() == static_cast<size_t>(kiln::shape_size(f.shape) * kiln::itemsize(f.dtype)));
  return kiln::asarray(bytes.data(), f.dtype, f.shape);
}

}  // namespace

TEST_CASE("repr matches NumPy on every fixture") {
  std::vector<Fixture> fixtures = read_fixtures();
  CHECK(fixtures.size() > 50);
  int passed = 0;
  for (const Fixture& f : fixtures) {
    INFO("fixture: " << f.name << " (" << std::string(kiln::dtype_name(f.dtype)) << ", shape "
                     << kiln::shape_str(f.shape) << ")");
    const std::string expected = read_file(kFixtureDir + f.name + ".txt");
    const std::string got = kiln::repr(load(f));
    CHECK(got == expected);
    if (got == expected) ++passed;
  }
  MESSAGE(passed << " of " << fixtures.size() << " print fixtures match NumPy");
}

// std::vector<bool> has no data(), so bool arrays come from plain arrays.
const bool kTrue = true;
const bool kTrueFalse[] = {true, false};

TEST_CASE("repr of small arrays") {
  CHECK(kiln::repr(kiln::asarray<int64_t>({1, 2, 3})) == "array([1, 2, 3])");
  CHECK(kiln::repr(kiln::asarray<int32_t>({1, 2, 3})) == "array([1, 2, 3], dtype=int32)");
  CHECK(kiln::repr(kiln::asarray(std::vector<float>{1.5f, -2.f, 3.25f, 4.f}, {2, 2})) ==
        "array([[ 1.5 , -2.  ],\n"
        "       [ 3.25,  4.  ]], dtype=float32)");
  CHECK(kiln::repr(kiln::asarray<double>({0.1, 1e-5})) == "array([1.e-01, 1.e-05])");
  CHECK(kiln::repr(kiln::asarray(kTrueFalse, kiln::DType::Bool, {2})) == "array([ True, False])");
  CHECK(kiln::repr(kiln::asarray(std::vector<std::complex<float>>{{1, 2}, {0, -0.5f}})) ==
        "array([1.+2.j , 0.-0.5j], dtype=complex64)");
}

TEST_CASE("repr of 0-d and empty arrays") {
  CHECK(kiln::repr(kiln::asarray(std::vector<int64_t>{5}, kiln::Shape{})) == "array(5)");
  CHECK(kiln::repr(kiln::asarray(&kTrue, kiln::DType::Bool, kiln::Shape{})) == "array(True)");
  CHECK(kiln::repr(kiln::asarray(std::vector<float>{0.1f}, kiln::Shape{})) ==
        "array(0.1, dtype=float32)");
  CHECK(kiln::repr(kiln::zeros({0}, kiln::DType::Float32)) == "array([], dtype=float32)");
  CHECK(kiln::repr(kiln::zeros({0, 3}, kiln::DType::Int64)) ==
        "array([], shape=(0, 3), dtype=int64)");
}

TEST_CASE("printing evaluates lazy expressions and views") {
  kiln::Array a = kiln::arange(6).reshape({2, 3});
  CHECK(kiln::repr(a * 2) == "array([[ 0,  2,  4],\n       [ 6,  8, 10]])");
  CHECK(kiln::repr(a.T()) == "array([[0, 3],\n       [1, 4],\n       [2, 5]])");
  CHECK(kiln::repr(a(kiln::Slice(), kiln::Slice(std::nullopt, std::nullopt, -2))) ==
        "array([[2, 0],\n       [5, 3]])");
}

TEST_CASE("operator<< writes the repr") {
  kiln::Array a = kiln::linspace(0, 1, 5);
  std::ostringstream os;
  os << a;
  CHECK(os.str() == kiln::repr(a));
  CHECK(os.str() == "array([0.  , 0.25, 0.5 , 0.75, 1.  ])");
}

TEST_CASE("a summarised 2000x2000 array prints its corners") {
  std::vector<int64_t> v(2000 * 2000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(i % 2000 + 10 * (i / 2000));
  const std::string text = kiln::repr(kiln::asarray(v, {2000, 2000}));
  CHECK(text ==
        "array([[    0,     1,     2, ...,  1997,  1998,  1999],\n"
        "       [   10,    11,    12, ...,  2007,  2008,  2009],\n"
        "       [   20,    21,    22, ...,  2017,  2018,  2019],\n"
        "       ...,\n"
        "       [19970, 19971, 19972, ..., 21967, 21968, 21969],\n"
        "       [19980, 19981, 19982, ..., 21977, 21978, 21979],\n"
        "       [19990, 19991, 19992, ..., 21987, 21988, 21989]])");
}
