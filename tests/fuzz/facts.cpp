#include "fuzz/facts.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace kiln::fuzz {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Error allowances in units of roundoff: a real libm function (CUDA documents up to 2 ulps
// for most double functions, 4 for some float ones; Eigen's vectorised ones a few more), a
// complex function built from several real ones, and an FFT per log2 of its length.
constexpr double kReal = 16, kComplex = 64, kFft = 8;
const double kSqrt2 = std::sqrt(2.0);

bool floaty(DType t) { return is_floating(t) || is_complex(t); }
int mantissa(DType t) {
  switch (real_dtype(t)) {
    case DType::Float16:
      return 11;
    case DType::BFloat16:
      return 8;
    case DType::Float32:
      return 24;
    default:
      return 53;
  }
}

double max_finite(DType t) {
  switch (real_dtype(t)) {
    case DType::Bool:
      return 1;
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64:
      return std::ldexp(1.0, itemsize(t) * 8 - 1);
    case DType::UInt8:
    case DType::UInt16:
    case DType::UInt32:
    case DType::UInt64:
      return std::ldexp(1.0, itemsize(t) * 8);
    case DType::Float16:
      return 65504;
    case DType::BFloat16:
      return 0x1.fep127;
    case DType::Float32:
      return std::numeric_limits<float>::max();
    default:
      return std::numeric_limits<double>::max();
  }
}

// A noisy value this close to overflow could be finite on one path and infinite on another.
double noisy_limit(DType t) { return max_finite(t) / 1024; }

double modulus(const Facts& f) { return is_complex(f.dtype) ? f.bound * kSqrt2 : f.bound; }
// The largest difference from the exact value, per component.
double total_err(const Facts& f) { return f.noisy ? f.abs_err + f.rel_err * modulus(f) : 0; }
// x * y where 0 * inf is 0: a bound of 0 (all zeros) stays 0 whatever the other bound.
double times(double x, double y) { return x == 0 || y == 0 ? 0 : x * y; }

void fit_grid(Facts& f) {
  if (!floaty(f.dtype)) f.grid = 0;
  if (f.grid > 60 ||
      (f.grid >= 0 && !(std::ldexp(f.bound, f.grid) <= std::ldexp(1.0, mantissa(f.dtype)))))
    f.grid = -1;
}

// Common last steps: the result's dtype and shape, overflow, the grid, sane error bounds.
// unbounded: the op's bound may be unknown without its noisy result risking overflow (a tan
// near a pole, a pow): its error is then purely relative.
std::optional<Facts> settle(Facts f, DType t, const Shape& s, bool unbounded = false) {
  f.dtype = t;
  f.shape = s;
  if (!floaty(t)) {
    Facts r;
    r.dtype = t;
    r.shape = s;
    r.bound = std::min(std::isnan(f.bound) ? kInf : f.bound, max_finite(t));
    return r;
  }
  if (!(f.bound <= max_finite(t))) f.special = true, f.bound = kInf;
  fit_grid(f);
  if (!f.noisy) {
    f.abs_err = f.rel_err = 0;
    return f;
  }
  if (!std::isfinite(f.abs_err) || !std::isfinite(f.rel_err)) return std::nullopt;
  if (!unbounded && !(f.bound <= noisy_limit(t))) return std::nullopt;
  return f;
}

Facts exact_bool() {
  Facts f;
  f.dtype = DType::Bool;
  f.bound = 1;
  return f;
}

// An unsigned value wraps where the arithmetic that made it went below zero or past the top
// (4 - 5 in uint16 is 65535), so the one bound that holds for it is its dtype's largest value.
void unsigned_range(Facts& f) {
  if (is_unsigned(f.dtype)) f.bound = max_finite(f.dtype), f.grid = 0;
}

std::optional<Facts> convert(const Facts& f, DType to) {
  if (f.dtype == to) return f;
  Facts g = f;
  g.dtype = to;
  if (to == DType::Bool || is_integer(to)) {
    if (f.noisy) return std::nullopt;  // rounding differences would flip the result
    bool from_float = floaty(f.dtype);
    // Out of range and NaN give the minimum integer (kiln's defined float-to-int rule).
    g.bound = from_float && f.special ? max_finite(to) : std::min(f.bound, max_finite(to));
    g.grid = 0;
    g.special = g.zero_sign = false;
    return to == DType::Bool ? exact_bool() : g;
  }
  if (!floaty(f.dtype)) g.grid = 0;
  if (is_complex(f.dtype) && !is_complex(to) && f.noisy) g.abs_err = total_err(f), g.rel_err = 0;
  if (f.noisy && unit_roundoff(to) > unit_roundoff(f.dtype)) g.rel_err += unit_roundoff(to);
  if (!(g.bound <= max_finite(to))) g.special = true;
  return g;
}

