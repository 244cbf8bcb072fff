#include "fuzz/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "fuzz/oracle.hpp"

namespace kiln::fuzz {
namespace {

using C = RefElem;
using LD = long double;

// ---- dtype conversion (NumPy's casts, x86's float -> int) ----------------------------------

bool nonzero(const C& z) { return z.real() != 0 || z.imag() != 0; }  // NaN is non-zero

int bits(DType t) { return itemsize(t) * 8; }

// Integer wrap-around: the low `bits` bits, as a signed or unsigned number of dtype t.
LD wrap(uint64_t x, DType t) {
  int b = bits(t);
  uint64_t low = b == 64 ? x : x & ((uint64_t{1} << b) - 1);
  if (is_unsigned(t)) return static_cast<LD>(low);
  if (b < 64 && (low >> (b - 1)) & 1) low |= ~uint64_t{0} << b;  // sign-extend
  return static_cast<LD>(static_cast<int64_t>(low));
}

// An integer value held as a long double (exact: 64-bit significand) as its two's complement
// bits.
uint64_t to_bits(LD x) {
  return x < 0 ? static_cast<uint64_t>(static_cast<int64_t>(x)) : static_cast<uint64_t>(x);
}

// x86's truncating conversion to a signed integer of `b` bits: NaN and out of range give the
// minimum.
uint64_t truncate(LD x, int b) {
  const LD lo = -std::ldexp(LD{1}, b - 1);
  if (x >= lo && x < -lo) return static_cast<uint64_t>(static_cast<int64_t>(x));
  return static_cast<uint64_t>(static_cast<int64_t>(lo));
}

// NumPy's float to integer casts on x86 (C casts as GCC compiles them): 8- and 16-bit types
// through int32, uint32 through int64, uint64 from 2^63 up as x - 2^63 with the top bit set.
LD float_to_int(LD x, DType t) {
  int b = bits(t);
  if (b < 32 || (b == 32 && !is_unsigned(t))) return wrap(truncate(x, 32), t);
  if (b == 32 || !is_unsigned(t)) return wrap(truncate(x, 64), t);
  const LD two63 = std::ldexp(LD{1}, 63);
  if (x >= two63) return wrap(truncate(x - two63, 64) ^ (uint64_t{1} << 63), t);
  return wrap(truncate(x, 64), t);
}

// x rounded to nearest even with p significant bits, the leading one at 2^(emin) or above
// (below it, the subnormals' fixed quantum), and to infinity past `max`: IEEE's rounding to a
// binary format, by scaling (independent of kernels/half.cuh's bit manipulation).
LD round_to_format(LD x, int p, int emin, LD max) {
  if (!std::isfinite(x) || x == 0) return x;
  int e;
  std::frexp(x, &e);                              // |x| in [2^(e-1), 2^e)
  const int q = std::max(e - 1, emin) - (p - 1);  // the quantum: 2^q
  LD r = std::ldexp(std::nearbyint(std::ldexp(x, -q)), q);
  if (std::abs(r) > max) return std::copysign(std::numeric_limits<LD>::infinity(), x);
  return r;
}

C convert(const C& z, DType from, DType to) {
  if (to == DType::Bool) return nonzero(z) ? 1 : 0;
  if (is_integer(to)) {
    if (is_integer(from) || from == DType::Bool) return wrap(to_bits(z.real()), to);
    return float_to_int(z.real(), to);
  }
  const DType r = real_dtype(to);
  auto round = [&](LD x) {
    switch (r) {
      case DType::Float16:  // from the value directly, as NumPy's casts
        return round_to_format(x, 11, -14, 65504);
      case DType::BFloat16:  // through float32, as ml_dtypes (Eigen) converts
        return round_to_format(LD{static_cast<float>(x)}, 8, -126, LD{0x1.fep127});
      case DType::Float32:
        return LD{static_cast<float>(x)};
      default:
        return LD{static_cast<double>(x)};
    }
  };
  // A real value has no imaginary part, whatever sign of zero its C kept (-x of a real x).
  return {round(z.real()), is_complex(to) && is_complex(from) ? round(z.imag()) : LD{0}};
}

// ---- arithmetic in a dtype's C++ type -------------------------------------------------------

template <class T>
T load(const C& z) {
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
    return T(static_cast<typename T::value_type>(z.real()),
             static_cast<typename T::value_type>(z.imag()));
  else
    return static_cast<T>(z.real());
}
template <class T>
C store(T x) {
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
    return {LD{x.real()}, LD{x.imag()}};
  else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>)
    return static_cast<LD>(static_cast<float>(x));  // exact
  else
    return static_cast<LD>(x);
}

template <class T>
constexpr bool complex_v =
    std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

bool isnan_c(const C& z) { return std::isnan(z.real()) || std::isnan(z.imag()); }
// NumPy's order: lexicographic for complex numbers, false with a NaN anywhere.
bool less(const C& a, const C& b) {
  if (isnan_c(a) || isnan_c(b)) return false;
  return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
}
bool equal(const C& a, const C& b) { return a.real() == b.real() && a.imag() == b.imag(); }

// NaN-propagating minimum / maximum: the first NaN operand wins; ties keep the first.
C extremum(const C& a, const C& b, bool max) {
  if (isnan_c(a)) return a;
  if (isnan_c(b)) return b;
  return (max ? less(a, b) : less(b, a)) ? b : a;
}

LD int_pow(LD base, LD e, DType t) {
  if (e < 0) return base == 1 ? 1 : base == -1 ? ((to_bits(e) & 1) ? -1 : 1) : 0;
  uint64_t r = 1, b = to_bits(base);
  for (uint64_t k = to_bits(e); k; k >>= 1, b *= b)
    if (k & 1) r *= b;
  return wrap(r, t);
}

// Complex power as NumPy's npy_cpow: x ** 0 is 1, 0 ** y is 0 for real positive y, else NaN.
C complex_pow(const C& x, const C& y) {
  if (y == C(0)) return 1;
  if (x == C(0)) {
    LD nan = std::numeric_limits<LD>::quiet_NaN();
    return y.imag() == 0 && y.real() > 0 ? C(0) : C(nan, nan);
  }
  return std::pow(x, y);
}

// NumPy's complex division (Smith's method; x / 0 divides each part by |re 0| = +0).
C smith_divide(const C& a, const C& b) {
  LD ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
  if (std::fabs(br) >= std::fabs(bi)) {
    if (br == 0 && bi == 0) return {ar / std::fabs(br), ai / std::fabs(br)};
    LD rat = bi / br, scl = 1 / (br + bi * rat);
    return {(ar + ai * rat) * scl, (ai - ar * rat) * scl};
  }
  LD rat = br / bi, scl = 1 / (bi + br * rat);
  return {(ar * rat + ai) * scl, (ai * rat - ar) * scl};
}

// A complex mean's sum divided by the count as NumPy divides it by complex(n, 0): Smith's
// method in the dtype's own precision, which multiplies by 1 / n (so inf * 0 makes a part NaN).
template <class R>
C divide_by_count(const C& sum, int64_t n) {
  R re = static_cast<R>(sum.real()), im = static_cast<R>(sum.imag());
  R scl = R(1) / static_cast<R>(n);
  return C((re + im * R(0)) * scl, (im - re * R(0)) * scl);
}

// a op b, both already in dtype t (the result's dtype for arithmetic).
C arithmetic(BinaryFn fn, const C& a, const C& b, DType t) {
  // float16 and bfloat16: the operation in float32 (exact inputs), rounded once, as NumPy's
  // float16 loops compute and kiln does.
  if (is_half(t)) return convert(arithmetic(fn, a, b, DType::Float32), DType::Float32, t);
  if (fn == BinaryFn::Minimum || fn == BinaryFn::Maximum)
    return extremum(a, b, fn == BinaryFn::Maximum);
  if (t == DType::Bool) {  // NumPy: + is or, * is and
    bool x = nonzero(a), y = nonzero(b);
    return fn == BinaryFn::Mul ? x && y : x || y;
  }
  if (is_integer(t)) {
    uint64_t ux = to_bits(a.real()), uy = to_bits(b.real());
    switch (fn) {
      case BinaryFn::Add:
        return wrap(ux + uy, t);
      case BinaryFn::Sub:
        return wrap(ux - uy, t);
      case BinaryFn::Mul:
        return wrap(ux * uy, t);
      default:
        return int_pow(a.real(), b.real(), t);
    }
  }
  return visit_dtype(t, [&](auto z) -> C {
    using T = decltype(z);
    if constexpr (std::is_floating_point_v<T> || complex_v<T>) {
      T x = load<T>(a), y = load<T>(b);
      switch (fn) {
        case BinaryFn::Add:
          return store<T>(x + y);
        case BinaryFn::Sub:
          return store<T>(x - y);
        case BinaryFn::Mul:
          if constexpr (complex_v<T>)  // the textbook product, as kiln (no C99 inf recovery)
            return store<T>(T(x.real() * y.real() - x.imag() * y.imag(),
                              x.real() * y.imag() + x.imag() * y.real()));
          else
            return store<T>(x * y);
        case BinaryFn::Div:
          if constexpr (complex_v<T>)
            return convert(smith_divide(a, b), DType::Complex128, t);  // noisy: within its bound
          else
            return store<T>(x / y);
        default:
          if constexpr (complex_v<T>)
            return convert(complex_pow(a, b), DType::Complex128, t);
          else
            // In double: glibc's long double powl gets pow(-inf, -2^63) wrong (inf, not 0).
            return store<T>(
                static_cast<T>(std::pow(static_cast<double>(x), static_cast<double>(y))));
      }
    }
    return 0;
  });
}

// The Math rows of graph/op_table.hpp, each by its C function (std::cfn of long double or of
// complex<long double>): a new row has its reference without edits here.
#define KILN_REF_ROW(Enum, name, cfn, form, complex, heavy) KILN_REF_##form(Enum, cfn, complex)
#define KILN_REF_Custom(Enum, cfn, complex)
#define KILN_REF_Arith(Enum, cfn, complex)
#define KILN_REF_Compare(Enum, cfn, complex)
#define KILN_REF_Bitwise(Enum, cfn, complex)

// a fn b in dtype t; comparisons in `common`, the operands' NEP 50 result_type (a Python
// float compared with a float32 array is rounded to float32 first).
C binary(BinaryFn fn, const C& a, DType ta, const C& b, DType tb, DType t, DType common) {
  switch (fn) {
    case BinaryFn::Eq:
    case BinaryFn::Ne:
    case BinaryFn::Lt:
    case BinaryFn::Le:
    case BinaryFn::Gt:
    case BinaryFn::Ge: {
      C x = convert(a, ta, common), y = convert(b, tb, common);
      if (fn == BinaryFn::Eq) return equal(x, y);
      if (fn == BinaryFn::Ne) return !equal(x, y);
      if (fn == BinaryFn::Lt) return less(x, y);
      if (fn == BinaryFn::Le) return less(x, y) || equal(x, y);
      if (fn == BinaryFn::Gt) return less(y, x);
      return less(y, x) || equal(x, y);
    }
    case BinaryFn::And:
    case BinaryFn::Or:
    case BinaryFn::Xor: {
      uint64_t x = to_bits(convert(a, ta, t).real()), y = to_bits(convert(b, tb, t).real());
      uint64_t r = fn == BinaryFn::And ? x & y : fn == BinaryFn::Or ? x | y : x ^ y;
      return wrap(r, t);
    }
#define KILN_REF_Math(Enum, cfn, complex)                                            \
  case BinaryFn::Enum:                                                               \
    return convert(LD{std::cfn(convert(a, ta, t).real(), convert(b, tb, t).real())}, \
                   DType::Float64, t);
      KILN_BINARY_OPS(KILN_REF_ROW)
#undef KILN_REF_Math
    default:
      return arithmetic(fn, convert(a, ta, t), convert(b, tb, t), t);
  }
}

// f computed in long double (complex<long double>), rounded to t.
C transcendental(UnaryFn fn, const C& x, DType t) {
  if (is_complex(t)) {
#define KILN_REF_COMPLEX_1(Enum, cfn) \
  case UnaryFn::Enum:                 \
    return convert(std::cfn(x), DType::Complex128, t);
#define KILN_REF_COMPLEX_0(Enum, cfn)
#define KILN_REF_Math(Enum, cfn, complex) KILN_REF_COMPLEX_##complex(Enum, cfn)
    switch (fn) {
      KILN_UNARY_OPS(KILN_REF_ROW)
      default:
        throw std::logic_error(std::string("fuzz reference: no complex ") + graph::op_name(fn));
    }
#undef KILN_REF_Math
  }
  LD v = x.real();
  // gelu's formulas (kiln::gelu), in the forms that do not cancel where the result is tiny:
  // x Phi(x) = x erfc(-x / sqrt 2) / 2, and 0.5 x (1 + tanh z) = x / (1 + exp(-2z)).
  if (fn == UnaryFn::Gelu)
    return convert(LD{v * std::erfc(-v / std::sqrt(LD{2})) / 2}, DType::Float64, t);
  if (fn == UnaryFn::GeluTanh) {
    const LD w = -2 * std::sqrt(2 / LD{3.141592653589793238462643383279502884L}) *
                 (v + LD{0.044715L} * v * v * v);
    return convert(LD{v / (1 + std::exp(w))}, DType::Float64, t);
  }
  if (fn ==
      UnaryFn::Sqrt) {  // correctly rounded in t itself (via long double it would round twice)
    if (t == DType::Float32) return LD{std::sqrt(static_cast<float>(v))};
    return LD{std::sqrt(static_cast<double>(v))};
  }
#define KILN_REF_Math(Enum, cfn, complex) \
  case UnaryFn::Enum:                     \
    return convert(LD{std::cfn(v)}, DType::Float64, t);
  switch (fn) {
    KILN_UNARY_OPS(KILN_REF_ROW)
    default:
      throw std::logic_error(std::string("fuzz reference: not a Math op: ") + graph::op_name(fn));
  }
#undef KILN_REF_Math
}

C unary(UnaryFn fn, const C& x, DType from, DType t) {
  switch (fn) {
    case UnaryFn::Neg:
      if (is_integer(t)) return wrap(0 - to_bits(x.real()), t);
      return -x;
    case UnaryFn::Not:
      if (t == DType::Bool) return !nonzero(x);
      return wrap(~to_bits(x.real()), t);
    case UnaryFn::Abs:
      if (is_complex(from)) return convert(std::abs(x), DType::Float64, t);
      if (is_integer(t) && x.real() < 0) return wrap(0 - to_bits(x.real()), t);
      return C(std::fabs(x.real()), 0);
    case UnaryFn::Floor:
      return C(std::floor(x.real()), 0);
    case UnaryFn::Ceil:
      return C(std::ceil(x.real()), 0);
    case UnaryFn::Real:
      return C(x.real(), 0);
    case UnaryFn::Imag:
      return C(x.imag(), 0);
    case UnaryFn::Conj:
      return std::conj(x);
    default:
      return transcendental(fn, convert(x, from, t), t);
  }
}

// ---- shapes and element positions -------------------------------------------------------------

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

std::vector<int64_t> unravel(int64_t flat, const Shape& s) {
  std::vector<int64_t> idx(s.size());
  for (size_t k = s.size(); k-- > 0;) {
    idx[k] = s[k] ? flat % s[k] : 0;
    flat = s[k] ? flat / s[k] : 0;
  }
  return idx;
}

// The element of `from` that broadcasting puts at `to`'s position `flat`.
int64_t broadcast_source(int64_t flat, const Shape& to, const Shape& from) {
  auto idx = unravel(flat, to);
  auto st = strides_of(from);
  int64_t off = 0;
  for (size_t i = 0; i < from.size(); ++i) {
    size_t j = to.size() - from.size() + i;
    off += (from[i] == 1 ? 0 : idx[j]) * st[i];
  }
  return off;
}

const C& elem(const RefValue& a, const Shape& out, int64_t flat) {
  return a.v[static_cast<size_t>(broadcast_source(flat, out, a.shape))];
}

RefValue scalar_value(const Scalar& s) {
  RefValue r;
  switch (s.kind()) {
    case Scalar::Kind::Bool:
      r.dtype = DType::Bool;
      r.v = {C(s.as_bool() ? 1 : 0)};
      break;
    case Scalar::Kind::Int:
      r.dtype = DType::Int64;
      r.v = {C(static_cast<LD>(s.as_int()))};
      break;
    case Scalar::Kind::Float:
      r.dtype = DType::Float64;
      r.v = {C(s.as_complex().real())};
      break;
    default:
      r.dtype = DType::Complex128;
      r.v = {C(s.as_complex().real(), s.as_complex().imag())};
  }
  return r;
}

RefValue operand(const Operand& o, const std::vector<RefValue>& v) {
  return o.is_scalar() ? scalar_value(o.scalar) : v.at(static_cast<size_t>(o.value));
}

// ---- ops --------------------------------------------------------------------------------------

void elementwise(const Op& op, const std::vector<RefValue>& v, const std::vector<Typed>& types,
                 RefValue& r) {
  std::vector<RefValue> in;
  for (const Operand& o : op.args) in.push_back(operand(o, v));
  DType common = op.kind == OpKind::Binary ? promote(op.args, types).value_or(r.dtype) : r.dtype;
  const int64_t n = shape_size(r.shape);
  r.v.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    auto x = [&](size_t k) { return elem(in[k], r.shape, i); };
    C& out = r.v[static_cast<size_t>(i)];
    switch (op.kind) {
      case OpKind::Unary:
        out = unary(static_cast<UnaryFn>(op.fn), x(0), in[0].dtype, r.dtype);
        break;
      case OpKind::Binary:
        out = binary(static_cast<BinaryFn>(op.fn), x(0), in[0].dtype, x(1), in[1].dtype, r.dtype,
                     common);
        break;
      case OpKind::Where:
        out = convert(nonzero(x(0)) ? x(1) : x(2), nonzero(x(0)) ? in[1].dtype : in[2].dtype,
                      r.dtype);
        break;
      case OpKind::Clip: {  // NumPy 2: minimum(maximum(a, lo), hi)
        C a = convert(x(0), in[0].dtype, r.dtype), lo = convert(x(1), in[1].dtype, r.dtype),
          hi = convert(x(2), in[2].dtype, r.dtype);
        out = extremum(extremum(a, lo, true), hi, false);
        break;
      }
      default:  // AsType
        out = convert(x(0), in[0].dtype, r.dtype);
    }
  }
}

