#include "plan/lower.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

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

// A Scalar node's value broadcasts with no Broadcast view above it (where(c, x, 5) takes the
// 5 as it is). Evaluated, it is a 0-d buffer (an equal full({}, 5) is the same node, and
// evaluating that one writes it): read at every coordinate, its layout gains leading axes of
// stride 0 up to the rank it is read at.
void implicit_broadcast(Layout& l, size_t rank) {
  if (l.strides.size() >= rank) return;
  const size_t lead = rank - l.strides.size();
  l.shape.insert(l.shape.begin(), lead, 1);
  l.strides.insert(l.strides.begin(), lead, 0);
}

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

// float16 and bfloat16 values live in float32 registers: a group loads them (and their scalar
// parameters) in 16 bits and widens them at once, computes in float32, and rounds once where it
// stores one (its outputs, in their dtype) or where the program casts to one (astype rounds).
// The storage conversions are Cast instructions marked `storage`.
DType reg(DType t) { return is_half(t) ? DType::Float32 : t; }

class Lowering {
 public:
  Lowering(const GroupSpec& spec, const std::function<int(const Node*)>& buffer_of,
           const std::function<bool(const Node*)>& is_materialized,
           std::vector<graph::Value>& param_nodes)
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
      // (A half's reduction folds float32 values, its input cast by the builder, and rounds
      // its result once, on store: r.dtype is then the half.)
      g_.reduction =
          Reduction{r.reduce_op(), r.attr<graph::ReduceAttrs>().axes, reg(in.dtype), r.dtype};
      g_.outputs.push_back({v, buffer_of_(&r)});
    } else if (body) {
      g_.shape = body->shape;
      g_.outputs.push_back(
          {narrow(lower(*body, chain_id({})), spec_.roots[0]->dtype), buffer_of_(spec_.roots[0])});
    } else {
      g_.shape = spec_.roots[0]->shape;
      for (const Node* root : spec_.roots)
        g_.outputs.push_back({narrow(lower(*root, chain_id({})), root->dtype), buffer_of_(root)});
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

  // A value read in a half's storage, widened to its float32 register.
  int widen(int v) {
    if (!is_half(g_.code[v].dtype)) return v;
    Instr c = Instr::cast(DType::Float32, v);
    c.storage = true;
    return emit(c);
  }
  // A value about to be stored as dtype t: a half's float32 register rounded to its storage.
  int narrow(int v, DType t) {
    if (!is_half(t) || g_.code[v].dtype == t) return v;
    Instr c = Instr::cast(t, v);
    c.storage = true;
    return emit(c);
  }

  // A created array's value (arange) in its dtype: a half's float32 register rounded to the half
  // and widened again, so a fused consumer sees the values the array holds (floor of a bfloat16
  // arange gave -223 where its element is -222: fuzz seed 5311).
  int rounded(int v, DType t) { return is_half(t) ? widen(narrow(v, t)) : v; }

  // An Access for reading `n` (dense in n.shape, at `buffer`) through the views of `chain`.
  int access(const Node& n, int buffer, int chain) {
    Layout l{n.shape, graph::contiguous_strides(n.shape), 0};
    const auto& views = chain_list_[chain];
    for (size_t i = views.size(); i-- > 0;) apply_view(l, *views[i]);
    implicit_broadcast(l, g_.shape.size());
    g_.accesses.push_back({buffer, l.offset, l.strides});
    return static_cast<int>(g_.accesses.size()) - 1;
  }

  // The parameter of n's constant `which` (a Scalar node's value, a Binary node's immediate,
  // one of an Affine node's): one per distinct constant, as the signature numbers them
  // (graph/signature.cpp).
  int param(const Node& n, int which = 0) {
    size_t h = graph::constant_hash(n, which);
    for (auto [it, end] = params_.equal_range(h); it != end; ++it) {
      const auto& [c, reg] = it->second;
      if (graph::same_constant(*c.node, c.which, n, which)) return reg;
    }
    g_.params.push_back(n.scalar_value(which));
    param_nodes_.push_back({&n, which});
    // A half's scalar is passed in the half (rounded as NumPy casts a weak scalar) and widened.
    int i =
        widen(emit(Instr::param(n.scalar_dtype(which), static_cast<int>(g_.params.size()) - 1)));
    params_.emplace(h, std::make_pair(graph::Value{&n, which}, i));
    return i;
  }

  // n's operands, each lowered by `lower_input`, with a Binary node's immediate at its side:
  // emitted where its Scalar node was, before or after the other operand, so the instructions
  // keep their order.
  template <class F>
  std::vector<int> operands(const Node& n, F&& lower_input) {
    const graph::ImmediateAttrs* im = n.immediate();
    std::vector<int> ops;
    if (im && im->left) ops.push_back(param(n));
    for (const auto& in : n.inputs) ops.push_back(lower_input(*in));
    if (im && !im->left) ops.push_back(param(n));
    return ops;
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
      return widen(emit(Instr::load(n.dtype, access(n, buffer_of_(&n), chain))));
    if (n.kind == OpKind::Iota) {
      int start = param(*n.inputs[0]), step = param(*n.inputs[1]);
      return rounded(emit(Instr::iota(reg(n.dtype), start, step, access(n, -1, chain))), n.dtype);
    }
    if (is_view(n.kind)) {
      auto c = chain_list_[chain];
      c.push_back(&n);
      return lower(*n.inputs[0], chain_id(c));
    }
    if (n.kind == OpKind::Reduce) return lower_row_reduction(n, chain);
    if (n.kind == OpKind::Remap) {
      // The remap's output coordinates are iotas of the iteration space read through the
      // views above it (one per axis); below it, everything is evaluated at mapped ones.
      return remap(n, coordinates(n, chain), [&](const Node& fill) { return lower(fill, chain); });
    }
    return computed(n, [&](const Node& in) { return lower(in, chain); });
  }

  // An elementwise node's value, its inputs lowered by `lower_input`.
  template <class F>
  int computed(const Node& n, F&& lower_input) {
    if (n.kind == OpKind::Affine) return affine(n, lower_input);
    return elementwise(n, operands(n, lower_input));
  }

  // An Affine node: the instructions of the two Binary nodes it stands for, with each constant
  // emitted where their lowering emitted it (operands(): a left constant before the operand
  // below it, a right one after), so the kernel is the same.
  template <class F>
  int affine(const Node& n, F&& lower_input) {
    const auto& [first, second] = n.attr<graph::AffineAttrs>().steps;
    const int second_left = second.constant.left ? param(n, 1) : -1;
    const int first_left = first.constant.left ? param(n, 0) : -1;
    const int x = lower_input(*n.inputs[0]);
    const int y = affine_step(first, n.dtype, first.constant.left ? first_left : param(n, 0), x);
    return affine_step(second, n.dtype, second.constant.left ? second_left : param(n, 1), y);
  }
  int affine_step(const graph::AffineStep& s, DType t, int constant, int x) {
    const bool left = s.constant.left;
    return emit(Instr::binary(s.op, reg(t), left ? constant : x, left ? x : constant));
  }

  int elementwise(const Node& n, const std::vector<int>& ops) {
    switch (n.kind) {
      case OpKind::Unary:
        return emit(Instr::unary(n.unary_op(), reg(n.dtype), ops[0]));
      case OpKind::Binary:
        return emit(Instr::binary(n.binary_op(), reg(n.dtype), ops[0], ops[1]));
      case OpKind::Where:
        return emit(Instr::where(reg(n.dtype), ops[0], ops[1], ops[2]));
      case OpKind::Cast: {
        // A cast sees a half's value: one computed here (not read from storage) rounds first,
        // as it would have on store. A cast to a half rounds (and is widened again).
        int x = ops[0];
        if (DType from = n.inputs[0]->dtype; is_half(from) && !g_.code[x].storage)
          x = widen(narrow(x, from));
        if (is_half(n.dtype)) return widen(emit(Instr::cast(n.dtype, x)));
        if (n.dtype == g_.code[x].dtype) return x;
        return emit(Instr::cast(n.dtype, x));
      }
      case OpKind::User:
        g_.user_calls.push_back(
            {&graph::user_code(n.attr<graph::UserAttrs>().code), std::move(ops)});
        return emit(Instr::user(reg(n.dtype), static_cast<int>(g_.user_calls.size()) - 1));
      default:
        throw std::logic_error("lower: node kind cannot be fused");
    }
  }

  // ---- index maps (Remap) ------------------------------------------------------------------
  // Below a Remap, values are computed at coordinates held in instructions (int64, one per axis
  // of the shape `at` indexes) rather than at the iteration index; `chain` holds the views met
  // since, not yet applied, so at a leaf they compose into strides as above and the address is
  // one sum of products.

  static Strides unit(size_t rank, size_t d) {
    Strides s(rank, 0);
    s[d] = 1;
    return s;
  }

  // The layout `views` (outermost first) give to values laid out as `strides` over `shape`.
  static Layout through(const Shape& shape, const Strides& strides,
                        const std::vector<const Node*>& views) {
    Layout l{shape, strides, 0};
    for (size_t i = views.size(); i-- > 0;) apply_view(l, *views[i]);
    return l;
  }

  // The coordinates of n's output (one int64 instruction per axis) at the iteration index,
  // read through the views of `chain`: an iota per axis, or, where a reshape above merges n's
  // axes (no strides give one axis's coordinate), n's flat position divided back into them.
  std::vector<int> coordinates(const Node& n, int chain) {
    const auto& views = chain_list_[chain];
    auto iota = [&](const Layout& l) {
      g_.accesses.push_back({-1, l.offset, l.strides});
      int i = address(Instr::iota(DType::Int64, constant(0), constant(1),
                                  static_cast<int>(g_.accesses.size()) - 1));
      iteration_coordinates_.insert(i);
      return i;
    };
    std::vector<Layout> units;
    try {
      for (size_t d = 0; d < n.shape.size(); ++d)
        units.push_back(through(n.shape, unit(n.shape.size(), d), views));
    } catch (const NeedsMaterialize&) {
      const Strides dense = graph::contiguous_strides(n.shape);
      int flat = iota(through(n.shape, dense, views));
      std::vector<int> at;
      for (size_t d = 0; d < n.shape.size(); ++d) {
        int q =
            dense[d] == 1 ? flat : arith(graph::BinaryOp::FloorDivide, flat, constant(dense[d]));
        at.push_back(d == 0 ? q : arith(graph::BinaryOp::Remainder, q, constant(n.shape[d])));
      }
      return at;
    }
    std::vector<int> at;
    for (const Layout& l : units) at.push_back(iota(l));
    return at;
  }

  int address(Instr ins) {
    ins.addressing = true;
    return emit(ins);
  }

  // A structural constant (an index map's origin, an extent): a parameter no graph value binds,
  // so the source stays the same whatever the numbers.
  int constant(int64_t v) {
    if (auto it = constants_.find(v); it != constants_.end()) return it->second;
    g_.params.push_back(Scalar(v));
    param_nodes_.push_back({});
    int i = address(Instr::param(DType::Int64, static_cast<int>(g_.params.size()) - 1));
    constants_.emplace(v, i);
    return i;
  }

  int arith(graph::BinaryOp op, int x, int y) {
    DType t =
        graph::is_comparison(op) || ((op == graph::BinaryOp::And || op == graph::BinaryOp::Or) &&
                                     g_.code[x].dtype == DType::Bool)
            ? DType::Bool
            : DType::Int64;
    return address(Instr::binary(op, t, x, y));
  }

  // offset + sum(at[d] * strides[d]), the element a layout puts at coordinates `at`.
  int dot(const Layout& l, const std::vector<int>& at) {
    int sum = -1;
    for (size_t d = 0; d < at.size(); ++d) {
      if (l.strides[d] == 0) continue;
      int term =
          l.strides[d] == 1 ? at[d] : arith(graph::BinaryOp::Mul, at[d], constant(l.strides[d]));
      sum = sum < 0 ? term : arith(graph::BinaryOp::Add, sum, term);
    }
    if (sum < 0) return constant(l.offset);
    return l.offset ? arith(graph::BinaryOp::Add, sum, constant(l.offset)) : sum;
  }

  // n (whose output is indexed by `at`, through no views) at its source's coordinates: the map
  // of every axis, then the source there; where an Offset axis falls outside the source the
  // value is the fill, and the source is read at a clamped position instead, so no read leaves
  // its memory whatever the fill's where selects.
  int remap(const Node& n, const std::vector<int>& at,
            const std::function<int(const Node&)>& lower_fill) {
    using graph::BinaryOp;
    using graph::IndexMode;
    const auto& axes = n.attr<graph::RemapAttrs>().axes;
    const Node& src = *n.inputs[0];
    std::vector<int> s(at.size());
    int valid = -1;
    for (size_t d = 0; d < at.size(); ++d) {
      const graph::RemapAxis& ax = axes[d];
      const int64_t len = src.shape[d];
      int t = ax.origin ? arith(BinaryOp::Sub, at[d], constant(ax.origin)) : at[d];
      auto clamp = [&](int x) {
        return arith(BinaryOp::Minimum, arith(BinaryOp::Maximum, x, constant(0)),
                     constant(len - 1));
      };
      if (ax.indexed) {
        // The index array, evaluated at this axis's coordinate (it fuses here too).
        const Node& idx = *n.inputs.back();
        t = lower_at(idx, {at[d]}, chain_id({}));
        if (idx.dtype != DType::Int64) t = address(Instr::cast(DType::Int64, t));
        if (ax.mode == IndexMode::Raise) check_range(t, len, static_cast<int>(d));
        if (ax.mode == IndexMode::Offset || ax.mode == IndexMode::Raise) {
          int negative = arith(BinaryOp::Lt, t, constant(0));
          t = address(
              Instr::where(DType::Int64, negative, arith(BinaryOp::Add, t, constant(len)), t));
          s[d] = clamp(t);
          continue;
        }
      }
      switch (ax.mode) {
        case IndexMode::Raise:  // (an indexed axis only: above)
        case IndexMode::Offset: {
          if (ax.origin == 0 && ax.step == 1 && n.shape[d] == len) {
            s[d] = t;  // the identity: never out of range
            break;
          }
          int q = t;
          int ok = -1;
          if (ax.step == -1) {
            q = arith(BinaryOp::Sub, constant(0), t);
          } else if (ax.step != 1) {
            q = arith(BinaryOp::FloorDivide, t, constant(ax.step));
            ok = arith(BinaryOp::Eq, arith(BinaryOp::Mul, q, constant(ax.step)), t);
          }
          int in = arith(BinaryOp::And, arith(BinaryOp::Ge, q, constant(0)),
                         arith(BinaryOp::Lt, q, constant(len)));
          ok = ok < 0 ? in : arith(BinaryOp::And, ok, in);
          valid = valid < 0 ? ok : arith(BinaryOp::And, valid, ok);
          s[d] = clamp(q);
          break;
        }
        case IndexMode::Clamp:
          s[d] = clamp(t);
          break;
        case IndexMode::Wrap:
          s[d] = arith(BinaryOp::Remainder, t, constant(len));
          break;
        case IndexMode::Reflect:
        case IndexMode::Symmetric: {
          // Folded into one period, then the second half mirrored: reflect's period 2n - 2
          // (at least 1: a lone element repeats), symmetric's 2n.
          bool sym = ax.mode == IndexMode::Symmetric;
          int64_t period = sym ? 2 * len : std::max<int64_t>(2 * len - 2, 1);
          int u = arith(BinaryOp::Remainder, t, constant(period));
          int back = arith(BinaryOp::Sub, constant(sym ? 2 * len - 1 : period), u);
          s[d] =
              address(Instr::where(DType::Int64, arith(BinaryOp::Lt, u, constant(len)), u, back));
          break;
        }
      }
    }
    int v = lower_at(src, s, chain_id({}));
    if (valid < 0) return v;
    return emit(Instr::where(reg(n.dtype), valid, v, lower_fill(*n.inputs[1])));
  }

  // A read of layout l at coordinates that are the iteration's own (each of `at` that l moves
  // along is an iota of coordinates()) is an ordinary access of the iteration space: take's
  // index array read in the consumer is loaded as any input is (16 bytes at a time where it is
  // dense), not gathered one element at a time through an address held in parameters. Its
  // access, or nothing where some coordinate is computed.
  std::optional<int> affine_access(const Layout& l, const std::vector<int>& at, int buffer) {
    Access a{buffer, l.offset, Strides(g_.shape.size(), 0)};
    for (size_t d = 0; d < at.size(); ++d) {
      if (l.strides[d] == 0) continue;
      if (!iteration_coordinates_.contains(at[d])) return std::nullopt;
      const Access& c = g_.accesses[static_cast<size_t>(g_.code[at[d]].access())];
      a.offset += l.strides[d] * c.offset;
      for (size_t k = 0; k < a.strides.size(); ++k) a.strides[k] += l.strides[d] * c.strides[k];
    }
    g_.accesses.push_back(std::move(a));
    return static_cast<int>(g_.accesses.size()) - 1;
  }

  // take's range check of index t along an axis of length len (FusedGroup::checks).
  void check_range(int t, int64_t len, int axis) {
    using graph::BinaryOp;
    int out = arith(BinaryOp::Or, arith(BinaryOp::Lt, t, constant(-len)),
                    arith(BinaryOp::Ge, t, constant(len)));
    address(Instr::check(out, t, static_cast<int>(g_.checks.size())));
    g_.checks.push_back({len, axis});
  }

  // n evaluated at coordinates `at` of the views `chain` (outermost first) above it.
  int lower_at(const Node& n, const std::vector<int>& at, int chain) {
    auto key = std::make_tuple(&n, at, chain);
    if (auto it = at_memo_.find(key); it != at_memo_.end()) return it->second;
    int v = lower_at_uncached(n, at, chain);
    at_memo_.emplace(key, v);
    return v;
  }

  int lower_at_uncached(const Node& n, const std::vector<int>& at, int chain) {
    const auto& views = chain_list_[chain];
    if (n.kind == OpKind::Scalar && !n.is_leaf()) return param(n);
    // A root of this group is computed again here, at other coordinates than it is written.
    if (n.is_leaf() || (is_materialized_(&n) && !is_group_root(&n))) {
      Layout l = through(n.shape, graph::contiguous_strides(n.shape), views);
      implicit_broadcast(l, at.size());
      int b = buffer_of_(&n);
      if (auto a = affine_access(l, at, b)) return widen(emit(Instr::load(n.dtype, *a)));
      // One access (one kernel argument) per buffer gathered from, however often.
      auto [it, fresh] = gathered_.emplace(b, static_cast<int>(g_.accesses.size()));
      if (fresh) g_.accesses.push_back({b, 0, Strides(g_.shape.size(), 0)});
      return widen(emit(Instr::gather(n.dtype, it->second, dot(l, at))));
    }
    if (n.kind == OpKind::Iota) {
      int pos = dot(through(n.shape, {1}, views), at);
      int start = param(*n.inputs[0]), step = param(*n.inputs[1]);
      const DType t = reg(n.dtype);
      int x = t == DType::Int64 ? pos : emit(Instr::cast(t, pos));
      return rounded(emit(Instr::binary(graph::BinaryOp::Add, t, start,
                                        emit(Instr::binary(graph::BinaryOp::Mul, t, x, step)))),
                     n.dtype);
    }
    if (is_view(n.kind)) {
      auto c = views;
      c.push_back(&n);
      return lower_at(*n.inputs[0], at, chain_id(c));
    }
    if (n.kind == OpKind::Remap) {
      std::vector<int> inner;
      for (size_t d = 0; d < n.shape.size(); ++d)
        inner.push_back(dot(through(n.shape, unit(n.shape.size(), d), views), at));
      return remap(n, inner, [&](const Node& fill) { return lower_at(fill, at, chain); });
    }
    // A reduction read at mapped positions is not one value per row of the iteration space.
    if (n.kind == OpKind::Reduce) throw CannotInline{&n};
    return computed(n, [&](const Node& in) { return lower_at(in, at, chain); });
  }

  // A reduction the planner left in memory's place (not a root): it becomes a Reduce
  // instruction, which is right only where every position of a row reads that row's result
  // (stride 0 along the reduced axes, the kept axes walking the result densely) and the group
  // iterates over the reduction's input, reduced along its trailing axes (rows) or its leading
  // ones (columns, as in x - mean(x, 0)). Otherwise the planner is told to write it after all.
  int lower_row_reduction(const Node& n, int chain) {
    const Node& in = *n.inputs[0];
    const std::vector<int>& axes = n.attr<graph::ReduceAttrs>().axes;
    Layout l{n.shape, graph::contiguous_strides(n.shape), 0};
    const auto& views = chain_list_[chain];
    for (size_t i = views.size(); i-- > 0;) apply_view(l, *views[i]);
    const size_t rank = g_.shape.size();
    if (spec_.reduce || in.shape != g_.shape ||
        graph::folded_end(axes, rank) == graph::AxesEnd::Neither)
      throw CannotInline{&n};
    bool ok = l.shape == g_.shape && l.offset == 0 && (g_.row_axes.empty() || g_.row_axes == axes);
    Shape kept_shape;
    for (size_t a = 0; a < rank; ++a)
      if (!std::binary_search(axes.begin(), axes.end(), static_cast<int>(a)))
        kept_shape.push_back(g_.shape[a]);
    Strides dense = graph::contiguous_strides(kept_shape);
    for (size_t a = 0, k = 0; ok && a < rank; ++a) {
      bool folded = std::binary_search(axes.begin(), axes.end(), static_cast<int>(a));
      ok = g_.shape[a] == 1 || l.strides[a] == (folded ? 0 : dense[k]);
      k += !folded;
    }
    if (!ok) throw CannotInline{&n};
    g_.row_axes = axes;
    // Read through several views (m and m * m in a variance), it is still one value per row.
    if (auto it = row_reductions_.find(&n); it != row_reductions_.end()) return it->second;
    int v = lower(in, chain_id({}));
    int r = emit(Instr::reduce(n.reduce_op(), reg(n.dtype), v));
    row_reductions_.emplace(&n, r);
    return r;
  }

  const GroupSpec& spec_;
  const std::function<int(const Node*)>& buffer_of_;
  const std::function<bool(const Node*)>& is_materialized_;
  std::vector<graph::Value>& param_nodes_;
  FusedGroup g_;
  std::map<std::vector<const Node*>, int> chains_;
  std::vector<std::vector<const Node*>> chain_list_;
  std::map<std::pair<const Node*, int>, int> memo_;
  std::multimap<size_t, std::pair<graph::Value, int>> params_;  // by constant_hash
  std::map<const Node*, int> row_reductions_;
  std::map<int64_t, int> constants_;
  std::map<int, int> gathered_;          // buffer -> its gather access
  std::set<int> iteration_coordinates_;  // coordinates()' iotas: the iteration's coordinates
  std::map<std::tuple<const Node*, std::vector<int>, int>, int> at_memo_;
};

}  // namespace