Facts scalar_facts(const Scalar& s) {
  Facts f;
  std::complex<double> v = s.as_complex();
  if (s.kind() == Scalar::Kind::Int) v = static_cast<double>(s.as_int());
  f.dtype = s.kind() == Scalar::Kind::Bool    ? DType::Bool
            : s.kind() == Scalar::Kind::Int   ? DType::Int64
            : s.kind() == Scalar::Kind::Float ? DType::Float64
                                              : DType::Complex128;
  f.special = !std::isfinite(v.real()) || !std::isfinite(v.imag());
  f.bound = f.special ? 0 : std::max(std::abs(v.real()), std::abs(v.imag()));
  f.grid = -1;
  if (s.kind() != Scalar::Kind::Complex && !f.special) f.least = v.real();
  for (int k = 0; k <= 30 && !f.special; ++k)
    if (std::ldexp(v.real(), k) == std::trunc(std::ldexp(v.real(), k)) &&
        std::ldexp(v.imag(), k) == std::trunc(std::ldexp(v.imag(), k))) {
      f.grid = k;
      break;
    }
  return f;
}

Facts arg(const Operand& o, const std::vector<Facts>& values) {
  return o.is_scalar() ? scalar_facts(o.scalar) : values.at(static_cast<size_t>(o.value));
}

// Values that are one of several inputs, elementwise (where, minimum, maximum, clip).
Facts choice(const std::vector<Facts>& in) {
  Facts r = in.at(0);
  for (const Facts& f : in) {
    r.bound = std::max(r.bound, f.bound);
    r.grid = r.grid < 0 || f.grid < 0 ? -1 : std::max(r.grid, f.grid);
    r.special |= f.special;
    r.noisy |= f.noisy;
    r.zero_sign |= f.zero_sign;
    r.abs_err = std::max(r.abs_err, f.abs_err);
    r.rel_err = std::max(r.rel_err, f.rel_err);
  }
  return r;
}

// ---- elementwise ------------------------------------------------------------------------

// A lower bound moved away from 0 by far more than the rounding of the value it bounds.
double loosen(double least) { return least > 0 ? least / 2 : least < 0 ? least * 2 : least; }

std::optional<Facts> add(const Facts& a, const Facts& b, DType t, bool subtract) {
  Facts r = choice({a, b});
  r.bound = a.bound + b.bound;
  r.least = subtract ? -kInf : loosen(a.least + b.least);
  if (r.noisy) r.abs_err = total_err(a) + total_err(b), r.rel_err = unit_roundoff(t);
  return r;
}

std::optional<Facts> multiply(const Facts& a, const Facts& b, DType t) {
  // A noisy factor that is 0 on one path and tiny on the other turns inf * it into NaN or
  // an infinity of either sign.
  if ((a.noisy && b.special) || (b.noisy && a.special)) return std::nullopt;
  Facts r = choice({a, b});
  r.bound = times(a.bound, b.bound);
  r.least = a.least >= 0 && b.least >= 0 ? loosen(a.least * b.least) : -kInf;
  r.grid = a.grid < 0 || b.grid < 0 ? -1 : a.grid + b.grid;
  double u = unit_roundoff(t);
  if (!r.noisy) return r;
  if (!is_complex(t)) {
    r.abs_err = times(a.abs_err, b.bound) * (1 + b.rel_err) +
                times(b.abs_err, a.bound) * (1 + a.rel_err) + a.abs_err * b.abs_err;
    r.rel_err = a.rel_err + b.rel_err + a.rel_err * b.rel_err + u;
    return r;
  }
  // re = ac - bd cancels: relative errors of the factors become absolute ones.
  double ea = total_err(a), eb = total_err(b);
  r.bound = 2 * times(a.bound, b.bound);
  r.abs_err = 2 * (times(ea, b.bound) + times(eb, a.bound) + ea * eb) + 6 * u * r.bound;
  r.rel_err = 0;
  return r;
}

// a / b for a real divisor b >= b.least > 0 on every path: its relative error is at most
// e = rel_err + abs_err / least, so the quotient's is at most (a's + e) / (1 - e).
std::optional<Facts> divide_by_positive(const Facts& a, const Facts& b, DType t) {
  double e = b.noisy ? b.rel_err + b.abs_err / b.least : 0;
  if (!(e < 0.25)) return std::nullopt;
  Facts r = choice({a, b});
  r.least = -kInf;
  r.grid = -1;
  r.bound = modulus(a) / b.least;
  r.abs_err = a.noisy ? a.abs_err / (b.least * (1 - e)) : 0;
  r.rel_err = ((a.noisy ? a.rel_err : 0) + e) / (1 - e) + 2 * unit_roundoff(t);
  return r;
}

std::optional<Facts> divide(const Facts& a, const Facts& b, DType t) {
  if (b.least > 0 && !is_complex(t) && !a.special && !b.special) return divide_by_positive(a, b, t);
  if (a.noisy || b.noisy) return std::nullopt;  // a noisy divisor near 0 has no useful bound
  if (b.zero_sign) return std::nullopt;         // 1 / -0 is -inf
  Facts r = choice({a, b});
  r.special = true;  // x / 0
  r.grid = -1;
  // A divisor on a grid is 0 or at least 2^-grid in size.
  r.bound = b.grid >= 0 ? std::ldexp(modulus(a), b.grid) * 2 : kInf;
  if (!is_complex(t)) return r;
  // Smith's algorithm on both sides, but the host multiplies by 1/d where the GPU divides by
  // d: a few ulps apart relative to |a / b|.
  if (a.special || b.special) return std::nullopt;
  r.noisy = true;
  r.rel_err = kComplex * unit_roundoff(t);
  return r;
}

