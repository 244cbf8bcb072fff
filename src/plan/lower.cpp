#include "plan/lower.hpp"

#include <map>

#include "graph/shape.hpp"

namespace kiln::plan {
namespace {

using graph::Node;
using graph::OpKind;

bool is_view(OpKind k) {
  return k == OpKind::Reshape || k == OpKind::Permute || k == OpKind::Slice ||
         k == OpKind::Broadcast;
}

// A strided layout being carried up through views, from a leaf towards the group.
struct Layout {
  Shape shape;
  Strides strides;
  int64_t offset = 0;
};

void apply_view(Layout& l, const Node& v) {
  switch (v.kind) {
    case OpKind::Permute: {
      Layout out;
      for (int ax : v.attr<graph::PermuteAttrs>().perm) {
        out.shape.push_back(l.shape[ax]);
        out.strides.push_back(l.strides[ax]);
      }
      l.shape = std::move(out.shape);
      l.strides = std::move(out.strides);
      break;
    }
    case OpKind::Slice: {
      const auto& axes = v.attr<graph::SliceAttrs>().axes;
      for (size_t i = 0; i < l.shape.size(); ++i) {
        if (v.shape[i] > 0) l.offset += axes[i].start * l.strides[i];
        l.strides[i] *= axes[i].step;
      }
      l.shape = v.shape;
      break;
    }
    case OpKind::Broadcast: {
      size_t lead = v.shape.size() - l.shape.size();
      Strides st(v.shape.size(), 0);
      for (size_t i = 0; i < l.shape.size(); ++i)
        st[lead + i] = l.shape[i] == v.shape[lead + i] ? l.strides[i] : 0;
      l.shape = v.shape;
      l.strides = std::move(st);
      break;
    }
    case OpKind::Reshape: {
      auto st = graph::reshape_strides(l.shape, l.strides, v.shape);
      if (!st) throw NeedsMaterialize{v.inputs[0].get()};
      l.shape = v.shape;
      l.strides = std::move(*st);
      break;
    }
    default:
      break;
  }
}

class Lowering {
 public:
  Lowering(const GroupSpec& spec, const std::function<int(const Node*)>& buffer_of,
           const std::function<bool(const Node*)>& is_materialized,
           std::vector<const Node*>& param_nodes)
      : spec_(spec),
        buffer_of_(buffer_of),
        is_materialized_(is_materialized),
        param_nodes_(param_nodes) {}

  // `body`: see lower_group.
  FusedGroup run(const Node* body = nullptr) {
    if (spec_.reduce) {
      const Node& r = *spec_.reduce;
      const Node& in = *r.inputs[0];
      g_.shape = in.shape;
      int v = lower(in, chain_id({}));
      g_.reduction = Reduction{r.reduce_op(), r.attr<graph::ReduceAttrs>().axes, in.dtype};
      g_.outputs.push_back({v, buffer_of_(&r)});
    } else if (body) {
      g_.shape = body->shape;
      g_.outputs.push_back({lower(*body, chain_id({})), buffer_of_(spec_.roots[0])});
    } else {
      g_.shape = spec_.roots[0]->shape;
      for (const Node* root : spec_.roots)
        g_.outputs.push_back({lower(*root, chain_id({})), buffer_of_(root)});
    }
    return std::move(g_);
  }

 private:
  int chain_id(const std::vector<const Node*>& chain) {
    auto [it, inserted] = chains_.emplace(chain, static_cast<int>(chains_.size()));
    if (inserted) chain_list_.push_back(chain);
    return it->second;
  }

  bool is_group_root(const Node* n) const {
    for (const Node* r : spec_.roots)
      if (r == n) return true;
    return false;
  }

  int emit(Instr ins) {
    g_.code.push_back(ins);
    return static_cast<int>(g_.code.size()) - 1;
  }

  // An Access for reading `n` (dense in n.shape, at `buffer`) through the views of `chain`.
  int access(const Node& n, int buffer, int chain) {
    Layout l{n.shape, graph::contiguous_strides(n.shape), 0};
    const auto& views = chain_list_[chain];
    for (size_t i = views.size(); i-- > 0;) apply_view(l, *views[i]);
    g_.accesses.push_back({buffer, l.offset, l.strides});
    return static_cast<int>(g_.accesses.size()) - 1;
  }

  int param(const Node& n) {
    if (auto it = params_.find(&n); it != params_.end()) return it->second;
    g_.params.push_back(n.scalar_value());
    param_nodes_.push_back(&n);
    int i = emit(Instr::param(n.dtype, static_cast<int>(g_.params.size()) - 1));
    params_.emplace(&n, i);
    return i;
  }

  int lower(const Node& n, int chain) {
    auto key = std::make_pair(&n, chain);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    int v = lower_uncached(n, chain);
    memo_.emplace(key, v);
    return v;
  }

