#include "graph/ops.hpp"

namespace kiln::graph {

const char* op_name(UnaryOp op) {
  static constexpr const char* names[] = {"neg",   "not",  "abs",  "sqrt", "exp",
                                          "log",   "sin",  "cos",  "tan",  "tanh",
                                          "floor", "ceil", "real", "imag", "conj"};
  return names[static_cast<int>(op)];
}

const char* op_name(BinaryOp op) {
  static constexpr const char* names[] = {"add",     "sub", "mul", "div", "pow", "minimum",
                                          "maximum", "eq",  "ne",  "lt",  "le",  "gt",
                                          "ge",      "and", "or",  "xor"};
  return names[static_cast<int>(op)];
}

const char* op_name(ReduceOp op) {
  static constexpr const char* names[] = {"sum",    "prod",   "max", "min", "mean",
                                          "argmax", "argmin", "any", "all"};
  return names[static_cast<int>(op)];
}

DType reduce_result_dtype(ReduceOp op, DType acc) {
  return op == ReduceOp::ArgMax || op == ReduceOp::ArgMin ? DType::Int64 : acc;
}

bool is_comparison(BinaryOp op) { return op >= BinaryOp::Eq && op <= BinaryOp::Ge; }

}  // namespace kiln::graph