std::optional<Facts> power(const Facts& a, const Facts& b, DType t) {
  Facts r = choice({a, b});
  r.bound = kInf;
  if (!floaty(t)) return r;  // integers multiply and wrap, the same on every path
  if (a.noisy || b.noisy || a.zero_sign) return std::nullopt;
  r.noisy = r.special = true;
  r.grid = -1;
  // |x| >= 2^-grid unless 0, so |x^y| <= max(bound, 2^grid)^|y|.
  double base = a.grid >= 0 ? std::max(a.bound, std::ldexp(1.0, a.grid)) : kInf;
  r.bound = b.bound <= 4 ? std::pow(base, b.bound) : kInf;
  if (!is_complex(t)) {
    r.rel_err = kReal * unit_roundoff(t);
    return r;
  }
  // exp(y log x) on the GPU, repeated products on the host for small integer y.
  if (a.special || b.special || a.grid < 0 || !(b.bound <= 4)) return std::nullopt;
  double logs = std::max(std::abs(std::log(std::max(modulus(a), 1e-300))), a.grid * std::log(2.0));
  double reach = modulus(b) * (logs + M_PI);
  r.bound = std::exp(reach);
  r.rel_err = kComplex * unit_roundoff(t) * (1 + reach);
  return r;
}

std::optional<Facts> extremum(const std::vector<Facts>& in, DType t) {
  Facts r = choice(in);
  r.zero_sign |= floaty(t);  // minimum(-0, +0) may be either
  // Complex numbers order lexicographically: a last-bit difference in the real parts may pick
  // another imaginary part.
  if (is_complex(t) && r.noisy) return std::nullopt;
  return r;
}

// A Math row's function of real x and y (the second operand of a binary row) that these facts
// know nothing more about (log1p, arctan2, ...): the libraries' results lie within a few ulps
// of the true value, so of exact operands it is noisy by a relative error alone; of noisy
// ones, or of zeros whose sign differs between paths (atan2(+-0, -1) is +-pi), refused.
std::optional<Facts> math_row(const Facts& x, const Facts& y, DType t) {
  if (x.noisy || y.noisy || x.zero_sign || y.zero_sign) return std::nullopt;
  Facts r = x;
  r.noisy = true;
  r.grid = -1;
  r.bound = kInf;
  r.special = true;
  r.abs_err = 0;
  r.rel_err = kReal * unit_roundoff(t);
  r.least = -kInf;
  return r;
}

// float16 and bfloat16 compute in float32 and round where stored (src/plan/lower.cpp): a fused
// path may carry a result's float32 value on, where eager execution and the reference round it
// to the half. An exact result is the same everywhere; an inexact one differs by up to one
// rounding, so it is noisy (which keeps discontinuous functions, comparisons and rint, off it).
std::optional<Facts> half_rounding(std::optional<Facts> r, DType t) {
  if (!r || !is_half(t) || r->noisy || r->grid >= 0) return r;
  if (r->special) return std::nullopt;  // an unrounded value may be finite where one is inf
  r->noisy = true;
  r->abs_err = 0;
  r->rel_err = unit_roundoff(t);
  if (!(r->bound <= noisy_limit(t))) return std::nullopt;
  return r;
}

std::optional<Facts> binary(const Op& op, const std::vector<Facts>& v, DType t, const Shape& s) {
  auto fn = static_cast<BinaryFn>(op.fn);
  Facts a = arg(op.args.at(0), v), b = arg(op.args.at(1), v);
  if (graph::is_comparison(fn)) {
    if (a.noisy || b.noisy) return std::nullopt;
    return settle(exact_bool(), t, s);
  }
  if (graph::is_bitwise(fn)) {
    Facts r;
    r.bound = 2 * std::max(a.bound, b.bound) + 1;
    return settle(r, t, s);
  }
  auto ca = convert(a, t), cb = convert(b, t);
  if (!ca || !cb) return std::nullopt;
  std::optional<Facts> r;
  switch (fn) {
    case BinaryFn::Add:
    case BinaryFn::Sub:
      r = add(*ca, *cb, t, fn == BinaryFn::Sub);
      break;
    case BinaryFn::Mul:
      r = multiply(*ca, *cb, t);
      // A square (layernorm's d * d) is never negative.
      if (r && !op.args[0].is_scalar() && op.args[0].value == op.args[1].value)
        r->least = std::max(r->least, 0.0);
      break;
    case BinaryFn::Div:
      r = divide(*ca, *cb, t);
      break;
    case BinaryFn::Pow:
      r = power(*ca, *cb, t);
      break;
    case BinaryFn::Minimum:
    case BinaryFn::Maximum:
      r = extremum({*ca, *cb}, t);
      break;
    default:  // a Math row
      r = math_row(*ca, *cb, t);
  }
  bool unbounded = fn == BinaryFn::Div || fn == BinaryFn::Pow || (r && std::isinf(r->bound));
  return half_rounding(r ? settle(*r, t, s, unbounded) : std::nullopt, t);
}

