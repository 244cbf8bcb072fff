// kiln::Array, a cheap shared handle to a node of the lazy expression graph, and the
// NumPy-named functions that build nodes. Nothing computes until a result is needed.
#pragma once
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "kiln/device.hpp"
#include "kiln/dtype.hpp"
#include "kiln/errors.hpp"
#include "kiln/node_ref.hpp"
#include "kiln/scalar.hpp"
#include "kiln/shape.hpp"

namespace kiln {

namespace graph {
struct Node;
}

// One axis of a slice, NumPy's start:stop:step. Missing bounds mean "from the edge".
// Slice("1:-1"), Slice("::2"), Slice(":") take NumPy's text (ShapeError when it is not).
struct Slice {
  std::optional<int64_t> start, stop;
  int64_t step = 1;
  Slice() = default;
  Slice(std::optional<int64_t> start_, std::optional<int64_t> stop_, int64_t step_ = 1)
      : start(start_), stop(stop_), step(step_) {}
  Slice(const char* text);  // implicit, so a("1:-1", 0) reads as NumPy's a[1:-1, 0]
};
// NumPy's None / np.newaxis: a new axis of length 1 at that place of the result.
struct NewAxis {};
inline constexpr NewAxis newaxis{};
// NumPy's `...`: as many whole axes as the other indices leave (at most one per index).
struct Ellipsis {};
inline constexpr Ellipsis ellipsis{};
// A whole axis, NumPy's `:` (a(_, 0) is a[:, 0]).
inline const Slice _{};
// An index along one axis: an integer (drops the axis), a Slice, newaxis or ellipsis.
using Index = std::variant<int64_t, Slice, NewAxis, Ellipsis>;
// An index entry that may also be an integer or bool array (NumPy's advanced indexing, see
// Array::operator()); defined after Array.
struct IndexEntry;

class Array {
 public:
  Array() = default;  // an empty handle; using it throws kiln::Error
  explicit Array(graph::NodeRef node) : node_(std::move(node)) {}

  bool valid() const { return node_ != nullptr; }
  DType dtype() const;
  const Shape& shape() const;
  int ndim() const;
  int64_t size() const;
  int64_t nbytes() const;
  Device device() const;

  Array astype(DType t) const;
  Array reshape(Shape s) const;  // one dimension may be -1
  Array transpose() const;       // reverses the axes
  Array transpose(std::vector<int> axes) const;
  Array T() const { return transpose(); }
  Array broadcast_to(Shape s) const;
  // a.index({1, Slice(0, 10, 2)}), or a(1, "0:10:2"): integers drop their axis; missing trailing
  // axes are whole; newaxis adds one of length 1, ellipsis stands for the axes not indexed.
  Array index(std::vector<Index> idx) const;
  // a(1, "0:10:2") as index() takes it; with integer or bool arrays among the entries,
  // a(i, _, j), NumPy's advanced indexing a[i, :, j]: the arrays (and the integers beside them,
  // as 0-d arrays; a bool array as the integer arrays of its nonzero()) broadcast together,
  // and the broadcast shape takes the place of the first array's axis when the arrays are
  // next to each other, else leads the result; the other entries slice as index() does. The
  // index arrays are evaluated to check their range (ShapeError at once).
  template <class... I>
  Array operator()(I... i) const {
    if constexpr ((std::is_same_v<std::decay_t<I>, Array> || ...))
      return index_entries(i...);
    else
      return index(std::vector<Index>{Index(i)...});
  }
  // The same with the entries as a list: x.advanced_index({i, kiln::_, j}).
  Array advanced_index(const std::vector<IndexEntry>& entries) const;
  // NumPy's x[indices] with an integer array: take(*this, indices, 0) (below); with a bool
  // array, x[mask]: kiln::masked (kiln/selection.hpp), which evaluates the mask's count.
  Array index(const Array& indices) const;
  // NumPy's x[i0, i1, ...] with integer arrays on the leading axes: the arrays broadcast
  // together, and the result is their broadcast shape followed by the axes not indexed, element
  // (b..., rest...) being x[i0[b], i1[b], ..., rest...]. Negative indices count from the end; one
  // out of range throws ShapeError (the indices are evaluated to see it, at the call). One
  // gather, fused like take's.
  Array index(const std::vector<Array>& indices) const;
  // x.index({i0, i1}); also keeps x.index({}) (no index: x itself) unambiguous.
  Array index(std::initializer_list<Array> indices) const {
    return index(std::vector<Array>(indices));
  }

