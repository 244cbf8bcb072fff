// Elementwise operations: NumPy's dtype rules decide the compute dtype, the builder inserts
// the casts and broadcasts, so every graph operation sees operands of one dtype and shape.
#include <array>
#include <initializer_list>

#include "api/build.hpp"
#include "api/promotion.hpp"
#include "graph/shape.hpp"

namespace kiln {

using api::NodeRef;
using graph::BinaryOp;
using graph::UnaryOp;

namespace {

struct Resolved {
  NodeRef a, b;
};

DType operand_dtype(const Operand& o, const Operand& other) {
  if (auto* arr = std::get_if<Array>(&o)) return api::node_of(*arr).dtype;
  const Scalar& s = std::get<Scalar>(o);
  if (auto* arr = std::get_if<Array>(&other)) return api::weak_result(api::node_of(*arr).dtype, s);
  return promote_types(api::default_dtype(s), api::default_dtype(std::get<Scalar>(other)));
}

// The operands (at most three: where's) as nodes of their dtypes on a common device, the arrays
// broadcast to the common shape. A scalar operand (of where, or of a binary operation of two
// scalars: binary_op keeps one beside an array in the node) stays a rank-0 Scalar node, not
// broadcast: lowering reads it as a kernel parameter wherever it appears, so a broadcast node
// would add nothing but building time. Building an operation is on every program's path, so
// this allocates nothing beyond the nodes it makes: fixed arrays, and the common shape is an
// operand's own unless they differ.
struct Aligned {
  std::array<NodeRef, 3> n;
  NodeRef& operator[](size_t i) { return n[i]; }
  const Shape& shape() const { return own_shape ? *own_shape : common; }

