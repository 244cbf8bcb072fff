#include "graph/ops.hpp"

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

const char* op_name(ReduceOp op) {
  static constexpr const char* names[] = {"sum",    "prod",   "max", "min", "mean",
                                          "argmax", "argmin", "any", "all"};
  return names[static_cast<int>(op)];
}

DType reduce_result_dtype(ReduceOp op, DType acc) {
  return op == ReduceOp::ArgMax || op == ReduceOp::ArgMin ? DType::Int64 : acc;
}

bool is_comparison(BinaryOp op) { return form_of(op) == BinaryForm::Compare; }
bool is_bitwise(BinaryOp op) { return form_of(op) == BinaryForm::Bitwise; }

}  // namespace kiln::graph