// x with the updates applied in the order of the positions, as NumPy's x[i] = v (the last one
// of a repeated position wins) and add / minimum / maximum.at (each one applies): the update in
// the dtype NumPy's promotion of x with v gives, stored back in x's.
void scatter(const Op& op, const std::vector<RefValue>& v, const std::vector<Typed>& types,
             RefValue& r) {
  const RefValue& x = v.at(static_cast<size_t>(op.args.at(0).value));
  const RefValue value = operand(op.args.at(1), v);
  const auto fn = static_cast<ScatterFn>(op.fn);
  const DType common =
      fn == ScatterFn::Set ? r.dtype : promote({op.args[0], op.args[1]}, types).value_or(r.dtype);
  const int64_t rows = x.shape.at(0), width = rows ? shape_size(x.shape) / rows : 0;
  Shape target{static_cast<int64_t>(op.positions.size())};
  target.insert(target.end(), x.shape.begin() + 1, x.shape.end());
  r.v = x.v;
  for (size_t k = 0; k < op.positions.size(); ++k) {
    const int64_t p = op.positions[k], row = p < 0 ? p + rows : p;
    for (int64_t j = 0; j < width; ++j) {
      const C& u = elem(value, target, static_cast<int64_t>(k) * width + j);
      C& out = r.v[static_cast<size_t>(row * width + j)];
      if (fn == ScatterFn::Set) {
        out = convert(u, value.dtype, r.dtype);
      } else if (fn == ScatterFn::Add) {
        out = convert(binary(BinaryFn::Add, out, r.dtype, u, value.dtype, common, common), common,
                      r.dtype);
      } else {
        C a = convert(out, r.dtype, common), b = convert(u, value.dtype, common);
        out = convert(extremum(a, b, fn == ScatterFn::Max), common, r.dtype);
      }
    }
  }
}

