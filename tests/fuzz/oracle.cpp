#include "fuzz/oracle.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace kiln::fuzz {
namespace {

// ---- the dtype tables -----------------------------------------------------------------------

// Names as the tables write them: NumPy's operators, and otherwise the op's own name (a Math
// row's lines are written by make_fuzz_fixtures.py from graph/op_table.hpp).
std::string unary_name(uint8_t fn) {
  auto f = static_cast<UnaryFn>(fn);
  return f == UnaryFn::Not ? "invert" : graph::op_name(f);
}
std::string binary_name(uint8_t fn) {
  switch (static_cast<BinaryFn>(fn)) {
    case BinaryFn::Add:
      return "+";
    case BinaryFn::Sub:
      return "-";
    case BinaryFn::Mul:
      return "*";
    case BinaryFn::Div:
      return "/";
    case BinaryFn::Pow:
      return "**";
    case BinaryFn::Eq:
      return "==";
    case BinaryFn::Ne:
      return "!=";
    case BinaryFn::Lt:
      return "<";
    case BinaryFn::Le:
      return "<=";
    case BinaryFn::Gt:
      return ">";
    case BinaryFn::Ge:
      return ">=";
    case BinaryFn::And:
      return "&";
    case BinaryFn::Or:
      return "|";
    case BinaryFn::Xor:
      return "^";
    default:
      return graph::op_name(static_cast<BinaryFn>(fn));
  }
}
constexpr const char* kFftNames[] = {"fft",   "ifft", "fft2",  "ifft2", "fftn",
                                     "ifftn", "rfft", "irfft", "rfftn", "irfftn"};
static_assert(std::size(kFftNames) == kFftCount);

std::filesystem::path data_dir() {
  if (const char* env = std::getenv("KILN_FUZZ_DATA")) return env;
  // This file's directory is tests/fuzz (CMake compiles it by its absolute path); a copy of
  // the tree elsewhere (the GPU machine) finds tests/data from the repository root.
  auto beside = std::filesystem::path(__FILE__).parent_path().parent_path() / "data";
  if (std::filesystem::exists(beside / "fuzz_dtypes.txt")) return beside;
  return "tests/data";
}

// NumPy's answer where kiln documents another (the same rules test_promotion.cpp states):
// conj of bool is the array (NumPy's is int8); conj of an int8 array is int8 on both sides.
std::string kiln_dtype(const std::string& key, std::string numpy) {
  if (key == "unary conj bool") return "bool";
  return numpy;
}

using Table = std::map<std::string, std::string>;

// Lines "WORD... RESULT": the key is every word but the last. reductions_dtypes.txt has no
// leading word: its lines become "reduce OP A".
void read_table(Table& t, const std::string& name, const std::string& prefix) {
  std::ifstream in(data_dir() / name);
  if (!in) throw std::runtime_error("fuzz oracle: cannot read " + (data_dir() / name).string());
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    auto last = line.rfind(' ');
    std::string key = prefix + line.substr(0, last), value = line.substr(last + 1);
    auto [it, added] = t.emplace(key, kiln_dtype(key, value));
    if (!added && it->second != kiln_dtype(key, value))
      throw std::runtime_error("fuzz oracle: " + name + " contradicts an earlier table: " + key);
  }
}

const Table& table() {
  static Table t;
  static std::once_flag once;
  std::call_once(once, [] {
    read_table(t, "promotion.txt", "");
    read_table(t, "reductions_dtypes.txt", "reduce ");
    read_table(t, "fuzz_dtypes.txt", "");
  });
  return t;
}

// nullopt where NumPy raises.
std::optional<DType> lookup(const std::string& key) {
  auto it = table().find(key);
  if (it == table().end()) throw std::runtime_error("fuzz oracle: no table entry for " + key);
  if (it->second == "error") return std::nullopt;
  for (DType t : kAllDTypes)
    if (it->second == dtype_name(t)) return t;
  throw std::runtime_error("fuzz oracle: unknown dtype " + it->second + " for " + key);
}

std::string name(DType t) { return dtype_name(t); }

const char* scalar_kind(const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Bool:
      return "bool";
    case Scalar::Kind::Int:
      return "int";
    case Scalar::Kind::Float:
      return "float";
    default:
      return "complex";
  }
}

