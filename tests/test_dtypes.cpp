// The smaller and unsigned integer dtypes (int8 int16 uint8 uint16 uint32 uint64) end to end:
// casts between every pair of real dtypes and their reductions against NumPy
// (tests/data/make_dtypes_fixtures.py writes tests/data/dtypes.txt), NumPy's promotion rules
// that the brief names, integer wraparound, randint, FFT and bad input. The elementwise ops,
// the promotion table, printing and .npy files of these dtypes are in test_elementwise,
// test_promotion, test_print and test_npy (their NumPy fixtures cover every dtype).
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <kiln/kiln.hpp>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "support/fixture_cases.hpp"
#include "support/gpu.hpp"

using kiln::Array;
using kiln::DType;

namespace {

template <class T>
constexpr bool is_half_v = std::is_same_v<T, kiln::float16> || std::is_same_v<T, kiln::bfloat16>;

template <class T>
T parse(const std::string& tok) {
  if constexpr (is_half_v<T>)  // the fixture's values are the half's, exactly
    return T(std::strtod(tok.c_str(), nullptr));
  else if constexpr (std::is_same_v<T, bool>)
    return tok == "1";
  else if constexpr (std::is_unsigned_v<T>)
    return static_cast<T>(std::stoull(tok));
  else if constexpr (std::is_integral_v<T>)
    return static_cast<T>(std::stoll(tok));
  else
    return static_cast<T>(std::strtod(tok.c_str(), nullptr));
}

// n values of dtype t read from `in`, as an array of shape s on device d.
Array read_array(std::istream& in, DType t, int64_t n, const kiln::Shape& s, kiln::Device d) {
  return kiln::visit_dtype(t, [&](auto z) {
    using T = decltype(z);
    std::unique_ptr<T[]> buf(new T[n ? n : 1]);
    for (int64_t i = 0; i < n; ++i) {
      std::string tok;
      in >> tok;
      buf[i] = parse<T>(tok);
    }
    return kiln::asarray(buf.get(), t, s, d);
  });
}

// Element by element, bit for bit (any NaN equals any NaN); the first few differences fail.
int count_differences(const Array& got, const Array& want, const std::string& what) {
  REQUIRE(got.dtype() == want.dtype());
  REQUIRE(got.shape() == want.shape());
  return kiln::visit_dtype(want.dtype(), [&](auto z) {
    using T = decltype(z);
    auto g = got.get().template to_vector<T>(), w = want.get().template to_vector<T>();
    int bad = 0;
    for (size_t i = 0; i < g.size(); ++i) {
      bool same;
      if constexpr (is_half_v<T>)
        same = g[i].bits == w[i].bits ||
               (std::isnan(static_cast<float>(g[i])) && std::isnan(static_cast<float>(w[i])));
      else if constexpr (std::is_floating_point_v<T>)
        same = (std::isnan(g[i]) && std::isnan(w[i])) || std::memcmp(&g[i], &w[i], sizeof(T)) == 0;
      else
        same = g[i] == w[i];
      if (!same && ++bad <= 3) {
        std::ostringstream os;
        if constexpr (is_half_v<T>)
          os << static_cast<float>(g[i]) << " != NumPy's " << static_cast<float>(w[i]);
        else if constexpr (std::is_integral_v<T>)
          os << +g[i] << " != NumPy's " << +w[i];
        else
          os << g[i] << " != NumPy's " << w[i];
        FAIL_CHECK(what << ": element " << i << ": kiln " << os.str());
      }
    }
    return bad;
  });
}

std::ifstream open_fixture() {
  std::ifstream in(std::string(KILN_TEST_DATA) + "/dtypes.txt");
  REQUIRE_MESSAGE(in.good(), "run /usr/bin/python3 tests/data/make_dtypes_fixtures.py");
  std::string numpy;
  std::getline(in, numpy);
  REQUIRE(numpy.rfind("numpy ", 0) == 0);
  return in;
}

// Every cast record: astype on device d against NumPy. Returns the number of casts checked.
int check_casts(kiln::Device d) {
  std::ifstream in = open_fixture();
  int checked = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream is(line);
    std::string kind, from, to;
    int64_t n = 0;
    is >> kind;
    if (kind != "cast") continue;
    is >> from >> to >> n;
    Array a = read_array(is, fixtures::parse_dtype(from), n, {n}, d);
    Array want = read_array(is, fixtures::parse_dtype(to), n, {n}, kiln::host());
    CHECK(count_differences(a.astype(fixtures::parse_dtype(to)), want, from + " -> " + to) == 0);
    ++checked;
  }
  return checked;
}

