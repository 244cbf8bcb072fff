#include "graph/ops.hpp"
#include <iterator>

namespace kiln::graph {

namespace {

template <class Form>
struct Row {
  const char* name;
  const char* cfn;
  Form form;
  bool complex, heavy;
};
// `_` marks a Custom op's missing C function.
#define KILN_ROW(Form)                                                         \
  [](const char* name, const char* cfn, Form form, bool complex, bool heavy) { \
    return Row<Form>{name, cfn[0] == '_' ? "" : cfn, form, complex, heavy};    \
  }
constexpr auto unary_row = KILN_ROW(UnaryForm);
constexpr auto binary_row = KILN_ROW(BinaryForm);
#undef KILN_ROW
#define KILN_UNARY_ROW(Enum, name, cfn, form, complex, heavy) \
  unary_row(#name, #cfn, UnaryForm::form, complex, heavy),
#define KILN_BINARY_ROW(Enum, name, cfn, form, complex, heavy) \
  binary_row(#name, #cfn, BinaryForm::form, complex, heavy),
constexpr Row<UnaryForm> kUnary[] = {KILN_UNARY_OPS(KILN_UNARY_ROW)};
constexpr Row<BinaryForm> kBinary[] = {KILN_BINARY_OPS(KILN_BINARY_ROW)};
#undef KILN_UNARY_ROW
#undef KILN_BINARY_ROW

const Row<UnaryForm>& row(UnaryOp op) { return kUnary[static_cast<int>(op)]; }
const Row<BinaryForm>& row(BinaryOp op) { return kBinary[static_cast<int>(op)]; }

}  // namespace

const char* op_name(UnaryOp op) { return row(op).name; }
const char* op_name(BinaryOp op) { return row(op).name; }
UnaryForm form_of(UnaryOp op) { return row(op).form; }
BinaryForm form_of(BinaryOp op) { return row(op).form; }
bool is_heavy(UnaryOp op) { return row(op).heavy; }
bool is_heavy(BinaryOp op) { return row(op).heavy; }
bool takes_complex(UnaryOp op) { return row(op).complex; }
bool takes_complex(BinaryOp op) { return row(op).complex; }
const char* c_function(UnaryOp op) { return row(op).cfn; }
const char* c_function(BinaryOp op) { return row(op).cfn; }

namespace {

enum class Acc : uint8_t { Wide, Float, Bool, Same };
enum class Result : uint8_t { Acc, Index };
struct ReduceRow {
  const char* name;
  Acc acc;
  Result result;
  bool identity;
};
#define KILN_REDUCE_ROW(Enum, name, acc, result, identity) \
  ReduceRow{#name, Acc::acc, Result::result, identity},
constexpr ReduceRow kReduce[] = {KILN_REDUCE_OPS(KILN_REDUCE_ROW)};
#undef KILN_REDUCE_ROW

const ReduceRow& row(ReduceOp op) { return kReduce[static_cast<int>(op)]; }

}  // namespace

const char* op_name(ReduceOp op) { return row(op).name; }

const char* op_name(ScanOp op) { return op == ScanOp::Sum ? "cumsum" : "cumprod"; }
const char* op_name(SortOp op) { return op == SortOp::Values ? "sort" : "argsort"; }

const char* op_name(ScatterOp op) {
  constexpr const char* kNames[] = {"set", "add", "multiply", "min", "max"};
  static_assert(std::size(kNames) == static_cast<size_t>(ScatterOp::Max) + 1);
  return kNames[static_cast<int>(op)];
}

DType accumulation_dtype(ReduceOp op, DType t) {
  // float16 and bfloat16 accumulate in float32 (their result rounds once, at the end:
  // reduce_result_dtype's `input`), where NumPy's sum and prod of float16 accumulate in float16.
  if (is_half(t) && row(op).acc != Acc::Bool) return DType::Float32;
  switch (row(op).acc) {
    case Acc::Wide:
      // NumPy sums and multiplies integers in the platform's long: int64, or uint64 for
      // unsigned types.
      if (t == DType::Bool || (is_integer(t) && !is_unsigned(t))) return DType::Int64;
      return is_unsigned(t) ? DType::UInt64 : t;
    case Acc::Float:
      return is_integer_or_bool(t) ? DType::Float64 : t;
    case Acc::Bool:
      return DType::Bool;
    case Acc::Same:
      break;
  }
  return t;
}

DType reduce_result_dtype(ReduceOp op, DType acc, DType input) {
  if (row(op).result == Result::Index) return DType::Int64;
  return is_half(input) && row(op).acc != Acc::Bool ? input : acc;
}

bool has_identity(ReduceOp op) { return row(op).identity; }

bool is_comparison(BinaryOp op) { return form_of(op) == BinaryForm::Compare; }
bool is_bitwise(BinaryOp op) { return form_of(op) == BinaryForm::Bitwise; }

}  // namespace kiln::graph