// A Python scalar alone takes its kind's default dtype.
DType default_dtype(const Scalar& s) {
  switch (s.kind()) {
    case Scalar::Kind::Bool:
      return DType::Bool;
    case Scalar::Kind::Int:
      return DType::Int64;
    case Scalar::Kind::Float:
      return DType::Float64;
    default:
      return DType::Complex128;
  }
}

}  // namespace

std::optional<DType> promote(const std::vector<Operand>& args, const std::vector<Typed>& v) {
  std::optional<DType> strong;
  for (const Operand& o : args) {
    if (o.is_scalar()) continue;
    DType t = v.at(static_cast<size_t>(o.value)).dtype;
    strong = strong ? lookup("pair " + name(*strong) + " " + name(t)) : t;
    if (!strong) return std::nullopt;
  }
  if (!strong) {
    auto rank = [](const Operand& o) { return static_cast<int>(o.scalar.kind()); };
    auto top = std::max_element(args.begin(), args.end(),
                                [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
    return default_dtype(top->scalar);
  }
  for (const Operand& o : args)
    if (o.is_scalar() && strong)
      strong = lookup("weakpair " + name(*strong) + " " + scalar_kind(o.scalar));
  return strong;
}

namespace {

// ---- shapes -----------------------------------------------------------------------------------

struct Refused {
  std::string why;
};

Shape shape_of(const Operand& o, const std::vector<Typed>& v) {
  return o.is_scalar() ? Shape{} : v.at(static_cast<size_t>(o.value)).shape;
}

Shape broadcast(const std::vector<Shape>& shapes) {
  size_t n = 0;
  for (const Shape& s : shapes) n = std::max(n, s.size());
  Shape out(n, 1);
  for (const Shape& s : shapes)
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& d = out[n - s.size() + i];
      int64_t e = s[i];
      if (e != 1 && d != 1 && e != d) throw Refused{"shapes do not broadcast"};
      if (d == 1) d = e;
    }
  return out;
}

Shape broadcast_args(const Op& op, const std::vector<Typed>& v) {
  std::vector<Shape> shapes;
  for (const Operand& o : op.args) shapes.push_back(shape_of(o, v));
  return broadcast(shapes);
}

int normal_axis(int a, size_t ndim) {
  int nd = static_cast<int>(ndim);
  if (a < -nd || a >= nd) throw Refused{"axis " + std::to_string(a) + " out of range"};
  return a < 0 ? a + nd : a;
}

std::vector<int> normal_axes(const std::vector<int>& axes, size_t ndim) {
  std::vector<int> out;
  for (int a : axes) {
    int n = normal_axis(a, ndim);
    if (std::find(out.begin(), out.end(), n) != out.end()) throw Refused{"a repeated axis"};
    out.push_back(n);
  }
  return out;
}

Shape reduce_shape(const Op& op, const Shape& in) {
  auto fn = static_cast<ReduceFn>(op.fn);
  bool arg = fn == ReduceFn::ArgMax || fn == ReduceFn::ArgMin;
  std::vector<int> axes = normal_axes(op.axes, in.size());
  if (op.axes.empty())  // every axis (argmax: of the flattened array)
    for (size_t i = 0; i < in.size(); ++i) axes.push_back(static_cast<int>(i));
  Shape out;
  for (size_t i = 0; i < in.size(); ++i) {
    bool reduced = std::find(axes.begin(), axes.end(), static_cast<int>(i)) != axes.end();
    // NumPy: an empty axis has no min, max, argmax or argmin (sum and the others give identities).
    if (reduced && in[i] == 0 && (fn == ReduceFn::Max || fn == ReduceFn::Min || arg))
      throw Refused{"an empty reduction with no identity"};
    if (!reduced)
      out.push_back(in[i]);
    else if (op.keepdims)
      out.push_back(1);
  }
  if (arg && op.axes.empty() && shape_size(in) == 0) throw Refused{"argmax of an empty array"};
  return out;
}

// Python's slice.indices(d), then the slice's length.
int64_t slice_length(const Slice& s, int64_t d) {
  if (s.step == 0) throw Refused{"slice step 0"};
  auto clamp = [&](std::optional<int64_t> x, int64_t fallback, int64_t lo, int64_t hi) {
    if (!x) return fallback;
    int64_t v = *x < 0 ? *x + d : *x;
    return std::clamp(v, lo, hi);
  };
  if (s.step > 0) {
    int64_t start = clamp(s.start, 0, 0, d), stop = clamp(s.stop, d, 0, d);
    return stop > start ? (stop - start - 1) / s.step + 1 : 0;
  }
  int64_t start = clamp(s.start, d - 1, -1, d - 1), stop = clamp(s.stop, -1, -1, d - 1);
  return start > stop ? (start - stop - 1) / -s.step + 1 : 0;
}

Shape index_shape(const std::vector<Index>& index, const Shape& in) {
  if (index.size() > in.size()) throw Refused{"too many indices"};
  Shape out;
  for (size_t i = 0; i < index.size(); ++i) {
    if (const auto* k = std::get_if<int64_t>(&index[i])) {
      if (*k < -in[i] || *k >= in[i]) throw Refused{"index out of range"};
      continue;
    }
    out.push_back(slice_length(std::get<Slice>(index[i]), in[i]));
  }
  out.insert(out.end(), in.begin() + static_cast<std::ptrdiff_t>(index.size()), in.end());
  return out;
}

Shape reshape_shape(const std::vector<int64_t>& target, const Shape& in) {
  int64_t known = 1, unknown = 0;
  for (int64_t d : target) {
    if (d == -1)
      ++unknown;
    else if (d < 0)
      throw Refused{"a negative extent"};
    else
      known *= d;
  }
  Shape out(target.begin(), target.end());
  if (unknown > 1) throw Refused{"more than one -1"};
  if (unknown == 1) {
    if (known == 0 || shape_size(in) % known != 0) throw Refused{"-1 cannot be inferred"};
    *std::find(out.begin(), out.end(), -1) = shape_size(in) / known;
  }
  if (shape_size(out) != shape_size(in)) throw Refused{"a different number of elements"};
  return out;
}

Shape broadcast_to_shape(const std::vector<int64_t>& target, const Shape& in) {
  Shape t(target.begin(), target.end());
  if (in.size() > t.size()) throw Refused{"fewer dimensions than the array"};
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i] != 1 && in[i] != t[t.size() - in.size() + i]) throw Refused{"not broadcastable"};
  return t;
}

