// Programs as C++ a developer can paste into a regression test.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "fuzz/program.hpp"

namespace kiln::fuzz {
namespace {

std::string number(double v) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "-INFINITY";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";  // a double literal, -0.0 kept
  return s;
}

std::string integer(int64_t v) {
  if (v == std::numeric_limits<int64_t>::min()) return "INT64_MIN";
  if (v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max())
    return std::to_string(v);
  return "int64_t{" + std::to_string(v) + "}";
}

std::string scalar(const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Bool:
      return s.as_bool() ? "true" : "false";
    case Scalar::Kind::Int:
      return integer(s.as_int());
    case Scalar::Kind::Float:
      return number(s.as_double());
    default:
      return "std::complex<double>(" + number(s.as_complex().real()) + ", " +
             number(s.as_complex().imag()) + ")";
  }
}

std::string name(int value) {
  std::string s = "v";  // not "v" + ...: GCC 12 warns falsely about that (bug 105329)
  return s += std::to_string(value);
}

std::string operand(const Operand& o) { return o.is_scalar() ? scalar(o.scalar) : name(o.value); }

template <class T>
std::string list(const std::vector<T>& v) {
  std::string out = "{";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "}";
}

std::string dtype(DType t) {
  static constexpr const char* names[] = {
      "Bool",  "Int32", "Int64",  "Float32", "Float64", "Complex64", "Complex128", "Int8",
      "Int16", "UInt8", "UInt16", "UInt32",  "UInt64",  "Float16",   "BFloat16"};
  static_assert(std::size(names) == std::size(kAllDTypes), "a name for every dtype");
  return std::string("kiln::DType::") + names[static_cast<int>(t)];
}

std::string slice_bound(const std::optional<int64_t>& b) {
  return b ? integer(*b) : std::string("std::nullopt");
}

std::string index(const std::vector<Index>& idx) {
  std::string out = "{";
  for (size_t i = 0; i < idx.size(); ++i) {
    out += i ? ", " : "";
    if (auto* k = std::get_if<int64_t>(&idx[i])) {
      out += "int64_t{" + std::to_string(*k) + "}";
    } else {
      const Slice& s = std::get<Slice>(idx[i]);
      out += "kiln::Slice(" + slice_bound(s.start) + ", " + slice_bound(s.stop) + ", " +
             std::to_string(s.step) + ")";
    }
  }
  return out + "}";
}

// The call of a unary function: an operator or kiln::<name>, the name of its table row (Math
// rows, NumPy's names) or of the function that implements a Custom row.
std::string unary_call(UnaryFn fn) {
  switch (fn) {
    case UnaryFn::Neg:
      return "-";
    case UnaryFn::Not:
      return "~";
    default:
      return std::string("kiln::") + graph::op_name(fn);
  }
}

std::string binary(const Op& op) {
  auto fn = static_cast<BinaryFn>(op.fn);
  std::string a = operand(op.args.at(0)), b = operand(op.args.at(1));
  switch (fn) {
    case BinaryFn::Add:
      return a + " + " + b;
    case BinaryFn::Sub:
      return a + " - " + b;
    case BinaryFn::Mul:
      return a + " * " + b;
    case BinaryFn::Div:
      return a + " / " + b;
    case BinaryFn::Eq:
      return a + " == " + b;
    case BinaryFn::Ne:
      return a + " != " + b;
    case BinaryFn::Lt:
      return a + " < " + b;
    case BinaryFn::Le:
      return a + " <= " + b;
    case BinaryFn::Gt:
      return a + " > " + b;
    case BinaryFn::Ge:
      return a + " >= " + b;
    case BinaryFn::And:
      return a + " & " + b;
    case BinaryFn::Or:
      return a + " | " + b;
    case BinaryFn::Xor:
      return a + " ^ " + b;
    default:  // pow, minimum, maximum and every Math row: kiln::<name>
      return std::string("kiln::") + graph::op_name(fn) + "(" + a + ", " + b + ")";
  }
}

std::string reduce(const Op& op) {
  auto fn = static_cast<ReduceFn>(op.fn);
  std::string call =
      std::string("kiln::") + graph::op_name(fn) + "(" + operand(op.args.at(0)) + ", ";
  std::string keep = op.keepdims ? "true" : "false";
  if (fn != ReduceFn::ArgMax && fn != ReduceFn::ArgMin)
    return call + list(op.axes) + ", " + keep + ")";
  std::string axis = op.axes.empty() ? "std::nullopt" : std::to_string(op.axes[0]);
  return call + axis + ", " + keep + ")";
}