// Every reduce record on device d against NumPy. Returns the number checked.
int check_reductions(kiln::Device d) {
  std::ifstream in = open_fixture();
  int checked = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream is(line);
    std::string kind, op, dtype, axis, result_dtype;
    int64_t rows = 0, cols = 0, n = 0;
    is >> kind;
    if (kind != "reduce") continue;
    is >> op >> dtype >> axis >> rows >> cols;
    Array a = read_array(is, fixtures::parse_dtype(dtype), rows * cols, {rows, cols}, d);
    is >> result_dtype >> n;
    kiln::Shape shape = axis == "none" ? kiln::Shape{} : kiln::Shape{axis == "0" ? cols : rows};
    Array want = read_array(is, fixtures::parse_dtype(result_dtype), n, shape, kiln::host());
    kiln::AxesArg axes;
    if (axis != "none") axes = kiln::Axes{std::stoi(axis)};
    Array got;
    if (op == "sum") got = kiln::sum(a, axes);
    if (op == "prod") got = kiln::prod(a, axes);
    if (op == "max") got = kiln::max(a, axes);
    if (op == "min") got = kiln::min(a, axes);
    if (op == "mean") got = kiln::mean(a, axes);
    if (op == "argmax") got = axis == "none" ? kiln::argmax(a) : kiln::argmax(a, std::stoi(axis));
    if (op == "argmin") got = axis == "none" ? kiln::argmin(a) : kiln::argmin(a, std::stoi(axis));
    CHECK(count_differences(got, want, line.substr(0, line.find(' ', 20))) == 0);
    ++checked;
  }
  return checked;
}

template <class T>
Array vec(std::vector<T> v, kiln::Device d = kiln::host()) {
  return kiln::asarray(v.data(), kiln::dtype_v<T>, {static_cast<int64_t>(v.size())}, d);
}

}  // namespace

TEST_CASE("astype between every pair of real dtypes as NumPy (wrapping, float to int on x86)") {
  CHECK(check_casts(kiln::host()) == 13 * 13);
}

TEST_CASE("reductions of the smaller and unsigned integers as NumPy (uint64 sums wrap)") {
  CHECK(check_reductions(kiln::host()) == 8 * 2 * 7 * 3);
}

// NumPy's rule (@TYPE@_fill): start and start + step are stored in the dtype, and element i is
// first + i * (second - first) in the dtype (float32 for float16, the parts' dtype for complex).
// Expected values from NumPy 1.24 (/usr/bin/python3, printed with %.17g / %.9g).
TEST_CASE("arange fills as NumPy: the stored first two elements give the step") {
  auto ints = [](const Array& a) { return a.astype(DType::Int64).to_vector<int64_t>(); };
  CHECK(ints(kiln::arange(3, 0, -0.5, DType::Int32)) == std::vector<int64_t>{3, 2, 1, 0, -1, -2});
  CHECK(ints(kiln::arange(-2.5, 3, 1.7, DType::Int64)) == std::vector<int64_t>{-2, 0, 2, 4});
  CHECK(ints(kiln::arange(2.5, 7, 1.5, DType::Int32)) == std::vector<int64_t>{2, 4, 6});
  CHECK(ints(kiln::arange(0, 300, 1, DType::Int8)(kiln::Slice(254, 258))) ==
        std::vector<int64_t>{-2, -1, 0, 1});  // wraps
  CHECK(kiln::arange(1.0, 2.0, 0.1)(2).item<double>() == 1.2000000000000002);
  CHECK(kiln::arange(1e16, 1e16 + 10, 3.0)(3).item<double>() == 10000000000000012.0);
  CHECK(kiln::arange(0.0, 1.0, 0.1, DType::Float32)(9).item<float>() == 0.900000036f);
  CHECK(kiln::arange(0.0, 1.0, 0.1, DType::Complex64)(9).item<std::complex<float>>() ==
        std::complex<float>(0.900000036f, 0));
  CHECK(static_cast<float>(kiln::arange(0.0, 3.0, 0.3, DType::Float16)(9).item<kiln::float16>()) ==
        2.70117188f);
  CHECK(ints(kiln::arange(0.5, 2.5, 1.0, DType::Bool)) == std::vector<int64_t>{1, 1});
}