// ---- unary --------------------------------------------------------------------------------

// A real libm function of x with Lipschitz constant `slope` on the range (1 for sin, cos,
// tanh): the input's error passes through, plus the function's own few ulps.
Facts lipschitz(const Facts& x, double bound, double slope, DType t) {
  Facts r = x;
  r.noisy = true;
  r.grid = -1;
  r.bound = bound;
  r.abs_err = slope * total_err(x);
  r.rel_err = kReal * unit_roundoff(t);
  return r;
}

// A complex function of x bounded by `bound` with derivative bounded by `slope`.
Facts complex_fn(const Facts& x, double bound, double slope, DType t) {
  Facts r = x;
  r.noisy = true;
  r.grid = -1;
  r.bound = bound;
  r.abs_err = kComplex * unit_roundoff(t) * bound + 2 * slope * total_err(x);
  r.rel_err = 0;
  return r;
}

// |log x| for x on the value's grid (or any positive normal or subnormal float).
double log_bound(const Facts& x) {
  // (|log| of each dtype's smallest subnormal: 2^-24, 2^-133, 2^-149, 2^-1074.)
  const DType r = real_dtype(x.dtype);
  double smallest = x.grid >= 0            ? x.grid * std::log(2.0)
                    : r == DType::Float16  ? 17.0
                    : r == DType::BFloat16 ? 93.0
                    : r == DType::Float32  ? 104.0
                                           : 746.0;
  return std::max(std::abs(std::log(std::max(modulus(x), 1e-300))), smallest);
}

std::optional<Facts> real_exp(const Facts& x, DType t) {
  // Kept clear of overflow; the input's error becomes a relative one.
  // (float16: noisy values stay below noisy_limit, 64.)
  const double top = t == DType::Float16                           ? 4
                     : t == DType::Float32 || t == DType::BFloat16 ? 80
                                                                   : 700;
  if (!(x.bound <= top) || total_err(x) > 1) return std::nullopt;
  Facts r = lipschitz(x, std::exp(x.bound), 0, t);
  r.rel_err = std::expm1(total_err(x)) + kReal * unit_roundoff(t);
  // exp(-bound), less every path's error, halved for room; far from underflow.
  // (float16's smallest normal is 2^-14: exp(-9) is above it.)
  bool positive = !x.special && x.bound + total_err(x) <= (t == DType::Float16 ? 9 : 20);
  r.least = positive ? loosen(std::exp(-x.bound - total_err(x)) * (1 - r.rel_err)) : 0;
  return r;
}

// sin, cos, tanh: bounded by 1 and 1-Lipschitz.
std::optional<Facts> real_bounded(UnaryFn fn, const Facts& x, DType t) {
  // Argument reduction of huge inputs is where libraries differ most.
  if (!(x.bound <= 1e5) || total_err(x) > 1) return std::nullopt;
  Facts r = lipschitz(x, 1, 1, t);
  // Near a zero of sin or cos only the reduced argument's last bits (relative to |x|) are left.
  if (fn != UnaryFn::Tanh) r.abs_err += 2 * unit_roundoff(t) * x.bound;
  return r;
}

std::optional<Facts> real_transcendental(UnaryFn fn, const Facts& x, DType t) {
  if (fn == UnaryFn::Exp) return real_exp(x, t);
  if (fn == UnaryFn::Gelu || fn == UnaryFn::GeluTanh) {
    // |gelu(x)| <= |x|, its slope at most 1.13 (1.129 near x = 1.42, both forms); it
    // dips to -0.17 near x = -0.75, so x's least bound does not carry over.
    Facts r = lipschitz(x, x.bound, 1.13, t);
    r.least = -0.2;
    // float64 rounds the argument of erfc or exp, whose error they magnify by up to about x^2
    // (1500 where the result underflows; kernels/scalar.cuh); float32 corrects for it.
    if (t == DType::Float64) r.rel_err *= 1 + std::min(x.bound * x.bound, 1500.0);
    return r;
  }
  if (fn == UnaryFn::Sin || fn == UnaryFn::Cos || fn == UnaryFn::Tanh)
    return real_bounded(fn, x, t);
  if (fn == UnaryFn::Sqrt && x.noisy && x.least > 0 && !x.special) {
    // Away from 0, sqrt halves the relative error of its argument (x >= least on every path).
    double e = x.rel_err + x.abs_err / x.least;
    Facts r = lipschitz(x, std::sqrt(x.bound + total_err(x)), 0, t);
    r.rel_err = e / 2 + 2 * unit_roundoff(t);
    r.least = loosen(std::sqrt(x.least));
    return r;
  }
  // sqrt, log, tan: not Lipschitz near 0 or a pole, so only of exact values.
  if (x.noisy) return std::nullopt;
  if (fn == UnaryFn::Sqrt) {
    Facts r = x;  // correctly rounded everywhere: exact
    r.bound = std::sqrt(x.bound);
    r.grid = -1;
    r.special = !(x.least >= 0);  // of a negative number
    r.least = x.least >= 0 ? loosen(std::sqrt(x.least)) : -kInf;
    return r;
  }
  if (fn == UnaryFn::Log || fn == UnaryFn::Tan) {
    Facts r = lipschitz(x, fn == UnaryFn::Log ? log_bound(x) : kInf, 0, t);
    r.special |= fn == UnaryFn::Log;
    return r;
  }
  return math_row(x, x, t);  // any other Math row
}

