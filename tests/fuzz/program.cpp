#include "fuzz/program.hpp"

#include <cmath>
#include <complex>
#include <cstring>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <utility>

#include "fuzz/random.hpp"

namespace kiln::fuzz {

const char* kind_name(DataKind k) {
  static constexpr const char* names[] = {"Small",    "Quarters", "Tiny",   "General",
                                          "Specials", "Wide",     "Random", "Arange",
                                          "Steps",    "Linspace", "Full"};
  return names[static_cast<int>(k)];
}

const char* kind_name(OpKind k) {
  static constexpr const char* names[] = {
      "unary",   "binary",  "where",        "clip",   "astype", "transpose",
      "index",   "reshape", "broadcast_to", "reduce", "fft",    "scan",
      "scatter", "mask",    "sort",         "matmul", "take",   "eval"};
  static_assert(std::size(names) == static_cast<size_t>(OpKind::Eval) + 1);
  return names[static_cast<int>(k)];
}

namespace {

using Rng = Random;

double uniform(Rng& rng, double lo, double hi) { return rng.uniform_real(lo, hi); }
int64_t integer(Rng& rng, int64_t lo, int64_t hi) { return rng.uniform(lo, hi); }

// One real number of a float kind (Full uses a quarter).
double real_value(DataKind k, Rng& rng) {
  switch (k) {
    case DataKind::Small:
      return static_cast<double>(integer(rng, -4, 4));
    case DataKind::Tiny:
      return static_cast<double>(integer(rng, -3, 3)) / 4;
    case DataKind::General:
      return uniform(rng, -3, 3);
    case DataKind::Specials:
      if (integer(rng, 0, 99) < 15) {
        const double specials[] = {NAN, INFINITY, -INFINITY, -0.0};
        return specials[integer(rng, 0, 3)];
      }
      [[fallthrough]];
    default:
      return static_cast<double>(integer(rng, -32, 32)) / 4;
  }
}

int64_t int_value(DataKind k, DType t, Rng& rng) {
  if (k != DataKind::Wide) return integer(rng, -4, 4);
  int bits = itemsize(t) * 8;
  int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  if (is_unsigned(t) && bits < 64) {
    lo = 0, hi = (int64_t{1} << bits) - 1;
  } else if (bits < 64) {
    lo = -(int64_t{1} << (bits - 1)), hi = (int64_t{1} << (bits - 1)) - 1;
  }                                   // (uint64's upper half: the int64 bits of negative values)
  int64_t pick = integer(rng, 0, 9);  // extremes and their neighbours are the interesting ones
  if (pick == 0) return lo;
  if (pick == 1) return hi;
  if (pick == 2) return integer(rng, -2, 2);
  return integer(rng, lo, hi);
}

// Values drawn in the host's memory, written as dtype t.
std::vector<unsigned char> draw_bytes(const InputSpec& s) {
  Rng rng(s.seed);
  const int64_t n = shape_size(s.shape);
  std::vector<unsigned char> bytes(static_cast<size_t>(n * itemsize(s.dtype)));
  visit_dtype(s.dtype, [&](auto z) {
    using T = decltype(z);
    for (int64_t i = 0; i < n; ++i) {
      T v{};
      if constexpr (std::is_same_v<T, bool>) {
        v = integer(rng, 0, 1) == 1;
      } else if constexpr (std::is_integral_v<T>) {
        v = static_cast<T>(int_value(s.kind, s.dtype, rng));
      } else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, float16> ||
                           std::is_same_v<T, bfloat16>) {
        v = static_cast<T>(real_value(s.kind, rng));  // (a half rounds, as astype would)
      } else {
        double re = real_value(s.kind, rng);
        v = T(re, real_value(s.kind, rng));
      }
      std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
    }
  });
  return bytes;
}

Scalar full_value(const InputSpec& s) {
  Rng rng(s.seed);
  if (s.dtype == DType::Bool) return integer(rng, 0, 1) == 1;
  if (is_integer(s.dtype)) return integer(rng, is_unsigned(s.dtype) ? 0 : -4, 4);  // fits
  double re = real_value(DataKind::Quarters, rng);
  if (is_complex(s.dtype)) return std::complex<double>(re, real_value(DataKind::Quarters, rng));
  return re;
}

// The creation functions made on the device itself; Random, Arange and Linspace are 1-D and
// reshaped, so they also exercise views of generated nodes.
Array generated_input(const InputSpec& s, Device d) {
  const int64_t n = shape_size(s.shape);
  switch (s.kind) {
    case DataKind::Random: {
      random::Generator g(s.seed, d);
      if (is_unsigned(s.dtype)) return g.randint(0, 100, s.shape, s.dtype);
      if (is_integer(s.dtype)) return g.randint(-50, 50, s.shape, s.dtype);
      return g.uniform(-2, 2, s.shape, s.dtype);
    }
    case DataKind::Arange:
      if (is_unsigned(s.dtype)) return arange(0, n, 1, s.dtype, d).reshape(s.shape);
      if (is_integer(s.dtype)) return arange(-(n / 2), n - n / 2, 1, s.dtype, d).reshape(s.shape);
      return arange(-0.5 * static_cast<double>(n / 2), 0.5 * static_cast<double>(n - n / 2), 0.5,
                    s.dtype, d)
          .reshape(s.shape);
    case DataKind::Steps: {
      double start = -1.1 - 0.07 * static_cast<double>(s.seed % 5);
      double step = 0.1 + 0.013 * static_cast<double>(s.seed % 7);
      double stop = start + (static_cast<double>(n) - 0.5) * step;  // n values
      return arange(start, stop, step, s.dtype, d).reshape(s.shape);
    }
    case DataKind::Linspace:
      return linspace(-1, 1, n, s.seed % 2 == 0, s.dtype, d).reshape(s.shape);
    default:
      return full(s.shape, full_value(s), s.dtype, d);
  }
}

bool is_generated(DataKind k) {
  return k == DataKind::Random || k == DataKind::Arange || k == DataKind::Steps ||
         k == DataKind::Linspace || k == DataKind::Full;
}

kiln::Operand operand(const Operand& o, const std::vector<Array>& values) {
  if (o.is_scalar()) return o.scalar;
  return values.at(static_cast<size_t>(o.value));
}

Array operator_op(BinaryFn fn, const Operand& a, const Operand& b,
                  const std::vector<Array>& values) {
  auto call = [&](auto&& f) -> Array {
    if (a.is_scalar() && b.is_scalar())
      throw Error("fuzz: an operator needs at least one array operand");
    if (a.is_scalar()) return f(a.scalar, values.at(b.value));
    if (b.is_scalar()) return f(values.at(a.value), b.scalar);
    return f(values.at(a.value), values.at(b.value));
  };
  switch (fn) {
    case BinaryFn::Add:
      return call([](const auto& x, const auto& y) { return x + y; });
    case BinaryFn::Sub:
      return call([](const auto& x, const auto& y) { return x - y; });
    case BinaryFn::Mul:
      return call([](const auto& x, const auto& y) { return x * y; });
    case BinaryFn::Div:
      return call([](const auto& x, const auto& y) { return x / y; });
    case BinaryFn::Eq:
      return call([](const auto& x, const auto& y) { return x == y; });
    case BinaryFn::Ne:
      return call([](const auto& x, const auto& y) { return x != y; });
    case BinaryFn::Lt:
      return call([](const auto& x, const auto& y) { return x < y; });
    case BinaryFn::Le:
      return call([](const auto& x, const auto& y) { return x <= y; });
    case BinaryFn::Gt:
      return call([](const auto& x, const auto& y) { return x > y; });
    case BinaryFn::Ge:
      return call([](const auto& x, const auto& y) { return x >= y; });
    case BinaryFn::And:
      return call([](const auto& x, const auto& y) { return x & y; });
    case BinaryFn::Or:
      return call([](const auto& x, const auto& y) { return x | y; });
    default:
      return call([](const auto& x, const auto& y) { return x ^ y; });
  }
}

// Every Math row of graph/op_table.hpp is a case of its own: the public function of its name.
#define KILN_FUZZ_ROW(Enum, name, cfn, form, complex, heavy) KILN_FUZZ_##form(Enum, name)
#define KILN_FUZZ_Custom(Enum, name)
#define KILN_FUZZ_Arith(Enum, name)
#define KILN_FUZZ_Compare(Enum, name)
#define KILN_FUZZ_Bitwise(Enum, name)

Array binary(const Op& op, const std::vector<Array>& v) {
  auto fn = static_cast<BinaryFn>(op.fn);
  const Operand &a = op.args.at(0), &b = op.args.at(1);
  switch (fn) {
    case BinaryFn::Pow:
      return pow(operand(a, v), operand(b, v));
    case BinaryFn::Minimum:
      return minimum(operand(a, v), operand(b, v));
    case BinaryFn::Maximum:
      return maximum(operand(a, v), operand(b, v));
#define KILN_FUZZ_Math(Enum, name) \
  case BinaryFn::Enum:             \
    return name(operand(a, v), operand(b, v));
      KILN_BINARY_OPS(KILN_FUZZ_ROW)
#undef KILN_FUZZ_Math
    default:
      return operator_op(fn, a, b, v);
  }
}

Array unary(UnaryFn fn, const Array& a) {
  switch (fn) {
    case UnaryFn::Neg:
      return -a;
    case UnaryFn::Not:
      return ~a;
    case UnaryFn::Abs:
      return abs(a);
    case UnaryFn::Floor:
      return floor(a);
    case UnaryFn::Ceil:
      return ceil(a);
    case UnaryFn::Real:
      return real(a);
    case UnaryFn::Imag:
      return imag(a);
    case UnaryFn::Conj:
      return conj(a);
    case UnaryFn::Gelu:
      return gelu(a);
    case UnaryFn::GeluTanh:
      return gelu(a, GeluApproximate::Tanh);
#define KILN_FUZZ_Math(Enum, name) \
  case UnaryFn::Enum:              \
    return name(a);
      KILN_UNARY_OPS(KILN_FUZZ_ROW)
#undef KILN_FUZZ_Math
  }
  throw Error("fuzz: unknown unary function");
}

Array reduce(const Op& op, const Array& a) {
  auto fn = static_cast<ReduceFn>(op.fn);
  if (fn == ReduceFn::ArgMax || fn == ReduceFn::ArgMin) {
    std::optional<int> axis;
    if (!op.axes.empty()) axis = op.axes[0];
    return fn == ReduceFn::ArgMax ? argmax(a, axis, op.keepdims) : argmin(a, axis, op.keepdims);
  }
  // The fuzzer's empty list means every axis, as no axes given to kiln (an empty kiln::Axes
  // would reduce none).
  AxesArg axes = op.axes.empty() ? AxesArg() : AxesArg(op.axes);
  switch (fn) {  // every other row of graph/reduce_table.hpp: kiln::name(a, axes, keepdims)
#define KILN_FUZZ_REDUCE_Acc(Enum, name) \
  case ReduceFn::Enum:                   \
    return name(a, axes, op.keepdims);
#define KILN_FUZZ_REDUCE_Index(Enum, name)
#define KILN_FUZZ_REDUCE(Enum, name, acc, result, identity) KILN_FUZZ_REDUCE_##result(Enum, name)
    KILN_REDUCE_OPS(KILN_FUZZ_REDUCE)
    default:
      throw Error(std::string("fuzz: no call for ") + graph::op_name(fn));
  }
}

const char* norm_name(uint8_t n) {
  static constexpr const char* names[] = {"backward", "ortho", "forward"};
  return names[n % 3];
}

Array fft_op(const Op& op, const Array& a) {
  auto fn = static_cast<FftFn>(op.fn);
  const char* norm = norm_name(op.norm);
  std::optional<int64_t> n;
  if (op.has_lengths && !op.shape.empty()) n = op.shape[0];
  fft::Lengths s;
  if (op.has_lengths) s = op.shape;
  fft::FftAxes axes;
  if (op.has_axes) axes = op.axes;
  int axis = op.has_axes && !op.axes.empty() ? op.axes[0] : -1;
  std::vector<int> axes2 = op.has_axes ? op.axes : std::vector<int>{-2, -1};
  switch (fn) {
    case FftFn::Fft:
      return fft::fft(a, n, axis, norm);
    case FftFn::Ifft:
      return fft::ifft(a, n, axis, norm);
    case FftFn::Fft2:
      return fft::fft2(a, s, axes2, norm);
    case FftFn::Ifft2:
      return fft::ifft2(a, s, axes2, norm);
    case FftFn::Fftn:
      return fft::fftn(a, s, axes, norm);
    case FftFn::Ifftn:
      return fft::ifftn(a, s, axes, norm);
    case FftFn::Rfft:
      return fft::rfft(a, n, axis, norm);
    case FftFn::Irfft:
      return fft::irfft(a, n, axis, norm);
    case FftFn::Rfftn:
      return fft::rfftn(a, s, axes, norm);
    default:
      return fft::irfftn(a, s, axes, norm);
  }
}

// Ops whose first argument must be an array.
const Array& first_array(const Op& op, const std::vector<Array>& v) {
  if (op.args.empty() || op.args[0].is_scalar()) throw Error("fuzz: the first operand is a scalar");
  return v.at(static_cast<size_t>(op.args[0].value));
}

}  // namespace

