#include "fuzz/coverage.hpp"

#include <iterator>
#include <map>
#include <sstream>

#include "codegen/kernel_source.hpp"
#include "fuzz/facts.hpp"
#include "plan/planner.hpp"

namespace kiln::fuzz {
namespace {

using Counts = std::map<std::string, int64_t>;

std::string fn_name(const Op& op) {
  static constexpr const char* fft[] = {"fft",   "ifft", "fft2",  "ifft2", "fftn",
                                        "ifftn", "rfft", "irfft", "rfftn", "irfftn"};
  switch (op.kind) {
    case OpKind::Unary:  // the graph's names (graph/op_table.hpp), every row included
      return graph::op_name(static_cast<UnaryFn>(op.fn));
    case OpKind::Binary:
      return graph::op_name(static_cast<BinaryFn>(op.fn));
    case OpKind::Reduce:
      return graph::op_name(static_cast<ReduceFn>(op.fn));
    case OpKind::Fft:
      return fft[op.fn];
    default:
      return kind_name(op.kind);
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

// ---- the patterns of kiln issue 11, recognised in the program (not told by the generator)

class Patterns {
 public:
  Patterns(const Program& p, const std::vector<Array>& values) : p_(p), v_(values) {
    size_t n = values.size();
    anc_.assign(n, std::vector<bool>(n, false));
    for (size_t i = 0; i < n; ++i) {
      anc_[i][i] = true;
      if (const Op* op = producer(static_cast<int>(i)))
        for (const auto& a : op->args)
          if (!a.is_scalar())
            for (size_t j = 0; j < n; ++j) anc_[i][j] = anc_[i][j] || anc_[a.value][j];
    }
  }
  void count(Counts& c) const;

 private:
  const Op* producer(int v) const {
    int k = v - static_cast<int>(p_.inputs.size());
    return k >= 0 && static_cast<size_t>(k) < p_.ops.size() ? &p_.ops[static_cast<size_t>(k)]
                                                            : nullptr;
  }
  // The op that makes v when it is of this kind (and fn, when fn >= 0).
  const Op* is(int v, OpKind kind, int fn = -1) const {
    const Op* op = v >= 0 ? producer(v) : nullptr;
    return op && op->kind == kind && (fn < 0 || op->fn == fn) ? op : nullptr;
  }
  const Op* keep_reduce(int v, ReduceFn fn) const {
    const Op* op = is(v, OpKind::Reduce, static_cast<int>(fn));
    return op && op->keepdims ? op : nullptr;
  }
  static bool is_div(const Op& op) {
    return op.kind == OpKind::Binary && op.fn == static_cast<uint8_t>(BinaryFn::Div) &&
           !op.args[0].is_scalar() && !op.args[1].is_scalar();
  }
  // Whether an op that computes (not a view) reads the value t makes.
  bool read_by_compute(const Op* t) const {
    int v = static_cast<int>(p_.inputs.size() + static_cast<size_t>(t - p_.ops.data()));
    for (const Op& op : p_.ops)
      for (const auto& a : op.args)
        if (a.value == v && !is_view(op.kind) && op.kind != OpKind::Eval) return true;
    return false;
  }
  bool reduce_then_broadcast(const Op& op) const;
  bool softmax(const Op& op) const;
  bool layernorm(const Op& op) const;
  bool normalise(const Op& op) const;

  const Program& p_;
  const std::vector<Array>& v_;
  std::vector<std::vector<bool>> anc_;  // anc_[v][u]: u is v or one of the values v reads
};

// An elementwise op reading a keepdims reduction (or a value made from one) and, along
// another operand, the reduction's own input (or a value made from it).
bool Patterns::reduce_then_broadcast(const Op& op) const {
  if (op.kind != OpKind::Binary && op.kind != OpKind::Where && op.kind != OpKind::Clip)
    return false;
  for (const auto& a : op.args)
    for (const auto& b : op.args) {
      if (a.is_scalar() || b.is_scalar() || a.value == b.value) continue;
      for (size_t r = 0; r < anc_.size(); ++r) {
        const Op* red = anc_[a.value][r] ? is(static_cast<int>(r), OpKind::Reduce) : nullptr;
        if (red && red->keepdims && anc_[b.value][red->args[0].value] && !anc_[b.value][r])
          return true;
      }
    }
  return false;
}

bool Patterns::softmax(const Op& op) const {
  if (!is_div(op)) return false;
  int e = op.args[0].value;
  const Op* s = keep_reduce(op.args[1].value, ReduceFn::Sum);
  const Op* ex = is(e, OpKind::Unary, static_cast<int>(UnaryFn::Exp));
  if (!s || s->args[0].value != e || !ex) return false;
  const Op* d = is(ex->args[0].value, OpKind::Binary, static_cast<int>(BinaryFn::Sub));
  if (!d || d->args[1].is_scalar()) return false;
  const Op* m = keep_reduce(d->args[1].value, ReduceFn::Max);
  return m && m->args[0].value == d->args[0].value;
}

bool Patterns::layernorm(const Op& op) const {
  if (!is_div(op)) return false;
  const Op* d = is(op.args[0].value, OpKind::Binary, static_cast<int>(BinaryFn::Sub));
  const Op* sd = is(op.args[1].value, OpKind::Unary, static_cast<int>(UnaryFn::Sqrt));
  if (!d || !sd || d->args[1].is_scalar()) return false;
  const Op* mu = keep_reduce(d->args[1].value, ReduceFn::Mean);
  return mu && mu->args[0].value == d->args[0].value;
}

bool Patterns::normalise(const Op& op) const {
  if (!is_div(op)) return false;
  const Op* s = keep_reduce(op.args[1].value, ReduceFn::Sum);
  return s && s->args[0].value == op.args[0].value;
}

void Patterns::count(Counts& c) const {
  bool any = false;
  auto mark = [&](const char* what, bool yes, bool issue = true) {
    if (!yes) return;
    c[std::string("pattern ") + what]++;
    any |= issue;
  };
  bool rtb = false, soft = false, norm = false, div = false, perm = false, strided = false;
  for (const Op& op : p_.ops) {
    rtb |= reduce_then_broadcast(op);
    soft |= softmax(op);
    norm |= layernorm(op);
    div |= normalise(op);
    if (op.kind == OpKind::Transpose && !op.args[0].is_scalar()) {
      int x = op.args[0].value;
      size_t rank = v_.at(static_cast<size_t>(x)).ndim();
      perm |= op.has_axes && (rank == 3 || rank == 4) && read_by_compute(&op);
      const Op* ix = is(x, OpKind::Index);
      if (ix)
        for (const auto& i : ix->index)
          strided |= std::holds_alternative<Slice>(i) && std::get<Slice>(i).step != 1;
    }
  }
  mark("reduce-then-broadcast (keepdims into an op on the same input)", rtb);
  mark("softmax exp(x - max) / sum", soft);
  mark("layernorm (x - mean) / sqrt(mean sq + eps)", norm);
  mark("x / sum(x, keepdims)", div);
  mark("rank 3-4 permutation read by an op", perm);
  mark("strided slice then transpose", strided);
  bool odd = false, along = false;
  for (const Array& a : v_)
    for (int64_t d : a.shape()) odd |= d == 7 || d == 33, along |= d >= 1000;
  mark("value with an extent of 7 or 33", odd, false);
  mark("value with an axis of 1000 or more", along, false);
  if (any) c["programs with an issue-11 pattern"]++;
}

// The schedules codegen picks for the program's kernels (as a GPU would run them), so a run
// says how often each form, the column blocks shaped to narrow or short columns, and the
// column groups are exercised.
void count_schedules(const Program& p, const std::vector<Array>& values, Counts& c) {
  using codegen::Form;
  static constexpr const char* names[] = {"elementwise",
                                          "tiled transpose",
                                          "full reduction",
                                          "rows",
                                          "short rows: a thread per row",
                                          "columns",
                                          "reductions and their broadcast over rows",
                                          "reductions and their broadcast "
                                          "down columns",
                                          "narrow columns read as one stream",
                                          "narrow rows written as one stream",
                                          "scan computing its elementwise producer"};
  static_assert(std::size(names) == static_cast<size_t>(Form::Scan) + 1, "a name per form");
  std::vector<graph::NodeRef> outs;
  for (int o : p.outputs) outs.push_back(values.at(static_cast<size_t>(o)).node());
  for (const auto& step : plan::make_plan(outs).steps) {
    const auto* k = std::get_if<plan::KernelStep>(&step);
    if (!k) continue;
    const codegen::KernelSource src = codegen::generate(k->group);
    std::string what = names[static_cast<int>(src.form)];
    if (src.form == Form::ReduceColumns) {
      const codegen::ColumnBlock b = codegen::column_block(src);
      if (b.x < 32) what += ", fewer outputs than a warp";
      if (b.y < 8) what += ", a short reduced axis";
    }
    c["schedule " + what]++;
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
  bool rejected = false;
  for (const auto& op : p.ops) {
    for (const auto& a : op.args)
      if (!a.is_scalar()) reads[static_cast<size_t>(a.value)]++;
    count_op(op, values, p, c);
    try {
      values.push_back(op.kind == OpKind::Eval ? values.at(static_cast<size_t>(op.args[0].value))
                                               : apply_op(op, values));
    } catch (const Error&) {
      c["programs ending in a rejected op"]++;
      rejected = true;
      break;
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
  Program built = p;  // the ops that were built
  built.ops.resize(values.size() - p.inputs.size());
  Patterns(built, values).count(c);
  if (rejected) return;
  count_schedules(p, values, c);
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