std::optional<Facts> complex_transcendental(UnaryFn fn, const Facts& x, DType t) {
  // kiln's device functions follow NumPy's formulas, not C99's special cases for infinities.
  if (x.special) return std::nullopt;
  if (x.zero_sign && (fn == UnaryFn::Sqrt || fn == UnaryFn::Log)) return std::nullopt;
  switch (fn) {
    case UnaryFn::Sqrt:
      if (x.noisy) return std::nullopt;  // the branch cut along the negative reals
      return complex_fn(x, std::sqrt(modulus(x)) + 1, 0, t);
    case UnaryFn::Exp:
      if (!(x.bound <= 20) || total_err(x) > 1) return std::nullopt;
      return complex_fn(x, std::exp(x.bound), std::exp(x.bound) * 2, t);
    case UnaryFn::Log: {
      if (x.noisy) return std::nullopt;
      Facts r = complex_fn(x, log_bound(x) + M_PI, 0, t);
      r.special = true;  // log 0
      return r;
    }
    case UnaryFn::Sin:
    case UnaryFn::Cos:
      if (!(x.bound <= 20) || total_err(x) > 1) return std::nullopt;
      return complex_fn(x, std::cosh(x.bound) * (1 + x.bound), std::cosh(x.bound), t);
    case UnaryFn::Tan:
    case UnaryFn::Tanh:  // poles at odd multiples of i pi / 2, far outside |z| <= 0.75 * sqrt 2
      if (!(x.bound <= 0.75)) return std::nullopt;
      return complex_fn(x, 2, 2, t);
    default:  // a complex Math row these facts know nothing about: not generated
      return std::nullopt;
  }
}

std::optional<Facts> unary(const Op& op, const std::vector<Facts>& v, DType t, const Shape& s) {
  auto fn = static_cast<UnaryFn>(op.fn);
  Facts in = arg(op.args.at(0), v);
  switch (fn) {
    case UnaryFn::Neg:
    case UnaryFn::Conj:
    case UnaryFn::Not:
      in.bound += fn == UnaryFn::Not;  // ~x is -x - 1
      return settle(in, t, s);
    case UnaryFn::Abs:
      in.zero_sign = false;
      if (!is_complex(in.dtype)) return settle(in, t, s);
      // hypot: within an ulp or two on each side, and 1-Lipschitz.
      in.abs_err = kSqrt2 * total_err(in);
      in.rel_err = kReal * unit_roundoff(t);
      in.bound = modulus(in);
      in.noisy = true;
      in.grid = -1;
      return settle(in, t, s);
    case UnaryFn::Real:
    case UnaryFn::Imag: {
      if (!is_complex(in.dtype)) return settle(fn == UnaryFn::Real ? in : Facts{}, t, s);
      in.abs_err = total_err(in);
      in.rel_err = 0;
      return settle(in, t, s);
    }
    case UnaryFn::Floor:
    case UnaryFn::Ceil:
      if (in.noisy) return std::nullopt;
      in.bound += floaty(in.dtype);
      in.grid = 0;
      return settle(in, t, s);
    default:
      break;
  }
  auto x = convert(in, t);
  if (!x) return std::nullopt;
  auto r = is_complex(t) ? complex_transcendental(fn, *x, t) : real_transcendental(fn, *x, t);
  return half_rounding(r ? settle(*r, t, s, std::isinf(r->bound)) : std::nullopt, t);
}

// ---- reductions ---------------------------------------------------------------------------

int64_t reduced_count(const Shape& in, const Op& op) {
  if (op.axes.empty()) return shape_size(in);
  int64_t n = 1;
  int nd = static_cast<int>(in.size());
  for (int a : op.axes) n *= in.at(static_cast<size_t>(a < 0 ? a + nd : a));
  return n;
}

std::optional<Facts> sum(Facts a, int64_t n, DType t, bool mean) {
  const double dn = static_cast<double>(n);
  Facts r = a;
  r.bound = times(dn, a.bound);
  r.least = std::isfinite(a.least) ? loosen(mean ? a.least : dn * a.least) : -kInf;
  if (!floaty(t)) return r;
  r.zero_sign = true;
  bool exact =
      !a.noisy && a.grid >= 0 && dn * std::ldexp(a.bound, a.grid) <= std::ldexp(1.0, mantissa(t));
  if (!exact) {
    if (!(r.bound <= noisy_limit(t))) return std::nullopt;
    // Any order: off by at most gamma_{n-1} * sum |x_i| <= gamma_{n-1} * n * bound. That a
    // priori bound (n^2 u) is what later ops inherit; check.cpp compares a sum itself within
    // gamma_{n-1} * sum |x_i| of the actual terms when the scalar reference gives them.
    r.noisy = true;
    r.grid = -1;
    r.sum_input_err = dn * total_err(a);
    r.abs_err = r.sum_input_err + gamma(dn - 1, unit_roundoff(t)) * dn * modulus(a);
    r.rel_err = 0;
  }
  if (!mean) return r;
  r.bound = a.bound;
  r.grid = -1;
  r.special |= n == 0;  // 0 / 0
  if (r.noisy) r.abs_err /= std::max(dn, 1.0), r.rel_err = unit_roundoff(t);
  return r;
}