TEST_CASE("NumPy's promotion rules the brief names") {
  using kiln::promote_types;
  CHECK(promote_types(DType::UInt64, DType::Int64) == DType::Float64);
  CHECK(promote_types(DType::UInt8, DType::Int8) == DType::Int16);
  CHECK(promote_types(DType::UInt16, DType::Int16) == DType::Int32);
  CHECK(promote_types(DType::UInt32, DType::Int8) == DType::Int64);
  CHECK(promote_types(DType::UInt8, DType::Int64) == DType::Int64);
  CHECK(promote_types(DType::UInt8, DType::UInt64) == DType::UInt64);
  CHECK(promote_types(DType::Int16, DType::Float32) == DType::Float32);
  CHECK(promote_types(DType::UInt32, DType::Float32) == DType::Float64);
  CHECK(promote_types(DType::Int16, DType::Complex64) == DType::Complex64);
  // The values follow: uint8 255 + int8 -1 is 254 in int16, not a wrapped uint8.
  Array s = vec<uint8_t>({255, 0}) + vec<int8_t>({-1, -128});
  CHECK(s.dtype() == DType::Int16);
  CHECK(s.to_vector<int16_t>() == std::vector<int16_t>{254, -128});
}

TEST_CASE("integer overflow wraps as NumPy; weak Python-style scalars must fit the dtype") {
  CHECK((vec<int8_t>({127, -128}) + 1).to_vector<int8_t>() == std::vector<int8_t>{-128, -127});
  CHECK((vec<uint8_t>({255, 0}) + 1).to_vector<uint8_t>() == std::vector<uint8_t>{0, 1});
  CHECK((-vec<uint16_t>({1, 0})).to_vector<uint16_t>() == std::vector<uint16_t>{65535, 0});
  CHECK((vec<int16_t>({-32768}) / -1).dtype() == DType::Float64);
  CHECK((vec<int16_t>({-32768}).astype(DType::Int16) * int16_t{-1}).item<int16_t>() == -32768);
  CHECK(kiln::floor_divide(vec<int8_t>({-128, 7}), vec<int8_t>({-1, -2})).to_vector<int8_t>() ==
        std::vector<int8_t>{-128, -4});
  // uint64's all-ones value is a divisor like any other (not -1).
  uint64_t big = std::numeric_limits<uint64_t>::max();
  CHECK(kiln::floor_divide(vec<uint64_t>({big, 5}), vec<uint64_t>({big, big}))
            .to_vector<uint64_t>() == std::vector<uint64_t>{1, 0});
  CHECK(kiln::remainder(vec<uint32_t>({7}), vec<uint32_t>({4294967295u})).item<uint32_t>() == 7);
  CHECK((vec<uint8_t>({1}) << vec<uint8_t>({8})).item<uint8_t>() == 0);
  CHECK((vec<int8_t>({-64}) >> vec<int8_t>({9})).item<int8_t>() == -1);
  CHECK(kiln::abs(vec<int8_t>({-128})).item<int8_t>() == -128);
  CHECK(kiln::sign(vec<uint8_t>({0, 7})).to_vector<uint8_t>() == std::vector<uint8_t>{0, 1});
  // NumPy 2: "Python integer 256 out of bounds for uint8" (OverflowError).
  CHECK_THROWS_AS(vec<uint8_t>({1}) + 256, kiln::DTypeError);
  CHECK_THROWS_AS(vec<uint8_t>({1}) - (-1), kiln::DTypeError);
  CHECK_THROWS_AS(vec<int8_t>({1}) * 128, kiln::DTypeError);
  CHECK_THROWS_AS(kiln::full({2}, -1, DType::UInt32), kiln::DTypeError);
  CHECK((vec<uint8_t>({1}) + 255).item<uint8_t>() == 0);
  CHECK((vec<int8_t>({-128}) - 127).item<int8_t>() == 1);
  // Comparisons with such an integer are answered, as NumPy 2 answers them: every element lies
  // on one side of it (NumPy 1.24 gives the same values).
  auto bools = [](const Array& a) { return a.astype(DType::Int64).to_vector<int64_t>(); };
  Array u8 = vec<uint8_t>({0, 255}), i8 = vec<int8_t>({-128, 127});
  const std::vector<int64_t> yes{1, 1}, no{0, 0};
  CHECK(bools(u8 < -1) == no);
  CHECK(bools(u8 > -1) == yes);
  CHECK(bools(u8 == 256) == no);
  CHECK(bools(u8 != 256) == yes);
  CHECK(bools(i8 <= 300) == yes);
  CHECK(bools(i8 >= -300) == yes);
  CHECK(bools(300 > i8) == yes);
  CHECK(bools(-1 >= u8) == no);
  CHECK(bools(vec<uint64_t>({0, 7}) < -1) == no);
  CHECK((u8 < -1).shape() == u8.shape());
}

