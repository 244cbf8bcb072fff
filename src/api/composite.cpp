// NumPy's elementwise functions that are compositions of kiln's own operations (where,
// comparisons, the Math rows): each fuses into the one kernel that reads its input, and gives
// NumPy's values because it is NumPy's own formula (degrees is x * (180 / pi) in x's dtype,
// round is rint(x * 10^d) / 10^d, sign of complex is z / |z| with NumPy 2's special cases).
// Type rules are NumPy 2.3's; tests/data/make_elementwise_fixtures.py says where kiln differs.
#include <cmath>
#include <complex>
#include <limits>
#include <string>

#include "api/promotion.hpp"
#include "kiln/array.hpp"

namespace kiln {

namespace {

using C = std::complex<double>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = 3.141592653589793238462643383279502884;  // NumPy's NPY_PI

// A 0-d array of dtype t on a's device: a constant that keeps where() in t (two weak scalars
// would promote to the scalars' default dtype, complex128 for complex64 input).
Array constant(const Array& a, Scalar v, DType t) { return full({}, v, t, a.device()); }

// The complex number re + i im of dtype t, from finite real parts (i * 1j has a NaN real part
// for an infinite i); the sign of a zero part may be lost.
Array complex_of(const Array& re, const Array& im, DType t) {
  return re.astype(t) + im * Scalar(C(0, 1));
}

// NumPy's power_of_ten (numpy/core/src/multiarray/calculation.c): exact up to 1e8, then
// repeated multiplication, whose rounding round() inherits.
double power_of_ten(int n) {
  static const double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8};
  if (n < 9) return p10[n];
  double r = 1e9;
  while (n-- > 9) r *= 10.;
  return r;
}

}  // namespace

Array isnan(const Array& a) {
  if (is_integer_or_bool(a.dtype())) return zeros(a.shape(), DType::Bool, a.device());
  return a != a;
}

Array isinf(const Array& a) {
  DType t = a.dtype();
  if (is_integer_or_bool(t)) return zeros(a.shape(), DType::Bool, a.device());
  if (is_complex(t)) return isinf(real(a)) | isinf(imag(a));
  return abs(a) == kInf;
}

Array isfinite(const Array& a) {
  DType t = a.dtype();
  if (is_integer_or_bool(t)) return ones(a.shape(), DType::Bool, a.device());
  if (is_complex(t)) return isfinite(real(a)) & isfinite(imag(a));
  return abs(a) < kInf;  // false for NaN
}

Array signbit(const Array& a) {
  DType t = a.dtype();
  api::check_real("signbit", t);
  if (t == DType::Bool) return zeros(a.shape(), DType::Bool, a.device());
  if (is_integer(t)) return a < 0;
  return copysign(1.0, a) < 0;  // the sign bit of -0.0 and of a negative NaN
}

Array square(const Array& a) {
  Array x = a.dtype() == DType::Bool ? a.astype(DType::Int8) : a;  // as NumPy
  return x * x;
}

Array reciprocal(const Array& a) {
  DType t = a.dtype();
  if (t == DType::Bool)
    throw DTypeError(
        "reciprocal of a bool array: NumPy's result is int8, a dtype kiln lacks; cast it "
        "with astype first");
  if (is_integer(t)) return (1.0 / a).astype(t);  // NumPy's loop: (int)(1.0 / x)
  if (is_complex(t))  // NumPy's reciprocal of 0j is nan+nanj (1 / 0j would give inf+nanj)
    return where(a == 0, constant(a, C(kNaN, kNaN), t), 1.0 / a);
  return 1.0 / a;
}

Array sign(const Array& a) {
  DType t = a.dtype();
  if (t == DType::Bool)
    throw DTypeError("sign is not defined for bool arrays (as in NumPy); cast with astype first");
  if (is_unsigned(t)) return where(a > 0, 1, 0).astype(t);  // no -1 to give
  if (!is_complex(t)) return where(a > 0, 1, where(a < 0, -1, where(a == 0, 0, a)));
  // NumPy 2's complex sign: z / |z|, NaN when |z| is, and for an infinite part the unit in
  // its direction (NaN when both parts are infinite).
  Array re = real(a), im = imag(a), mag = abs(a);
  Array nan = constant(a, C(kNaN, kNaN), t);
  auto pick = [&](const Array& positive, C yes, C no) {
    return where(positive, constant(a, yes, t), constant(a, no, t));
  };
  Array infinite = where(isinf(re), where(isinf(im), nan, pick(re > 0, C(1, 0), C(-1, 0))),
                         where(isinf(im), pick(im > 0, C(0, 1), C(0, -1)), a / mag));
  return where(mag != mag, nan,
               where(isinf(mag), infinite, where(mag == 0, constant(a, C(0, 0), t), a / mag)));
}

Array round(const Array& a, int decimals) {
  DType t = a.dtype();
  if (is_complex(t))
    throw DTypeError(
        "round of complex arrays is not supported by kiln (NumPy rounds each "
        "part); round real(a) and imag(a)");
  if (t == DType::Bool) {
    if (decimals == 0) return rint(a);
    throw DTypeError(
        "round of a bool array with decimals != 0 (NumPy cannot cast the result "
        "back to bool); cast with astype first");
  }
  if (is_integer(t)) {
    if (decimals >= 0) return a;
    double f = power_of_ten(-decimals);
    return (rint(a / f) * f).astype(t);  // NumPy: in float64, then cast back
  }
  if (decimals == 0) return rint(a);
  if (decimals > 0) {
    double f = power_of_ten(decimals);
    return rint(a * f) / f;
  }
  double f = power_of_ten(-decimals);
  return rint(a / f) * f;
}

Array nan_to_num(const Array& a, double nan, std::optional<double> posinf,
                 std::optional<double> neginf) {
  DType t = a.dtype();
  if (is_integer_or_bool(t)) return a;
  DType r = real_dtype(t);
  double big = r == DType::Float16    ? 65504.0  // the largest finite of each
               : r == DType::BFloat16 ? 3.3895313892515355e38
               : r == DType::Float32  ? std::numeric_limits<float>::max()
                                      : std::numeric_limits<double>::max();
  double hi = posinf.value_or(big), lo = neginf.value_or(-big);
  auto fix = [&](const Array& x) {
    return where(x != x, nan, where(x == kInf, hi, where(x == -kInf, lo, x)));
  };
  if (!is_complex(t)) return fix(a);
  // Only elements with a non-finite part are rebuilt from their parts.
  return where(isfinite(a), a, complex_of(fix(real(a)), fix(imag(a)), t));
}

Array angle(const Array& z, bool deg) {
  Array a = is_complex(z.dtype()) ? arctan2(imag(z), real(z)) : arctan2(0, z);
  return deg ? a * (180.0 / kPi) : a;
}

// NumPy's rad2deg and deg2rad: x * (T)(180.0 / NPY_PI), in the float dtype of x.
Array degrees(const Array& a) {
  api::check_real("degrees", a.dtype());
  return a.astype(float_dtype(a.dtype())) * (180.0 / kPi);
}
Array radians(const Array& a) {
  api::check_real("radians", a.dtype());
  return a.astype(float_dtype(a.dtype())) * (kPi / 180.0);
}

}  // namespace kiln
