#include "codegen/expressions.hpp"

#include <stdexcept>

#include "graph/dtype_table.hpp"

namespace kiln::codegen {

using graph::BinaryOp;
using graph::UnaryOp;

const char* cuda_type(DType t) { return graph::row(t).cuda; }

namespace {

std::string call(const std::string& f, const std::string& x) { return f + "(" + x + ")"; }
std::string call(const std::string& f, const std::string& a, const std::string& b) {
  return f + "(" + a + ", " + b + ")";
}

// The C math function for a real dtype: sinf for float32, sin for float64.
std::string math(const char* f, DType t) {
  return std::string(f) + (t == DType::Float32 ? "f" : "");
}

}  // namespace

std::string cast_expr(DType from, DType to, const std::string& x) {
  if (from == to) return x;
  // float16 and bfloat16 meet only storage conversions (src/plan/lower.cpp): read as a float,
  // and rounded from a float, from float64 (float16 directly, as NumPy) or from a complex's
  // real part (kernels/half.cuh).
  if (is_half(from)) return cast_expr(DType::Float32, to, "kiln::to_float(" + x + ")");
  if (is_half(to)) {
    std::string real = is_complex(from) ? x + ".re" : x;
    DType rf = real_dtype(from);
    std::string f = to == DType::Float16 ? "kiln::to_float16(" : "kiln::to_bfloat16(";
    if (rf == DType::Float64 && to == DType::Float16) return f + real + ")";
    return f + "(float)(" + real + "))";
  }
  if (to == DType::Bool)
    return is_complex(from) ? "(" + x + ".re != 0 || " + x + ".im != 0)" : "(" + x + " != 0)";
  if (is_complex(to)) {
    if (is_complex(from)) return std::string(cuda_type(to)) + "(" + x + ")";
    return std::string(cuda_type(to)) + "((" + cuda_type(real_dtype(to)) + ")(" + x + "), 0)";
  }
  std::string real = is_complex(from) ? x + ".re" : x;
  DType rf = real_dtype(from);
  if (is_integer(to) && is_floating(rf))
    return std::string("kiln::float_to_int<") + cuda_type(to) + ">(" + real + ")";
  return std::string("(") + cuda_type(to) + ")(" + real + ")";
}

std::string unary_expr(UnaryOp op, DType t, const std::string& x) {
  bool cx = is_complex(t), ints = is_integer(t), boolean = t == DType::Bool;
  if (graph::form_of(op) == graph::UnaryForm::Math) {  // its C function, from op_table.hpp
    const char* f = graph::c_function(op);
    return cx ? call(std::string("kiln::") + f, x) : call(math(f, t), x);
  }
  switch (op) {
    case UnaryOp::Neg:
      return ints ? call("kiln::wrap_neg", x) : "(-" + x + ")";
    case UnaryOp::Not:
      return boolean ? "(!" + x + ")" : "(~" + x + ")";
    case UnaryOp::Abs:
      if (boolean) return x;
      if (ints) return call("kiln::int_abs", x);
      return cx ? call("kiln::abs", x) : call(math("fabs", t), x);
    case UnaryOp::Floor:
      return call(math("floor", t), x);
    case UnaryOp::Ceil:
      return call(math("ceil", t), x);
    case UnaryOp::Real:
      return call("kiln::real", x);
    case UnaryOp::Imag:
      return call("kiln::imag", x);
    case UnaryOp::Conj:
      return call("kiln::conj", x);
    case UnaryOp::Gelu:  // kernels/scalar.cuh's, as the host's (real floats)
      return call("kiln::gelu", x);
    case UnaryOp::GeluTanh:
      return call("kiln::gelu_tanh", x);
    default:
      throw std::logic_error(std::string("codegen: no spelling for unary op ") +
                             graph::op_name(op));
  }
}

std::string binary_expr(BinaryOp op, DType t, const std::string& a, const std::string& b) {
  bool ints = is_integer(t), boolean = t == DType::Bool;
  auto infix = [&](const char* s) { return "(" + a + " " + s + " " + b + ")"; };
  if (graph::form_of(op) == graph::BinaryForm::Math)  // its C function, from op_table.hpp
    return call(math(graph::c_function(op), t), a, b);
  switch (op) {
    case BinaryOp::Add:
      return boolean ? infix("||") : ints ? call("kiln::wrap_add", a, b) : infix("+");
    case BinaryOp::Sub:
      return ints ? call("kiln::wrap_sub", a, b) : infix("-");
    case BinaryOp::Mul:
      return boolean ? infix("&&") : ints ? call("kiln::wrap_mul", a, b) : infix("*");
    case BinaryOp::Div:
      return infix("/");
    case BinaryOp::Pow:
      if (ints) return call("kiln::int_pow", a, b);
      return is_complex(t) ? call("kiln::pow", a, b) : call(math("pow", t), a, b);
    case BinaryOp::Minimum:
      return boolean ? infix("&&") : call("kiln::minimum", a, b);
    case BinaryOp::Maximum:
      return boolean ? infix("||") : call("kiln::maximum", a, b);
    case BinaryOp::Eq:
      return infix("==");
    case BinaryOp::Ne:
      return infix("!=");
    case BinaryOp::Lt:
      return infix("<");
    case BinaryOp::Le:
      return infix("<=");
    case BinaryOp::Gt:
      return infix(">");
    case BinaryOp::Ge:
      return infix(">=");
    case BinaryOp::And:
      return boolean ? infix("&&") : infix("&");
    case BinaryOp::Or:
      return boolean ? infix("||") : infix("|");
    case BinaryOp::Xor:
      return boolean ? infix("!=") : infix("^");
    // kernels/scalar.cuh's NumPy rules (the builder gives them integer or real operands).
    case BinaryOp::FloorDivide:
      return call(ints ? "kiln::int_floor_divide" : "kiln::float_floor_divide", a, b);
    case BinaryOp::Remainder:
      return call(ints ? "kiln::int_remainder" : "kiln::float_remainder", a, b);
    case BinaryOp::Fmod:
      return ints ? call("kiln::int_fmod", a, b) : call(math("fmod", t), a, b);
    case BinaryOp::LeftShift:
      return call("kiln::shift_left", a, b);
    case BinaryOp::RightShift:
      return call("kiln::shift_right", a, b);
    default:
      throw std::logic_error(std::string("codegen: no spelling for binary op ") +
                             graph::op_name(op));
  }
}

}  // namespace kiln::codegen
