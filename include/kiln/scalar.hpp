// A C++ number used with arrays. Scalars are "weak" as in NumPy 2: `f32_array * 2.0` stays
// float32, `int32_array + 1` stays int32. Scalars become kernel parameters, never source text.
#pragma once
#include <bit>
#include <complex>
#include <cstdint>
#include <type_traits>

#include "kiln/dtype.hpp"

namespace kiln {

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Float, Complex };

  Scalar() = default;
  Scalar(bool v) : kind_(Kind::Bool), i_(v) {}
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::Int), i_(static_cast<int64_t>(v)) {}
  Scalar(float v) : kind_(Kind::Float), single_(true), re_(v) {}
  Scalar(double v) : kind_(Kind::Float), re_(v) {}
  template <class T>
  Scalar(std::complex<T> v)
      : kind_(Kind::Complex), single_(std::is_same_v<T, float>), re_(v.real()), im_(v.imag()) {}

  Kind kind() const { return kind_; }
  // Made from a float or a std::complex<float>: where a scalar alone gives an array its dtype
  // (full's fill value), that is float32 or complex64, as NumPy gives np.float32 scalars. Beside
  // arrays a scalar is weak either way.
  bool single_precision() const { return single_; }
  int64_t as_int() const;    // truncates floats
  double as_double() const;  // real part for complex
  std::complex<double> as_complex() const;
  bool as_bool() const;
  // The value converted to the C++ type of a dtype (with NumPy's casting).
  template <class T>
  T as() const {
    if constexpr (std::is_same_v<T, bool>)
      return as_bool();
    else if constexpr (std::is_integral_v<T>)
      return as_integer<T>();
    else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, float16> ||
                       std::is_same_v<T, bfloat16>)
      return static_cast<T>(as_double());  // float16 rounds from the double directly, as NumPy
    else
      return T(as_complex());
  }
  // Bitwise equality (so NaN == NaN): what hash-consing needs.
  bool same_as(const Scalar& o) const {
    // (Inline: the signature compares constants on every evaluation.)
    return kind_ == o.kind_ && i_ == o.i_ &&
           std::bit_cast<uint64_t>(re_) == std::bit_cast<uint64_t>(o.re_) &&
           std::bit_cast<uint64_t>(im_) == std::bit_cast<uint64_t>(o.im_);
  }
  // The value's hash (values equal by same_as hash equal), `salt` (a dtype, say) taken into the
  // same one mix instead of mixed in after.
  size_t hash(uint64_t salt = 0) const;

 private:
  // A float (or complex real part) converts by the kernels' rule, which is NumPy's on x86
  // (kernels/scalar.cuh's float_to_int: out of range or NaN gives int32 and int64 their
  // minimum, smaller and unsigned types the low bits of a wider conversion); truncating through
  // int64 would wrap (3e9 to int32 would give -1294967296, not -2147483648). Integers wrap, as
  // NumPy's astype.
  template <class T>
  T as_integer() const {
    static_assert(sizeof(T) <= sizeof(int64_t), "integers up to 64 bits");
    if (kind_ == Kind::Bool || kind_ == Kind::Int) return static_cast<T>(i_);
    return static_cast<T>(float_to_int(sizeof(T), std::is_signed_v<T>));
  }
  // re_ converted to the integer type of `bytes` bytes and that signedness, as its bits in an
  // int64: defined out of line, in src/graph/scalar.cpp, because kernels/ are compiled into
  // the library, not installed.
  int64_t float_to_int(size_t bytes, bool is_signed) const;

  Kind kind_ = Kind::Int;
  bool single_ = false;
  int64_t i_ = 0;
  double re_ = 0, im_ = 0;
};

}  // namespace kiln