std::optional<Facts> product(Facts a, int64_t n, DType t) {
  const double dn = static_cast<double>(n);
  Facts r = a;
  // A bound holds per component: a complex factor's modulus may be sqrt(2) times it, and the
  // product's components are bounded only by the product of the moduli ((4 - 7.25i)^231 has
  // parts of 1e212 where 8^231 is 4e208).
  r.bound = n == 0 ? 1 : std::pow(is_complex(t) ? modulus(a) : a.bound, dn);
  if (!floaty(t)) return r;
  // Complex products of infinities give NaN parts that depend on the order; a real product
  // of underflowing factors may be 0 on one path and not on another (then inf * it).
  if (a.special && (is_complex(t) || a.grid < 0)) return std::nullopt;
  double numerator = std::ldexp(a.bound, std::max(a.grid, 0));
  bool exact =
      !a.noisy && a.grid >= 0 && (numerator <= 1 || dn * std::log2(numerator) <= mantissa(t));
  r.grid = exact ? a.grid * static_cast<int>(std::min<int64_t>(n, 61)) : -1;
  if (exact) return r;
  if (!(r.bound <= noisy_limit(t))) return std::nullopt;
  double u = unit_roundoff(t), grow = std::pow(std::max(modulus(a), 1.0), std::max(dn - 1, 0.0));
  r.noisy = true;
  r.rel_err = std::expm1(dn * std::log1p((is_complex(t) ? 2 : 1) * a.rel_err + 6 * u));
  r.abs_err = times(2 * dn * a.abs_err, grow);
  return r;
}

std::optional<Facts> reduce(const Op& op, const std::vector<Facts>& v, DType t, const Shape& s) {
  auto fn = static_cast<ReduceFn>(op.fn);
  Facts in = arg(op.args.at(0), v);
  int64_t n = reduced_count(in.shape, op);
  std::optional<Facts> r;
  switch (fn) {
    case ReduceFn::Sum:
    case ReduceFn::Mean:
      if (auto a = convert(in, t)) r = sum(*a, n, t, fn == ReduceFn::Mean);
      break;
    case ReduceFn::Prod:
      if (auto a = convert(in, t)) r = product(*a, n, t);
      break;
    case ReduceFn::Max:
    case ReduceFn::Min:
      r = extremum({in}, t);
      break;
    case ReduceFn::Any:
    case ReduceFn::All:
      r = convert(in, DType::Bool);
      break;
    default:  // argmax, argmin: ties and NaNs pick the first index on every path
      if (in.noisy) return std::nullopt;
      r = Facts{};
      r->bound = static_cast<double>(n);
  }
  return r ? settle(*r, t, s) : std::nullopt;
}

// a @ swapaxes(b, -1, -2): a sum of k products a[i, l] * b[j, l]. A BLAS may fuse each product
// into its sum (FMA) on one path and round it first on another, so a product that may round is
// noisy by a unit roundoff; float16 and bfloat16 accumulate in float32 and round once, within
// what their own unit roundoff allows. Infinities and NaNs meet in orders BLASes choose freely.
std::optional<Facts> matmul(const Op& op, const std::vector<Facts>& v, DType t, const Shape& s) {
  Facts a = arg(op.args.at(0), v), b = arg(op.args.at(1), v);
  if (floaty(t) && (a.special || b.special)) return std::nullopt;
  const int64_t k = a.shape.empty() ? 1 : a.shape.back();
  auto ca = convert(a, t), cb = convert(b, t);
  if (!ca || !cb) return std::nullopt;
  auto p = multiply(*ca, *cb, t);
  if (!p) return std::nullopt;
  const bool representable =
      p->grid >= 0 && std::ldexp(p->bound, p->grid) <= std::ldexp(1.0, mantissa(t));
  if (floaty(t) && !representable && !p->noisy) {
    p->noisy = true;
    p->grid = -1;
    // A complex part, ac - bd, may cancel: a unit roundoff of either product (fused into the
    // other or not) is absolute, as in multiply() (fuzz seed 4427 on the H200: a complex128
    // product of one term 2 ulps apart, where a relative bound allowed 1.4e-15).
    if (is_complex(t))
      p->abs_err = 6 * unit_roundoff(t) * p->bound;
    else
      p->rel_err = unit_roundoff(t);
  }
  auto r = sum(*p, k, t, false);
  return half_rounding(r ? settle(*r, t, s) : std::nullopt, t);
}

// ---- FFT ------------------------------------------------------------------------------------

struct Transform {
  double terms = 1, scale = 1;
  bool identity = false;
};