// x's blocks (the elements under one position of the mask's axes) where the mask is true, in
// C order.
void mask(const Op& op, const RefValue& x, RefValue& r) {
  const auto rank = static_cast<std::ptrdiff_t>(mask_rank(op, x.shape));
  const int64_t n = shape_size(Shape(x.shape.begin(), x.shape.begin() + rank));
  const int64_t block = n ? shape_size(x.shape) / n : 0;
  r.v.clear();
  for (int64_t i = op.phase; i < n; i += op.period)
    r.v.insert(r.v.end(), x.v.begin() + i * block, x.v.begin() + (i + 1) * block);
}

// The input position of each output element of a view.
// take's element at output position idx: NumPy's modes (raise: a negative index counts from the
// end; wrap: modulo the length; clip: clamped to [0, length - 1], negatives to 0).
int64_t take_source(const Op& op, const Shape& a, const std::vector<int64_t>& idx) {
  const int nd = static_cast<int>(a.size());
  const int axis = op.axes.empty() ? -1 : op.axes[0] < 0 ? op.axes[0] + nd : op.axes[0];
  const int64_t len = axis < 0 ? shape_size(a) : a[static_cast<size_t>(axis)];
  const int64_t j = idx.at(axis < 0 ? 0 : static_cast<size_t>(axis));
  int64_t p = op.positions.at(static_cast<size_t>(j));
  if (op.fn == 1)
    p = ((p % len) + len) % len;
  else if (op.fn == 2)
    p = std::clamp<int64_t>(p, 0, len - 1);
  else if (p < 0)
    p += len;
  if (axis < 0) return p;
  std::vector<int64_t> at = idx;
  at[static_cast<size_t>(axis)] = p;
  const auto st = strides_of(a);
  int64_t src = 0;
  for (int k = 0; k < nd; ++k) src += at[static_cast<size_t>(k)] * st[static_cast<size_t>(k)];
  return src;
}