FusedGroup lower_group(const GroupSpec& spec,
                       const std::function<int(const graph::Node*)>& buffer_of,
                       const std::function<bool(const graph::Node*)>& is_materialized,
                       std::vector<graph::Value>& param_nodes) {
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
    if ((ins.kind == InstrKind::Load || ins.kind == InstrKind::Iota ||
         ins.kind == InstrKind::Gather) &&
        ins.access() == access)
      return ins.dtype;
  return DType::Float64;
}

DType FusedGroup::out_dtype(size_t o) const {
  return reduction ? reduction->result : code[outputs[o].instr].dtype;
}

bool FusedGroup::folds_columns() const {
  return !row_axes.empty() && row_axes.back() != static_cast<int>(shape.size()) - 1;
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

std::optional<StridedView> strided_view(const Node& n,
                                        const std::function<bool(const Node*)>& stop) {
  std::vector<const Node*> views;  // outermost first
  const Node* base = &n;
  while (is_view(base->kind) && !base->is_leaf() && !stop(base)) {
    views.push_back(base);
    base = base->inputs[0].get();
  }
  Layout l{base->shape, graph::contiguous_strides(base->shape), 0};
  try {
    for (size_t i = views.size(); i-- > 0;) apply_view(l, *views[i]);
  } catch (const NeedsMaterialize&) {
    return std::nullopt;
  }
  return StridedView{base, l.offset, std::move(l.strides)};
}

}  // namespace kiln::plan
