// NumPy 2 (NEP 50) promotion with weak C++ scalars.
#pragma once
#include "kiln/dtype.hpp"
#include "kiln/scalar.hpp"

namespace kiln::api {

// The dtype of `array op scalar`: the array's dtype unless the scalar is of a higher kind
// (bool < int < float < complex); then the scalar kind's default, at the array's precision.
DType weak_result(DType array, const Scalar& s);
// The dtype a lone scalar takes: bool, int64, float64 or complex128, and float32 or complex64
// for a float or std::complex<float> (Scalar::single_precision).
DType default_dtype(const Scalar& s);
// Whether an integer scalar fits the integer dtype it is used with (anything else fits).
bool fits(const Scalar& s, DType t);
// DTypeError when it does not.
void check_fits(const Scalar& s, DType t, const char* what);
// DTypeError when t is complex, for a function kiln defines for real numbers only.
void check_real(const char* function, DType t);

}  // namespace kiln::api