  const Shape* own_shape = nullptr;  // an operand's shape, when it is the common one
  Shape common;                      // otherwise
};

Aligned align(std::initializer_list<Operand*> ops, std::initializer_list<DType> dtypes,
              const char* what) {
  std::array<const graph::Node*, 3> arrays{};
  size_t count = 0;
  for (Operand* o : ops)
    if (auto* arr = std::get_if<Array>(o)) arrays[count++] = &api::node_of(*arr);
  Aligned out;
  static const Shape kScalarShape{};
  out.own_shape = count ? &arrays[0]->shape : &kScalarShape;
  for (size_t i = 1; i < count; ++i)
    if (arrays[i]->shape != out.shape()) {
      out.common = graph::broadcast_shapes(out.shape(), arrays[i]->shape);
      out.own_shape = nullptr;
    }
  Device d = api::common_device({arrays.data(), count}, what);
  auto t = dtypes.begin();
  size_t i = 0;
  for (Operand* o : ops) {
    if (auto* arr = std::get_if<Array>(o)) {
      // Taken from the operand (the callers' own copies), so a temporary leaves no handle.
      NodeRef n = api::ref_of(std::move(*arr));
      // (The common shape is most often this operand's own: no need to compare then.)
      bool as_is = n->device == d && n->dtype == *t &&
                   (&n->shape == &out.shape() || n->shape == out.shape());
      out.n[i++] =
          as_is ? std::move(n) : api::broadcast(api::cast(api::copy_to(n, d), *t), out.shape());
    } else {
      const Scalar& s = std::get<Scalar>(*o);
      api::check_fits(s, *t, what);
      out.n[i++] = api::scalar(s, *t, d);
    }
    ++t;
  }
  return out;
}

DType binary_compute_dtype(BinaryOp op, graph::BinaryForm form, DType t) {
  if (form == graph::BinaryForm::Math) {
    if (!graph::takes_complex(op)) api::check_real(graph::op_name(op), t);
    return float_dtype(t);
  }
  const char* sym = op == BinaryOp::Sub ? "-" : "";
  if (op == BinaryOp::Sub && t == DType::Bool)
    throw DTypeError(std::string("subtract (") + sym +
                     ") is not supported for bool arrays; use ^ (xor) or cast with astype");
  if (op == BinaryOp::Div && is_integer_or_bool(t)) return DType::Float64;
  bool division = op == BinaryOp::FloorDivide || op == BinaryOp::Remainder || op == BinaryOp::Fmod;
  if (division) api::check_real(graph::op_name(op), t);
  bool shift = op == BinaryOp::LeftShift || op == BinaryOp::RightShift;
  if (form == graph::BinaryForm::Bitwise && !is_integer_or_bool(t))
    throw DTypeError(std::string("bitwise ") + graph::op_name(op) + " needs bool or integer " +
                     "operands, got " + dtype_name(t) + "; compare first (a > 0) or use astype");
  // NumPy computes these of bools in int8.
  if ((op == BinaryOp::Pow || division || shift) && t == DType::Bool) return DType::Int8;
  if ((op == BinaryOp::Lt || op == BinaryOp::Le || op == BinaryOp::Gt || op == BinaryOp::Ge ||
       op == BinaryOp::Minimum || op == BinaryOp::Maximum) &&
      is_complex(t))
    return t;  // ordered lexicographically, as NumPy does
  return t;
}

// The dtype `op` computes in for operands of dtypes ta and tb (a constant's already weak beside
// an array), refused where NumPy refuses it. `right` is the right operand when it is a constant.
DType compute_dtype(BinaryOp op, graph::BinaryForm form, DType ta, DType tb, const Scalar* right) {
  // A Math op runs NumPy's first loop both operands cast to safely: for two integers each
  // one's float, then the wider (arctan2 of int16 and uint16 is float32, not the float64 of
  // their int32); beside a float, their promotion (int8 with bfloat16 runs bfloat16's loop,
  // to which int8 casts safely, where float16's and bfloat16's floats would meet in float32).
  if (form == graph::BinaryForm::Math && is_integer_or_bool(ta) && is_integer_or_bool(tb))
    ta = float_dtype(ta), tb = float_dtype(tb);
  DType compute = binary_compute_dtype(op, form, promote_types(ta, tb));
  if (op == BinaryOp::Pow && is_integer(compute) && right && right->kind() == Scalar::Kind::Int &&
      right->as_int() < 0)
    throw DTypeError(
        "pow: integers to negative integer powers are not allowed; cast the base "
        "to a float dtype first");
  return compute;
}

// The dtype `op` of an array of dtype tx and the constant s computes in, checked as NumPy
// checks it (compute_dtype, check_fits).
DType scalar_compute_dtype(BinaryOp op, graph::BinaryForm form, DType tx, const Scalar& s,
                           bool left) {
  // A float32 or float64 array and a real constant: the array's dtype, whatever the operation
  // (a weak constant takes it, nothing is refused, no integer rule applies), except a bitwise
  // one, refused below. Most operations a program builds, so answered without the rules.
  if ((tx == DType::Float32 || tx == DType::Float64) && s.kind() != Scalar::Kind::Complex &&
      form != graph::BinaryForm::Bitwise)
    return tx;
  const DType ts = api::weak_result(tx, s);
  const DType compute =
      compute_dtype(op, form, left ? ts : tx, left ? tx : ts, left ? nullptr : &s);
  api::check_fits(s, compute, graph::op_name(op));
  return compute;
}

// An integer array compared with an integer its dtype cannot hold (u8 < -1, i8 == 300): every
// element lies on one side of it, so the answer is the same everywhere, as NumPy 2 gives it
// (where arithmetic with such a constant is refused).
Array beyond_range_comparison(BinaryOp op, const Array& x, const Scalar& s, bool left) {
  const bool above = s.as_int() > 0;  // else below (a uint64 array's negative constant too)
  // x op s, for every x; with s on the left, s op x is x op' s with op' mirrored.
  const bool less = above != left;  // whether x is on the smaller side of the comparison
  const bool value = op == BinaryOp::Ne                           ? true
                     : op == BinaryOp::Eq                         ? false
                     : (op == BinaryOp::Lt || op == BinaryOp::Le) ? less
                                                                  : !less;
  return full(x.shape(), value, DType::Bool, x.device());
}

// One array and one constant (x * 2, 1 - x), the usual case: the constant is the node's
// immediate. Built directly, without the operand variants and the general alignment: this runs
// for most operations a program builds. `left`: the constant is the left operand.
Array binary_scalar_op(BinaryOp op, Array x, const Scalar& s, bool left) {
  const graph::BinaryForm form = graph::form_of(op);
  const DType tx = api::node_of(x).dtype;
  if (form == graph::BinaryForm::Compare && !api::fits(s, tx))
    return beyond_range_comparison(op, x, s, left);
  const DType compute = scalar_compute_dtype(op, form, tx, s, left);
  const DType out = form == graph::BinaryForm::Compare ? DType::Bool : compute;
  NodeRef n = api::ref_of(std::move(x));
  if (n->dtype != compute) {  // (align's cast; the device and the shape are the array's own)
    NodeRef cast = api::cast(n, compute);
    n = std::move(cast);
  } else if (out == compute) {
    // A temporary with a constant step of its own (x * 2 in x * 2 + 1) takes this one into
    // the same node (an Affine one) when both are + - * /.
    if (NodeRef fused = graph::fuse_constant_step(n, op, s, left))
      return api::finish(std::move(fused));
  }
  return api::finish(api::binary(op, std::move(n), s, left, out));
}

// Takes its operands by value (as the public functions do): a temporary is consumed.
Array binary_op(BinaryOp op, Operand a, Operand b) {
  const bool left = std::holds_alternative<Scalar>(a);
  if (left != std::holds_alternative<Scalar>(b))
    return left ? binary_scalar_op(op, std::get<Array>(std::move(b)), std::get<Scalar>(a), true)
                : binary_scalar_op(op, std::get<Array>(std::move(a)), std::get<Scalar>(b), false);
  // Looked up once: this runs for every operation a program builds.
  const graph::BinaryForm form = graph::form_of(op);
  const char* name = graph::op_name(op);
  DType compute =
      compute_dtype(op, form, operand_dtype(a, b), operand_dtype(b, a), std::get_if<Scalar>(&b));
  DType out = form == graph::BinaryForm::Compare ? DType::Bool : compute;
  auto n = align({&a, &b}, {compute, compute}, name);
  return api::finish(api::binary(op, std::move(n[0]), std::move(n[1]), out, n.shape()));
}

Array unary_op(UnaryOp op, Array a, DType compute, DType out) {
  return api::finish(api::unary(op, api::cast(api::ref_of(std::move(a)), compute), out));
}

// A Math op (graph/op_table.hpp): float dtypes as they are, bool and integers as NumPy's
// float_dtype, complex where the op takes it.
Array math_op(UnaryOp op, Array a) {
  DType t = float_dtype(api::node_of(a).dtype);
  if (!graph::takes_complex(op)) api::check_real(graph::op_name(op), t);
  return unary_op(op, std::move(a), t, t);
}

}  // namespace

#define KILN_DEFINE_BINARY(sym, OP)                                \
  Array operator sym(Array a, Array b) {                           \
    return binary_op(BinaryOp::OP, std::move(a), std::move(b));    \
  }                                                                \
  Array operator sym(Array a, Scalar b) {                          \
    return binary_scalar_op(BinaryOp::OP, std::move(a), b, false); \
  }                                                                \
  Array operator sym(Scalar a, Array b) {                          \
    return binary_scalar_op(BinaryOp::OP, std::move(b), a, true);  \
  }
KILN_DEFINE_BINARY(+, Add)
KILN_DEFINE_BINARY(-, Sub)
KILN_DEFINE_BINARY(*, Mul)
KILN_DEFINE_BINARY(/, Div)
KILN_DEFINE_BINARY(==, Eq)
KILN_DEFINE_BINARY(!=, Ne)
KILN_DEFINE_BINARY(<, Lt)
KILN_DEFINE_BINARY(<=, Le)
KILN_DEFINE_BINARY(>, Gt)
KILN_DEFINE_BINARY(>=, Ge)
KILN_DEFINE_BINARY(&, And)
KILN_DEFINE_BINARY(|, Or)
KILN_DEFINE_BINARY(^, Xor)
KILN_DEFINE_BINARY(%, Remainder)
KILN_DEFINE_BINARY(<<, LeftShift)
KILN_DEFINE_BINARY(>>, RightShift)
#undef KILN_DEFINE_BINARY

Array pow(Operand a, Operand b) { return binary_op(BinaryOp::Pow, std::move(a), std::move(b)); }
Array minimum(Operand a, Operand b) {
  return binary_op(BinaryOp::Minimum, std::move(a), std::move(b));
}
Array maximum(Operand a, Operand b) {
  return binary_op(BinaryOp::Maximum, std::move(a), std::move(b));
}
Array floor_divide(const Operand& a, const Operand& b) {
  return binary_op(BinaryOp::FloorDivide, a, b);
}
Array remainder(const Operand& a, const Operand& b) { return binary_op(BinaryOp::Remainder, a, b); }
Array mod(const Operand& a, const Operand& b) { return remainder(a, b); }
Array fmod(const Operand& a, const Operand& b) { return binary_op(BinaryOp::Fmod, a, b); }
std::pair<Array, Array> divmod(const Operand& a, const Operand& b) {
  return {floor_divide(a, b), remainder(a, b)};
}
Array left_shift(const Operand& a, const Operand& b) {
  return binary_op(BinaryOp::LeftShift, a, b);
}
Array right_shift(const Operand& a, const Operand& b) {
  return binary_op(BinaryOp::RightShift, a, b);
}

Array operator-(Array a) {
  DType t = api::node_of(a).dtype;
  if (t == DType::Bool)
    throw DTypeError("negative (-) is not supported for bool arrays; use ~ (logical not)");
  return unary_op(UnaryOp::Neg, std::move(a), t, t);
}

Array operator~(Array a) {
  DType t = api::node_of(a).dtype;
  if (t != DType::Bool && !is_integer(t))
    throw DTypeError(std::string("~ needs a bool or integer array, got ") + dtype_name(t));
  return unary_op(UnaryOp::Not, std::move(a), t, t);
}

Array abs(Array a) {
  DType t = api::node_of(a).dtype;
  return unary_op(UnaryOp::Abs, std::move(a), t, real_dtype(t));
}
// Every Math row of graph/op_table.hpp is a public function of its name.
#define KILN_PUBLIC_UNARY_Custom(Enum, name)
#define KILN_PUBLIC_UNARY_Math(Enum, name) \
  Array name(Array a) { return math_op(UnaryOp::Enum, std::move(a)); }
#define KILN_PUBLIC_UNARY(Enum, name, cfn, form, complex, heavy) \
  KILN_PUBLIC_UNARY_##form(Enum, name)
KILN_UNARY_OPS(KILN_PUBLIC_UNARY)
#define KILN_PUBLIC_BINARY_Arith(Enum, name)
#define KILN_PUBLIC_BINARY_Compare(Enum, name)
#define KILN_PUBLIC_BINARY_Bitwise(Enum, name)
#define KILN_PUBLIC_BINARY_Math(Enum, name) \
  Array name(Operand a, Operand b) { return binary_op(BinaryOp::Enum, std::move(a), std::move(b)); }
#define KILN_PUBLIC_BINARY(Enum, name, cfn, form, complex, heavy) \
  KILN_PUBLIC_BINARY_##form(Enum, name)
KILN_BINARY_OPS(KILN_PUBLIC_BINARY)

namespace {
// floor and ceil keep integer and bool dtypes unchanged (NumPy >= 2.3): the identity.
Array rounding(UnaryOp op, Array a) {
  DType t = api::node_of(a).dtype;
  api::check_real(graph::op_name(op), t);
  return is_floating(t) ? unary_op(op, std::move(a), t, t) : a;
}
}  // namespace

Array gelu(Array x, GeluApproximate approximate) {
  const DType t = api::node_of(x).dtype;
  if (!is_floating(t))
    throw DTypeError(std::string("gelu needs a float array (float16, bfloat16, float32 or "
                                 "float64), got ") +
                     dtype_name(t) + ", as torch.nn.functional.gelu; cast it first: " +
                     "x.astype(kiln::DType::Float32)");
  const UnaryOp op = approximate == GeluApproximate::Tanh ? UnaryOp::GeluTanh : UnaryOp::Gelu;
  return unary_op(op, std::move(x), t, t);
}

Array floor(Array a) { return rounding(UnaryOp::Floor, std::move(a)); }
Array ceil(Array a) { return rounding(UnaryOp::Ceil, std::move(a)); }
// Towards zero: ceil below zero, floor elsewhere (-0.0 and NaN stay as they are), in the one
// kernel that reads a.
Array trunc(const Array& a) {
  api::check_real("trunc", a.dtype());
  return is_floating(a.dtype()) ? where(a < 0, ceil(a), floor(a)) : a;
}

namespace {
// An operand's truth value (nonzero, NaN included), as logical_and and friends take it.
Operand truth(const Operand& o) {
  if (auto* s = std::get_if<Scalar>(&o)) return Scalar(s->as_bool());
  const Array& a = std::get<Array>(o);
  return a.dtype() == DType::Bool ? a : a.astype(DType::Bool);
}
}  // namespace

Array logical_and(const Operand& a, const Operand& b) {
  return binary_op(BinaryOp::And, truth(a), truth(b));
}
Array logical_or(const Operand& a, const Operand& b) {
  return binary_op(BinaryOp::Or, truth(a), truth(b));
}
Array logical_xor(const Operand& a, const Operand& b) {
  return binary_op(BinaryOp::Xor, truth(a), truth(b));
}
Array logical_not(const Array& a) { return ~std::get<Array>(truth(a)); }

Array real(Array a) {
  DType t = api::node_of(a).dtype;
  return is_complex(t) ? unary_op(UnaryOp::Real, std::move(a), t, real_dtype(t)) : a;
}
Array imag(Array a) {
  DType t = api::node_of(a).dtype;
  if (is_complex(t)) return unary_op(UnaryOp::Imag, std::move(a), t, real_dtype(t));
  return zeros(a.shape(), t, a.device());
}
Array conj(Array a) {
  DType t = api::node_of(a).dtype;
  return is_complex(t) ? unary_op(UnaryOp::Conj, std::move(a), t, t) : a;
}

Array where(Array cond, Operand x, Operand y) {
  DType t = promote_types(operand_dtype(x, y), operand_dtype(y, x));
  Operand c = std::move(cond);
  auto n = align({&c, &x, &y}, {DType::Bool, t, t}, "where");
  graph::NodeSpec s{graph::OpKind::Where, 0, t, n.shape(), n[0]->device, {n[0], n[1], n[2]}};
  return api::finish(graph::make_node(std::move(s)));
}

// NumPy 2's clip takes its dtype from the three operands at once (the arrays promoted together,
// then each weak scalar), not pair by pair as minimum(maximum(a, lo), hi) alone would:
// clip(bool array, 0, int32 array) is int32, not int64.
Array clip(const Array& a, const Operand& lo, const Operand& hi) {
  DType t = api::node_of(a).dtype;
  for (const Operand* o : {&lo, &hi})
    if (auto* arr = std::get_if<Array>(o)) t = promote_types(t, api::node_of(*arr).dtype);
  for (const Operand* o : {&lo, &hi})
    if (auto* s = std::get_if<Scalar>(o)) t = api::weak_result(t, *s);
  for (const Operand* o : {&lo, &hi})  // named here, not by maximum or minimum below
    if (auto* s = std::get_if<Scalar>(o)) api::check_fits(*s, t, "clip");
  return minimum(maximum(t == a.dtype() ? a : a.astype(t), lo), hi);
}

}  // namespace kiln