Array make_input(const InputSpec& s, Device d) {
  if (is_generated(s.kind)) return generated_input(s, d);
  std::vector<unsigned char> bytes = draw_bytes(s);
  return asarray(bytes.data(), s.dtype, s.shape, d);
}

bool takes_temporary(const Op& op) {
  const auto fn = static_cast<BinaryFn>(op.fn);
  return op.kind == OpKind::Binary &&
         (fn == BinaryFn::Add || fn == BinaryFn::Sub || fn == BinaryFn::Mul ||
          fn == BinaryFn::Div) &&
         op.args.size() == 2 && op.args[0].is_scalar() != op.args[1].is_scalar();
}

Array apply_op(const Op& op, std::vector<Array>& v, bool last_use) {
  if (!last_use || !takes_temporary(op)) return apply_op(op, std::as_const(v));
  const auto fn = static_cast<BinaryFn>(op.fn);
  const bool left = op.args[0].is_scalar();
  const Scalar& c = op.args[left ? 0 : 1].scalar;
  Array x = std::move(v.at(static_cast<size_t>(op.args[left ? 1 : 0].value)));
  switch (fn) {
    case BinaryFn::Add:
      return left ? c + std::move(x) : std::move(x) + c;
    case BinaryFn::Sub:
      return left ? c - std::move(x) : std::move(x) - c;
    case BinaryFn::Mul:
      return left ? c * std::move(x) : std::move(x) * c;
    default:
      return left ? c / std::move(x) : std::move(x) / c;
  }
}