  int lower_uncached(const Node& n, int chain) {
    bool computed_here = is_group_root(&n) && !n.is_leaf();
    if (n.kind == OpKind::Scalar && !n.is_leaf()) return param(n);
    if (!computed_here && (n.is_leaf() || is_materialized_(&n)))
      return emit(Instr::load(n.dtype, access(n, buffer_of_(&n), chain)));
    if (n.kind == OpKind::Iota) {
      int start = param(*n.inputs[0]), step = param(*n.inputs[1]);
      return emit(Instr::iota(n.dtype, start, step, access(n, -1, chain)));
    }
    if (is_view(n.kind)) {
      auto c = chain_list_[chain];
      c.push_back(&n);
      return lower(*n.inputs[0], chain_id(c));
    }
    if (n.kind == OpKind::Reduce) return lower_row_reduction(n, chain);
    std::vector<int> ops;
    for (const auto& in : n.inputs) ops.push_back(lower(*in, chain));
    switch (n.kind) {
      case OpKind::Unary:
        return emit(Instr::unary(n.unary_op(), n.dtype, ops[0]));
      case OpKind::Binary:
        return emit(Instr::binary(n.binary_op(), n.dtype, ops[0], ops[1]));
      case OpKind::Where:
        return emit(Instr::where(n.dtype, ops[0], ops[1], ops[2]));
      case OpKind::Cast:
        return emit(Instr::cast(n.dtype, ops[0]));
      case OpKind::User:
        g_.user_calls.push_back(
            {&graph::user_code(n.attr<graph::UserAttrs>().code), std::move(ops)});
        return emit(Instr::user(n.dtype, static_cast<int>(g_.user_calls.size()) - 1));
      default:
        throw std::logic_error("lower: node kind cannot be fused");
    }
  }

  // A reduction the planner left in memory's place (not a root): it becomes a Reduce
  // instruction, which is right only where every position of a row reads that row's result
  // (stride 0 along the reduced axes, the kept axes walking the result densely) and the group
  // iterates over the reduction's input, reduced along trailing axes. Otherwise the planner
  // is told to write it after all.
  int lower_row_reduction(const Node& n, int chain) {
    const Node& in = *n.inputs[0];
    const std::vector<int>& axes = n.attr<graph::ReduceAttrs>().axes;
    Layout l{n.shape, graph::contiguous_strides(n.shape), 0};
    const auto& views = chain_list_[chain];
    for (size_t i = views.size(); i-- > 0;) apply_view(l, *views[i]);
    if (spec_.reduce || in.shape != g_.shape || axes.empty() || axes.size() >= g_.shape.size())
      throw CannotInline{&n};
    const size_t kept = g_.shape.size() - axes.size();
    bool ok = l.shape == g_.shape && l.offset == 0 && (g_.row_axes.empty() || g_.row_axes == axes);
    Strides dense = graph::contiguous_strides(Shape(g_.shape.begin(), g_.shape.begin() + kept));
    for (size_t a = 0; ok && a < g_.shape.size(); ++a) {
      bool folded = a >= kept;
      ok = (!folded || axes[a - kept] == static_cast<int>(a)) &&
           (g_.shape[a] == 1 || l.strides[a] == (folded ? 0 : dense[a]));
    }
    if (!ok) throw CannotInline{&n};
    g_.row_axes = axes;
    // Read through several views (m and m * m in a variance), it is still one value per row.
    if (auto it = row_reductions_.find(&n); it != row_reductions_.end()) return it->second;
    int v = lower(in, chain_id({}));
    int r = emit(Instr::reduce(n.reduce_op(), n.dtype, v));
    row_reductions_.emplace(&n, r);
    return r;
  }

  const GroupSpec& spec_;
  const std::function<int(const Node*)>& buffer_of_;
  const std::function<bool(const Node*)>& is_materialized_;
  std::vector<const Node*>& param_nodes_;
  FusedGroup g_;
  std::map<std::vector<const Node*>, int> chains_;
  std::vector<std::vector<const Node*>> chain_list_;
  std::map<std::pair<const Node*, int>, int> memo_;
  std::map<const Node*, int> params_;
  std::map<const Node*, int> row_reductions_;
};

}  // namespace

FusedGroup lower_group(const GroupSpec& spec,
                       const std::function<int(const graph::Node*)>& buffer_of,
                       const std::function<bool(const graph::Node*)>& is_materialized,
                       std::vector<const graph::Node*>& param_nodes) {
  size_t params_before = param_nodes.size();
  try {
    return Lowering(spec, buffer_of, is_materialized, param_nodes).run();
  } catch (const NeedsMaterialize& m) {
    // The group's one output is a reshape of a value computed here that strides cannot reach
    // through the reshape (stack's where over broadcasts, its new axis merged into
    // concatenate's): iterate over the value's own shape instead. Its dense layout is the
    // reshape's, so one kernel writes the output, where materializing the value first would
    // need a second, a copy.
    const graph::Node* root = spec.roots.empty() ? nullptr : spec.roots[0];
    if (spec.reduce || spec.roots.size() != 1 || root->kind != OpKind::Reshape ||
        m.node != root->inputs[0].get())
      throw;
    param_nodes.resize(params_before);
    return Lowering(spec, buffer_of, is_materialized, param_nodes).run(m.node);
  }
}

DType FusedGroup::load_dtype(int access) const {
  for (const Instr& ins : code)
    if ((ins.kind == InstrKind::Load || ins.kind == InstrKind::Iota) && ins.access() == access)
      return ins.dtype;
  return DType::Float64;
}

DType FusedGroup::out_dtype(size_t o) const {
  DType value = code[outputs[o].instr].dtype;
  return reduction ? graph::reduce_result_dtype(reduction->op, value) : value;
}

Shape FusedGroup::out_shape() const {
  if (!reduction) return shape;
  Shape out;
  size_t k = 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (k < reduction->axes.size() && reduction->axes[k] == static_cast<int>(i))
      ++k;
    else
      out.push_back(shape[i]);
  }
  return out;
}

}  // namespace kiln::plan