std::string fft(const Op& op) {
  static constexpr const char* names[] = {"fft",   "ifft", "fft2",  "ifft2", "fftn",
                                          "ifftn", "rfft", "irfft", "rfftn", "irfftn"};
  static constexpr const char* norms[] = {"\"backward\"", "\"ortho\"", "\"forward\""};
  auto fn = static_cast<FftFn>(op.fn);
  std::string call = std::string("kiln::fft::") + names[op.fn] + "(" + operand(op.args.at(0));
  std::string norm = norms[op.norm % 3];
  if (fn == FftFn::Fft || fn == FftFn::Ifft || fn == FftFn::Rfft || fn == FftFn::Irfft) {
    std::string n = op.has_lengths ? "int64_t{" + std::to_string(op.shape.at(0)) + "}"
                                   : std::string("std::nullopt");
    std::string axis = op.has_axes ? std::to_string(op.axes.at(0)) : "-1";
    return call + ", " + n + ", " + axis + ", " + norm + ")";
  }
  std::string s = op.has_lengths ? "std::vector<int64_t>" + list(op.shape) : "std::nullopt";
  std::string axes;
  if (fn == FftFn::Fft2 || fn == FftFn::Ifft2)
    axes = op.has_axes ? "std::vector<int>" + list(op.axes) : "std::vector<int>{-2, -1}";
  else
    axes = op.has_axes ? "std::vector<int>" + list(op.axes) : "std::nullopt";
  return call + ", " + s + ", " + axes + ", " + norm + ")";
}

// The literal values of a drawn input: NumPy-free and exact.
template <class T>
std::string literal_values(const Array& a) {
  std::ostringstream os;
  auto v = a.to_vector<T>();
  for (size_t i = 0; i < v.size(); ++i) {
    os << (i ? ", " : "");
    if constexpr (std::is_same_v<T, bool>)
      os << (v[i] ? 1 : 0);
    else if constexpr (std::is_unsigned_v<T>)
      os << std::to_string(v[i]) << "u";
    else if constexpr (std::is_integral_v<T>)
      os << integer(v[i]);
    else if constexpr (std::is_floating_point_v<T>)
      os << number(v[i]);
    else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>)
      os << number(static_cast<float>(v[i]));  // exact: a half's value is a float's
    else
      os << "{" << number(v[i].real()) << ", " << number(v[i].imag()) << "}";
  }
  return os.str();
}

std::string literal_input(const InputSpec& s) {
  Array a = make_input(s, host());
  std::string shape = "kiln::Shape" + list(s.shape);
  return visit_dtype(s.dtype, [&](auto z) -> std::string {
    using T = decltype(z);
    if constexpr (std::is_same_v<T, bool>)
      return "kiln::asarray(std::vector<int32_t>{" + literal_values<T>(a) + "}, " + shape +
             ", dev).astype(kiln::DType::Bool)";
    if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>)
      return "kiln::asarray(std::vector<float>{" + literal_values<T>(a) + "}, " + shape +
             ", dev).astype(" + dtype(s.dtype) + ")";
    std::string type = std::is_same_v<T, int32_t>               ? "int32_t"
                       : std::is_same_v<T, int64_t>             ? "int64_t"
                       : std::is_same_v<T, int8_t>              ? "int8_t"
                       : std::is_same_v<T, int16_t>             ? "int16_t"
                       : std::is_same_v<T, uint8_t>             ? "uint8_t"
                       : std::is_same_v<T, uint16_t>            ? "uint16_t"
                       : std::is_same_v<T, uint32_t>            ? "uint32_t"
                       : std::is_same_v<T, uint64_t>            ? "uint64_t"
                       : std::is_same_v<T, float>               ? "float"
                       : std::is_same_v<T, double>              ? "double"
                       : std::is_same_v<T, std::complex<float>> ? "std::complex<float>"
                                                                : "std::complex<double>";
    return "kiln::asarray(std::vector<" + type + ">{" + literal_values<T>(a) + "}, " + shape +
           ", dev)";
  });
}

std::string input(const InputSpec& s) {
  std::string shape = list(s.shape), t = dtype(s.dtype);
  std::string n = std::to_string(shape_size(s.shape));
  switch (s.kind) {
    case DataKind::Random:
      return "kiln::random::Generator(" + std::to_string(s.seed) + "u, dev)." +
             (is_integer(s.dtype) ? "randint(-50, 50, " : "uniform(-2, 2, ") + shape + ", " + t +
             ")";
    case DataKind::Arange:
    case DataKind::Steps:
    case DataKind::Linspace:
    case DataKind::Full:
      return "kiln::fuzz::make_input({" + t + ", " + shape +
             ", kiln::fuzz::DataKind::" + kind_name(s.kind) + ", " + std::to_string(s.seed) +
             "u}, dev)";
    default:
      break;
  }
  if (shape_size(s.shape) <= 256) return literal_input(s);
  return "kiln::fuzz::make_input({" + t + ", " + shape +
         ", kiln::fuzz::DataKind::" + kind_name(s.kind) + ", " + std::to_string(s.seed) +
         "u}, dev)";
}

}  // namespace