  // Functional update of a region, as JAX's x.at[...]: x.at(1, "2:").set(v) is a new array, x
  // with x[1, 2:] replaced by v; x is unchanged. Indices as index() takes them. See Array::At.
  class At;
  At at(std::vector<Index> idx) const;
  template <class... I>
  At at(I... i) const;
  // Updates at integer arrays, NumPy's x[i] and x[i0, i1, ...] as index(...) reads them: a
  // scatter, where a repeated index applies each of its updates (see Array::At). min and max
  // compare in the promoted dtype, as NumPy's minimum.at; add and multiply cast the value to
  // x's dtype first, where NumPy computes in the promoted dtype, so a float value x's dtype
  // cannot hold exactly may round twice (float64 2^-11 + 2^-30 added to a float16 1 gives 1,
  // NumPy 1.0009765625). A 1-d x's one index array is checked as the scatter runs: an index
  // outside [-n, n) throws ShapeError when the result is evaluated (nothing is stored); other
  // index arrays are checked here.
  At at(const Array& indices) const;
  At at(const std::vector<Array>& indices) const;
  At at(std::initializer_list<Array> indices) const;

  // Computes the value now (and caches it in the node). Returns *this.
  const Array& eval() const;
  // A host array with the same value (a planned device -> host copy for device arrays).
  Array get() const;
  // The same value on another device.
  Array to(Device d) const;
  // The value of a one-element array, converted to T with NumPy's casting; DTypeError for a
  // complex array and a real T (which would drop the imaginary part).
  template <class T>
  T item() const;
  // The elements in row-major order, converted to T.
  template <class T>
  std::vector<T> to_vector() const;
  // Address of the evaluated, contiguous (C order) data: host memory, or for a device array
  // a device pointer, ready to read (kiln's work on the device is finished when it returns).
  // Valid while this Array (or another handle to its node) lives; the memory is kiln's (or,
  // for kiln::wrap, yours) and must not be written. A view is evaluated into memory of its own.
  const void* data() const;

  const graph::NodeRef& node() const& { return node_; }
  // A temporary's node, taken from it: an operation that consumes a temporary operand leaves
  // no handle behind, so the temporary does not count as one the program holds (`(x * 3 +
  // 1).eval()` writes only its result, not x * 3 as well).
  graph::NodeRef node() && { return std::move(node_); }