Shape transpose_shape(const Op& op, const Shape& in) {
  if (!op.has_axes) return Shape(in.rbegin(), in.rend());
  if (op.axes.size() != in.size()) throw Refused{"axes are not a permutation"};
  std::vector<int> axes = normal_axes(op.axes, in.size());
  Shape out;
  for (int a : axes) out.push_back(in[static_cast<size_t>(a)]);
  return out;
}

// numpy.fft's axes and lengths: the single-axis functions take axis -1 by default; fft2 the
// last two; fftn every axis, or the last len(s) when only s is given.
Shape fft_shape(const Op& op, const Shape& in) {
  auto fn = static_cast<FftFn>(op.fn);
  bool single = fn == FftFn::Fft || fn == FftFn::Ifft || fn == FftFn::Rfft || fn == FftFn::Irfft;
  bool two = fn == FftFn::Fft2 || fn == FftFn::Ifft2;
  bool r2c = fn == FftFn::Rfft || fn == FftFn::Rfftn,
       c2r = fn == FftFn::Irfft || fn == FftFn::Irfftn;
  if (!single && !two && !op.has_axes && op.has_lengths && op.shape.size() > in.size())
    throw Refused{"more lengths than axes"};
  std::vector<int> axes = fft_axes(op, static_cast<int>(in.size()));
  if (op.has_lengths && !single && op.shape.size() != axes.size())
    throw Refused{"lengths and axes differ in number"};
  axes = normal_axes(axes, in.size());
  if (axes.empty() && (r2c || c2r)) throw Refused{"a real transform over no axis"};
  Shape out = in;
  for (size_t i = 0; i < axes.size(); ++i) {
    bool last = i + 1 == axes.size();
    int64_t m = in[static_cast<size_t>(axes[i])];
    int64_t n = op.has_lengths ? op.shape.at(i) : c2r && last ? 2 * (m - 1) : m;
    if (n < 1) throw Refused{"a transform length below 1"};
    out[static_cast<size_t>(axes[i])] = r2c && last ? n / 2 + 1 : n;
  }
  return out;
}