std::string op_to_cpp(const Op& op) {
  std::string a = op.args.empty() ? "" : operand(op.args[0]);
  switch (op.kind) {
    case OpKind::Unary: {
      if (static_cast<UnaryFn>(op.fn) == UnaryFn::GeluTanh)
        return "kiln::gelu(" + a + ", kiln::GeluApproximate::Tanh)";
      std::string call = unary_call(static_cast<UnaryFn>(op.fn));
      return call.size() == 1 ? call + a : call + "(" + a + ")";  // an operator, or a function
    }
    case OpKind::Binary:
      return binary(op);
    case OpKind::Where:
    case OpKind::Clip:
      return std::string(op.kind == OpKind::Where ? "kiln::where(" : "kiln::clip(") + a + ", " +
             operand(op.args.at(1)) + ", " + operand(op.args.at(2)) + ")";
    case OpKind::AsType:
      return a + ".astype(" + dtype(op.dtype) + ")";
    case OpKind::Transpose:
      return op.has_axes ? a + ".transpose(" + list(op.axes) + ")" : a + ".T()";
    case OpKind::Index:
      return a + ".index(" + index(op.index) + ")";
    case OpKind::Reshape:
      return a + ".reshape(" + list(op.shape) + ")";
    case OpKind::BroadcastTo:
      return a + ".broadcast_to(" + list(op.shape) + ")";
    case OpKind::Reduce:
      return reduce(op);
    case OpKind::Fft:
      return fft(op);
    case OpKind::Scan:
      return std::string(op.fn == 0 ? "kiln::cumsum(" : "kiln::cumprod(") + a +
             (op.axes.empty() ? "" : ", " + std::to_string(op.axes[0])) + ")";
    case OpKind::Matmul: {
      const std::string b = "v" + std::to_string(op.args.at(1).value);
      return "kiln::matmul(" + a + ", " + b + ".ndim() >= 2 ? kiln::swapaxes(" + b +
             ", -1, -2) : " + b + ")";
    }
    case OpKind::Sort:
      return std::string(op.fn == 0 ? "kiln::sort(" : "kiln::argsort(") + a + ", " +
             (op.axes.empty() ? std::string("std::nullopt") : std::to_string(op.axes[0])) + ")";
    case OpKind::Take: {
      static constexpr const char* modes[] = {"Raise", "Wrap", "Clip"};
      return "kiln::take(" + a + ", kiln::asarray(std::vector<int64_t>" + list(op.positions) +
             "), " + (op.axes.empty() ? std::string("std::nullopt") : std::to_string(op.axes[0])) +
             ", kiln::TakeMode::" + modes[op.fn] + ")";
    }
    case OpKind::Scatter: {
      static constexpr const char* calls[] = {".set(", ".add(", ".min(", ".max("};
      return a + ".at(kiln::asarray(std::vector<int64_t>" + list(op.positions) + "))" +
             calls[op.fn] + operand(op.args.at(1)) + ")";
    }
    case OpKind::Mask: {
      const std::string covered = "kiln::Shape(" + a + ".shape().begin(), " + a +
                                  ".shape().begin() + std::min<size_t>(" +
                                  std::to_string(op.mask_rank) + ", " + a + ".ndim()))";
      return "kiln::masked(" + a + ", (kiln::arange(0, kiln::shape_size(" + covered +
             "), 1, kiln::DType::Int64, " + a + ".device()) % " + std::to_string(op.period) +
             " == " + std::to_string(op.phase) + ").reshape(" + covered + "))";
    }
    case OpKind::Eval:
      return a + ".eval()";
  }
  return "?";
}

std::string to_cpp(const Program& p) {
  std::ostringstream os;
  os << "kiln::Device dev = kiln::host();  // kiln::cuda() for the GPU paths; a kiln::EagerScope "
        "for eager\n";
  int v = 0;
  for (const auto& in : p.inputs) os << "kiln::Array " << name(v++) << " = " << input(in) << ";\n";
  for (size_t i = 0; i < p.ops.size(); ++i) {
    std::string line = op_to_cpp(p.ops[i]);
    if (last_use(p, i) && takes_temporary(p.ops[i])) {  // as the runner builds it (apply_op)
      const std::string array = name(p.ops[i].args[p.ops[i].args[0].is_scalar() ? 1 : 0].value);
      line.replace(line.find(array), array.size(), "std::move(" + array + ")");
    }
    os << "kiln::Array " << name(v++) << " = " << line << ";\n";
  }
  os << "kiln::eval({";
  for (size_t i = 0; i < p.outputs.size(); ++i) os << (i ? ", " : "") << name(p.outputs[i]);
  os << "});\n";
  return os.str();
}

}  // namespace kiln::fuzz