void view(const Op& op, const RefValue& a, RefValue& r) {
  const int64_t n = shape_size(r.shape);
  const int nd = static_cast<int>(a.shape.size());
  auto st = strides_of(a.shape);
  r.v.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t src = i;
    auto idx = unravel(i, r.shape);
    if (op.kind == OpKind::Transpose) {
      src = 0;
      for (int k = 0; k < nd; ++k) {
        int axis = op.has_axes ? op.axes[static_cast<size_t>(k)] : nd - 1 - k;
        if (axis < 0) axis += nd;
        src += idx[static_cast<size_t>(k)] * st[static_cast<size_t>(axis)];
      }
    } else if (op.kind == OpKind::Index) {
      src = 0;
      size_t out_axis = 0;
      for (size_t k = 0; k < a.shape.size(); ++k) {
        int64_t d = a.shape[k], pos;
        if (k >= op.index.size()) {
          pos = idx[out_axis++];
        } else if (const auto* j = std::get_if<int64_t>(&op.index[k])) {
          pos = *j < 0 ? *j + d : *j;
        } else {
          const Slice& s = std::get<Slice>(op.index[k]);
          int64_t start;
          if (!s.start)
            start = s.step > 0 ? 0 : d - 1;
          else
            start = *s.start < 0 ? std::max<int64_t>(*s.start + d, s.step > 0 ? 0 : -1)
                                 : std::min<int64_t>(*s.start, s.step > 0 ? d : d - 1);
          pos = start + idx[out_axis++] * s.step;
        }
        src += pos * st[k];
      }
    } else if (op.kind == OpKind::BroadcastTo) {
      src = broadcast_source(i, r.shape, a.shape);
    } else if (op.kind == OpKind::Take) {
      src = take_source(op, a.shape, idx);
    }  // Reshape, Eval: the same order
    r.v[static_cast<size_t>(i)] = a.v.at(static_cast<size_t>(src));
  }
}