Transform transform_of(const Op& op, const Shape& in) {
  auto fn = static_cast<FftFn>(op.fn);
  int nd = static_cast<int>(in.size());
  std::vector<int> axes = fft_axes(op, nd);
  Transform tr;
  tr.identity = axes.empty();
  bool c2r = fn == FftFn::Irfft || fn == FftFn::Irfftn;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t m = in.at(static_cast<size_t>(axes[i] < 0 ? axes[i] + nd : axes[i]));
    int64_t len = op.has_lengths ? op.shape.at(i) : c2r && i + 1 == axes.size() ? 2 * (m - 1) : m;
    tr.terms *= static_cast<double>(len);
  }
  bool inverse = fn == FftFn::Ifft || fn == FftFn::Ifft2 || fn == FftFn::Ifftn || c2r;
  if (op.norm % 3 == 1) tr.scale = 1 / std::sqrt(tr.terms);
  if (op.norm % 3 == 0 && inverse) tr.scale = 1 / tr.terms;
  if (op.norm % 3 == 2 && !inverse) tr.scale = 1 / tr.terms;
  return tr;
}

std::optional<Facts> fft(const Op& op, const std::vector<Facts>& v, DType t, const Shape& s) {
  Facts in = arg(op.args.at(0), v);
  Transform tr = transform_of(op, in.shape);
  auto fn = static_cast<FftFn>(op.fn);
  bool r2c = fn == FftFn::Rfft || fn == FftFn::Rfftn;
  DType read = !r2c                                              ? complex_dtype(in.dtype)
               : in.dtype == DType::Float32 || is_half(in.dtype) ? DType::Float32
                                                                 : DType::Float64;
  auto a = convert(in, read);
  if (!a) return std::nullopt;
  if (tr.identity) return settle(*a, t, s);
  // Infinities and NaNs spread through an FFT differently in FFTW and cuFFT.
  if (a->special || !std::isfinite(a->bound)) return std::nullopt;
  Facts r = *a;
  double m = modulus(*a), n = tr.terms;
  r.noisy = true;
  r.grid = -1;
  r.bound = tr.scale * 2 * n * m;
  r.abs_err =
      tr.scale * 2 * n * (kSqrt2 * total_err(*a) + kFft * unit_roundoff(t) * std::log2(2 * n) * m);
  r.rel_err = 0;
  return settle(r, t, s);
}

// x.at(positions).fn(value): each element is x's, or the value (set: the last update of its
// position, as NumPy), or one of them (min, max), or x's plus the value as many times as its
// position repeats (add): a sum of that many terms in any order, as a GPU's atomics add them.
std::optional<Facts> scatter(const Op& op, const std::vector<Facts>& v, DType t, const Shape& s) {
  auto x = convert(arg(op.args.at(0), v), t), value = convert(arg(op.args.at(1), v), t);
  if (!x || !value) return std::nullopt;
  std::optional<Facts> r;
  switch (static_cast<ScatterFn>(op.fn)) {
    case ScatterFn::Set:
      r = choice({*x, *value});
      break;
    case ScatterFn::Min:
    case ScatterFn::Max:
      r = extremum({*x, *value}, t);
      break;
    case ScatterFn::Add: {
      std::map<int64_t, int64_t> repeats;
      const int64_t rows = s.at(0);
      int64_t most = 0;
      for (int64_t p : op.positions) most = std::max(most, ++repeats[p < 0 ? p + rows : p]);
      r = sum(choice({*x, *value}), most + 1, t, false);
      break;
    }
  }
  return r ? settle(*r, t, s) : std::nullopt;
}

std::optional<Facts> elementwise_choice(const Op& op, const std::vector<Facts>& v, DType t,
                                        const Shape& s) {
  std::vector<Facts> picks;
  size_t first = op.kind == OpKind::Where ? 1 : 0;
  if (op.kind == OpKind::Where && !convert(arg(op.args.at(0), v), DType::Bool)) return std::nullopt;
  for (size_t i = first; i < op.args.size(); ++i) {
    auto c = convert(arg(op.args[i], v), t);
    if (!c) return std::nullopt;
    picks.push_back(*c);
  }
  auto r = op.kind == OpKind::Where ? std::optional<Facts>(choice(picks)) : extremum(picks, t);
  return r ? settle(*r, t, s) : std::nullopt;
}

}  // namespace

double gamma(double n, double u) {
  n = std::max(n, 0.0);
  return n * u < 0.5 ? n * u / (1 - n * u) : kInf;
}

double unit_roundoff(DType t) {
  switch (real_dtype(t)) {
    case DType::Float16:
      return 0x1p-11;
    case DType::BFloat16:
      return 0x1p-8;
    case DType::Float32:
      return 0x1p-24;
    case DType::Float64:
      return 0x1p-53;
    default:
      return 0;
  }
}

