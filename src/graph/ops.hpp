// The operation vocabulary of the graph, shared by the planner and every backend.
#pragma once
#include <cstdint>

namespace kiln::graph {

enum class OpKind : uint8_t {
  // Leaves: no inputs that the planner looks through.
  Buffer,  // evaluated data
  Scalar,  // a 0-d constant; its value is a kernel parameter
  Iota,    // 1-d arange: value[i] = start + i * step (inputs: start and step Scalars)
  // Elementwise: operands have the node's shape (the builder inserts broadcasts and casts).
  Unary,
  Binary,
  Where,
  Cast,
  // Views: index maps, never copies.
  Reshape,
  Permute,
  Slice,
  Broadcast,
  // Boundaries of fusion groups.
  Reduce,
  Fft,
  Random,
  Copy,
};

enum class UnaryOp : uint8_t {
  Neg,
  Not,
  Abs,
  Sqrt,
  Exp,
  Log,
  Sin,
  Cos,
  Tan,
  Tanh,
  Floor,
  Ceil,
  Real,
  Imag,
  Conj,
};
enum class BinaryOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  Pow,
  Minimum,
  Maximum,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  And,
  Or,
  Xor,
};
enum class ReduceOp : uint8_t { Sum, Prod, Max, Min, Mean, ArgMax, ArgMin, Any, All };
enum class FftKind : uint8_t { C2C, R2C, C2R };
enum class RandomDist : uint8_t { Randint, Uniform, Normal };

const char* op_name(UnaryOp op);   // "neg", "sin", ...
const char* op_name(BinaryOp op);  // "add", "lt", ...
const char* op_name(ReduceOp op);  // "sum", "argmax", ...
bool is_comparison(BinaryOp op);

}  // namespace kiln::graph
