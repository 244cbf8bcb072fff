#include "api/promotion.hpp"

#include <string>

#include "graph/value_range.hpp"
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

// NumPy 2 refuses a Python integer that the array's integer dtype cannot hold (OverflowError)
// rather than wrapping it or widening the result.
// (kiln's scalars hold int64: a uint64_t above 2^63 arrives negative, and does not fit.)
bool fits(const Scalar& s, DType t) {
  return s.kind() != Scalar::Kind::Int || !is_integer(t) || graph::holds(t, s.as_int());
}

void check_fits(const Scalar& s, DType t, const char* what) {
  if (!fits(s, t))
    throw DTypeError(std::string(what) + ": the integer " + std::to_string(s.as_int()) +
                     " is out of bounds for " + dtype_name(t) +
                     "; cast the array to a wider type first (a.astype(kiln::DType::Int64))");
}

void check_real(const char* function, DType t) {
  if (is_complex(t))
    throw DTypeError(std::string(function) + " is not defined for complex arrays, got " +
                     dtype_name(t) + "; apply it to real(a) and imag(a)");
}

}  // namespace kiln::api