Facts input_facts(const InputSpec& s) {
  Facts f;
  f.dtype = s.dtype;
  f.shape = s.shape;
  const double n = static_cast<double>(shape_size(s.shape));
  switch (s.kind) {
    case DataKind::Small:
      f.bound = 4;
      break;
    case DataKind::Tiny:
      f.bound = 0.75, f.grid = 2;
      break;
    case DataKind::General:
      f.bound = 3, f.grid = -1;
      break;
    case DataKind::Specials:
      f.bound = 8, f.grid = 2, f.special = true;
      break;
    case DataKind::Wide:
      f.bound = max_finite(s.dtype);
      break;
    case DataKind::Random:
      f.bound = is_integer(s.dtype) ? 50 : 2, f.grid = is_integer(s.dtype) ? 0 : -1;
      break;
    case DataKind::Arange:
      f.bound = is_integer(s.dtype) ? n / 2 + 1 : n / 4 + 1, f.grid = 1;
      break;
    case DataKind::Steps:
      f.bound = 1.4 + n * 0.2, f.grid = -1;
      break;
    case DataKind::Linspace:
      f.bound = 1, f.grid = -1;
      break;
    default:  // Quarters, Full
      f.bound = 8, f.grid = 2;
  }
  if (s.dtype == DType::Bool) f.bound = 1;
  unsigned_range(f);  // Small, Random and the others draw negatives, which wrap
  fit_grid(f);
  // A half's Steps and Linspace are computed (in float32) where they are made: fused into a
  // consumer they are not rounded to the half (half_rounding).
  if (is_half(s.dtype) && f.grid < 0 &&
      (s.kind == DataKind::Steps || s.kind == DataKind::Linspace)) {
    f.noisy = true;
    f.abs_err = 0;
    f.rel_err = unit_roundoff(s.dtype);
  }
  return f;
}

std::vector<Typed> typed(const std::vector<Facts>& values) {
  std::vector<Typed> out;
  out.reserve(values.size());
  for (const Facts& f : values) out.push_back({f.dtype, f.shape});
  return out;
}

static std::optional<Facts> infer_values(const Op& op, const std::vector<Facts>& v) {
  Expectation e = expect(op, typed(v));
  if (!e.result) return std::nullopt;
  const DType t = e.result->dtype;
  const Shape& s = e.result->shape;
  switch (op.kind) {
    case OpKind::Unary:
      return unary(op, v, t, s);
    case OpKind::Binary:
      return binary(op, v, t, s);
    case OpKind::Where:
    case OpKind::Clip:
      return elementwise_choice(op, v, t, s);
    case OpKind::AsType: {
      auto c = convert(arg(op.args.at(0), v), t);
      return c ? settle(*c, t, s) : std::nullopt;
    }
    case OpKind::Reduce:
      return reduce(op, v, t, s);
    case OpKind::Fft:
      return fft(op, v, t, s);
    case OpKind::Scatter:
      return scatter(op, v, t, s);
    case OpKind::Scan: {  // every prefix is bounded as the whole axis's sum or product
      Op whole = op;
      whole.kind = OpKind::Reduce;
      whole.fn = static_cast<uint8_t>(op.fn == 0 ? ReduceFn::Sum : ReduceFn::Prod);
      return reduce(whole, v, t, s);
    }
    case OpKind::Matmul:
      return matmul(op, v, t, s);
    case OpKind::Sort: {
      // The order is discontinuous in the values: a last-bit difference between paths could
      // swap two elements (or move an argsort position anywhere), so noisy values are refused.
      Facts a = arg(op.args.at(0), v);
      if (a.noisy) return std::nullopt;
      if (op.fn == 0) {  // the same values, rearranged
        a.shape = s;
        return a;
      }
      Facts f;  // positions along the axis: integers in [0, n)
      f.dtype = t;
      f.shape = s;
      const Shape& in = a.shape;
      f.bound = static_cast<double>(
          op.axes.empty()
              ? shape_size(in)
              : in.at(static_cast<size_t>(op.axes[0] < 0 ? op.axes[0] + static_cast<int>(in.size())
                                                         : op.axes[0])));
      f.grid = 0;
      return f;
    }
    default: {  // views and Eval: the same values, rearranged
      Facts f = arg(op.args.at(0), v);
      f.shape = s;
      return f;
    }
  }
}

// Whether op's facts say how small its elements may be (the others copy their input's facts,
// so `least` must be cleared for them).
static bool knows_least(const Op& op) {
  switch (op.kind) {
    case OpKind::Unary:
      return op.fn == static_cast<uint8_t>(UnaryFn::Exp) ||
             op.fn == static_cast<uint8_t>(UnaryFn::Sqrt);
    case OpKind::Binary:
      return op.fn == static_cast<uint8_t>(BinaryFn::Add) ||
             op.fn == static_cast<uint8_t>(BinaryFn::Mul);
    case OpKind::Reduce: {
      auto fn = static_cast<ReduceFn>(op.fn);
      return fn == ReduceFn::Sum || fn == ReduceFn::Max || fn == ReduceFn::Min ||
             fn == ReduceFn::Mean;
    }
    case OpKind::Transpose:
    case OpKind::Index:
    case OpKind::Reshape:
    case OpKind::BroadcastTo:
    case OpKind::Eval:
      return true;
    default:
      return false;
  }
}

std::optional<Facts> infer(const Op& op, const std::vector<Facts>& v) {
  std::optional<Facts> r = infer_values(op, v);
  if (r) unsigned_range(*r);
  if (r && (!knows_least(op) || !is_floating(r->dtype) || r->special)) r->least = -kInf;
  return r;
}

}  // namespace kiln::fuzz