TEST_CASE("sum and prod of small integers accumulate in int64 / uint64, as NumPy") {
  Array u = kiln::full({300}, 255, DType::UInt8);
  CHECK(kiln::sum(u).dtype() == DType::UInt64);
  CHECK(kiln::sum(u).item<uint64_t>() == 300 * 255);
  Array i = kiln::full({300}, -128, DType::Int8);
  CHECK(kiln::sum(i).dtype() == DType::Int64);
  CHECK(kiln::sum(i).item<int64_t>() == -300 * 128);
  CHECK(kiln::mean(u).item<double>() == 255.0);
  CHECK(kiln::max(vec<uint32_t>({3, 4294967295u, 0})).item<uint32_t>() == 4294967295u);
  CHECK(kiln::min(vec<uint64_t>({3, 1ull << 63, 2})).item<uint64_t>() == 2);
  CHECK(kiln::argmax(vec<uint64_t>({3, 1ull << 63, 2})).item<int64_t>() == 1);
  // 0-d and empty arrays.
  CHECK(kiln::sum(kiln::zeros({0}, DType::UInt16)).item<uint64_t>() == 0);
  CHECK(kiln::prod(kiln::zeros({0}, DType::Int8)).item<int64_t>() == 1);
  CHECK(kiln::full({}, 200, DType::UInt8).item<uint8_t>() == 200);
  CHECK_THROWS_AS(kiln::max(kiln::zeros({0}, DType::UInt8)), kiln::ShapeError);
}

TEST_CASE("randint of every integer dtype: values in range, the int32/int64 stream's numbers") {
  for (DType t : kiln::kAllDTypes) {
    if (!kiln::is_integer(t)) continue;
    INFO(kiln::dtype_name(t));
    int64_t lo = kiln::is_unsigned(t) ? 0 : -100, hi = 100;
    Array r = kiln::random::Generator(7).randint(lo, hi, {1000}, t);
    CHECK(r.dtype() == t);
    Array wide = r.astype(DType::Int64);
    CHECK(kiln::min(wide).item<int64_t>() >= lo);
    CHECK(kiln::max(wide).item<int64_t>() < hi);
    // The same seed draws the same numbers whatever the integer dtype.
    Array ref = kiln::random::Generator(7).randint(lo, hi, {1000}, DType::Int64);
    CHECK(kiln::array_equal(wide, ref));
  }
  CHECK(kiln::random::randint(0, 256, {4}, DType::UInt8).dtype() == DType::UInt8);
  CHECK_THROWS_AS(kiln::random::randint(0, 257, {4}, DType::UInt8), kiln::DTypeError);
  CHECK_THROWS_AS(kiln::random::randint(-1, 5, {4}, DType::UInt64), kiln::DTypeError);
  CHECK_THROWS_AS(kiln::random::randint(-129, 0, {4}, DType::Int8), kiln::DTypeError);
  CHECK_THROWS_AS(kiln::random::uniform(0, 1, {4}, DType::UInt8), kiln::DTypeError);
}

TEST_CASE("FFT of the smaller and unsigned integers is that of their float64 values") {
  Array x = vec<uint8_t>({0, 255, 3, 128, 7, 1, 99, 200});
  for (DType t :
       {DType::UInt8, DType::Int8, DType::Int16, DType::UInt16, DType::UInt32, DType::UInt64}) {
    INFO(kiln::dtype_name(t));
    Array a = x.astype(t);
    Array want = kiln::fft::fft(a.astype(DType::Float64));
    Array got = kiln::fft::fft(a);
    CHECK(got.dtype() == DType::Complex128);
    CHECK(kiln::allclose(got, want, 0, 0));
    CHECK(kiln::allclose(kiln::fft::rfft(a), kiln::fft::rfft(a.astype(DType::Float64)), 0, 0));
  }
}