// ---- dtypes -----------------------------------------------------------------------------------

std::optional<DType> binary_dtype(const Op& op, const std::vector<Typed>& v) {
  std::string fn = binary_name(op.fn);
  const Operand &a = op.args.at(0), &b = op.args.at(1);
  if (a.is_scalar() && b.is_scalar()) throw Refused{"two Python scalars"};
  if (!a.is_scalar() && !b.is_scalar())
    return lookup("binop " + fn + " " + name(v.at(static_cast<size_t>(a.value)).dtype) + " " +
                  name(v.at(static_cast<size_t>(b.value)).dtype));
  const Operand& array = a.is_scalar() ? b : a;
  const Operand& scalar = a.is_scalar() ? a : b;
  return lookup("weak " + fn + " " + name(v.at(static_cast<size_t>(array.value)).dtype) + " " +
                scalar_kind(scalar.scalar));
}

const Typed& first(const Op& op, const std::vector<Typed>& v) {
  if (op.args.empty() || op.args[0].is_scalar()) throw Refused{"the first operand is a scalar"};
  return v.at(static_cast<size_t>(op.args[0].value));
}

// NumPy's same_kind order of dtype kinds: bool < integer < float < complex.
int kind_rank(DType t) { return t == DType::Bool ? 0 : is_integer(t) ? 1 : is_complex(t) ? 3 : 2; }

// x.at(positions).fn(value): x's dtype, or Refused as NumPy refuses x[i] = v and
// add / minimum / maximum.at(x, i, v): an index out of bounds, a value that does not broadcast
// to the updated rows, a result that same_kind casting cannot store in x (a set casts any real
// value, as x[i] = v does), a complex value into a real x, or an order of complex numbers
// (kiln refuses minimum / maximum.at of complex, a documented difference).
DType scatter_dtype(const Op& op, const std::vector<Typed>& v) {
  const Typed& x = first(op, v);
  if (x.shape.empty()) throw Refused{"a 0-d array has no axis to index"};
  const int64_t rows = x.shape[0];
  for (int64_t p : op.positions)
    if (p < -rows || p >= rows) throw Refused{"index out of bounds (IndexError)"};
  const Operand& value = op.args.at(1);
  Shape target{static_cast<int64_t>(op.positions.size())};
  target.insert(target.end(), x.shape.begin() + 1, x.shape.end());
  Shape vs = shape_of(value, v);
  if (vs.size() > target.size()) throw Refused{"the value does not broadcast (ValueError)"};
  for (size_t i = 0; i < vs.size(); ++i) {
    int64_t have = vs[vs.size() - 1 - i], want = target[target.size() - 1 - i];
    if (have != want && have != 1) throw Refused{"the value does not broadcast (ValueError)"};
  }
  const auto fn = static_cast<ScatterFn>(op.fn);
  if (is_complex(x.dtype) && (fn == ScatterFn::Min || fn == ScatterFn::Max))
    throw Refused{"complex numbers have no order here"};
  DType value_t = value.is_scalar() ? default_dtype(value.scalar)
                                    : v.at(static_cast<size_t>(value.value)).dtype;
  std::optional<DType> result = promote({op.args[0], value}, v);
  // x[i] = v casts an array unsafely (a complex one with a ComplexWarning), and a Python
  // complex into a real x not at all (but into bool, by its truth).
  if (fn == ScatterFn::Set)
    result = value.is_scalar() && is_complex(value_t) && x.dtype != DType::Bool ? value_t : x.dtype;
  if (!result) throw Refused{"no loop for these dtypes (TypeError)"};
  if (kind_rank(*result) > kind_rank(x.dtype)) throw Refused{"same_kind casting (UFuncTypeError)"};
  return x.dtype;
}

// take(x, indices, axis): x's shape with that axis replaced by the indices' (1-d), or the
// indices' shape for the raveled x; Refused as NumPy refuses a bad axis or a non-empty take
// from an empty axis. (Raise mode's out-of-range indices are kiln's error at evaluation: the
// generator draws indices in range for it.)
Shape take_shape(const Op& op, const Shape& x) {
  const auto k = static_cast<int64_t>(op.positions.size());
  if (op.axes.empty()) {
    if (shape_size(x) == 0 && k > 0) throw Refused{"a non-empty take from an empty axis"};
    return {k};
  }
  const int nd = static_cast<int>(x.size());
  const int axis = op.axes[0] < 0 ? op.axes[0] + nd : op.axes[0];
  if (axis < 0 || axis >= nd) throw Refused{"axis out of bounds (AxisError)"};
  if (x[static_cast<size_t>(axis)] == 0 && k > 0)
    throw Refused{"a non-empty take from an empty axis"};
  Shape s = x;
  s[static_cast<size_t>(axis)] = k;
  return s;
}

