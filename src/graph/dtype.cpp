#include "kiln/dtype.hpp"

namespace kiln {

int itemsize(DType t) {
  static constexpr int sizes[] = {1, 4, 8, 4, 8, 8, 16};
  return sizes[static_cast<int>(t)];
}

const char* dtype_name(DType t) {
  static constexpr const char* names[] = {"bool",    "int32",     "int64",     "float32",
                                          "float64", "complex64", "complex128"};
  return names[static_cast<int>(t)];
}

bool is_integer(DType t) { return t == DType::Int32 || t == DType::Int64; }
bool is_floating(DType t) { return t == DType::Float32 || t == DType::Float64; }
bool is_complex(DType t) { return t == DType::Complex64 || t == DType::Complex128; }

DType real_dtype(DType t) {
  if (t == DType::Complex64) return DType::Float32;
  if (t == DType::Complex128) return DType::Float64;
  return t;
}

DType complex_dtype(DType t) {
  if (t == DType::Float32 || t == DType::Complex64) return DType::Complex64;
  return DType::Complex128;
}

DType float_dtype(DType t) {
  if (t == DType::Bool) return DType::Float32;
  if (is_integer(t)) return DType::Float64;
  return t;
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  if (is_integer(a) && is_integer(b)) return DType::Int64;
  // Any integer with a float or complex needs 53 bits of mantissa: double precision.
  if (is_integer(a) || is_integer(b)) {
    DType other = is_integer(a) ? b : a;
    return is_complex(other) ? DType::Complex128 : DType::Float64;
  }
  bool complex = is_complex(a) || is_complex(b);
  bool dbl = real_dtype(a) == DType::Float64 || real_dtype(b) == DType::Float64;
  if (complex) return dbl ? DType::Complex128 : DType::Complex64;
  return dbl ? DType::Float64 : DType::Float32;
}

}  // namespace kiln
