#include "api/promotion.hpp"

#include <limits>
#include <string>

#include "kiln/errors.hpp"

namespace kiln::api {

DType default_dtype(const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Bool:
      return DType::Bool;
    case Scalar::Kind::Int:
      return DType::Int64;
    case Scalar::Kind::Float:
      return s.single_precision() ? DType::Float32 : DType::Float64;
    default:
      return s.single_precision() ? DType::Complex64 : DType::Complex128;
  }
}

DType weak_result(DType array, const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Bool:
      return array;
    case Scalar::Kind::Int:
      return array == DType::Bool ? DType::Int64 : array;
    case Scalar::Kind::Float:
      return is_floating(array) || is_complex(array) ? array : DType::Float64;
    default:
      return is_complex(array) ? array : complex_dtype(array);
  }
}

void check_fits(const Scalar& s, DType t, const char* what) {
  if (s.kind() != Scalar::Kind::Int || t != DType::Int32) return;
  int64_t v = s.as_int();
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
    throw DTypeError(std::string(what) + ": the integer " + std::to_string(v) +
                     " is out of bounds for int32; cast the array to int64 first "
                     "(a.astype(kiln::DType::Int64))");
}

void check_real(const char* function, DType t) {
  if (is_complex(t))
    throw DTypeError(std::string(function) + " is not defined for complex arrays, got " +
                     dtype_name(t) + "; apply it to real(a) and imag(a)");
}

}  // namespace kiln::api
