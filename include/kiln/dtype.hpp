// Element types and NumPy 2 type promotion.
#pragma once
#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>

#include "kiln/half.hpp"

namespace kiln {

// The dtypes added after the first seven come after them, so that the first seven keep their
// numbers (and everything derived from them, such as kernel names' hashes).
enum class DType : uint8_t {
  Bool,
  Int32,
  Int64,
  Float32,
  Float64,
  Complex64,
  Complex128,
  Int8,
  Int16,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Float16,
  BFloat16,
};

inline constexpr DType kAllDTypes[] = {
    DType::Bool,      DType::Int32,      DType::Int64,  DType::Float32, DType::Float64,
    DType::Complex64, DType::Complex128, DType::Int8,   DType::Int16,   DType::UInt8,
    DType::UInt16,    DType::UInt32,     DType::UInt64, DType::Float16, DType::BFloat16};

// Bytes per element.
int itemsize(DType t);
// NumPy's name: "bool", "int8", "uint8", ..., "float64", "complex64", "complex128".
const char* dtype_name(DType t);
bool is_integer(DType t);   // signed and unsigned integers (not bool)
bool is_unsigned(DType t);  // uint8, uint16, uint32, uint64
inline bool is_integer_or_bool(DType t) { return t == DType::Bool || is_integer(t); }
bool is_floating(DType t);  // float16, bfloat16, float32, float64
// float16 and bfloat16: stored in 16 bits, computed in float32 (one rounding where stored).
inline bool is_half(DType t) { return t == DType::Float16 || t == DType::BFloat16; }
bool is_complex(DType t);
// The real dtype of a complex one (complex64 -> float32); identity otherwise.
DType real_dtype(DType t);
// The complex dtype with the same precision (float16, bfloat16 and float32 -> complex64, as
// NumPy gives complex64 for float16 + complex64; ints -> complex128).
DType complex_dtype(DType t);
// The float dtype a transcendental function of t returns: the smallest that holds every value
// of t, as NumPy (bool, int8 and uint8 -> float16, int16 -> float32, int32 and int64 ->
// float64).
DType float_dtype(DType t);
// NumPy's promote_types for two array dtypes.
DType promote_types(DType a, DType b);

// The C++ type of each dtype, and back.
template <class T>
struct dtype_of;
template <>
struct dtype_of<bool> {
  static constexpr DType value = DType::Bool;
};
template <>
struct dtype_of<int32_t> {
  static constexpr DType value = DType::Int32;
};
template <>
struct dtype_of<int64_t> {
  static constexpr DType value = DType::Int64;
};
template <>
struct dtype_of<int8_t> {
  static constexpr DType value = DType::Int8;
};
template <>
struct dtype_of<int16_t> {
  static constexpr DType value = DType::Int16;
};
template <>
struct dtype_of<uint8_t> {
  static constexpr DType value = DType::UInt8;
};
template <>
struct dtype_of<uint16_t> {
  static constexpr DType value = DType::UInt16;
};
template <>
struct dtype_of<uint32_t> {
  static constexpr DType value = DType::UInt32;
};
template <>
struct dtype_of<uint64_t> {
  static constexpr DType value = DType::UInt64;
};
template <>
struct dtype_of<float16> {
  static constexpr DType value = DType::Float16;
};
template <>
struct dtype_of<bfloat16> {
  static constexpr DType value = DType::BFloat16;
};
template <>
struct dtype_of<float> {
  static constexpr DType value = DType::Float32;
};
template <>
struct dtype_of<double> {
  static constexpr DType value = DType::Float64;
};
template <>
struct dtype_of<std::complex<float>> {
  static constexpr DType value = DType::Complex64;
};
template <>
struct dtype_of<std::complex<double>> {
  static constexpr DType value = DType::Complex128;
};
template <class T>
inline constexpr DType dtype_v = dtype_of<std::remove_cv_t<T>>::value;

// Calls f(T{}) with the C++ type of dtype t.
template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Bool:
      return f(bool{});
    case DType::Int32:
      return f(int32_t{});
    case DType::Int64:
      return f(int64_t{});
    case DType::Float32:
      return f(float{});
    case DType::Float64:
      return f(double{});
    case DType::Complex64:
      return f(std::complex<float>{});
    case DType::Int8:
      return f(int8_t{});
    case DType::Int16:
      return f(int16_t{});
    case DType::UInt8:
      return f(uint8_t{});
    case DType::UInt16:
      return f(uint16_t{});
    case DType::UInt32:
      return f(uint32_t{});
    case DType::UInt64:
      return f(uint64_t{});
    case DType::Float16:
      return f(float16{});
    case DType::BFloat16:
      return f(bfloat16{});
    default:
      return f(std::complex<double>{});
  }
}

}  // namespace kiln
