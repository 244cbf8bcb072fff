// Element types and NumPy 2 type promotion.
#pragma once
#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>

namespace kiln {

enum class DType : uint8_t { Bool, Int32, Int64, Float32, Float64, Complex64, Complex128 };

inline constexpr DType kAllDTypes[] = {DType::Bool,      DType::Int32,   DType::Int64,
                                       DType::Float32,   DType::Float64, DType::Complex64,
                                       DType::Complex128};

// Bytes per element.
int itemsize(DType t);
// NumPy's name: "bool", "int32", "int64", "float32", "float64", "complex64", "complex128".
const char* dtype_name(DType t);
bool is_integer(DType t);  // int32, int64 (not bool)
inline bool is_integer_or_bool(DType t) { return t == DType::Bool || is_integer(t); }
bool is_floating(DType t);  // float32, float64
bool is_complex(DType t);
// The real dtype of a complex one (complex64 -> float32); identity otherwise.
DType real_dtype(DType t);
// The complex dtype with the same precision (float32 -> complex64; ints -> complex128).
DType complex_dtype(DType t);
// The float dtype a transcendental function of t returns (int -> float64; bool -> float32,
// since kiln has no float16).
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
    default:
      return f(std::complex<double>{});
  }
}

}  // namespace kiln