// The shape of a @ swapaxes(b, -1, -2) for operands of 2 axes or more, or Refused.
Shape matmul_matrices(const Shape& a, const Shape& b) {
  if (a.back() != b.back()) throw Refused{"matmul: contracted axes differ (ValueError)"};
  Shape batch_a(a.begin(), a.end() - 2), batch_b(b.begin(), b.end() - 2);
  const size_t n = std::max(batch_a.size(), batch_b.size());
  Shape s(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < n - batch_a.size() ? 1 : batch_a[i - (n - batch_a.size())];
    int64_t y = i < n - batch_b.size() ? 1 : batch_b[i - (n - batch_b.size())];
    if (x != y && x != 1 && y != 1) throw Refused{"matmul: batch axes do not broadcast"};
    s[i] = x == 1 ? y : x;
  }
  s.push_back(a[a.size() - 2]);
  s.push_back(b[b.size() - 2]);
  return s;
}

// The shape of a @ swapaxes(b, -1, -2) (b itself when 1-d), or Refused. NumPy's 1-d rules: a
// 1-d a is a row (1, k) and a 1-d b a column, their axis dropped from the result (the shrinker
// makes a (4,) beside a (1, 4): fuzz seed 5853 on the H200, where the oracle refused it).
Shape matmul_shape(const Shape& a_in, const Shape& b_in) {
  if (a_in.empty() || b_in.empty()) throw Refused{"matmul: a 0-d operand (ValueError)"};
  const bool a_row = a_in.size() == 1, b_column = b_in.size() == 1;
  const Shape a = a_row ? Shape{1, a_in[0]} : a_in, b = b_column ? Shape{1, b_in[0]} : b_in;
  Shape s = matmul_matrices(a, b);
  if (a_row) s.erase(s.end() - 2);
  if (b_column) s.pop_back();
  return s;
}

// The result's dtype and shape, or Refused.
Typed typed(const Op& op, const std::vector<Typed>& v) {
  std::optional<DType> t;
  Shape s;
  switch (op.kind) {
    case OpKind::Unary:
      t = lookup("unary " + unary_name(op.fn) + " " + name(first(op, v).dtype));
      s = first(op, v).shape;
      break;
    case OpKind::Binary:
      t = binary_dtype(op, v);
      s = broadcast_args(op, v);
      break;
    case OpKind::Where:
      first(op, v);
      t = promote({op.args.at(1), op.args.at(2)}, v);
      s = broadcast_args(op, v);
      break;
    case OpKind::Clip:
      first(op, v);
      t = promote(op.args, v);
      s = broadcast_args(op, v);
      break;
    case OpKind::AsType:
      t = op.dtype;
      s = first(op, v).shape;
      break;
    case OpKind::Reduce:
      t = lookup(std::string("reduce ") + graph::op_name(static_cast<ReduceFn>(op.fn)) + " " +
                 name(first(op, v).dtype));
      s = reduce_shape(op, first(op, v).shape);
      break;
    case OpKind::Fft:
      t = lookup(std::string("fft ") + kFftNames[op.fn] + " " + name(first(op, v).dtype));
      s = fft_shape(op, first(op, v).shape);
      break;
    case OpKind::Scan: {  // NumPy's cumsum / cumprod dtypes are its sum's / prod's
      const Typed& a = first(op, v);
      t = lookup(std::string("reduce ") + (op.fn == 0 ? "sum " : "prod ") + name(a.dtype));
      s = op.axes.empty() ? Shape{shape_size(a.shape)} : a.shape;
      break;
    }
    case OpKind::Matmul: {  // a @ swapaxes(b, -1, -2); 1-d: the inner product
      const Typed& a = first(op, v);
      const Shape& b = v.at(static_cast<size_t>(op.args.at(1).value)).shape;
      if (a.shape.empty() || b.empty()) throw Refused{"matmul: an operand is 0-d (ValueError)"};
      t = promote(op.args, v);
      s = matmul_shape(a.shape, b);
      break;
    }
    case OpKind::Sort: {  // NumPy's sort / argsort(kind="stable"); 0-d with no axis: raveled
      const Typed& a = first(op, v);
      t = op.fn == 0 ? a.dtype : DType::Int64;
      s = op.axes.empty() ? Shape{shape_size(a.shape)} : a.shape;
      break;
    }
    case OpKind::Transpose:
      t = first(op, v).dtype, s = transpose_shape(op, first(op, v).shape);
      break;
    case OpKind::Index:
      t = first(op, v).dtype, s = index_shape(op.index, first(op, v).shape);
      break;
    case OpKind::Reshape:
      t = first(op, v).dtype, s = reshape_shape(op.shape, first(op, v).shape);
      break;
    case OpKind::BroadcastTo:
      t = first(op, v).dtype, s = broadcast_to_shape(op.shape, first(op, v).shape);
      break;
    case OpKind::Scatter:
      t = scatter_dtype(op, v), s = first(op, v).shape;
      break;
    case OpKind::Take:
      t = first(op, v).dtype, s = take_shape(op, first(op, v).shape);
      break;
    case OpKind::Mask: {
      const Shape& x = first(op, v).shape;
      const auto rank = static_cast<std::ptrdiff_t>(mask_rank(op, x));
      t = first(op, v).dtype, s = {mask_count(op, shape_size(Shape(x.begin(), x.begin() + rank)))};
      s.insert(s.end(), x.begin() + rank, x.end());
      break;
    }
    case OpKind::Eval:
      t = first(op, v).dtype, s = first(op, v).shape;
      break;
  }
  if (!t) throw Refused{"no loop for these dtypes (TypeError)"};
  return {*t, s};
}

