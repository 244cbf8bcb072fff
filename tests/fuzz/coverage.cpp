#include "fuzz/coverage.hpp"

#include <map>
#include <sstream>

#include "fuzz/facts.hpp"

namespace kiln::fuzz {
namespace {

using Counts = std::map<std::string, int64_t>;

const char* op_kind_name(OpKind k) {
  static constexpr const char* names[] = {"unary",        "binary",    "where", "clip",
                                          "astype",       "transpose", "index", "reshape",
                                          "broadcast_to", "reduce",    "fft",   "eval"};
  return names[static_cast<int>(k)];
}

std::string fn_name(const Op& op) {
  static constexpr const char* unary[] = {"neg",   "not",  "abs",  "sqrt", "exp",
                                          "log",   "sin",  "cos",  "tan",  "tanh",
                                          "floor", "ceil", "real", "imag", "conj"};
  static constexpr const char* binary[] = {"add",     "sub", "mul", "div", "pow", "minimum",
                                           "maximum", "eq",  "ne",  "lt",  "le",  "gt",
                                           "ge",      "and", "or",  "xor"};
  static constexpr const char* reduce[] = {"sum", "prod", "max",    "min",   "mean",
                                           "any", "all",  "argmax", "argmin"};
  static constexpr const char* fft[] = {"fft",   "ifft", "fft2",  "ifft2", "fftn",
                                        "ifftn", "rfft", "irfft", "rfftn", "irfftn"};
  switch (op.kind) {
    case OpKind::Unary:
      return unary[op.fn];
    case OpKind::Binary:
      return binary[op.fn];
    case OpKind::Reduce:
      return reduce[op.fn];
    case OpKind::Fft:
      return fft[op.fn];
    default:
      return op_kind_name(op.kind);
  }
}

const char* scalar_kind(const Scalar& s) {
  static constexpr const char* names[] = {"bool", "int", "float", "complex"};
  return names[static_cast<int>(s.kind())];
}

bool is_view(OpKind k) {
  return k == OpKind::Transpose || k == OpKind::Index || k == OpKind::BroadcastTo ||
         k == OpKind::Reshape;
}

// Features of one op, given the values built so far.
void count_op(const Op& op, const std::vector<Array>& v, const Program& p, Counts& c) {
  c[std::string("op ") + fn_name(op)]++;
  auto shape = [&](const Operand& o) { return v.at(static_cast<size_t>(o.value)).shape(); };
  auto dtype = [&](const Operand& o) { return v.at(static_cast<size_t>(o.value)).dtype(); };
  for (const auto& a : op.args)
    if (a.is_scalar()) c[std::string("scalar operand ") + scalar_kind(a.scalar)]++;
  if (op.args.size() >= 2 && !op.args[0].is_scalar() && !op.args[1].is_scalar()) {
    if (shape(op.args[0]) != shape(op.args[1])) c["feature broadcasting operands"]++;
    if (dtype(op.args[0]) != dtype(op.args[1])) c["feature mixed-dtype operands"]++;
  }
  const Operand& a = op.args.at(0);
  if (a.is_scalar()) return;
  int ni = static_cast<int>(p.inputs.size());
  bool on_view = a.value >= ni && is_view(p.ops.at(static_cast<size_t>(a.value - ni)).kind);
  if (op.kind == OpKind::Reshape && on_view) c["feature reshape of a view"]++;
  if (op.kind == OpKind::Reduce && on_view) c["feature reduction of a view"]++;
  if (op.kind == OpKind::Reduce && op.keepdims) c["feature reduce keepdims"]++;
  if (op.kind == OpKind::Reduce && op.axes.empty()) c["feature reduce over everything"]++;
  for (const auto& ix : op.index) {
    if (std::holds_alternative<int64_t>(ix))
      c["feature integer index"]++;
    else if (std::get<Slice>(ix).step < 0)
      c["feature negative slice step"]++;
  }
}

void count_program(const Program& p, Counts& c) {
  c["programs"]++;
  if (p.outputs.size() > 1) c["feature several outputs"]++;
  for (const auto& in : p.inputs) c[std::string("input ") + kind_name(in.kind)]++;
  std::vector<Array> values;
  std::vector<Facts> facts;
  std::vector<int> reads(static_cast<size_t>(p.value_count()), 0);
  for (const auto& in : p.inputs) {
    values.push_back(make_input(in, host()));
    facts.push_back(input_facts(in));
  }
  for (const auto& op : p.ops) {
    for (const auto& a : op.args)
      if (!a.is_scalar()) reads[static_cast<size_t>(a.value)]++;
    count_op(op, values, p, c);
    try {
      values.push_back(op.kind == OpKind::Eval ? values.at(static_cast<size_t>(op.args[0].value))
                                               : apply_op(op, values));
    } catch (const Error&) {
      c["programs ending in a rejected op"]++;
      return;
    }
    const Array& r = values.back();
    Facts fallback;
    fallback.dtype = r.dtype(), fallback.shape = r.shape();
    facts.push_back(infer(op, facts).value_or(fallback));
    c[std::string("value dtype ") + dtype_name(r.dtype())]++;
    c["value rank " + std::to_string(r.ndim())]++;
    if (r.size() == 0) c["value zero-size"]++;
    c[facts.back().noisy ? "value noisy" : "value exact"]++;
  }
  for (int n : reads)
    if (n >= 2) c["feature value read by several ops"]++;
}

}  // namespace

std::string coverage_report(uint64_t seed, int64_t cases, const Limits& limits) {
  Counts c;
  for (int64_t i = 0; i < cases; ++i)
    count_program(generate(seed + static_cast<uint64_t>(i), limits), c);
  std::ostringstream os;
  for (const auto& [what, n] : c) os << what << ": " << n << "\n";
  return os.str();
}

}  // namespace kiln::fuzz