TEST_CASE("operations NumPy refuses on integers are DTypeErrors that say what to do") {
  Array u = vec<uint8_t>({1, 2});
  CHECK_THROWS_AS(u & vec<float>({1, 2}), kiln::DTypeError);
  CHECK_THROWS_AS(kiln::random::normal(0, 1, {2}, DType::Int16), kiln::DTypeError);
  try {
    (void)(u + 300);
    FAIL("no exception");
  } catch (const kiln::DTypeError& e) {
    CHECK(std::string(e.what()).find("out of bounds for uint8") != std::string::npos);
    CHECK(std::string(e.what()).find("astype") != std::string::npos);
  }
}

GPU_TEST_CASE("GPU: astype between every pair of real dtypes as NumPy") {
  CHECK(check_casts(kiln::cuda()) == 13 * 13);
}

GPU_TEST_CASE("GPU: reductions of the smaller and unsigned integers as NumPy") {
  CHECK(check_reductions(kiln::cuda()) == 8 * 2 * 7 * 3);
}

GPU_TEST_CASE("GPU: randint of the new integer dtypes gives the host's numbers") {
  for (DType t :
       {DType::Int8, DType::Int16, DType::UInt8, DType::UInt16, DType::UInt32, DType::UInt64}) {
    INFO(kiln::dtype_name(t));
    Array h = kiln::random::Generator(11).randint(0, 100, {4097}, t);
    Array g = kiln::random::Generator(11, kiln::cuda()).randint(0, 100, {4097}, t);
    CHECK(kiln::array_equal(h, g.get()));
  }
}

GPU_TEST_CASE("GPU: FFT of uint8 and int16 input equals the host's") {
  Array x = vec<uint8_t>({0, 255, 3, 128, 7, 1, 99, 200, 4, 5});
  for (DType t : {DType::UInt8, DType::Int16, DType::UInt64}) {
    Array a = x.astype(t);
    CHECK(kiln::allclose(kiln::fft::fft(kiln::asarray(a, kiln::cuda())).get(), kiln::fft::fft(a)));
    CHECK(
        kiln::allclose(kiln::fft::rfft(kiln::asarray(a, kiln::cuda())).get(), kiln::fft::rfft(a)));
  }
}

TEST_CASE("uniform and normal of float16 and bfloat16: the float32 draws of the seed, rounded") {
  // kiln/random.hpp's rule for the halves: the float32 numbers of the same seed and offset,
  // each rounded once (the cast is checked against NumPy above).
  for (DType t : {DType::Float16, DType::BFloat16}) {
    INFO(kiln::dtype_name(t));
    kiln::random::Generator g(7), f(7);
    Array u = g.uniform(-2, 3, {1001}, t), u32 = f.uniform(-2, 3, {1001}, DType::Float32);
    Array n = g.normal(1, 2, {1001}, t), n32 = f.normal(1, 2, {1001}, DType::Float32);
    CHECK(u.dtype() == t);
    CHECK(n.dtype() == t);
    CHECK(count_differences(u, u32.astype(t), "uniform") == 0);
    CHECK(count_differences(n, n32.astype(t), "normal") == 0);
    // Rounding may reach `high`, never pass it.
    CHECK(kiln::all((u >= -2.0) & (u <= 3.0)).item<bool>());
  }
}

GPU_TEST_CASE("GPU: uniform and normal of float16 and bfloat16 give the host's numbers") {
  for (DType t : {DType::Float16, DType::BFloat16}) {
    Array h = kiln::random::Generator(5).uniform(0, 1, {4097}, t);
    Array g = kiln::random::Generator(5, kiln::cuda()).uniform(0, 1, {4097}, t);
    CHECK(count_differences(g, h, "uniform") == 0);
    h = kiln::random::Generator(5).normal(0, 1, {4097}, t);
    g = kiln::random::Generator(5, kiln::cuda()).normal(0, 1, {4097}, t);
    CHECK(count_differences(g, h, "normal") == 0);
  }
}