 private:
  template <class... I>
  Array index_entries(I... i) const;  // operator()'s arrays: after IndexEntry is complete
  graph::NodeRef node_;
};

// Evaluates several arrays in one plan, so shared work runs once.
void eval(const std::vector<Array>& arrays);
// Plans what evaluating `arrays` together would run and compiles its kernels (through the
// kernel cache, a plan's new kernels in parallel), without running anything: a program can warm
// up at its start, as with jax's .lower().compile(). A later eval of the same structure (other
// values, same shapes and dtypes) finds the plan and kernels ready and compiles nothing. On a
// machine with no GPU the host executor compiles nothing, unless KILN_JIT_ARCH asks for it.
void compile(const std::vector<Array>& arrays);

// ---- creation --------------------------------------------------------------------------
Array asarray(const Array& a, Device d = host());  // a itself when already on d, else a copy
Array asarray(const void* data, DType t, Shape s, Device d = host());  // copies
// std::vector<bool> packs bits and has no data(): these copy it element by element.
Array asarray(const std::vector<bool>& v, Shape s, Device d = host());
inline Array asarray(const std::vector<bool>& v, Device d = host()) {
  return asarray(v, {static_cast<int64_t>(v.size())}, d);
}
template <class T>
Array asarray(const std::vector<T>& v, Device d = host()) {
  return asarray(v.data(), dtype_v<T>, {static_cast<int64_t>(v.size())}, d);
}
namespace detail {
// ShapeError unless a vector of n elements fills shape s exactly.
void check_vector_fits(size_t n, const Shape& s);
}  // namespace detail
template <class T>
Array asarray(const std::vector<T>& v, Shape s, Device d = host()) {
  detail::check_vector_fits(v.size(), s);
  return asarray(v.data(), dtype_v<T>, std::move(s), d);
}
template <class T>
Array asarray(std::initializer_list<T> v, Device d = host()) {
  return asarray(std::vector<T>(v), d);
}
Array zeros(Shape s, DType t = DType::Float64, Device d = host());
Array ones(Shape s, DType t = DType::Float64, Device d = host());
// Without a dtype, the fill value's own: bool, int64, float64 for a double, float32 for a float
// (`full({n}, 0.1f)` is float32, as asarray({0.1f})), complex128 or complex64.
Array full(Shape s, Scalar v, std::optional<DType> t = std::nullopt, Device d = host());
Array empty(Shape s, DType t = DType::Float64, Device d = host());
// NumPy's arange: int64 for integer arguments, float64 otherwise, unless t is given.
Array arange(Scalar stop);
Array arange(Scalar start, Scalar stop, Scalar step = 1, std::optional<DType> t = std::nullopt,
             Device d = host());
Array linspace(double start, double stop, int64_t num = 50, bool endpoint = true,
               DType t = DType::Float64, Device d = host());

// ---- elementwise -----------------------------------------------------------------------
// Operators and the functions up to `where` take their operands by value: a temporary
// operand is consumed (moved into the new node), so it is not a handle the program holds when
// the statement evaluates (see kiln::set_materialize_held).
Array operator-(Array a);
Array operator~(Array a);  // logical not for bool, bitwise not for integers
#define KILN_BINARY_OPERATOR(op)        \
  Array operator op(Array a, Array b);  \
  Array operator op(Array a, Scalar b); \
  Array operator op(Scalar a, Array b);
KILN_BINARY_OPERATOR(+)
KILN_BINARY_OPERATOR(-)
KILN_BINARY_OPERATOR(*)
KILN_BINARY_OPERATOR(/)
KILN_BINARY_OPERATOR(==)
KILN_BINARY_OPERATOR(!=)
KILN_BINARY_OPERATOR(<)
KILN_BINARY_OPERATOR(<=)
KILN_BINARY_OPERATOR(>)
KILN_BINARY_OPERATOR(>=)
KILN_BINARY_OPERATOR(&)
KILN_BINARY_OPERATOR(|)
KILN_BINARY_OPERATOR(^)
KILN_BINARY_OPERATOR(%)   // NumPy's remainder (mod): the sign of the divisor, as Python's %
KILN_BINARY_OPERATOR(<<)  // left_shift
KILN_BINARY_OPERATOR(>>)  // right_shift
#undef KILN_BINARY_OPERATOR

Array abs(Array a);
Array sqrt(Array a);
Array exp(Array a);
Array log(Array a);
Array sin(Array a);
Array cos(Array a);
Array tan(Array a);
Array tanh(Array a);
Array log1p(Array a);  // log(1 + x), exact for tiny x; real (float) dtypes
Array expm1(Array a);  // exp(x) - 1, exact for tiny x; real (float) dtypes
// Real (float) dtypes; integers and bool convert to float first, as the functions above.
Array log2(Array a);
Array log10(Array a);
Array exp2(Array a);  // 2 ** x
Array sinh(Array a);
Array cosh(Array a);
Array arcsin(Array a);
Array arccos(Array a);
Array arctan(Array a);
Array arcsinh(Array a);
Array arccosh(Array a);
Array arctanh(Array a);
Array rint(Array a);  // the nearest integer, ties to even; a float result, as NumPy
// How gelu computes the normal distribution function Phi: exactly, or by the tanh
// approximation (torch.nn.functional.gelu's approximate='none' and 'tanh').
enum class GeluApproximate { None, Tanh };
// x Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), or with Tanh 0.5 x (1 + tanh(sqrt(2 / pi) (x +
// 0.044715 x^3))), as torch.nn.functional.gelu. Real float dtypes only (float16 and bfloat16
// compute in float32): any other raises DTypeError, as PyTorch does. Accurate to a few ulps
// also where the result is tiny (x well below 0), where the formulas as written cancel to 0
// (kernels/scalar.cuh says how).
Array gelu(Array x, GeluApproximate approximate = GeluApproximate::None);
Array floor(Array a);
Array ceil(Array a);
Array real(Array a);
Array imag(Array a);
Array conj(Array a);
// An operand of these may be an Array or a Scalar.
using Operand = std::variant<Array, Scalar>;

// What take does with an index outside [-n, n) of an axis of length n: Raise (NumPy's default)
// throws ShapeError when the result is evaluated (the kernel that gathers checks every index it
// reads, at no extra pass; the evaluation then stores none of its results, and in eager mode
// take itself throws); Wrap takes it modulo n, Clip clamps it to [0, n). Negative indices
// count from the end in Raise mode, as NumPy's. An index that no evaluated element reads (a
// slice of take's result evaluated alone) is not read, so not checked; nor are indices whose
// range kiln knows from how they were made and finds inside [0, n) (randint(0, n), argsort
// along an axis of n, unevaluated argmax and argmin along an axis of n, an integer arange,
// flatnonzero of a mask of n elements, and unevaluated views and value-keeping casts of these):
// they cannot fail, and the gather skips the check.
enum class TakeMode { Raise, Wrap, Clip };
// NumPy's take: the elements of a at `indices` (an integer array of any shape) along axis
// (none: of the raveled a); the result's shape is a's with that axis replaced by the indices'
// shape. A gather that fuses into the kernel reading the result, as do the indices'
// expression and a's: no intermediate is written.
Array take(const Array& a, const Array& indices, std::optional<int> axis = std::nullopt,
           TakeMode mode = TakeMode::Raise);

// One entry of Array::operator()'s index: an Index, or an integer or bool array.
struct IndexEntry {
  bool is_array = false;
  Index index;  // when not is_array
  Array array;  // when is_array
  IndexEntry(const Array& a) : is_array(true), array(a) {}
  template <class T>
  requires std::is_constructible_v<Index, T> IndexEntry(T t) : index(Index(t)) {}
};

template <class... I>
Array Array::index_entries(I... i) const {
  return advanced_index(std::vector<IndexEntry>{IndexEntry(i)...});
}

// x.at(index...): each operation returns x with the region x(index...) updated, v broadcast to
// the region's shape as NumPy does. The result is one index-map node (a Remap) over x and the
// new values, so it fuses with the expression that computes v and with its readers: a Jacobi
// step u.at("1:-1", "1:-1").set((u("1:-1", "2:") + u("1:-1", ":-2") + u("2:", "1:-1") +
// u(":-2", "1:-1")) * 0.25) is one kernel writing one array. Casting: set() converts v to x's
// dtype as NumPy's x[i] = v does (unsafe: 1.5 into an integer array is 1); add, multiply, min
// and max compute op(x[i], v) with NumPy's promotion and store it only under NumPy's same_kind
// rule, as its in-place x[i] += v (a float result into an integer array raises DTypeError).
// A boolean mask update is kiln::where(mask, v, x), which fuses the same way.
//
// With integer arrays, x.at(i) or x.at({i0, i1}), the update is a scatter, as NumPy's
// x[i] = v and numpy.add.at / multiply.at / minimum.at / maximum.at: an index that repeats
// applies every one of its updates (add.at accumulates), and a set keeps the last value given
// for it, as NumPy does. The positions and values are computed (fused, like any expression)
// and written, then a library step copies x and applies the updates: on the host in order, on
// a GPU atomically in any order, so float sums and products at repeated indices may round
// differently from the host's. The values are cast to x's dtype first (the casting checks are
// the ones above). Not for complex arrays: min and max; on a GPU, multiply of complex128.
class Array::At {
 public:
  At(Array x, std::vector<Index> idx) : x_(std::move(x)), idx_(std::move(idx)) {}
  At(Array x, std::vector<Array> arrays) : x_(std::move(x)), arrays_(std::move(arrays)) {}
  Array set(const Operand& v) const;       // x[i] = v
  Array add(const Operand& v) const;       // x[i] += v
  Array multiply(const Operand& v) const;  // x[i] *= v
  Array min(const Operand& v) const;       // x[i] = minimum(x[i], v)
  Array max(const Operand& v) const;       // x[i] = maximum(x[i], v)