// ---- describing ---------------------------------------------------------------------------------

std::string fn_name(const Op& op) {
  switch (op.kind) {
    case OpKind::Unary:
      return unary_name(op.fn);
    case OpKind::Binary:
      return binary_name(op.fn);
    case OpKind::Reduce:
      return graph::op_name(static_cast<ReduceFn>(op.fn));
    case OpKind::Fft:
      return kFftNames[op.fn];
    case OpKind::AsType:
      return std::string("astype ") + dtype_name(op.dtype);
    default:
      return kind_name(op.kind);
  }
}

}  // namespace

Expectation expect(const Op& op, const std::vector<Typed>& values) {
  try {
    return {typed(op, values), ""};
  } catch (const Refused& r) {
    return {std::nullopt, r.why};
  }
}

std::vector<int> fft_axes(const Op& op, int nd) {
  auto fn = static_cast<FftFn>(op.fn);
  if (fn == FftFn::Fft || fn == FftFn::Ifft || fn == FftFn::Rfft || fn == FftFn::Irfft)
    return {op.has_axes ? op.axes.at(0) : -1};
  if (op.has_axes) return op.axes;
  if (fn == FftFn::Fft2 || fn == FftFn::Ifft2) return {-2, -1};
  int k = op.has_lengths ? static_cast<int>(op.shape.size()) : nd;
  std::vector<int> axes;
  for (int i = nd - k; i < nd; ++i) axes.push_back(i);
  return axes;
}

std::string describe(const Op& op, const std::vector<Typed>& values) {
  std::ostringstream os;
  os << fn_name(op) << "(";
  for (size_t i = 0; i < op.args.size(); ++i) {
    const Operand& o = op.args[i];
    os << (i ? ", " : "");
    if (o.is_scalar()) {
      os << "Python " << scalar_kind(o.scalar);
      continue;
    }
    const Typed& t = values.at(static_cast<size_t>(o.value));
    os << "v" << o.value << ": " << dtype_name(t.dtype) << " " << shape_str(t.shape);
  }
  os << ")";
  if (op.kind == OpKind::Reduce || op.kind == OpKind::Fft || op.kind == OpKind::Transpose ||
      op.kind == OpKind::Scan || op.kind == OpKind::Sort) {
    os << " axes (";
    for (int a : op.axes) os << a << ",";
    os << ")" << (op.keepdims ? " keepdims" : "");
  }
  return os.str();
}

}  // namespace kiln::fuzz