namespace {

template <class To, class From>
std::vector<To> bit_casts(const std::vector<From>& bits) {
  std::vector<To> v(bits.size());
  std::memcpy(static_cast<void*>(v.data()), bits.data(), bits.size() * sizeof(To));
  return v;
}

// Where the GPU's conversion differs from the host's in any bit, NaN payloads included.
template <class Half, class From>
int64_t half_mismatches(const std::vector<From>& values) {
  const DType to = kiln::dtype_v<Half>;
  auto got = vec(values, kiln::cuda()).astype(to).get().template to_vector<Half>();
  auto want = vec(values).astype(to).template to_vector<Half>();
  int64_t bad = 0;
  for (size_t i = 0; i < values.size(); ++i) bad += got[i].bits != want[i].bits;
  return bad;
}

// float32 bit patterns at and beside every rounding point: each upper half-word with low
// half-words that put the dropped bits below, at and above a tie, with either parity of the
// kept bit (float16 drops 13 bits of a normal value, more of a subnormal; bfloat16 drops 16).
std::vector<uint32_t> float_probes() {
  std::vector<uint32_t> v;
  for (uint32_t hi = 0; hi < 0x10000; ++hi)
    for (uint32_t lo : {0x0000u, 0x0fffu, 0x1000u, 0x1001u, 0x3000u, 0x4000u, 0x7fffu, 0x8000u,
                        0x8001u, 0xc000u, 0xffffu})
      v.push_back(hi << 16 | lo);
  return v;
}

// float64 bit patterns: every sign and exponent, a few mantissas, and the 42 bits float16
// drops below, at and above their tie.
std::vector<uint64_t> double_probes() {
  std::vector<uint64_t> v;
  const uint64_t tie = uint64_t(1) << 41;
  for (uint64_t se = 0; se < 0x1000; ++se)
    for (uint64_t top : {0x0u, 0x1u, 0x155u, 0x2aau, 0x3ffu})
      for (uint64_t low : {uint64_t(0), tie - 1, tie, tie + 1, 2 * tie - 1})
        v.push_back(se << 52 | top << 42 | low);
  return v;
}

// Bits of a value, to compare NaN payloads too.
template <class T>
auto bits_of(T v) {
  if constexpr (is_half_v<T>)
    return v.bits;
  else if constexpr (sizeof(T) == 4)
    return std::bit_cast<uint32_t>(v);
  else
    return std::bit_cast<uint64_t>(v);
}

// Where astype of `values` to To on the host differs in any bit from `want`, the scalar recipe
// (kiln::float16's constructors and conversions: kernels/half.cuh) applied element by element.
template <class To, class From, class Want>
int64_t astype_mismatches(const std::vector<From>& values, Want want) {
  auto got = vec(values).astype(kiln::dtype_v<To>).template to_vector<To>();
  int64_t bad = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    const To w = want(values[i]);
    if (bits_of(got[i]) != bits_of(w) && ++bad <= 3)
      FAIL_CHECK("element " << i << ": " << +bits_of(values[i]) << " -> " << +bits_of(got[i])
                            << ", the recipe gives " << +bits_of(w));
  }
  return bad;
}

}  // namespace