 private:
  Array region() const { return arrays_.empty() ? x_.index(idx_) : x_.index(arrays_); }
  Array place(const Array& value) const;
  Array combined(const Array& value, const char* what) const;
  Array scatter(const Operand& v, uint8_t op, DType result, const char* what) const;
  using Operation = Array (*)(const Array&, const Operand&);
  Array update(const Operand& v, uint8_t op, Operation f, const char* what) const;
  Array x_;
  std::vector<Index> idx_;
  std::vector<Array> arrays_;  // integer index arrays: a scatter
};

inline Array::At Array::at(std::initializer_list<Array> indices) const {
  return at(std::vector<Array>(indices));
}
template <class... I>
Array::At Array::at(I... i) const {
  return at(std::vector<Index>{Index(i)...});
}
// Integers to integer powers stay integers and wrap on overflow, as NumPy. A negative integer
// exponent: a scalar one raises DTypeError when the operation is built, as NumPy's ValueError;
// one inside an integer array cannot be seen until the kernel runs, and gives 0 for that element
// (1 for a base of 1, +-1 for -1) where NumPy raises: cast the base to a float dtype first.
Array pow(Operand a, Operand b);
Array minimum(Operand a, Operand b);  // NaN-propagating, like NumPy
Array maximum(Operand a, Operand b);
Array arctan2(Operand y, Operand x);   // the angle of (x, y), in (-pi, pi]
Array hypot(Operand a, Operand b);     // sqrt(a^2 + b^2) without overflow
Array copysign(Operand a, Operand b);  // |a| with b's sign bit; real dtypes
Array where(Array cond, Operand x, Operand y);

// ---- more of NumPy's elementwise functions (NumPy 2.3's dtype rules) ----------------------
// Integer division of NumPy and Python: floor_divide rounds the quotient down, remainder (mod,
// operator %) takes the divisor's sign, fmod the dividend's (C's %). Integer dtypes stay
// integer (bool computes in int64, where NumPy has int8); an integer division by zero gives 0,
// as NumPy's does (without its warning); complex operands throw DTypeError, as in NumPy.
Array floor_divide(const Operand& a, const Operand& b);
Array remainder(const Operand& a, const Operand& b);
Array mod(const Operand& a, const Operand& b);  // remainder
Array fmod(const Operand& a, const Operand& b);
// {floor_divide(a, b), remainder(a, b)}, computed together when evaluated together.
std::pair<Array, Array> divmod(const Operand& a, const Operand& b);
// Shifts of integers (bool computes in int64): by the width of the type or more, or by a
// negative amount, the result is 0 (-1 for a right shift of a negative number), as NumPy.
Array left_shift(const Operand& a, const Operand& b);
Array right_shift(const Operand& a, const Operand& b);
// Truth values (any dtype; nonzero is true, NaN too) combined into a bool array.
Array logical_and(const Operand& a, const Operand& b);
Array logical_or(const Operand& a, const Operand& b);
Array logical_xor(const Operand& a, const Operand& b);
Array logical_not(const Array& a);
// Bool arrays; of integer and bool arrays all false (isnan, isinf) or all true (isfinite).
// A complex number is NaN or infinite when either part is.
Array isnan(const Array& a);
Array isinf(const Array& a);
Array isfinite(const Array& a);
Array signbit(const Array& a);  // the sign bit (of -0.0 and -nan too); not for complex
Array square(const Array& a);   // a * a in a's dtype (bool: int64)
// 1 / a in a's dtype: for integers NumPy's (int)(1.0 / a), so 0 for |a| > 1 and the minimum
// integer for 0; bool throws (NumPy's result is int8, which kiln lacks).
Array reciprocal(const Array& a);
// -1, 0 or 1 (NaN stays NaN, -0.0 gives 0) in a's dtype; for complex NumPy 2's z / |z| (0 for
// 0). bool throws, as in NumPy.
Array sign(const Array& a);
Array trunc(const Array& a);  // towards zero; integers and bool unchanged, as floor and ceil
// NumPy's round (around): ties to even, at `decimals` digits after the point (before it when
// negative), computed as NumPy does (rint(a * 10^d) / 10^d), so 2.675 rounds to 2.68 at 2
// (2.675 * 100 rounds to 267.5), where Python's round gives 2.67.
// Integers stay integer (unchanged for decimals >= 0); not for complex (kiln; NumPy rounds
// each part).
Array round(const Array& a, int decimals = 0);
// NaN to `nan`, +inf to `posinf` and -inf to `neginf` (by default the dtype's largest and
// lowest finite values); each part of a complex number on its own; other dtypes unchanged.
Array nan_to_num(const Array& a, double nan = 0.0, std::optional<double> posinf = std::nullopt,
                 std::optional<double> neginf = std::nullopt);
// The argument of a complex number, arctan2(imag, real), in radians or degrees; of a real
// number arctan2(0, a) (0 or pi), as NumPy.
Array angle(const Array& z, bool deg = false);
Array degrees(const Array& a);  // a * (180 / pi), in a's float dtype; not for complex
Array radians(const Array& a);  // a * (pi / 180)
Array clip(const Array& a, const Operand& lo, const Operand& hi);

// ---- reductions ----------------------------------------------------------------------------
// Axes may be negative. No axes given (the default, or `{}`) reduces every axis; an empty list
// (`Axes{}`, NumPy's axis=()) reduces none: the values come back in the reduction's dtype.
// One axis may be a plain int: sum(x, 0); several a list: sum(x, {0, 2}).
using Axes = std::vector<int>;
class AxesArg {
 public:
  AxesArg() = default;  // none given: every axis
  AxesArg(int axis) : given_(true), axes_{axis} {}
  AxesArg(bool) = delete;  // sum(x, true) is a mistake for sum(x, {}, true), not axis 1
  AxesArg(std::initializer_list<int> axes) : given_(true), axes_(axes) {}
  AxesArg(Axes axes) : given_(true), axes_(std::move(axes)) {}
  AxesArg(std::optional<Axes> axes) : given_(axes.has_value()), axes_(axes.value_or(Axes{})) {}
  bool given() const { return given_; }
  const Axes& axes() const { return axes_; }

