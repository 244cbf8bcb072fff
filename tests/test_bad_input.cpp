// Bad input to every public function: a kiln exception of the documented type whose message
// names what was wrong, and an engine that still works afterwards (each check evaluates a
// fresh expression, lazily and eagerly, after the error). Also empty and zero-size arrays, and
// NaN and infinities, which must propagate as IEEE 754 says in fused and eager evaluation alike.
#include <doctest/doctest.h>

#include <unistd.h>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <kiln/kiln.hpp>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "support/gpu.hpp"

namespace {

using kiln::Array;
using kiln::DType;
using kiln::Shape;
using kiln::Slice;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A fresh computation, checked in both modes: the engine survived the error before it.
bool engine_works() {
  auto run = [] {
    Array x = kiln::arange(0, 10, 1, DType::Float64);
    Array y = kiln::sin(x) * kiln::sin(x) + kiln::cos(x) * kiln::cos(x) + x;  // 1 + x
    return kiln::sum(y).item<double>();
  };
  double lazy = run();
  double eager;
  {
    kiln::EagerScope scope;
    eager = run();
  }
  return std::abs(lazy - 55.0) < 1e-9 && lazy == eager;
}

// Runs f, which must throw exactly E (not a subclass, not another kiln error) with a message
// containing `needle`; then checks the engine still works.
template <class E>
void expect_error(const std::function<void()>& f, const std::string& needle, const char* expr,
                  int line) {
  INFO(std::string(expr) << " (line " << line << ")");
  try {
    f();
    FAIL_CHECK("no exception; expected " << std::string(typeid(E).name()) << " with \"" << needle
                                         << "\"");
  } catch (const kiln::Error& e) {
    CHECK_MESSAGE(typeid(e) == typeid(E),
                  "threw " << std::string(typeid(e).name()) << " instead of "
                           << std::string(typeid(E).name()) << ": " << std::string(e.what()));
    CHECK_MESSAGE(std::string(e.what()).find(needle) != std::string::npos,
                  "message \"" << std::string(e.what()) << "\" lacks \"" << needle << "\"");
  } catch (const std::exception& e) {
    FAIL_CHECK("threw a non-kiln exception " << std::string(typeid(e).name()) << ": "
                                             << std::string(e.what()));
  }
  CHECK(engine_works());
}

#define EXPECT_ERROR(E, needle, ...) \
  expect_error<E>([&] { (void)(__VA_ARGS__); }, needle, #__VA_ARGS__, __LINE__)

Array f64(std::vector<double> v) { return kiln::asarray(v); }

}  // namespace

TEST_CASE("empty Array handles: every use says the handle is empty") {
  Array e;
  Array x = kiln::ones({3});
  const char* what = "kiln::Array is empty";
  EXPECT_ERROR(kiln::Error, what, e.dtype());
  EXPECT_ERROR(kiln::Error, what, e.shape());
  EXPECT_ERROR(kiln::Error, what, e.ndim());
  EXPECT_ERROR(kiln::Error, what, e.size());
  EXPECT_ERROR(kiln::Error, what, e.nbytes());
  EXPECT_ERROR(kiln::Error, what, e.device());
  EXPECT_ERROR(kiln::Error, what, e.astype(DType::Int32));
  EXPECT_ERROR(kiln::Error, what, e.reshape({-1}));
  EXPECT_ERROR(kiln::Error, what, e.transpose());
  EXPECT_ERROR(kiln::Error, what, e.T());
  EXPECT_ERROR(kiln::Error, what, e.broadcast_to({3}));
  EXPECT_ERROR(kiln::Error, what, e(0));
  EXPECT_ERROR(kiln::Error, what, e.eval());
  EXPECT_ERROR(kiln::Error, what, e.get());
  EXPECT_ERROR(kiln::Error, what, e.to(kiln::host()));
  EXPECT_ERROR(kiln::Error, what, e.item<double>());
  EXPECT_ERROR(kiln::Error, what, e.to_vector<int64_t>());
  EXPECT_ERROR(kiln::Error, what, e.data());
  EXPECT_ERROR(kiln::Error, what, kiln::eval({x, e}));
  EXPECT_ERROR(kiln::Error, what, kiln::asarray(e));
  EXPECT_ERROR(kiln::Error, what, e + x);
  EXPECT_ERROR(kiln::Error, what, x * e);
  EXPECT_ERROR(kiln::Error, what, e - 1);
  EXPECT_ERROR(kiln::Error, what, 2.0 / e);
  EXPECT_ERROR(kiln::Error, what, e == x);
  EXPECT_ERROR(kiln::Error, what, -e);
  EXPECT_ERROR(kiln::Error, what, ~e);
  EXPECT_ERROR(kiln::Error, what, kiln::sqrt(e));
  EXPECT_ERROR(kiln::Error, what, kiln::abs(e));
  EXPECT_ERROR(kiln::Error, what, kiln::floor(e));
  EXPECT_ERROR(kiln::Error, what, kiln::real(e));
  EXPECT_ERROR(kiln::Error, what, kiln::imag(e));
  EXPECT_ERROR(kiln::Error, what, kiln::conj(e));
  EXPECT_ERROR(kiln::Error, what, kiln::pow(e, 2));
  EXPECT_ERROR(kiln::Error, what, kiln::maximum(x, e));
  EXPECT_ERROR(kiln::Error, what, kiln::where(e, 1, 2));
  EXPECT_ERROR(kiln::Error, what, kiln::where(x > 0, e, 2));
  EXPECT_ERROR(kiln::Error, what, kiln::clip(e, 0, 1));
  EXPECT_ERROR(kiln::Error, what, kiln::sum(e));
  EXPECT_ERROR(kiln::Error, what, kiln::mean(e, {0}));
  EXPECT_ERROR(kiln::Error, what, kiln::argmax(e));
  EXPECT_ERROR(kiln::Error, what, kiln::allclose(e, x));
  EXPECT_ERROR(kiln::Error, what, kiln::array_equal(x, e));
  EXPECT_ERROR(kiln::Error, what, kiln::repr(e));
  EXPECT_ERROR(kiln::Error, what, kiln::fft::fft(e));
  EXPECT_ERROR(kiln::Error, what, kiln::fft::irfftn(e));
  EXPECT_ERROR(kiln::Error, what, kiln::explain({x, e}));
  EXPECT_ERROR(kiln::Error, what, kiln::to_dot({e}));
  EXPECT_ERROR(kiln::Error, what, kiln::save_npy("/tmp/kiln_never_written.npy", e));
  std::ostringstream os;
  EXPECT_ERROR(kiln::Error, what, os << e);
  CHECK_FALSE(e.valid());
  // An operation consumes an operand handed over with std::move: the handle is empty after it
  // (as any moved-from Array), says so when used, and the result is intact.
  Array t = x * 2;
  Array y = std::move(t) + 1;
  CHECK_FALSE(t.valid());
  EXPECT_ERROR(kiln::Error, what, kiln::exp(t));
  CHECK(y.to_vector<double>() == std::vector<double>{3, 3, 3});
}

TEST_CASE("creation: null data, negative dimensions, rank over 8, bad values") {
  double v[4] = {1, 2, 3, 4};
  EXPECT_ERROR(kiln::Error, "data is null", kiln::asarray(nullptr, DType::Float64, {2, 2}));
  EXPECT_ERROR(kiln::ShapeError, "negative dimension", kiln::asarray(v, DType::Float64, {-4}));
  EXPECT_ERROR(kiln::ShapeError, "negative dimension", kiln::asarray(v, DType::Float64, {2, -2}));
  Shape nine(9, 1);
  EXPECT_ERROR(kiln::ShapeError, "rank 9", kiln::asarray(v, DType::Float64, nine));
  EXPECT_ERROR(kiln::ShapeError, "negative dimension", kiln::zeros({3, -1}));
  EXPECT_ERROR(kiln::ShapeError, "negative dimension", kiln::ones({-5}, DType::Int32));
  EXPECT_ERROR(kiln::ShapeError, "negative dimension", kiln::empty({-1}));
  EXPECT_ERROR(kiln::ShapeError, "negative dimension", kiln::full({-2}, 1.5));
  EXPECT_ERROR(kiln::ShapeError, "rank 9", kiln::zeros(nine));
  EXPECT_ERROR(kiln::ShapeError, "rank 10", kiln::full(Shape(10, 2), 3));
  EXPECT_ERROR(kiln::DTypeError, "out of bounds for int32",
               kiln::full({2}, int64_t{1} << 40, DType::Int32));
  EXPECT_ERROR(kiln::Error, "step must not be zero", kiln::arange(0, 10, 0));
  EXPECT_ERROR(kiln::Error, "step must not be zero", kiln::arange(0.0, 1.0, 0.0));
  EXPECT_ERROR(kiln::DTypeError, "complex", kiln::arange(0, std::complex<double>(3, 1)));
  EXPECT_ERROR(kiln::ShapeError, "num must be >= 0", kiln::linspace(0, 1, -1));

  // Null data is fine when there is nothing to copy; zero-size creations are fine too.
  Array none = kiln::asarray(nullptr, DType::Int64, {0, 3});
  CHECK(none.shape() == Shape{0, 3});
  CHECK(none.to_vector<int64_t>().empty());
  CHECK(kiln::zeros({4, 0}).size() == 0);
  CHECK(kiln::arange(5, 2).size() == 0);  // an empty range, as NumPy
  CHECK(kiln::linspace(0, 1, 0).size() == 0);

  // A bool range longer than 2 means nothing (NumPy raises too); up to 2 it is fine.
  EXPECT_ERROR(kiln::DTypeError, "a bool range has at most 2 elements, this one 5",
               kiln::arange(0, 5, 1, DType::Bool));
  EXPECT_ERROR(kiln::DTypeError, "at most 2", kiln::arange(2.5, 0, -1, DType::Bool));
  CHECK(kiln::arange(0, 2, 1, DType::Bool).to_vector<bool>() == std::vector<bool>{false, true});
  // Counting a shape with a negative dimension, directly or through wrap's vector overload.
  EXPECT_ERROR(kiln::ShapeError, "shape (-1, 2) has a negative dimension",
               kiln::shape_size({-1, 2}));
  std::vector<double> one{1.0};
  EXPECT_ERROR(kiln::ShapeError, "negative dimension", kiln::wrap(one, {-1}));
}

TEST_CASE("elementwise: shapes that do not broadcast, dtypes an operation refuses") {
  Array a = kiln::ones({2, 3});
  Array b = kiln::ones({4});
  EXPECT_ERROR(kiln::ShapeError, "could not be broadcast together with shapes (2, 3) (4,)", a + b);
  EXPECT_ERROR(kiln::ShapeError, "could not be broadcast", b * a);
  EXPECT_ERROR(kiln::ShapeError, "could not be broadcast", a < kiln::ones({3, 1, 2}));
  EXPECT_ERROR(kiln::ShapeError, "could not be broadcast", kiln::maximum(a, b));
  EXPECT_ERROR(kiln::ShapeError, "could not be broadcast", kiln::pow(a, kiln::ones({2})));
  EXPECT_ERROR(kiln::ShapeError, "could not be broadcast", kiln::where(kiln::ones({5}) > 0, a, 0));
  EXPECT_ERROR(kiln::ShapeError, "could not be broadcast", kiln::clip(a, 0, b));
  EXPECT_ERROR(kiln::ShapeError, "could not be broadcast", kiln::zeros({0}) + kiln::ones({2}));

  Array f = kiln::ones({3});
  Array i = kiln::ones({3}, DType::Int32);
  Array t = kiln::ones({3}, DType::Bool);
  Array c = kiln::ones({3}, DType::Complex64);
  EXPECT_ERROR(kiln::DTypeError, "bitwise", f & f);
  EXPECT_ERROR(kiln::DTypeError, "float64", i | f);
  EXPECT_ERROR(kiln::DTypeError, "bitwise", c ^ t);
  EXPECT_ERROR(kiln::DTypeError, "bitwise", i & 1.5);
  EXPECT_ERROR(kiln::DTypeError, "~ needs a bool or integer array, got float64", ~f);
  EXPECT_ERROR(kiln::DTypeError, "complex64", ~c);
  EXPECT_ERROR(kiln::DTypeError, "negative (-) is not supported for bool", -t);
  EXPECT_ERROR(kiln::DTypeError, "subtract (-) is not supported for bool", t - t);
  EXPECT_ERROR(kiln::DTypeError, "subtract", t - true);
  EXPECT_ERROR(kiln::DTypeError, "floor is not defined for complex", kiln::floor(c));
  EXPECT_ERROR(kiln::DTypeError, "ceil", kiln::ceil(c));
  EXPECT_ERROR(kiln::DTypeError, "negative integer powers", kiln::pow(i, -2));
  EXPECT_ERROR(kiln::DTypeError, "out of bounds for int32", i + (int64_t{1} << 33));
  EXPECT_ERROR(kiln::DTypeError, "out of bounds for int32", kiln::where(t, i, int64_t{-1} << 40));
  // What stays legal next to those: the results are right.
  CHECK((t ^ true).to_vector<bool>() == std::vector<bool>{false, false, false});
  CHECK((~i).to_vector<int32_t>() == std::vector<int32_t>{-2, -2, -2});
  CHECK(kiln::pow(f, -2).to_vector<double>() == std::vector<double>{1, 1, 1});
}

TEST_CASE("reductions: bad and repeated axes, zero-size arrays") {
  Array a = kiln::arange(6).reshape({2, 3});
  EXPECT_ERROR(kiln::ShapeError, "axis 2 is out of bounds for an array of dimension 2",
               kiln::sum(a, {2}));
  EXPECT_ERROR(kiln::ShapeError, "axis -3 is out of bounds", kiln::prod(a, {-3}));
  EXPECT_ERROR(kiln::ShapeError, "repeated", kiln::max(a, {0, 0}));
  EXPECT_ERROR(kiln::ShapeError, "repeated", kiln::min(a, {1, -1}));
  EXPECT_ERROR(kiln::ShapeError, "out of bounds", kiln::mean(a, {0, 1, 2}));
  EXPECT_ERROR(kiln::ShapeError, "out of bounds", kiln::any(kiln::asarray({1.0}).reshape({}), {0}));
  EXPECT_ERROR(kiln::ShapeError, "axis 5 is out of bounds", kiln::argmax(a, 5));
  EXPECT_ERROR(kiln::ShapeError, "axis -3", kiln::argmin(a, -3, true));

  Array e = kiln::zeros({0, 3});
  EXPECT_ERROR(kiln::ShapeError, "zero-size array along axis 0 has no identity", kiln::max(e));
  EXPECT_ERROR(kiln::ShapeError, "zero-size", kiln::min(e, {0}));
  EXPECT_ERROR(kiln::ShapeError, "zero-size", kiln::argmax(e));
  EXPECT_ERROR(kiln::ShapeError, "zero-size", kiln::argmin(e, 0));
  EXPECT_ERROR(kiln::ShapeError, "zero-size", kiln::argmin(kiln::zeros({0})));
  // Over the non-empty axis, or with an identity, the empty axis is fine (as NumPy).
  CHECK(kiln::max(e, {1}).shape() == Shape{0});
  CHECK(kiln::max(e, {1}).to_vector<double>().empty());
  CHECK(kiln::argmax(e, 1).shape() == Shape{0});
  CHECK(kiln::sum(e).item<double>() == 0);
  CHECK(kiln::sum(e, {0}).to_vector<double>() == std::vector<double>{0, 0, 0});
  CHECK(kiln::prod(e, {0}, true).to_vector<double>() == std::vector<double>{1, 1, 1});
  CHECK(kiln::any(e).item<bool>() == false);
  CHECK(kiln::all(e).item<bool>() == true);
  CHECK(std::isnan(kiln::mean(e).item<double>()));  // 0 / 0, as NumPy (with its warning)
  CHECK(kiln::sum(kiln::zeros({0}, DType::Int32)).dtype() == DType::Int64);
}

TEST_CASE("views: reshape, transpose, slices and indices that do not fit") {
  Array a = kiln::arange(6).reshape({2, 3});
  EXPECT_ERROR(kiln::ShapeError, "cannot reshape array of size 6 into shape (4,)", a.reshape({4}));
  EXPECT_ERROR(kiln::ShapeError, "cannot reshape array of size 6", a.reshape({4, -1}));
  EXPECT_ERROR(kiln::ShapeError, "only specify one unknown dimension", a.reshape({-1, -1}));
  EXPECT_ERROR(kiln::ShapeError, "dimension -2 is negative", a.reshape({-2, -3}));
  EXPECT_ERROR(kiln::ShapeError, "rank 9", a.reshape({6, 1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_ERROR(kiln::ShapeError, "cannot reshape array of size 0",
               kiln::zeros({0, 3}).reshape({-1, 0}));
  EXPECT_ERROR(kiln::ShapeError, "axes has 1 entries but the array has 2", a.transpose({0}));
  EXPECT_ERROR(kiln::ShapeError, "repeat an axis", a.transpose({1, 1}));
  EXPECT_ERROR(kiln::ShapeError, "axis 2 is out of bounds", a.transpose({0, 2}));
  EXPECT_ERROR(kiln::ShapeError, "axis -3", a.transpose({-3, 0}));
  EXPECT_ERROR(kiln::ShapeError, "slice step cannot be zero (axis 1)", a(0, Slice(0, 2, 0)));
  EXPECT_ERROR(kiln::ShapeError, "too many indices: the array has 2 dimensions but 3", a(0, 0, 0));
  EXPECT_ERROR(kiln::ShapeError, "too many indices", kiln::zeros({})(0));
  EXPECT_ERROR(kiln::ShapeError, "index 2 is out of bounds for axis 0 with size 2", a(2));
  EXPECT_ERROR(kiln::ShapeError, "index -4 is out of bounds for axis 1 with size 3", a(0, -4));
  EXPECT_ERROR(kiln::ShapeError, "index 0 is out of bounds for axis 0 with size 0",
               kiln::zeros({0})(0));
  EXPECT_ERROR(kiln::ShapeError, "(2, 3) (3, 2)", a.broadcast_to({3, 2}));
  EXPECT_ERROR(kiln::ShapeError, "cannot broadcast", a.broadcast_to({3}));
  EXPECT_ERROR(kiln::ShapeError, "negative dimension", a.broadcast_to({-1, 3}));
  EXPECT_ERROR(kiln::ShapeError, "rank 9", a.broadcast_to({1, 1, 1, 1, 1, 1, 1, 2, 3}));

  // Slices past the ends clamp and may be empty, as in NumPy; negative steps walk backwards.
  CHECK(a(Slice(5, 9)).shape() == Shape{0, 3});
  CHECK(a(Slice(1, 0)).to_vector<int64_t>().empty());
  CHECK(a(1, Slice(std::nullopt, std::nullopt, -2)).to_vector<int64_t>() ==
        std::vector<int64_t>{5, 3});
  CHECK(a(-1, -1).item<int64_t>() == 5);
  CHECK(kiln::zeros({0, 3}).reshape({-1, 3}).shape() == Shape{0, 3});
  EXPECT_ERROR(kiln::ShapeError, "cannot reshape array of size 0",
               kiln::zeros({0, 3}).reshape({3, 0, -1}));  // -1 is ambiguous next to a 0, as NumPy
}

TEST_CASE("astype, item and to_vector") {
  Array a = kiln::arange(4);
  EXPECT_ERROR(kiln::ShapeError, "item(): the array has 4 elements (shape (4,))", a.item<double>());
  EXPECT_ERROR(kiln::ShapeError, "the array has 0 elements", kiln::zeros({0}).item<bool>());
  EXPECT_ERROR(kiln::ShapeError, "only one-element arrays",
               kiln::ones({1, 2}, DType::Complex64).item<std::complex<float>>());
  CHECK(kiln::ones({1, 1, 1}).item<int32_t>() == 1);  // any one-element shape converts
  for (DType from : kiln::kAllDTypes)
    for (DType to : kiln::kAllDTypes) {
      Array z = kiln::zeros({0, 2}, from).astype(to);  // every cast of an empty array
      CHECK(z.dtype() == to);
      CHECK(z.to_vector<double>().empty());
    }
  CHECK(kiln::asarray({-1.5, 2.5}).astype(DType::Int32).to_vector<int32_t>() ==
        std::vector<int32_t>{-1, 2});
  CHECK(kiln::asarray({0.0, -0.0, 2.0}).astype(DType::Bool).to_vector<bool>() ==
        std::vector<bool>{false, false, true});
}

TEST_CASE("fft: norms, axes and lengths that do not exist") {
  Array a = kiln::ones({4, 6});
  Array c = kiln::ones({4}, DType::Complex128);
  EXPECT_ERROR(kiln::Error, "unknown norm \"Ortho\"", kiln::fft::fft(a, std::nullopt, -1, "Ortho"));
  EXPECT_ERROR(kiln::Error, "ifftn: unknown norm \"\"",
               kiln::fft::ifftn(a, std::nullopt, std::nullopt, ""));
  EXPECT_ERROR(kiln::Error, "rfft: unknown norm", kiln::fft::rfft(a, 4, -1, "none"));
  EXPECT_ERROR(kiln::ShapeError, "fft: axis 2 is out of bounds",
               kiln::fft::fft(a, std::nullopt, 2));
  EXPECT_ERROR(kiln::ShapeError, "axis -3", kiln::fft::irfft(a, std::nullopt, -3));
  EXPECT_ERROR(kiln::ShapeError, "axis 1 is given twice",
               kiln::fft::fft2(a, std::nullopt, {1, -1}));
  EXPECT_ERROR(kiln::ShapeError, "given twice",
               kiln::fft::rfftn(a, std::nullopt, std::vector<int>{0, 0}));
  EXPECT_ERROR(kiln::ShapeError, "transform length 0 for axis 1 is not positive",
               kiln::fft::fft(a, 0));
  EXPECT_ERROR(kiln::ShapeError, "transform length -4", kiln::fft::ifft(a, -4, 0));
  EXPECT_ERROR(kiln::ShapeError, "not positive", kiln::fft::fftn(a, std::vector<int64_t>{3, 0}));
  EXPECT_ERROR(kiln::ShapeError, "s has 3 lengths but the array has only 2 dimensions",
               kiln::fft::fftn(a, std::vector<int64_t>{2, 2, 2}));
  EXPECT_ERROR(kiln::ShapeError, "s has 1 lengths but there are 2 axes",
               kiln::fft::fft2(a, std::vector<int64_t>{2}));
  EXPECT_ERROR(kiln::ShapeError, "transform length of 0", kiln::fft::fft(kiln::zeros({3, 0})));
  EXPECT_ERROR(kiln::ShapeError, "irfft: axis 0 of shape (1,) gives a transform length of 0",
               kiln::fft::irfft(kiln::ones({1})));
  EXPECT_ERROR(kiln::ShapeError, "needs at least one axis", kiln::fft::rfftn(kiln::ones({})));
  EXPECT_ERROR(kiln::ShapeError, "axis -1 is out of bounds for an array of dimension 0 (it has no",
               kiln::fft::fft(kiln::ones({})));
  EXPECT_ERROR(kiln::DTypeError, "rfft: the input is complex128", kiln::fft::rfft(c));
  EXPECT_ERROR(kiln::DTypeError, "real transform needs real input", kiln::fft::rfftn(c));
  // fftn over no axes is the identity (as NumPy); a zero-size batch axis is fine.
  CHECK(kiln::fft::fftn(kiln::ones({})).item<std::complex<double>>() == 1.0);
  CHECK(kiln::fft::fft(kiln::zeros({0, 4})).shape() == Shape{0, 4});
  CHECK(kiln::fft::fft(kiln::zeros({0, 4})).to_vector<std::complex<double>>().empty());
}

TEST_CASE("random: bounds, dtypes and shapes; a failed call leaves the stream alone") {
  kiln::random::Generator g(7);
  EXPECT_ERROR(kiln::Error, "high (3) must be greater than low (3)", g.randint(3, 3, {2}));
  EXPECT_ERROR(kiln::Error, "must be greater than low", kiln::random::randint(5, -5, {2}));
  EXPECT_ERROR(kiln::DTypeError, "randint: dtype float64 is not an integer type",
               g.randint(0, 5, {2}, DType::Float64));
  EXPECT_ERROR(kiln::DTypeError, "randint: dtype bool",
               kiln::random::randint(0, 2, {2}, DType::Bool));
  EXPECT_ERROR(kiln::DTypeError, "does not fit int32",
               g.randint(0, int64_t{1} << 40, {2}, DType::Int32));
  EXPECT_ERROR(kiln::ShapeError, "negative dimension", g.randint(0, 5, {2, -1}));
  EXPECT_ERROR(kiln::ShapeError, "rank 9", kiln::random::uniform(0, 1, Shape(9, 1)));
  EXPECT_ERROR(kiln::DTypeError, "uniform: dtype int64 is not a float type",
               g.uniform(0, 1, {2}, DType::Int64));
  EXPECT_ERROR(kiln::DTypeError, "normal: dtype complex64",
               kiln::random::normal(0, 1, {2}, DType::Complex64));
  EXPECT_ERROR(kiln::Error, "high (0) must be greater than low (1)", g.uniform(1, 0, {2}));
  EXPECT_ERROR(kiln::Error, "must be greater than low",
               g.uniform(1, 1 + 1e-12, {2}, DType::Float32));
  EXPECT_ERROR(kiln::Error, "must be finite", g.uniform(0, kInf, {2}));
  EXPECT_ERROR(kiln::Error, "must be finite", kiln::random::uniform(kNaN, 1, {2}));
  EXPECT_ERROR(kiln::Error, "must be finite", g.uniform(-1e300, 1e300, {2}, DType::Float32));
  EXPECT_ERROR(kiln::Error, "std (-1) finite and >= 0", g.normal(0, -1, {2}));
  EXPECT_ERROR(kiln::Error, "mean (nan) must be finite", g.normal(kNaN, 1, {2}));
  CHECK(g.offset() == 0);  // nothing above consumed a word
  CHECK(g.randint(0, 10, {0}).size() == 0);
  CHECK(g.offset() == 0);
  Array r = g.randint(-3, 3, {100});
  CHECK(kiln::min(r).item<int64_t>() >= -3);
  CHECK(kiln::max(r).item<int64_t>() < 3);
  CHECK(g.offset() == 100);
}

GPU_TEST_CASE("devices: kiln::cuda(i) refuses an index that names no device") {
  int n = kiln::cuda_device_count();
  EXPECT_ERROR(kiln::DeviceError,
               n == 1 ? "one CUDA device, kiln::cuda(0);" : "CUDA devices, kiln::cuda(0) to",
               kiln::cuda(n));
  EXPECT_ERROR(kiln::DeviceError, "kiln::cuda_device_count() says how many", kiln::cuda(-1));
  Array h = kiln::arange(0, 4, 1, DType::Float32);
  EXPECT_ERROR(kiln::DeviceError, "isclose: operands are on different devices",
               kiln::allclose(h, kiln::asarray(h, kiln::cuda())));
}

NO_GPU_TEST_CASE("devices: kiln::cuda() and cuda arrays without a GPU") {
  EXPECT_ERROR(kiln::DeviceError, "no CUDA device is available", kiln::cuda());
  EXPECT_ERROR(kiln::DeviceError, "kiln::cuda(1): no CUDA device", kiln::cuda(1));
  // A cuda Device built by hand (bypassing kiln::cuda()) is refused wherever it is used.
  kiln::Device gpu{kiln::Device::Kind::Cuda, 0};
  double v[2] = {1, 2};
  Array x = kiln::asarray(v, DType::Float64, {2});
  EXPECT_ERROR(kiln::DeviceError, "no CUDA device", kiln::asarray(v, DType::Float64, {2}, gpu));
  EXPECT_ERROR(kiln::DeviceError, "no CUDA device", kiln::asarray(x, gpu));
  EXPECT_ERROR(kiln::DeviceError, "no CUDA device", x.to(gpu));
  EXPECT_ERROR(kiln::DeviceError, "no CUDA device", kiln::zeros({2}, DType::Float32, gpu));
  EXPECT_ERROR(kiln::DeviceError, "no CUDA device", kiln::arange(0, 4, 1, std::nullopt, gpu));
  EXPECT_ERROR(kiln::DeviceError, "no CUDA device",
               kiln::linspace(0, 1, 5, true, DType::Float64, gpu));
  EXPECT_ERROR(kiln::DeviceError, "no CUDA device",
               kiln::random::randint(0, 4, {2}, DType::Int64, gpu));
  kiln::random::Generator g(1, gpu);
  EXPECT_ERROR(kiln::DeviceError, "no CUDA device", g.normal(0, 1, {2}));
  CHECK(g.offset() == 0);
  EXPECT_ERROR(kiln::DeviceError, "no CUDA device", kiln::load_npy("/nonexistent.npy", gpu));
  kiln::synchronize(kiln::host());  // the host needs no waiting
}

TEST_CASE("files: load_npy and save_npy on missing or broken files") {
  EXPECT_ERROR(kiln::Error, "load_npy: cannot open /nonexistent/kiln/a.npy",
               kiln::load_npy("/nonexistent/kiln/a.npy"));
  EXPECT_ERROR(kiln::Error, "save_npy: cannot create /nonexistent/kiln/a.npy",
               kiln::save_npy("/nonexistent/kiln/a.npy", kiln::ones({2})));
  auto dir =
      std::filesystem::temp_directory_path() / ("kiln_bad_input_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string junk = (dir / "junk.npy").string();
  std::ofstream(junk, std::ios::binary) << "this is not a numpy file at all, not even close";
  EXPECT_ERROR(kiln::Error, junk, kiln::load_npy(junk));
  std::string empty_file = (dir / "empty.npy").string();
  std::ofstream(empty_file, std::ios::binary).close();
  EXPECT_ERROR(kiln::Error, empty_file, kiln::load_npy(empty_file));
  // A good file cut short.
  std::string good = (dir / "good.npy").string();
  kiln::save_npy(good, kiln::arange(100));
  auto size = std::filesystem::file_size(good);
  std::filesystem::resize_file(good, size - 8);
  EXPECT_ERROR(kiln::Error, good, kiln::load_npy(good));
  // Zero-size arrays go through files intact.
  std::string zero = (dir / "zero.npy").string();
  kiln::save_npy(zero, kiln::zeros({0, 5}, DType::Int32));
  Array z = kiln::load_npy(zero);
  CHECK(z.shape() == Shape{0, 5});
  CHECK(z.dtype() == DType::Int32);
  std::filesystem::remove_all(dir);
}

TEST_CASE("files: load_npy refuses what numpy.load refuses, before handing out an array") {
  auto dir =
      std::filesystem::temp_directory_path() / ("kiln_bad_npy_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "edited.npy").string();
  // kiln's own file with one part of its header replaced; the spaces that pad the header to 64
  // bytes absorb the change in length, so the data still starts where the header says.
  auto edit_header = [&](const std::string& from, const std::string& to) {
    kiln::save_npy(path, kiln::zeros({0, 0, 0}));
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t at = bytes.find(from);
    REQUIRE(at != std::string::npos);
    bytes.replace(at, from.size(), to);
    size_t extra = to.size() - from.size(), newline = bytes.find('\n', at);
    REQUIRE(bytes.compare(newline - extra, extra, std::string(extra, ' ')) == 0);
    bytes.erase(newline - extra, extra);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  };
  edit_header("(0, 0, 0)", "(0, 0, 0)");
  CHECK(kiln::load_npy(path).shape() == Shape{0, 0, 0});  // the unedited file loads
  // Empty, but the other dimensions cannot be counted: before, the array loaded and every use
  // of it threw an error that did not name the file.
  edit_header("(0, 0, 0)", "(4611686018427387904, 4, 0)");
  EXPECT_ERROR(kiln::ShapeError, "edited.npy: shape (4611686018427387904, 4, 0)",
               kiln::load_npy(path));
  edit_header(", }", ", } junk");
  EXPECT_ERROR(kiln::Error, "text after the closing '}'", kiln::load_npy(path));
  // A directory opens as a stream of zero bytes; it was reported as a file too short.
  EXPECT_ERROR(kiln::Error, "is a directory, not a .npy file", kiln::load_npy(dir.string()));
  std::filesystem::remove_all(dir);
}

TEST_CASE("floats out of int32's range become INT32_MIN on every path, as NumPy's casts") {
  // np.full(2, 3e9, dtype=np.int32) and np.array(3e9).astype(np.int32) give -2147483648.
  // A scalar converted on the host once went through int64 and wrapped to -1294967296, so a
  // 0-d array (a scalar node) and a 1-element array disagreed.
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  for (double v : {3e9, -3e9, 1e300, kNaN, kInf}) {
    INFO(v);
    CHECK(kiln::full({2}, v, DType::Int32).to_vector<int32_t>() ==
          std::vector<int32_t>{kMin, kMin});
    CHECK(kiln::full({}, v).astype(DType::Int32).item<int32_t>() == kMin);
    CHECK(kiln::full({1}, v).astype(DType::Int32).item<int32_t>() == kMin);
    CHECK(kiln::Scalar(v).as<int32_t>() == kMin);
  }
  CHECK(kiln::full({}, -2147483648.5).astype(DType::Int32).item<int32_t>() == kMin);
  CHECK(kiln::full({}, 2147483647.9).astype(DType::Int32).item<int32_t>() == 2147483647);
  CHECK(kiln::Scalar(std::complex<double>(-7.9, 1e300)).as<int32_t>() == -7);
}

namespace {
// What NumPy on x86 gives for a float cast to a signed integer of `bits` bits: for 32 and 64
// bits the value truncated when it lies in [-2^(bits-1), 2^(bits-1)), else the minimum
// integer; 8 and 16 bits keep the low bits of the int32 result (300.0 to int8 is 44).
int64_t numpy_float_to_int(double v, int bits) {
  int wide = bits < 32 ? 32 : bits;
  double lo = -std::ldexp(1.0, wide - 1);
  int64_t r = v >= lo && v < -lo ? static_cast<int64_t>(v) : static_cast<int64_t>(lo);
  if (bits == 8) return static_cast<int8_t>(r);
  if (bits == 16) return static_cast<int16_t>(r);
  return r;
}
}  // namespace

TEST_CASE("Scalar::as converts floats to every integer width as the kernels and NumPy do") {
  // Scalar's conversion is kernels/scalar.cuh's float_to_int (one definition with the kernels
  // and the host executor's casts), for every width.
  for (double v : {0.0,
                   -0.9,
                   126.9,
                   127.0,
                   128.0,
                   -128.0,
                   -128.5,
                   -129.0,
                   32767.5,
                   32768.0,
                   -32768.9,
                   -32769.0,
                   2147483647.9,
                   2147483648.0,
                   -2147483648.5,
                   -2147483649.0,
                   9.2e18,
                   9.3e18,
                   -9.223372036854775808e18,
                   -9.3e18,
                   kNaN,
                   kInf,
                   -kInf}) {
    INFO(v);
    kiln::Scalar s(v);
    CHECK(s.as<int8_t>() == numpy_float_to_int(v, 8));
    CHECK(s.as<int16_t>() == numpy_float_to_int(v, 16));
    CHECK(s.as<int32_t>() == numpy_float_to_int(v, 32));
    CHECK(s.as<int64_t>() == numpy_float_to_int(v, 64));
    CHECK(s.as<int32_t>() == kiln::full({}, v).astype(DType::Int32).item<int32_t>());
    CHECK(s.as<int64_t>() == kiln::full({}, v).astype(DType::Int64).item<int64_t>());
    CHECK(s.as<int8_t>() == kiln::full({}, v).astype(DType::Int8).item<int8_t>());
    CHECK(s.as<uint16_t>() == kiln::full({}, v).astype(DType::UInt16).item<uint16_t>());
    CHECK(s.as<uint64_t>() == kiln::full({}, v).astype(DType::UInt64).item<uint64_t>());
    // Unsigned types wrap the int64 result, as NumPy's astype(uint32) of an int64 does.
    CHECK(s.as<uint32_t>() == static_cast<uint32_t>(numpy_float_to_int(v, 64)));
  }
}

TEST_CASE("timeit: bad options") {
  auto noop = [] {};
  kiln::TimeitOptions o;
  o.print = false;
  o.repeats = 0;
  EXPECT_ERROR(kiln::Error, "repeats must be at least 1, got 0", kiln::timeit(noop, o));
  o.repeats = 1;
  o.loops = -1;
  EXPECT_ERROR(kiln::Error, "loops must be >= 0", kiln::timeit(noop, o));
  o.loops = 1;
  o.precision = 0;
  EXPECT_ERROR(kiln::Error, "precision must be 1 to 17", kiln::timeit(noop, o));
  o.precision = 3;
  // An exception inside the timed function reaches the caller unchanged.
  EXPECT_ERROR(kiln::ShapeError, "cannot reshape",
               kiln::timeit([] { kiln::ones({3}).reshape({2}); }, o));
  CHECK(kiln::timeit(noop, o).loops == 1);
  // A clock that runs backwards (or gives NaN) would report a negative time per loop.
  double now = 0;
  o.clock = [&] { return now -= 1; };
  EXPECT_ERROR(kiln::Error, "the clock went backwards", kiln::timeit(noop, o));
  o.clock = [] { return kNaN; };
  EXPECT_ERROR(kiln::Error, "never decreases", kiln::timeit(noop, o));
  // format_time takes the same precisions as timeit.
  EXPECT_ERROR(kiln::Error, "format_time: precision must be 1 to 17 digits, got 0",
               kiln::format_time(1.0, 0));
  EXPECT_ERROR(kiln::Error, "got -3", kiln::format_time(1.0, -3));
}

TEST_CASE("errors inside a larger graph leave the graph usable") {
  // A failed operation adds nothing: what was built before still evaluates, lazily and in one
  // plan with other outputs.
  Array x = kiln::linspace(0, 1, 11);
  Array y = kiln::exp(x) * 2;
  EXPECT_ERROR(kiln::ShapeError, "could not be broadcast", y + kiln::ones({3}));
  EXPECT_ERROR(kiln::ShapeError, "repeated", kiln::sum(y, {0, 0}));
  Array s = kiln::sum(y);
  kiln::eval({s, y});
  double want = 0;
  for (int i = 0; i <= 10; ++i) want += 2 * std::exp(i / 10.0);
  CHECK(s.item<double>() == doctest::Approx(want).epsilon(1e-12));
  {
    kiln::EagerScope eager;
    EXPECT_ERROR(kiln::DTypeError, "bitwise", y & y);
    CHECK(kiln::max(y).item<double>() == doctest::Approx(2 * std::exp(1.0)));
  }
}

TEST_CASE("NaN and infinities propagate as IEEE 754 says, fused and eager alike") {
  auto check_both = [](const std::function<Array()>& build, const std::vector<double>& want) {
    std::vector<double> lazy = build().to_vector<double>();
    std::vector<double> eager;
    {
      kiln::EagerScope scope;
      eager = build().to_vector<double>();
    }
    REQUIRE(lazy.size() == want.size());
    REQUIRE(eager.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      INFO("element " << i << ": want " << want[i] << ", lazy " << lazy[i] << ", eager "
                      << eager[i]);
      if (std::isnan(want[i])) {
        CHECK(std::isnan(lazy[i]));
        CHECK(std::isnan(eager[i]));
      } else if (std::isinf(want[i]) || want[i] == 0) {
        CHECK(lazy[i] == want[i]);
        CHECK(eager[i] == want[i]);
        CHECK(std::signbit(lazy[i]) == std::signbit(want[i]));
      } else {  // finite: float32 rounds, and the host's vectorised exp may differ in an ulp
        CHECK(lazy[i] == doctest::Approx(want[i]).epsilon(1e-6));
      }
      CHECK(std::memcmp(&lazy[i], &eager[i], sizeof(double)) == 0);  // fused == eager, bitwise
    }
  };
  for (DType t : {DType::Float64, DType::Float32}) {
    INFO(kiln::dtype_name(t));
    Array inf = f64({kInf, -kInf, kInf, 0.0, kNaN, 1.0}).astype(t);
    Array other = f64({kInf, -kInf, -kInf, kInf, 1.0, 0.0}).astype(t);
    check_both([&] { return inf - other; }, {kNaN, kNaN, kInf, -kInf, kNaN, 1});
    check_both([&] { return inf * other; }, {kInf, kInf, -kInf, kNaN, kNaN, 0});
    check_both([&] { return inf / other; }, {kNaN, kNaN, kNaN, 0, kNaN, kInf});
    check_both([&] { return (inf + 1) * 0 - other; }, {kNaN, kNaN, kNaN, -kInf, kNaN, 0});
    check_both([&] { return kiln::maximum(inf, other); }, {kInf, -kInf, kInf, kInf, kNaN, 1});
    check_both([&] { return kiln::minimum(other, inf); }, {kInf, -kInf, -kInf, 0, kNaN, 0});
    check_both([&] { return kiln::clip(inf, -1, 1); }, {1, -1, 1, 0, kNaN, 1});
    check_both([&] { return kiln::sqrt(inf); }, {kInf, kNaN, kInf, 0, kNaN, 1});
    check_both([&] { return kiln::log(other); }, {kInf, kNaN, kNaN, kInf, 0, -kInf});
    check_both([&] { return kiln::exp(-inf); }, {0, kInf, 0, 1, kNaN, std::exp(-1.0)});
    check_both([&] { return kiln::tanh(inf); }, {1, -1, 1, 0, kNaN, std::tanh(1.0)});
    check_both([&] { return kiln::abs(inf * -1); }, {kInf, kInf, kInf, 0, kNaN, 1});
    check_both([&] { return kiln::where(inf != inf, -7, inf); }, {kInf, -kInf, kInf, 0, -7, 1});
    // Comparisons with NaN are false, except !=; infinities compare equal to themselves.
    auto as_f = [](const Array& b) { return b.astype(DType::Float64); };
    check_both([&] { return as_f(inf == other); }, {1, 1, 0, 0, 0, 0});
    check_both([&] { return as_f(inf != inf); }, {0, 0, 0, 0, 1, 0});
    check_both([&] { return as_f(inf < other); }, {0, 0, 0, 1, 0, 0});
    check_both([&] { return as_f(inf >= inf); }, {1, 1, 1, 1, 0, 1});
    check_both([&] { return as_f(inf > kNaN); }, {0, 0, 0, 0, 0, 0});
    // Reductions: NaN wins max and min, inf - inf inside a sum is NaN.
    check_both([&] { return kiln::max(inf).astype(DType::Float64).reshape({1}); }, {kNaN});
    check_both([&] { return kiln::min(other).astype(DType::Float64).reshape({1}); }, {-kInf});
    check_both([&] { return kiln::min(inf, {0}, true).astype(DType::Float64); }, {kNaN});
    check_both([&] { return kiln::sum(other).astype(DType::Float64).reshape({1}); }, {kNaN});
    check_both([&] { return kiln::sum(other(Slice(0, 1))).astype(DType::Float64).reshape({1}); },
               {kInf});
    check_both([&] { return kiln::prod(other(Slice(3, 6))).astype(DType::Float64).reshape({1}); },
               {kNaN});
    check_both([&] { return kiln::mean(inf(Slice(0, 1))).astype(DType::Float64).reshape({1}); },
               {kInf});
    check_both([&] { return kiln::argmax(inf).astype(DType::Float64).reshape({1}); }, {4});
    check_both([&] { return kiln::argmin(inf).astype(DType::Float64).reshape({1}); }, {4});
    CHECK_FALSE(kiln::allclose(inf, inf));
    CHECK(kiln::allclose(inf, inf, 1e-5, 1e-8, true));
    CHECK_FALSE(kiln::array_equal(inf, inf));
    CHECK(kiln::array_equal(inf, inf, true));
    CHECK(kiln::any(inf != inf).item<bool>());
  }
  // Integer division by zero is float division, as NumPy's true_divide.
  check_both(
      [] {
        return kiln::asarray({1, 0, -1}) / kiln::asarray({0, 0, 0});
      },
      {kInf, kNaN, -kInf});
}

TEST_CASE("shapes too large to count or to allocate") {
  const int64_t big = int64_t{1} << 40;
  EXPECT_ERROR(kiln::ShapeError, "more elements than an int64 can count", kiln::zeros({big, big}));
  // Both wrong: the negative dimension is named, whichever comes first.
  EXPECT_ERROR(kiln::ShapeError, "negative dimension", kiln::zeros({big, big, -1}));
  EXPECT_ERROR(kiln::ShapeError, "too many elements to address", kiln::ones({big, 1 << 20}));
  double v = 1;
  EXPECT_ERROR(kiln::ShapeError, "int64", kiln::asarray(&v, DType::Float64, {big, big, big}));
  EXPECT_ERROR(kiln::ShapeError, "int64", kiln::random::uniform(0, 1, {big, big}));
  EXPECT_ERROR(kiln::ShapeError, "int64", kiln::zeros({1}).broadcast_to({big, big, 2}));
  EXPECT_ERROR(kiln::ShapeError, "int64", kiln::zeros({big}).reshape({big, big, -1}));
  EXPECT_ERROR(kiln::ShapeError, "int64", kiln::fft::fft(kiln::zeros({big, 2}), big));
  // Widths whose sum overflows int64 (before: a shape with a negative dimension).
  const int64_t most = std::numeric_limits<int64_t>::max();
  for (auto mode : {kiln::PadMode::Constant, kiln::PadMode::Edge, kiln::PadMode::Wrap})
    EXPECT_ERROR(kiln::ShapeError, "pad: widths (1, 9223372036854775807) for axis 0 would give it",
                 kiln::pad(kiln::arange(0, 3, 1, DType::Int64), {{1, most}}, mode));
  // As NumPy, the other dimensions of an empty shape must be countable too.
  EXPECT_ERROR(kiln::ShapeError, "int64", kiln::zeros({big, big, 0}));
  Array e = kiln::zeros({big, 1 << 10, 0});
  CHECK(e.size() == 0);
  CHECK(kiln::sum(e, {0, 1}).to_vector<double>().empty());
  CHECK(kiln::sum(e, {2}).shape() == Shape{big, 1 << 10});
  CHECK(e.reshape({0, big, 3}).shape() == Shape{0, big, 3});
  // Countable but more than the machine holds: OutOfMemory, and nothing is left behind.
  EXPECT_ERROR(kiln::OutOfMemory, "allocation of", kiln::zeros({int64_t{1} << 56}).eval());
  EXPECT_ERROR(kiln::OutOfMemory, "allocation of",
               kiln::sum(kiln::ones({int64_t{1} << 55, 4}) * 2, {1}).eval());
}

TEST_CASE("zero-size arrays pass through every kind of operation, lazily and eagerly") {
  for (bool eager : {false, true}) {
    INFO(std::string(eager ? "eager" : "lazy"));
    std::optional<kiln::EagerScope> scope;
    if (eager) scope.emplace();
    Array a = kiln::zeros({0, 3});
    Array r = kiln::random::Generator(1).uniform(0, 1, {3, 0});
    std::vector<Array> results = {
        a + kiln::arange(3),
        kiln::where(a > 0, a, 1.0),
        kiln::sin(a) * 2 - kiln::abs(a),
        a.T() + r,
        a(Slice(std::nullopt, std::nullopt, -1), 1),
        a.reshape({3, 0, 1}).transpose({2, 0, 1}),
        a.astype(DType::Complex64),
        kiln::sum(a, {1}, true),
        kiln::argmax(a, 1),
        kiln::fft::rfft(a),
        kiln::fft::ifft(a, 5) == 0,
    };
    kiln::eval(results);
    for (const Array& x : results) {
      CHECK(x.size() == 0);
      CHECK(x.to_vector<std::complex<double>>().empty());
      CHECK(kiln::repr(x).find("array([]") == 0);
    }
    CHECK(kiln::repr(a) == "array([], shape=(0, 3), dtype=float64)");
    CHECK(kiln::array_equal(a, a * 2));
    CHECK(kiln::allclose(a, kiln::ones({0, 1})));
    CHECK(engine_works());
  }
}

TEST_CASE("extreme integers: slice steps, ranges and bounds anywhere in int64") {
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  Array a = kiln::arange(10);
  using V = std::vector<int64_t>;
  CHECK(a(Slice(0, 10, kMax)).to_vector<int64_t>() == V{0});
  CHECK(a(Slice(std::nullopt, std::nullopt, kMin)).to_vector<int64_t>() == V{9});
  CHECK(a(Slice(std::nullopt, std::nullopt, kMin + 1)).to_vector<int64_t>() == V{9});
  CHECK(a(Slice(kMin, kMax, 3)).to_vector<int64_t>() == V{0, 3, 6, 9});
  CHECK(a(Slice(kMax, kMin, -4)).to_vector<int64_t>() == V{9, 5, 1});
  CHECK(a(Slice(kMax, kMin, kMax)).size() == 0);
  Array m = kiln::arange(12).reshape({3, 4});
  Array corner = m(Slice(0, 3, kMax), Slice(std::nullopt, std::nullopt, kMin)) * 1;
  CHECK(corner.shape() == Shape{1, 1});
  CHECK(corner.item<int64_t>() == 3);
  EXPECT_ERROR(kiln::ShapeError, "index -9223372036854775808 is out of bounds", a(kMin));
  EXPECT_ERROR(kiln::ShapeError, "index 9223372036854775807 is out of bounds", m(0, kMax));

  const int64_t half = kMax / 2;
  CHECK(kiln::arange(0, kMax, half).to_vector<int64_t>() == V{0, half, 2 * half});
  CHECK(kiln::arange(kMax, kMin, kMin).to_vector<int64_t>() == V{kMax, -1});
  CHECK(kiln::arange(0, 10, kMin).size() == 0);
  CHECK(kiln::arange(kMin, kMin + 3).to_vector<int64_t>() == V{kMin, kMin + 1, kMin + 2});
  EXPECT_ERROR(kiln::ShapeError,
               "arange(-9223372036854775808, 9223372036854775807, 1) would have 1.84467e+19",
               kiln::arange(kMin, kMax));
  EXPECT_ERROR(kiln::ShapeError, "more than kiln can address", kiln::arange(kMax, kMin, -1));
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_ERROR(kiln::ShapeError, "would have inf elements", kiln::arange(0.0, inf, 1.0));
  EXPECT_ERROR(kiln::ShapeError, "would have inf elements", kiln::arange(0.0, 1e300, 1e-300));
  EXPECT_ERROR(kiln::Error, "cannot compute the length", kiln::arange(0.0, kNaN, 1.0));
  EXPECT_ERROR(kiln::Error, "cannot compute the length", kiln::arange(0.0, 5.0, kNaN));
  EXPECT_ERROR(kiln::Error, "cannot compute the length", kiln::arange(inf, inf, 1.0));
  CHECK(kiln::arange(0.0, -inf, 1.0).size() == 0);
  EXPECT_ERROR(kiln::ShapeError, "linspace: shape", kiln::linspace(0, 1, kMax));
  CHECK(kiln::linspace(0, 1, 3).to_vector<double>() == std::vector<double>{0, 0.5, 1});
}

TEST_CASE("asarray: a vector must fill the shape; std::vector<bool> works") {
  std::vector<float> six(6, 1.0f);
  EXPECT_ERROR(kiln::ShapeError, "a vector of 6 elements cannot fill shape (2, 4)",
               kiln::asarray(six, {2, 4}));
  EXPECT_ERROR(kiln::ShapeError, "cannot fill shape (7,)", kiln::asarray(six, {7}));
  CHECK(kiln::asarray(six, {2, 3}).shape() == kiln::Shape{2, 3});
  auto b = kiln::asarray(std::vector<bool>{true, false, true}, {3, 1});
  CHECK(b.dtype() == DType::Bool);
  CHECK(b.shape() == kiln::Shape{3, 1});
  CHECK(b.to_vector<bool>() == std::vector<bool>{true, false, true});
  CHECK(kiln::sum(b).item<int64_t>() == 2);
}

TEST_CASE("allclose takes bool and integer arrays as NumPy does (b made floating first)") {
  // Expected values from numpy.allclose on the same arrays.
  auto t = kiln::asarray(std::vector<bool>{true, false});
  CHECK_FALSE(kiln::allclose(t, kiln::asarray(std::vector<bool>{true, true})));
  CHECK(kiln::allclose(t, kiln::asarray(std::vector<bool>{true, false})));
  CHECK(kiln::allclose(kiln::asarray({1, 0}), t));
  CHECK(kiln::allclose(t, kiln::asarray({1, 0})));
  CHECK(kiln::allclose(kiln::asarray({int64_t{1} << 53 | 1}), kiln::asarray({int64_t{1} << 53})));
}

// Issue 14, item 7: conformance fixes found when kiln was tried as a new user would.
TEST_CASE("arange too long for memory names the length asked for, not a clamped one") {
  EXPECT_ERROR(kiln::ShapeError, "would have 1e+20 elements", kiln::arange(0, 1e20));
  EXPECT_ERROR(kiln::ShapeError, "larger step", kiln::arange(0.0, 1e30, 0.5));
  CHECK(kiln::arange(0, 1e6).shape() == Shape{1000000});  // far below the limit: fine
}

TEST_CASE("item<real>() of a complex array refuses to drop the imaginary part") {
  Array c = kiln::asarray(std::vector<std::complex<double>>{{1.0, 2.0}});
  EXPECT_ERROR(kiln::DTypeError, "imaginary part", c.item<double>());
  EXPECT_ERROR(kiln::DTypeError, "complex128", c.item<int64_t>());
  CHECK(c.item<std::complex<double>>() == std::complex<double>(1.0, 2.0));
  CHECK(kiln::real(c).item<double>() == 1.0);
}

// Compiles only if kiln/kiln.hpp includes kiln/cache.hpp (this file includes no other kiln
// header).
static_assert(std::is_same_v<decltype(&kiln::cache::dir), std::string (*)()>);

TEST_CASE("index arrays out of range name the offending index, whatever their dtype") {
  Array x = kiln::arange(0, 5, 1, DType::Float64);
  auto ints = [](std::vector<int64_t> v, DType t) { return kiln::asarray(v).astype(t); };
  // The smallest index below -n is named first, else the largest at or above n.
  EXPECT_ERROR(kiln::ShapeError, "take: index -7 is out of bounds for axis 0 with size 5",
               kiln::take(x, ints({1, -7, 9, -6}, DType::Int64), 0).eval());
  EXPECT_ERROR(kiln::ShapeError, "take: index 9 is out of bounds",
               kiln::take(x, ints({1, 9, 5, -5}, DType::Int32), 0).eval());
  Array m = kiln::arange(0, 6, 1, DType::Float32).reshape({2, 3});
  EXPECT_ERROR(kiln::ShapeError, "index: index 3 is out of bounds for axis 1 with size 3",
               m.index({ints({0, 1}, DType::Int64), ints({2, 3}, DType::Int16)}));
  EXPECT_ERROR(
      kiln::ShapeError, "take_along_axis: index -4 is out of bounds for axis 1",
      kiln::take_along_axis(m, ints({0, -4, 2, 1, 0, 2}, DType::Int64).reshape({2, 3}), 1));
  // Unsigned indices against a bound their dtype cannot hold negated: in range, no error.
  Array big = kiln::arange(0, 300, 1, DType::Int64);
  CHECK(kiln::take(big, ints({299, 0, 7}, DType::UInt8), 0).to_vector<int64_t>() ==
        std::vector<int64_t>{43, 0, 7});  // uint8 299 wraps to 43 when cast, as NumPy's astype
}

// A function that works through another (dot and inner through matmul and tensordot, compress
// through moveaxis) names itself in its errors, the one the user called.
// NumPy: taking from an empty axis is an error only when the result would hold elements.
TEST_CASE("take from an empty axis: an empty result, else an error") {
  Array i = kiln::asarray(std::vector<int64_t>{4});
  Array none = kiln::take(kiln::zeros({0, 0}), i, 0, kiln::TakeMode::Clip);
  CHECK(none.shape() == kiln::Shape{1, 0});
  EXPECT_ERROR(kiln::ShapeError, "take: cannot take 1 elements from axis 0, which is empty",
               kiln::take(kiln::zeros({0, 3}), i, 0, kiln::TakeMode::Clip));
}

TEST_CASE("errors name the function called, and say what to do") {
  Array a = kiln::arange(0, 6, 1, DType::Float32).reshape({2, 3});
  Array b = kiln::arange(0, 8, 1, DType::Float32).reshape({4, 2});
  EXPECT_ERROR(kiln::ShapeError, "dot: shapes (2, 3) and (4, 2) do not align", kiln::dot(a, b));
  EXPECT_ERROR(kiln::ShapeError, "dot: shapes (1, 2, 3) and (4, 2) do not align",
               kiln::dot(a.reshape({1, 2, 3}), b));
  EXPECT_ERROR(kiln::ShapeError, "inner: shapes (2, 3) and (4, 2) do not align", kiln::inner(a, b));
  EXPECT_ERROR(kiln::ShapeError, "matmul: shapes (2, 3) and (4, 2)", kiln::matmul(a, b));
  EXPECT_ERROR(kiln::ShapeError, "compress: axis 4 is out of bounds",
               kiln::compress(kiln::asarray(std::vector<bool>{true, false}), a, 4));
  // The first true entry past the axis is the one named.
  EXPECT_ERROR(kiln::ShapeError, "selects index 6, past the axis's length 5; entries",
               kiln::compress(kiln::asarray(std::vector<bool>{1, 0, 0, 0, 0, 0, 1, 1}),
                              kiln::arange(0, 5, 1, DType::Int64)));
  EXPECT_ERROR(kiln::ShapeError,
               "take_along_axis: indices of shape (3, 2) do not broadcast against an array of "
               "shape (2, 3) along axis 0 (3 against 2)",
               kiln::take_along_axis(a, kiln::zeros({3, 2}, DType::Int64), 1));
  Array u8 = kiln::arange(0, 3, 1, DType::UInt8);
  EXPECT_ERROR(kiln::DTypeError, "pad: the integer -1 is out of bounds for uint8",
               kiln::pad(u8, 1, kiln::PadMode::Constant, -1));
  EXPECT_ERROR(kiln::DTypeError, "at(...).set: the integer 300 is out of bounds for uint8",
               u8.at(std::vector<kiln::Index>{1}).set(300));
  EXPECT_ERROR(kiln::DTypeError, "clip: the integer -1 is out of bounds for uint8",
               kiln::clip(u8, -1, 2));
  // Away from the axis, either side may be 1 (NumPy broadcasts both).
  Array picked = kiln::take_along_axis(
      a(Slice(0, 1)), kiln::asarray(std::vector<int64_t>{0, 2, 1, 1}).reshape({2, 2}), 1);
  CHECK(picked.to_vector<float>() == std::vector<float>{0, 2, 1, 1});
}