// The host converts whole columns with the CPU's F16C instructions where it has them
// (src/host/half_columns.cpp): the bits must be the scalar recipe's, NaN payloads, ties,
// subnormals and overflow included, float64 rounded once (not through a float32 rounded to
// nearest). The lengths are not multiples of the vector width, so the ragged ends run too.
TEST_CASE("host astype to and from float16 and bfloat16 gives the scalar recipe's bits") {
  std::vector<uint16_t> every(0x10000 + 5);
  for (uint32_t b = 0; b < every.size(); ++b) every[b] = static_cast<uint16_t>(b);
  auto h = bit_casts<kiln::float16>(every);
  CHECK(astype_mismatches<float>(h, [](kiln::float16 v) { return static_cast<float>(v); }) == 0);
  CHECK(astype_mismatches<double>(h, [](kiln::float16 v) { return static_cast<double>(v); }) == 0);
  auto b16 = bit_casts<kiln::bfloat16>(every);
  CHECK(astype_mismatches<float>(b16, [](kiln::bfloat16 v) { return static_cast<float>(v); }) == 0);
  CHECK(astype_mismatches<double>(b16, [](kiln::bfloat16 v) { return static_cast<double>(v); }) ==
        0);
  auto doubles = bit_casts<double>(double_probes());
  auto floats = bit_casts<float>(float_probes());
  // Past float32's range and around its largest value, where a float32 step would overflow.
  for (double d : {3.4028234663852886e38, 3.4028235677973366e38, 1e39, 65519.99999999999, 65520.0,
                   5.960464477539063e-08, 2.9802322387695312e-08, 2.9802322387695316e-08})
    for (double s : {1.0, -1.0}) doubles.push_back(s * d);
  // And random ones from float16's subnormals to past its largest value (2^-26 to 2^17).
  std::mt19937_64 bits(7);
  for (int i = 0; i < (1 << 18); ++i) {
    uint64_t r = bits(), exponent = 997 + r % 44;
    doubles.push_back(std::bit_cast<double>((r & 0x800fffffffffffffull) | exponent << 52));
    floats.push_back(static_cast<float>(doubles.back()));
  }
  floats.resize(floats.size() + 3, 65519.0f);
  CHECK(astype_mismatches<kiln::float16>(floats, [](float v) { return kiln::float16(v); }) == 0);
  CHECK(astype_mismatches<kiln::bfloat16>(floats, [](float v) { return kiln::bfloat16(v); }) == 0);
  CHECK(astype_mismatches<kiln::float16>(doubles, [](double v) { return kiln::float16(v); }) == 0);
  CHECK(astype_mismatches<kiln::bfloat16>(doubles, [](double v) { return kiln::bfloat16(v); }) ==
        0);
}

// Kernels convert with the GPU's cvt instructions (kernels/half.cuh), the host with the bit
// recipes NumPy's fixtures check: they must give the same bits everywhere.
GPU_TEST_CASE("GPU: conversions to and from float16 and bfloat16 match the host bit for bit") {
  std::vector<uint16_t> every(0x10000);
  for (uint32_t b = 0; b < every.size(); ++b) every[b] = static_cast<uint16_t>(b);
  for (DType half : {DType::Float16, DType::BFloat16}) {
    INFO(kiln::dtype_name(half));
    Array h = half == DType::Float16 ? vec(bit_casts<kiln::float16>(every))
                                     : vec(bit_casts<kiln::bfloat16>(every));
    for (DType wide : {DType::Float32, DType::Float64}) {
      auto got = kiln::asarray(h, kiln::cuda()).astype(wide).get().astype(DType::Float64);
      auto g = got.to_vector<double>(), w = h.astype(DType::Float64).to_vector<double>();
      int64_t bad = 0;
      for (size_t i = 0; i < g.size(); ++i) bad += std::memcmp(&g[i], &w[i], sizeof(double)) != 0;
      CHECK(bad == 0);
    }
  }
  auto floats = bit_casts<float>(float_probes());
  CHECK(half_mismatches<kiln::float16>(floats) == 0);
  CHECK(half_mismatches<kiln::bfloat16>(floats) == 0);
  auto doubles = bit_casts<double>(double_probes());
  CHECK(half_mismatches<kiln::float16>(doubles) == 0);
  CHECK(half_mismatches<kiln::bfloat16>(doubles) == 0);
}

TEST_CASE("scatter add into float16: every update in float32, rounded once, as NumPy's add.at") {
  // By hand: NumPy's float16 add loop rounds after each update, so x[0] gets 0.1 then 0.2 each
  // as float16, and 2048 + 1 + 1 stays 2048 (each 2049 rounds to even).
  Array x = kiln::zeros({3}, DType::Float16).astype(DType::Float16);
  x = x.at(1).set(2048.0);
  Array idx = vec<int64_t>({0, 0, 1, 1, 2});
  Array v = kiln::asarray(std::vector<double>{0.1, 0.2, 1, 1, 70000}).astype(DType::Float16);
  auto got = x.at(idx).add(v).to_vector<kiln::float16>();
  const float h01 = static_cast<float>(kiln::float16(0.1)),
              h02 = static_cast<float>(kiln::float16(0.2));
  CHECK(static_cast<float>(got[0]) == static_cast<float>(kiln::float16(h01 + h02)));
  CHECK(static_cast<float>(got[1]) == 2048.0f);
  CHECK(std::isinf(static_cast<float>(got[2])));  // 70000 is inf in float16
}