 private:
  bool given_ = false;
  Axes axes_;
};
Array sum(const Array& a, AxesArg axes = {}, bool keepdims = false);
Array prod(const Array& a, AxesArg axes = {}, bool keepdims = false);
Array max(const Array& a, AxesArg axes = {}, bool keepdims = false);
Array min(const Array& a, AxesArg axes = {}, bool keepdims = false);
Array mean(const Array& a, AxesArg axes = {}, bool keepdims = false);
Array any(const Array& a, AxesArg axes = {}, bool keepdims = false);
Array all(const Array& a, AxesArg axes = {}, bool keepdims = false);
// Indices into the flattened array (no axis) or along one axis, as NumPy.
Array argmax(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false);
Array argmin(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false);

// ---- comparison of whole arrays (evaluate; arrays must be on the same device) ------------
bool allclose(const Array& a, const Array& b, double rtol = 1e-5, double atol = 1e-8,
              bool equal_nan = false);
bool array_equal(const Array& a, const Array& b, bool equal_nan = false);

// NumPy's repr: "array([[1, 2],\n       [3, 4]])", summarised past 1000 elements.
std::ostream& operator<<(std::ostream& os, const Array& a);
std::string repr(const Array& a);

// ---- host <-> device copies ----------------------------------------------------------------
// Explicit (default, as CuPy): an operation mixing host and cuda arrays throws DeviceError.
// Auto: the planner inserts the copy, moving the smaller operand to the larger one's device.
enum class TransferPolicy { Explicit, Auto };
void set_transfer_policy(TransferPolicy p);
TransferPolicy get_transfer_policy();

// ---- evaluation mode ---------------------------------------------------------------------
// Lazy (default) records a graph and fuses; Eager runs every operation as its own step,
// as CuPy does. The mode is per thread; new threads start from KILN_MODE (lazy|eager).
enum class Mode { Lazy, Eager };
void set_mode(Mode m);
Mode get_mode();

// ---- what an evaluation writes ---------------------------------------------------------------
// An evaluation writes the arrays asked for, the values its later steps read, and (unless this
// is switched off) every unevaluated array below them that the program still holds a handle
// to, so that using it again reads it instead of recomputing its history (a loop that checks
// max(x) of a value it updates stays one cached plan per iteration). Off: only what is asked
// for and what the plan needs; held arrays are recomputed when used. Global; on by default.
void set_materialize_held(bool on);
bool get_materialize_held();
class EagerScope {
 public:
  EagerScope() : saved_(get_mode()) { set_mode(Mode::Eager); }
  ~EagerScope() { set_mode(saved_); }
  EagerScope(const EagerScope&) = delete;
  EagerScope& operator=(const EagerScope&) = delete;

 private:
  Mode saved_;
};

}  // namespace kiln
