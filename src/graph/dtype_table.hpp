// The dtypes, one row each, in the order of the public enum (include/kiln/dtype.hpp): their
// names, sizes, kinds, C++ and CUDA types and short names all come from here. A new dtype is
// a row here and an enumerator there (static_asserts below check they agree), then the places
// that dispatch on C++ types (visit_dtype, kernels/) — see CONTRIBUTING.md.
#pragma once
#include <complex>
#include <cstdint>
#include <type_traits>

#include "kiln/dtype.hpp"

// X(Enum, name, ctype, cuda, short_name, kind)
#define KILN_DTYPES(X)                                                                      \
  X(Bool, bool, bool, "bool", "b", Bool)                                                    \
  X(Int32, int32, int32_t, "int", "i32", Integer)                                           \
  X(Int64, int64, int64_t, "long long", "i64", Integer)                                     \
  X(Float32, float32, float, "float", "f32", Floating)                                      \
  X(Float64, float64, double, "double", "f64", Floating)                                    \
  X(Complex64, complex64, std::complex<float>, "kiln::complex<float>", "c64", Complex)      \
  X(Complex128, complex128, std::complex<double>, "kiln::complex<double>", "c128", Complex) \
  X(Int8, int8, int8_t, "signed char", "i8", Integer)                                       \
  X(Int16, int16, int16_t, "short", "i16", Integer)                                         \
  X(UInt8, uint8, uint8_t, "unsigned char", "u8", Integer)                                  \
  X(UInt16, uint16, uint16_t, "unsigned short", "u16", Integer)                             \
  X(UInt32, uint32, uint32_t, "unsigned int", "u32", Integer)                               \
  X(UInt64, uint64, uint64_t, "unsigned long long", "u64", Integer)                         \
  X(Float16, float16, kiln::float16, "kiln::float16", "f16", Floating)                      \
  X(BFloat16, bfloat16, kiln::bfloat16, "kiln::bfloat16", "bf16", Floating)

namespace kiln::graph {

enum class DTypeKind : uint8_t { Bool, Integer, Floating, Complex };

struct DTypeRow {
  DType dtype;
  bool is_signed;  // of the C++ type: false for bool and the unsigned integers
  const char* name;
  int itemsize;
  const char* cuda;        // the type generated kernels use (kernels/complex.cuh for complex)
  const char* short_name;  // in kernel signatures: "f32 i64 -> f64"
  DTypeKind kind;
};

#define KILN_DTYPE_ROW(Enum, name, ctype, cuda, short_name, kind)            \
  DTypeRow{DType::Enum, std::is_signed_v<ctype>, #name, sizeof(ctype), cuda, \
           short_name,  DTypeKind::kind},
inline constexpr DTypeRow kDTypes[] = {KILN_DTYPES(KILN_DTYPE_ROW)};
#undef KILN_DTYPE_ROW

static_assert(std::size(kDTypes) == std::size(kAllDTypes),
              "a dtype without a row, or a row too many");
constexpr bool rows_in_enum_order() {
  for (size_t i = 0; i < std::size(kDTypes); ++i)
    if (kDTypes[i].dtype != kAllDTypes[i] || static_cast<size_t>(kDTypes[i].dtype) != i)
      return false;
  return true;
}
static_assert(rows_in_enum_order(), "dtype rows must follow the enum's order");

inline const DTypeRow& row(DType t) { return kDTypes[static_cast<int>(t)]; }

}  // namespace kiln::graph