void reduce(const Op& op, const RefValue& a, RefValue& r) {
  auto fn = static_cast<ReduceFn>(op.fn);
  const int nd = static_cast<int>(a.shape.size());
  std::vector<bool> reduced(static_cast<size_t>(nd), op.axes.empty());
  for (int ax : op.axes) reduced[static_cast<size_t>(ax < 0 ? ax + nd : ax)] = true;
  // Output position (keepdims or not) of every input element, in input order.
  Shape kept;
  for (int k = 0; k < nd; ++k)
    kept.push_back(reduced[static_cast<size_t>(k)] ? 1 : a.shape[static_cast<size_t>(k)]);
  auto kst = strides_of(kept);
  const int64_t out_n = shape_size(kept), in_n = shape_size(a.shape);
  const int64_t terms = out_n ? in_n / std::max<int64_t>(out_n, 1) : 0;
  bool sums = fn == ReduceFn::Sum || fn == ReduceFn::Mean || fn == ReduceFn::Prod;
  // Sums and products in the result dtype (integers wrap in int64 or uint64); long double for
  // floats.
  DType work = fn == ReduceFn::Mean ? r.dtype : sums ? r.dtype : a.dtype;
  std::vector<C> acc(static_cast<size_t>(out_n),
                     fn == ReduceFn::Prod || fn == ReduceFn::All ? 1 : 0);
  std::vector<int64_t> count(static_cast<size_t>(out_n), 0), arg(static_cast<size_t>(out_n), 0);
  std::vector<long double> mag(static_cast<size_t>(out_n), 0);
  std::vector<bool> seen(static_cast<size_t>(out_n), false);
  for (int64_t i = 0; i < in_n; ++i) {
    auto idx = unravel(i, a.shape);
    int64_t o = 0;
    for (int k = 0; k < nd; ++k)
      if (!reduced[static_cast<size_t>(k)])
        o += idx[static_cast<size_t>(k)] * kst[static_cast<size_t>(k)];
    auto u = static_cast<size_t>(o);
    const C& x = a.v[static_cast<size_t>(i)];
    int64_t position = count[u]++;
    switch (fn) {
      case ReduceFn::Sum:
      case ReduceFn::Mean: {
        C y = convert(x, a.dtype, work);
        if (is_integer(work) || work == DType::Bool)
          acc[u] = arithmetic(BinaryFn::Add, acc[u], y, is_integer(work) ? work : DType::Int64);
        else
          acc[u] += y, mag[u] += std::fabs(y.real()) + std::fabs(y.imag());
        break;
      }
      case ReduceFn::Prod: {
        C y = convert(x, a.dtype, work);
        if (is_integer(work) || work == DType::Bool)
          acc[u] = arithmetic(BinaryFn::Mul, acc[u], y, is_integer(work) ? work : DType::Int64);
        else
          acc[u] = is_complex(work) ? acc[u] * y : C(acc[u].real() * y.real());
        break;
      }
      case ReduceFn::Max:
      case ReduceFn::Min:
        acc[u] = seen[u] ? extremum(acc[u], x, fn == ReduceFn::Max) : x;
        break;
      case ReduceFn::Any:
        acc[u] = nonzero(acc[u]) || nonzero(x);
        break;
      case ReduceFn::All:
        acc[u] = nonzero(acc[u]) && nonzero(x);
        break;
      default: {  // argmax / argmin: the first extremum; the first NaN wins
        bool better =
            !seen[u] ||
            (!isnan_c(acc[u]) &&
             (isnan_c(x) || (fn == ReduceFn::ArgMax ? less(acc[u], x) : less(x, acc[u]))));
        if (better) acc[u] = x, arg[u] = position;
      }
    }
    seen[u] = true;
  }
  r.v.resize(static_cast<size_t>(out_n));
  for (size_t u = 0; u < acc.size(); ++u) {
    if (fn == ReduceFn::ArgMax || fn == ReduceFn::ArgMin) {
      r.v[u] = static_cast<LD>(arg[u]);
    } else if (fn == ReduceFn::Mean && is_complex(r.dtype)) {
      C sum = convert(acc[u], DType::Complex128, r.dtype);
      r.v[u] = real_dtype(r.dtype) == DType::Float32 ? divide_by_count<float>(sum, terms)
                                                     : divide_by_count<double>(sum, terms);
    } else if (fn == ReduceFn::Mean) {
      r.v[u] = convert(acc[u].real() / static_cast<LD>(terms), DType::Float64, r.dtype);
    } else {
      r.v[u] = convert(acc[u], is_complex(work) ? DType::Complex128 : work, r.dtype);
    }
  }
  if (fn == ReduceFn::Sum || fn == ReduceFn::Mean) {
    r.terms = terms;
    if (is_floating(r.dtype) || is_complex(r.dtype)) r.magnitude = mag;
  }
}

}  // namespace