bool last_use(const Program& p, size_t op) {
  const int first_value = static_cast<int>(p.inputs.size());
  for (const Operand& a : p.ops[op].args) {
    if (a.is_scalar()) continue;
    if (a.value < first_value) return false;  // an input: kept (a leaf, nothing to join)
    for (int o : p.outputs)
      if (o == a.value) return false;
    for (size_t later = op + 1; later < p.ops.size(); ++later)
      for (const Operand& b : p.ops[later].args)
        if (b.value == a.value) return false;
  }
  return true;
}

Array apply_op(const Op& op, const std::vector<Array>& v) {
  switch (op.kind) {
    case OpKind::Unary:
      return unary(static_cast<UnaryFn>(op.fn), first_array(op, v));
    case OpKind::Binary:
      return binary(op, v);
    case OpKind::Where:
      return where(first_array(op, v), operand(op.args.at(1), v), operand(op.args.at(2), v));
    case OpKind::Clip:
      return clip(first_array(op, v), operand(op.args.at(1), v), operand(op.args.at(2), v));
    case OpKind::AsType:
      return first_array(op, v).astype(op.dtype);
    case OpKind::Transpose:
      if (!op.has_axes) return first_array(op, v).T();
      return first_array(op, v).transpose(op.axes);
    case OpKind::Index:
      return first_array(op, v).index(op.index);
    case OpKind::Reshape:
      return first_array(op, v).reshape(op.shape);
    case OpKind::BroadcastTo:
      return first_array(op, v).broadcast_to(op.shape);
    case OpKind::Reduce:
      return reduce(op, first_array(op, v));
    case OpKind::Fft:
      return fft_op(op, first_array(op, v));
    case OpKind::Scan: {
      std::optional<int> axis;
      if (!op.axes.empty()) axis = op.axes[0];
      return op.fn == 0 ? cumsum(first_array(op, v), axis) : cumprod(first_array(op, v), axis);
    }
    case OpKind::Matmul: {
      const Array& b = v.at(static_cast<size_t>(op.args.at(1).value));
      return matmul(first_array(op, v), b.ndim() >= 2 ? swapaxes(b, -1, -2) : b);
    }
    case OpKind::Sort: {
      std::optional<int> axis;
      if (!op.axes.empty()) axis = op.axes[0];
      return op.fn == 0 ? sort(first_array(op, v), axis) : argsort(first_array(op, v), axis);
    }
    case OpKind::Take: {
      const Array& x = first_array(op, v);
      std::optional<int> axis;
      if (!op.axes.empty()) axis = op.axes[0];
      return take(x,
                  asarray(op.positions.data(), DType::Int64,
                          {static_cast<int64_t>(op.positions.size())}, x.device()),
                  axis, static_cast<kiln::TakeMode>(op.fn));
    }
    case OpKind::Scatter: {
      const Array& x = first_array(op, v);
      auto at = x.at(asarray(op.positions.data(), DType::Int64,
                             {static_cast<int64_t>(op.positions.size())}, x.device()));
      kiln::Operand value = operand(op.args.at(1), v);
      switch (static_cast<ScatterFn>(op.fn)) {
        case ScatterFn::Set:
          return at.set(value);
        case ScatterFn::Add:
          return at.add(value);
        case ScatterFn::Min:
          return at.min(value);
        case ScatterFn::Max:
          return at.max(value);
      }
      throw std::logic_error("fuzz: unknown scatter");
    }
    case OpKind::Mask: {
      const Array& x = first_array(op, v);
      const Shape& s = x.shape();
      Shape covered(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(mask_rank(op, s)));
      Array at = arange(0, shape_size(covered), 1, DType::Int64, x.device());
      return masked(x, ((at % op.period) == op.phase).reshape(covered));
    }
    case OpKind::Eval:
      return first_array(op, v).eval();
  }
  throw std::logic_error("fuzz: unknown op kind");
}

size_t mask_rank(const Op& op, const Shape& x) {
  return std::min(x.size(), static_cast<size_t>(op.mask_rank));
}

int64_t mask_count(const Op& op, int64_t n) {
  return n > op.phase ? (n - op.phase + op.period - 1) / op.period : 0;
}

std::vector<Array> build(const Program& p, Device d) {
  std::vector<Array> values;
  for (const auto& in : p.inputs) values.push_back(make_input(in, d));
  for (const auto& op : p.ops) values.push_back(apply_op(op, values));
  return values;
}

}  // namespace kiln::fuzz