bool has_reference(const Program& p) {
  for (const Op& op : p.ops)
    if (op.kind == OpKind::Fft || op.kind == OpKind::Scan || op.kind == OpKind::Sort ||
        op.kind == OpKind::Matmul)
      return false;
  return true;
}

std::optional<std::vector<RefValue>> reference(const Program& p) {
  if (!has_reference(p)) return std::nullopt;
  std::vector<RefValue> v;
  std::vector<Typed> types;
  for (const InputSpec& in : p.inputs) {
    Array a = make_input(in, host()).get();  // the inputs are data, made on the host
    RefValue r;
    r.dtype = a.dtype(), r.shape = a.shape();
    visit_dtype(r.dtype, [&](auto z) {
      using T = decltype(z);
      for (T x : a.to_vector<T>()) r.v.push_back(store<T>(x));
    });
    types.push_back({r.dtype, r.shape});
    v.push_back(std::move(r));
  }
  for (const Op& op : p.ops) {
    Expectation e = expect(op, types);
    if (!e.result) return std::nullopt;
    RefValue r;
    r.dtype = e.result->dtype, r.shape = e.result->shape;
    switch (op.kind) {
      case OpKind::Unary:
      case OpKind::Binary:
      case OpKind::Where:
      case OpKind::Clip:
      case OpKind::AsType:
        elementwise(op, v, types, r);
        break;
      case OpKind::Reduce:
        reduce(op, v.at(static_cast<size_t>(op.args[0].value)), r);
        break;
      case OpKind::Fft:
        return std::nullopt;
      case OpKind::Scatter:
        scatter(op, v, types, r);
        break;
      case OpKind::Mask:
        mask(op, v.at(static_cast<size_t>(op.args[0].value)), r);
        break;
      default:
        view(op, v.at(static_cast<size_t>(op.args[0].value)), r);
    }
    types.push_back({r.dtype, r.shape});
    v.push_back(std::move(r));
  }
  return v;
}

}  // namespace kiln::fuzz
