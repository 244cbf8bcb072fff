#include "plan/planner.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "plan/lower.hpp"
#include "plan/naming.hpp"

namespace kiln::plan {
namespace {

using graph::Node;
using graph::OpKind;

bool is_library(OpKind k) {
  return k == OpKind::Fft || k == OpKind::Random || k == OpKind::Copy || k == OpKind::Scatter ||
         k == OpKind::Scan || k == OpKind::Matmul || k == OpKind::Compress || k == OpKind::Sort ||
         k == OpKind::Collective;
}
bool is_view(OpKind k) {
  return k == OpKind::Reshape || k == OpKind::Permute || k == OpKind::Slice ||
         k == OpKind::Broadcast;
}

// A matmul's product and the bias add and relu its step computes (fold_matmul_epilogues).
struct EpilogueFold {
  const Node* matmul;
  const Node* bias;       // the add's other operand (views of the bias values), or null
  const Node* bias_base;  // the node below those views, which the step reads
  Epilogue kind;
};

class Planner {
 public:
  Planner(const std::vector<graph::NodeRef>& outputs, const graph::Signature* sig, size_t held)
      : outputs_(outputs), required_(outputs.size() - held), sig_(sig) {}

  Plan run() {
    collect();
    choose_roots();
    for (;;) {
      try {
        build();
        if (sig_) bind();
        add_frees();
        index_plan(plan_);
        return std::move(plan_);
      } catch (const CannotInline& c) {
        roots_.insert(c.node);
        not_inlinable_.insert(c.node);
        resolve_sharing();
      } catch (const NeedsMaterialize& m) {
        // A reshape that is not a view: give it a dense input. When that input is already a
        // root, the reshape was lowered in the input's own group (it joined it), recomputing
        // the input through the reshape; it must read the input from memory instead.
        if (!roots_.insert(m.node).second && !read_from_memory_.insert(m.node).second)
          throw std::logic_error("planner: a reshape's input cannot be materialized (kiln bug)");
        resolve_sharing();
      }
    }
  }

 private:
  // Unevaluated nodes reachable from the outputs, inputs before users.
  void collect() {
    std::unordered_set<const Node*> seen;
    std::vector<std::pair<const Node*, size_t>> stack;
    for (const auto& o : outputs_) {
      if (!seen.insert(o.get()).second) continue;
      stack.push_back({o.get(), 0});
      while (!stack.empty()) {
        auto& [n, i] = stack.back();
        const auto& args = n->is_leaf() ? kNoArgs : n->args();
        if (i < args.size()) {
          const Node* c = args[i++].get();
          if (seen.insert(c).second) stack.push_back({c, 0});
        } else {
          position_.emplace(n, order_.size());
          order_.push_back(n);
          stack.pop_back();
        }
      }
    }
  }

  // What an FFT reads. A GPU FFT of real input cast from integers or bool reads them as they
  // are: cuFFT converts each value as it loads it (a load callback), so the cast costs no pass
  // of its own. Only when they are in memory anyway: a leaf, or the output of a library step
  // (a copy to the device, random numbers), so no kernel is needed to produce them.
  static const Node* fft_source(const Node& fft) {
    const Node* in = fft.inputs[0].get();
    auto kind = fft.fft_kind();
    bool real_input = kind == graph::FftKind::R2C || kind == graph::FftKind::R2CFull;
    if (!real_input || !fft.device.is_cuda() || in->is_leaf() || in->kind != OpKind::Cast ||
        in->dtype != DType::Float64)
      return in;
    const Node* src = in->inputs[0].get();
    bool in_memory = src->is_leaf() || is_library(src->kind);
    return in_memory && is_integer_or_bool(src->dtype) ? src : in;
  }

  // What a matmul reads for its operand `in`: the node below in's views when the BLAS can read
  // in as strides over it (a transpose, a slice, a broadcast batch), so only that node is
  // written (if it is not in memory already); else in itself, written densely by a kernel.
  static const Node* matmul_source(const Node& in) {
    auto v = strided_view(in, [](const Node* n) { return n->is_leaf(); });
    bool constant = v && (v->base->kind == OpKind::Scalar || v->base->kind == OpKind::Iota);
    return v && !constant && blas_readable(in.shape, v->strides) ? v->base : &in;
  }

  // Where a scatter's values (1-d) are one element for every update (a scalar, or an element
  // of an array, broadcast): that element, read with stride 0, so no kernel writes it out once
  // per update. Only below views of a leaf or of a one-element node: a larger one would be
  // computed whole for one of its elements.
  static std::optional<StridedView> one_value(const Node& values) {
    auto v = strided_view(values, [](const Node* n) { return n->is_leaf(); });
    if (!v || v->strides.size() != 1 || v->strides[0] != 0) return std::nullopt;
    if (!v->base->is_leaf() && shape_size(v->base->shape) != 1) return std::nullopt;
    return v;
  }

  // Views of a leaf, a scalar, an iota or a value in memory: a load wherever they are read.
  bool cheap(const Node* n) const {
    while (is_view(n->kind) && !n->is_leaf()) n = n->inputs[0].get();
    return n->is_leaf() || n->kind == OpKind::Scalar || n->kind == OpKind::Iota || roots_.count(n);
  }

  static bool transcendental(const Node& n) {
    if (n.kind == OpKind::User) return true;
    if (n.kind == OpKind::Binary) return graph::is_heavy(n.binary_op());
    return n.kind == OpKind::Unary && graph::is_heavy(n.unary_op());
  }

  static int64_t nbytes(const Node& n) { return shape_size(n.shape) * itemsize(n.dtype); }

  // Whether a node several groups read is better computed again in each than written once and
  // read back: when what it reads from memory is not much bigger than it is (so each reader
  // moves about the bytes it would read anyway) and its arithmetic is short, with at most one
  // transcendental function. Softmax's exp(x - max(x)) and layernorm's x - mean(x) qualify: the
  // groups that read them read x instead, and nothing writes them.
  bool recomputable(const Node* n) const {
    constexpr int kMaxInstructions = 16;
    int instructions = 0, heavy = 0;
    int64_t input_bytes = 0;
    std::vector<const Node*> stack{n};
    std::unordered_set<const Node*> seen{n};
    while (!stack.empty()) {
      const Node* m = stack.back();
      stack.pop_back();
      if (m->kind == OpKind::Scalar || m->kind == OpKind::Iota) continue;
      if (m != n && materialized(m)) {
        input_bytes += nbytes(*m);
        continue;
      }
      if (m->kind == OpKind::Reduce || library(m)) return false;
      if (!is_view(m->kind)) ++instructions;
      heavy += transcendental(*m);
      for (const auto& c : m->args())
        if (seen.insert(c.get()).second) stack.push_back(c.get());
    }
    return instructions <= kMaxInstructions && heavy <= 1 && 2 * input_bytes <= 3 * nbytes(*n);
  }

  void choose_roots() {
    for (size_t i = 0; i < required_; ++i) roots_.insert(outputs_[i].get());
    library_inputs_.clear();
    for (const Node* n : order_) {
      if (n->is_leaf()) continue;
      if (n->kind == OpKind::Reduce || is_library(n->kind)) roots_.insert(n);
      if (n->kind == OpKind::Fft) library_inputs_.insert(fft_source(*n));
      if (n->kind == OpKind::Copy || n->kind == OpKind::Scan || n->kind == OpKind::Sort)
        library_inputs_.insert(n->inputs[0].get());
      if (n->kind == OpKind::Matmul)
        for (const auto& in : n->inputs) library_inputs_.insert(matmul_source(*in));
      if (n->kind == OpKind::Scatter) {  // each input in memory, one value as one element
        library_inputs_.insert(n->inputs[0].get());
        library_inputs_.insert(n->inputs[1].get());
        const auto one = one_value(*n->inputs[2]);
        library_inputs_.insert(one ? one->base : n->inputs[2].get());
      }
      if (n->kind == OpKind::Compress)
        for (const auto& in : n->inputs)  // x's rows read in place (kiln::masked reshapes x)
          library_inputs_.insert(graph::below_reshapes(in.get()));
      if (n->kind == OpKind::Collective)  // each rank's part, dense on its device
        for (const auto& in : n->inputs) library_inputs_.insert(in.get());
    }
    roots_.insert(library_inputs_.begin(), library_inputs_.end());
    fold_matmul_epilogues();
    fold_scan_producers();
    write_remaps_read_twice();
    fold_row_reductions();
    resolve_sharing();
    choose_held();
  }

  // A library step, or a node a matmul step computes in its epilogue.
  bool library(const Node* n) const { return is_library(n->kind) || epilogues_.count(n); }

  // A bias add and a relu that follow a matmul are computed by its step (plan::Epilogue:
  // cuBLASLt's epilogue on a GPU), which then writes their result instead of the product: the
  // elementwise pass after the product goes. Only where the values they consume are needed by
  // nothing else (sole_reader); the step then writes `top`, and neither the product nor the
  // sum is a root. A bias needs its values in memory, as any library input.
  void fold_matmul_epilogues() {
    epilogues_.clear();
    // Most graphs have no matmul: they pay for no reader map.
    if (std::none_of(order_.begin(), order_.end(),
                     [](const Node* n) { return !n->is_leaf() && n->kind == OpKind::Matmul; }))
      return;
    auto readers = graph_readers();
    for (const Node* m : order_) {
      if (m->is_leaf() || m->kind != OpKind::Matmul) continue;
      EpilogueFold f{m, nullptr, nullptr, Epilogue::None};
      const Node* top = m;
      const Node* next = sole_reader(m, readers);
      if (next && bias_add(*next, *m, f)) {
        f.kind = Epilogue::Bias;
        top = next;
        next = sole_reader(top, readers);
      }
      if (next && graph::is_relu(*next) && next->inputs[0].get() == top &&
          is_floating(top->dtype)) {
        f.kind = f.bias ? Epilogue::BiasRelu : Epilogue::Relu;
        top = next;
      }
      if (top == m) continue;
      roots_.erase(m);
      roots_.insert(top);
      if (f.bias_base) {
        library_inputs_.insert(f.bias_base);
        roots_.insert(f.bias_base);
      }
      epilogues_.emplace(top, f);
    }
  }

  // A scan computes its input in its own kernel (FusedGroup::scan) when the input is an
  // elementwise expression that nothing else needs: one kernel reads the expression's inputs
  // and writes the scan, and the expression never goes to memory and back. Not when the input
  // is in memory anyway (a leaf, a library step's output), is a reduction (a kernel of its own,
  // which a scan does not fold in) or a matmul's epilogue, is an output or held by the program
  // (it may be read later, so the plan writes it), or is read by another node (then it is
  // written once and every reader reads it; computing it again in the scan would repeat its
  // arithmetic, and resolve_sharing keeps shared work from being done twice). Views and
  // broadcasts of every kind fuse: the scan reads its inputs through the strided accesses every
  // kernel uses. What the expression reads from other groups (a reduction, a shared value)
  // those groups write as usual.
  void fold_scan_producers() {
    scan_producers_.clear();
    if (std::none_of(order_.begin(), order_.end(), [](const Node* n) {
          return !n->is_leaf() && n->kind == OpKind::Scan && !n->inputs[0]->is_leaf();
        }))
      return;
    auto readers = graph_readers();
    for (const Node* s : order_) {
      if (s->is_leaf() || s->kind != OpKind::Scan) continue;
      const Node* p = s->inputs[0].get();
      if (p->is_leaf() || p->kind == OpKind::Reduce || library(p) || readers[p].size() != 1 ||
          std::any_of(outputs_.begin(), outputs_.end(), [p](auto& o) { return o.get() == p; }))
        continue;
      library_inputs_.erase(p);
      roots_.erase(p);
      scan_producers_.emplace(s, p);
    }
  }

  // The producer scan s computes in its own kernel (fold_scan_producers), or null when it
  // reads its input from memory.
  const Node* fused_producer(const Node* s) const {
    auto it = scan_producers_.find(s);
    return it == scan_producers_.end() || materialized(it->second) ? nullptr : it->second;
  }

  // Each unevaluated node's readers in this graph, one entry per edge (x + x reads x twice).
  std::unordered_map<const Node*, std::vector<const Node*>> graph_readers() const {
    std::unordered_map<const Node*, std::vector<const Node*>> readers;
    for (const Node* n : order_)
      for (const auto& c : n->is_leaf() ? kNoArgs : n->args()) readers[c.get()].push_back(n);
    return readers;
  }

  // n's one reader when nothing else needs n: it is read along one edge of this graph, it is
  // no output and no library step reads it. Outputs include the held nodes (graph::held_nodes:
  // what an Array the program keeps, or an expression it has not evaluated, still refers to),
  // as for the reductions fold_row_reductions folds.
  const Node* sole_reader(
      const Node* n,
      const std::unordered_map<const Node*, std::vector<const Node*>>& readers) const {
    auto it = readers.find(n);
    if (it == readers.end() || it->second.size() != 1 || library_inputs_.count(n)) return nullptr;
    if (std::any_of(outputs_.begin(), outputs_.end(), [n](auto& o) { return o.get() == n; }))
      return nullptr;
    return it->second[0];
  }

  // Whether `add` is m + bias (either order) with the bias n values of m's dtype broadcast over
  // m's rows and batch (shape (n,), (1, n), (..., 1, n)): strides 0 but along the last axis,
  // over a node that is not a constant (cuBLASLt reads the bias from memory). Fills f's bias.
  static bool bias_add(const Node& add, const Node& m, EpilogueFold& f) {
    if (add.kind != OpKind::Binary || add.binary_op() != graph::BinaryOp::Add || add.immediate() ||
        add.dtype != m.dtype || add.shape != m.shape)
      return false;
    const Node* x = add.inputs[0].get() == &m ? add.inputs[1].get() : add.inputs[0].get();
    if (x == &m || (add.inputs[0].get() != &m && add.inputs[1].get() != &m)) return false;
    if (x->dtype != m.dtype || x->shape != m.shape) return false;
    auto v = strided_view(*x, [](const Node* n) { return n->is_leaf(); });
    if (!v || v->base->kind == OpKind::Scalar || v->base->kind == OpKind::Iota ||
        !bias_strides(m.shape, v->strides))
      return false;
    f.bias = x;
    f.bias_base = v->base;
    return true;
  }

  // Strides of a bias over the product's shape: 0 on every axis but the last, 1 on that one
  // (any stride where it has length 1).
  static bool bias_strides(const Shape& shape, const Strides& strides) {
    const size_t r = shape.size();
    for (size_t d = 0; d + 1 < r; ++d)
      if (strides[d] != 0 && shape[d] != 1) return false;
    return r == 0 || strides[r - 1] == 1 || shape[r - 1] == 1;
  }

  // Below an index map (Remap) values are computed at mapped coordinates, once per distinct
  // way they are read, so a Remap that the expression under another one reads along several
  // paths (a Jacobi step reads the last step at four offsets) is computed once per path, and a
  // loop of such steps would multiply that by itself every step. Such a Remap is written
  // instead; one read along a single path (a roll inside a concatenate, pad's reflect steps)
  // stays fused.
  void write_remaps_read_twice() {
    for (const Node* r : order_) {
      if (r->kind != OpKind::Remap || r->is_leaf()) continue;
      std::unordered_map<const Node*, int> edges;
      std::vector<const Node*> stack{r};
      std::unordered_set<const Node*> seen{r};
      while (!stack.empty()) {
        const Node* n = stack.back();
        stack.pop_back();
        for (const auto& c : n->args()) {
          if (c->is_leaf() || roots_.count(c.get())) continue;
          if (c->kind == OpKind::Remap && ++edges[c.get()] > 1) {
            roots_.insert(c.get());
            continue;
          }
          if (seen.insert(c.get()).second) stack.push_back(c.get());
        }
      }
    }
  }

  // A reduction along the trailing axes of its input whose one reader is an elementwise group
  // of the input's shape (softmax's max and sum, layernorm's mean and variance, x / sum(x)) is
  // not written: it is computed inside that group (InstrKind::Reduce), which keeps each row on
  // chip, so x is read once and the result written once. Decided before what several groups
  // share (resolve_sharing), as folding leaves fewer groups to share it. From the outputs down,
  // since a reduction read by another one (softmax's max, read by the sum's prologue) has one
  // reader only once that one is folded too. Which rows are short enough, and many enough, to
  // stay on chip: row_reducible.
  void fold_row_reductions() {
    for (size_t i = order_.size(); i-- > 0;) {
      const Node* r = order_[i];
      if (!roots_.count(r) || !row_reducible(*r) || not_inlinable_.count(r) ||
          library_inputs_.count(r))  // an FFT or a copy reads it from memory
        continue;
      if (std::any_of(outputs_.begin(), outputs_.end(), [r](auto& o) { return o.get() == r; }))
        continue;
      roots_.erase(r);
      auto in = reach();
      auto it = in.find(r);
      const Node* reader = it != in.end() && it->second.size() == 1 ? *it->second.begin() : nullptr;
      bool folded = reader && reader->kind != OpKind::Reduce && !library(reader) &&
                    reader->shape == r->inputs[0]->shape;
      if (!folded) roots_.insert(r);
    }
  }

  // Rows up to kMaxRowBytes go to blocks of 256 threads staging them in 48 KB. Longer rows,
  // up to kMaxLongRowBytes (softmax over a 50257-word vocabulary: 201 KB of float32), take a
  // block of 1024 threads each staging in the shared memory it opts in to (227 KB on the H200;
  // a device with less reads the rest of the row in place), when there are at least
  // kMinLongRows of them: one block per row on each SM leaves SMs idle when rows are fewer, and
  // then the statistics' kernels, which split long rows over blocks, are faster.
  // Columns (the last axis kept: x - mean(x, 0), or x - mean(x, 1) of a 3-d x) take a block
  // per tile of 32 columns, or on a GPU with thread block clusters a cluster of up to 8 blocks
  // (codegen/launch.cpp), staging the tile while a column is at most kMaxColumnBytes (a tile in
  // 8 x 64 KB); longer columns take two passes over memory either way, so their reduction is
  // written first.
  static bool row_reducible(const Node& r) {
    constexpr int64_t kMaxRowBytes = 32 * 1024, kMaxLongRowBytes = 224 * 1024;
    constexpr int64_t kMinLongRows = 512, kMaxColumnBytes = 16 * 1024;
    using graph::ReduceOp;
    if (r.kind != OpKind::Reduce || r.is_leaf()) return false;  // a leaf is in memory already
    auto op = r.reduce_op();
    const Node& in = *r.inputs[0];
    bool op_ok =
        op == ReduceOp::Sum || op == ReduceOp::Mean || op == ReduceOp::Max || op == ReduceOp::Min;
    if (!op_ok || !is_floating(r.dtype) || in.dtype != r.dtype) return false;
    const std::vector<int>& axes = r.attr<graph::ReduceAttrs>().axes;
    const auto end = graph::folded_end(axes, in.shape.size());
    int64_t row = 1;
    for (int a : axes) row *= in.shape[a];
    if (end == graph::AxesEnd::Neither || row <= 0) return false;
    const int64_t bytes = row * itemsize(r.dtype), rows = shape_size(in.shape) / row;
    if (end == graph::AxesEnd::KeepsLast) return bytes <= kMaxColumnBytes;
    return bytes <= kMaxRowBytes || (bytes <= kMaxLongRowBytes && rows >= kMinLongRows);
  }

  // Held values are written where that costs no extra pass, as one more output of an
  // elementwise kernel of their shape that computes them anyway, and where their unevaluated
  // history has grown long (kHeldDepth), so that a loop reading a value it keeps updating
  // (x = x * 0.999 + 0.001; max(x)) does not recompute an ever longer chain.
  void choose_held() {
    constexpr uint32_t kHeldDepth = 8;
    if (required_ == outputs_.size()) return;
    auto in = reach();
    bool added = false;
    for (size_t i = required_; i < outputs_.size(); ++i) {
      const Node* n = outputs_[i].get();
      bool elementwise_reads = false;
      if (auto it = in.find(n); it != in.end())
        for (const Node* r : it->second)
          elementwise_reads |= r->kind != OpKind::Reduce && !library(r) && r->shape == n->shape;
      if (elementwise_reads || n->depth >= kHeldDepth) added |= roots_.insert(n).second;
    }
    if (added) resolve_sharing();
  }

  // Which groups a node is computed in: the roots whose fused subgraph reaches it.
  std::unordered_map<const Node*, std::set<const Node*>> reach() const {
    std::unordered_map<const Node*, std::set<const Node*>> in;
    for (const Node* r : roots_) {
      // A scan's group computes its fused producer (fold_scan_producers).
      const Node* top = r->is_leaf() ? nullptr : fused_producer(r);
      if (!top && (r->is_leaf() || library(r))) continue;
      if (!top) top = r;
      std::vector<const Node*> stack{top};
      std::unordered_set<const Node*> seen{top};
      while (!stack.empty()) {
        const Node* n = stack.back();
        stack.pop_back();
        in[n].insert(r);
        for (const auto& c : n->args())
          if (!c->is_leaf() && !roots_.count(c.get()) && seen.insert(c.get()).second)
            stack.push_back(c.get());
      }
    }
    return in;
  }

  // A node needed by two groups is computed once, into memory, unless it is cheaper to
  // compute again in each (recomputable). Decided one node at a time from the outputs down:
  // once a node is in memory, what only it read is read by its own group alone, so for
  // y = sin(x) * 2 + cos(x) / 3 read by two groups the plan writes y, not sin(x), cos(x) and
  // every partial sum as well.
  void resolve_sharing() {
    for (;;) {
      const Node* top = nullptr;
      for (auto& [n, groups] : reach())
        if (groups.size() > 1 && !roots_.count(n) && !recomputed_.count(n) && !cheap(n) &&
            (!top || position_.at(n) > position_.at(top)))
          top = n;
      if (!top) return;
      if (recomputable(top))
        recomputed_.insert(top);
      else
        roots_.insert(top);
    }
  }

  bool materialized(const Node* n) const { return n->is_leaf() || roots_.count(n); }

  int buffer_of(const Node* n) {
    if (auto it = buffer_ids_.find(n); it != buffer_ids_.end()) return it->second;
    PlanBuffer b{n->dtype, n->shape, n->device, n->storage()};
    plan_.buffers.push_back(b);
    int id = static_cast<int>(plan_.buffers.size()) - 1;
    buffer_ids_.emplace(n, id);
    return id;
  }

  // Roots in dependency order. A same-shape elementwise root joins an earlier elementwise
  // group when everything it reads from other groups is computed before that group: the
  // merged kernel then runs at the earlier group's place and writes both outputs.
  std::vector<GroupSpec> group_roots() {
    std::vector<GroupSpec> groups;
    std::unordered_map<const Node*, int> group_of;
    for (const Node* n : order_) {
      if (!roots_.count(n) || n->is_leaf()) continue;
      bool elementwise = n->kind != OpKind::Reduce && !library(n);
      int target = -1;
      if (elementwise) {
        int last_dep = last_dependency(n, group_of);
        for (int g = static_cast<int>(groups.size()); g-- > 0 && target < 0;) {
          // (A plan may span devices: a mesh's ranks meet at its collectives.)
          bool joinable = !groups[g].reduce && !library(groups[g].roots[0]) &&
                          groups[g].roots[0]->shape == n->shape &&
                          groups[g].roots[0]->device == n->device;
          // Not an index map over a group of index maps: it would recompute the group's
          // roots at its mapped positions (a root of one's own group is not read from memory),
          // and a loop of Jacobi steps would nest that every step.
          bool maps_maps = remaps(n) && std::any_of(groups[g].roots.begin(), groups[g].roots.end(),
                                                    [this](const Node* r) { return remaps(r); });
          bool reads_own =
              last_dep == g && only_dependency(n, g, group_of) && !maps_maps &&
              std::none_of(groups[g].roots.begin(), groups[g].roots.end(),
                           [this](const Node* r) { return read_from_memory_.count(r); });
          if (joinable && (last_dep < g || reads_own)) target = g;
        }
      }
      if (target < 0) {
        groups.push_back({{n}, n->kind == OpKind::Reduce ? n : nullptr});
        target = static_cast<int>(groups.size()) - 1;
      } else {
        groups[target].roots.push_back(n);
      }
      group_of[n] = target;
    }
    return groups;
  }

  // Whether the fused subgraph of root n holds an index map (a Remap).
  bool remaps(const Node* n) const {
    std::vector<const Node*> stack{n};
    std::unordered_set<const Node*> seen{n};
    while (!stack.empty()) {
      const Node* m = stack.back();
      stack.pop_back();
      if (m->kind == OpKind::Remap) return true;
      for (const auto& c : m->args())
        if (!materialized(c.get()) && seen.insert(c.get()).second) stack.push_back(c.get());
    }
    return false;
  }

  // The groups whose outputs the fused subgraph of root n reads.
  std::set<int> dependencies(const Node* n, const std::unordered_map<const Node*, int>& group_of) {
    std::set<int> deps;
    std::vector<const Node*> stack{n};
    std::unordered_set<const Node*> seen{n};
    while (!stack.empty()) {
      const Node* m = stack.back();
      stack.pop_back();
      for (const auto& c : m->args()) {
        if (!seen.insert(c.get()).second) continue;
        if (auto it = group_of.find(c.get()); it != group_of.end())
          deps.insert(it->second);
        else if (!materialized(c.get()))
          stack.push_back(c.get());
      }
    }
    return deps;
  }
  int last_dependency(const Node* n, const std::unordered_map<const Node*, int>& group_of) {
    auto deps = dependencies(n, group_of);
    return deps.empty() ? -1 : *deps.rbegin();
  }
  bool only_dependency(const Node* n, int g, const std::unordered_map<const Node*, int>& group_of) {
    auto deps = dependencies(n, group_of);
    return deps.size() == 1 && *deps.begin() == g;
  }

  void build() {
    plan_ = Plan{};
    buffer_ids_.clear();
    param_nodes_.clear();
    random_nodes_.clear();
    collective_nodes_.clear();
    auto buf = [this](const Node* n) { return buffer_of(n); };
    auto mat = [this](const Node* n) { return materialized(n); };
    for (auto& spec : group_roots()) {
      const Node* r = spec.roots[0];
      if (auto ep = epilogues_.find(r); ep != epilogues_.end()) {
        plan_.steps.push_back(fused_matmul_step(*r, ep->second));
      } else if (r->kind == OpKind::Random) {
        random_nodes_.push_back({static_cast<int>(plan_.steps.size()), r});
        const auto& a = r->attr<graph::RandomAttrs>();
        plan_.steps.push_back(RandomStep{buf(r), r->random_dist(), a.seed, a.offset, a.a, a.b});
      } else if (r->kind == OpKind::Fft) {
        plan_.steps.push_back(fft_step(*r));
      } else if (r->kind == OpKind::Copy) {
        plan_.steps.push_back(CopyStep{buf(r->inputs[0].get()), buf(r)});
      } else if (const Node* producer = r->kind == OpKind::Scan ? fused_producer(r) : nullptr) {
        plan_.steps.push_back(fused_scan_step(*r, *producer));
      } else if (r->kind == OpKind::Scan) {
        plan_.steps.push_back(scan_step(*r));
      } else if (r->kind == OpKind::Matmul) {
        plan_.steps.push_back(matmul_step(*r, *r));
      } else if (r->kind == OpKind::Compress) {
        const auto& in = r->inputs;
        const int64_t width = in.size() > 1 ? in[1]->shape[1] : 1;
        plan_.steps.push_back(
            CompressStep{buf(graph::below_reshapes(in[0].get())),
                         in.size() > 1 ? buf(graph::below_reshapes(in[1].get())) : -1, buf(r),
                         in[0]->shape[0], width, width == 0 ? 0 : shape_size(r->shape) / width});
      } else if (r->kind == OpKind::Sort) {
        const Node& in = *r->inputs[0];
        const int64_t n = in.shape.empty() ? 1 : in.shape.back();
        plan_.steps.push_back(SortStep{buf(&in), buf(r), r->sort_op(), in.dtype,
                                       n == 0 ? 0 : shape_size(in.shape) / n, n});
      } else if (r->kind == OpKind::Scatter) {
        plan_.steps.push_back(scatter_step(*r));
      } else if (r->kind == OpKind::Collective) {
        if (!collective_written(r)) plan_.steps.push_back(collective_step(*r));
      } else {
        std::vector<graph::Value> params;
        plan_.steps.push_back(kernel_step(lower_group(spec, buf, mat, params), params));
      }
    }
    for (size_t i = 0; i < outputs_.size(); ++i) {
      const Node* o = outputs_[i].get();
      plan_.outputs.push_back(i < required_ || materialized(o) ? buf(o) : -1);
    }
  }

  // The step of group g, named, with the graph's nodes of its params (to rebind them when the
  // plan is reused); it is the next step of the plan.
  KernelStep kernel_step(FusedGroup g, const std::vector<graph::Value>& params) {
    for (size_t p = 0; p < params.size(); ++p)
      param_nodes_.push_back(
          {static_cast<int>(plan_.steps.size()), static_cast<int>(p), params[p]});
    g.name = kernel_name(g);
    if (!g.checks.empty())  // the words its range checks fold into, on its device
      g.check_buffer = check_words(g.checks.size(), plan_.buffers[g.outputs[0].buffer].device);
    return KernelStep{std::move(g)};
  }

  // The nodes of one collective, a rank each (the same inputs, runner and operation), that this
  // plan evaluates, in the planner's order.
  std::vector<const Node*> siblings(const Node& n) const {
    const auto& a = n.attr<graph::CollectiveAttrs>();
    std::vector<const Node*> out;
    for (const Node* m : order_) {
      if (m->kind != OpKind::Collective || !roots_.count(m) || m->inputs != n.inputs) continue;
      const auto& b = m->attr<graph::CollectiveAttrs>();
      if (b.runner == a.runner && b.kind == a.kind && b.reduction == a.reduction) out.push_back(m);
    }
    return out;
  }
  // Whether an earlier sibling's step writes n.
  bool collective_written(const Node* n) const { return buffer_ids_.count(n) != 0; }

  // The one step of n's collective: every rank's result, the siblings' into their buffers,
  // the others' into scratch buffers on their devices.
  CollectiveStep collective_step(const Node& n) {
    const auto& a = n.attr<graph::CollectiveAttrs>();
    collective_nodes_.push_back({static_cast<int>(plan_.steps.size()), &n});
    const std::vector<const Node*> sibs = siblings(n);
    CollectiveStep s{a.kind, a.reduction, a.size, a.ranks, {}, {}, {}};
    for (size_t i = 0; i < a.ranks.size(); ++i) {
      const Node& part = *n.inputs[i];
      s.in.push_back(buffer_of(&part));
      auto sib = std::find_if(sibs.begin(), sibs.end(), [&](const Node* m) {
        return m->attr<graph::CollectiveAttrs>().rank == a.ranks[i];
      });
      if (sib != sibs.end()) {
        s.out.push_back(buffer_of(*sib));
      } else {
        plan_.buffers.push_back({n.dtype, n.shape, part.device, {}});
        s.out.push_back(static_cast<int>(plan_.buffers.size()) - 1);
        s.scratch.push_back(s.out.back());
      }
    }
    return s;
  }

  // A new plan buffer for the two words of each of `checks` range checks on device d.
  int check_words(size_t checks, Device d) {
    plan_.buffers.push_back({DType::Int64, {2 * static_cast<int64_t>(checks)}, d, {}, true});
    return static_cast<int>(plan_.buffers.size()) - 1;
  }

  static ScanFold scan_fold(const Node& n) {
    const int axis = n.attr<graph::ScanAttrs>().axis;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= n.shape[d];
    for (size_t d = axis + 1; d < n.shape.size(); ++d) inner *= n.shape[d];
    return ScanFold{n.scan_op(), outer, n.shape[axis], inner};
  }

  ScanStep scan_step(const Node& n) {
    const ScanFold f = scan_fold(n);
    return ScanStep{buffer_of(n.inputs[0].get()), buffer_of(&n), f.op, f.outer, f.n, f.inner};
  }

  // The scan s with its producer computed in its kernel: the group that would write the
  // producer (the same lowering, so the same values), writing the scan's buffer instead and
  // scanning what it computes. The producer gets no buffer.
  KernelStep fused_scan_step(const Node& s, const Node& producer) {
    const int out = buffer_of(&s);
    auto buf = [&](const Node* n) { return n == &producer ? out : buffer_of(n); };
    auto mat = [this](const Node* n) { return materialized(n); };
    std::vector<graph::Value> params;
    FusedGroup g = lower_group(GroupSpec{{&producer}, nullptr}, buf, mat, params);
    g.scan = scan_fold(s);
    return kernel_step(std::move(g), params);
  }

  // An operand read in place when it is strides over a value in memory that the BLAS can
  // read; otherwise the planner writes it densely (a root) and tries again.
  MatmulOperand matmul_operand(const Node& in) {
    auto v = strided_view(in, [this](const Node* n) { return materialized(n); });
    if (!v || !materialized(v->base) || !blas_readable(in.shape, v->strides))
      throw NeedsMaterialize{&in};
    for (size_t d = 0; d + 2 < in.shape.size(); ++d)
      if (in.shape[d] == 1) v->strides[d] = 0;
    return MatmulOperand{buffer_of(v->base), v->offset, std::move(v->strides)};
  }

  // The product n, written to the buffer of `writes` (n, or the epilogue's last node).
  MatmulStep matmul_step(const Node& n, const Node& writes) {
    const Shape& a = n.inputs[0]->shape;
    const size_t r = n.shape.size();
    return MatmulStep{matmul_operand(*n.inputs[0]),
                      matmul_operand(*n.inputs[1]),
                      buffer_of(&writes),
                      Shape(n.shape.begin(), n.shape.end() - 2),
                      n.shape[r - 2],
                      n.shape[r - 1],
                      a[r - 1],
                      n.attr<graph::MatmulAttrs>().tf32};
  }

  // The product with its epilogue, writing `top`. The bias is read in place (its offset into
  // the buffer below its views); `unfused` is top's own group with the product read from the
  // step's output, which it overwrites: the kernel the program runs without the fold.
  MatmulStep fused_matmul_step(const Node& top, const EpilogueFold& f) {
    MatmulStep s = matmul_step(*f.matmul, top);
    s.epilogue = f.kind;
    if (f.bias) {
      auto v = strided_view(*f.bias, [this](const Node* n) { return materialized(n); });
      if (!v || !materialized(v->base) || !bias_strides(f.matmul->shape, v->strides))
        throw std::logic_error("planner: a matmul's bias is not in memory (kiln bug)");
      s.bias = buffer_of(v->base);
      s.bias_offset = v->offset;
    }
    auto buf = [&](const Node* n) { return n == f.matmul ? s.out : buffer_of(n); };
    auto mat = [&](const Node* n) { return n == f.matmul || materialized(n); };
    std::vector<graph::Value> params;  // the relu's +0, which the signature fixes: not rebound
    FusedGroup g = lower_group(GroupSpec{{&top}, nullptr}, buf, mat, params);
    g.name = kernel_name(g);
    s.unfused = std::make_shared<KernelStep>(KernelStep{std::move(g)});
    return s;
  }

  // The values of scatter n read in place: one element (one_value), or every one densely.
  ScatterStep scatter_step(const Node& n) {
    const auto& in = n.inputs;
    ScatterStep s{buffer_of(in[0].get()), buffer_of(in[1].get()), -1, buffer_of(&n),
                  n.scatter_op()};
    if (const auto one = one_value(*in[2])) {
      s.values = buffer_of(one->base);
      s.values_offset = one->offset;
      s.values_stride = 0;
    } else {
      s.values = buffer_of(in[2].get());
    }
    s.indices = n.attr<graph::ScatterAttrs>().indices;
    if (s.indices) s.check_buffer = check_words(1, plan_.buffers[s.out].device);
    return s;
  }

  FftStep fft_step(const Node& n) {
    const auto& a = n.attr<graph::FftAttrs>();
    return FftStep{buffer_of(fft_source(n)),
                   buffer_of(&n),
                   n.fft_kind(),
                   a.axes,
                   a.lengths,
                   a.inverse,
                   a.scale};
  }

  // Bindings: every value the plan took from the graph, by its ordinal in the signature. A
  // constant is bound to the first equal one, which the signature lists in its place.
  void bind() {
    std::unordered_map<const Node*, int> ordinal;
    std::unordered_multimap<size_t, int> constants;  // by graph::constant_hash
    for (size_t i = 0; i < sig_->values.size(); ++i) {
      const auto [v, which] = sig_->values[i];
      ordinal.emplace(v, static_cast<int>(i));  // (an Affine node's first constant, if twice)
      if (!v->is_leaf() && v->constant_count() > 0)
        constants.emplace(graph::constant_hash(*v, which), static_cast<int>(i));
    }
    auto constant = [&](graph::Value c) {
      for (auto [it, end] = constants.equal_range(graph::constant_hash(*c.node, c.which));
           it != end; ++it) {
        const graph::Value& v = sig_->values[it->second];
        if (graph::same_constant(*v.node, v.which, *c.node, c.which)) return it->second;
      }
      return ordinal.at(c.node);  // an evaluated Scalar node an arange reads: listed as a leaf
    };
    auto& b = plan_.bindings;
    for (const auto& [node, id] : buffer_ids_)
      if (plan_.buffers[id].external) b.buffers.push_back({id, ordinal.at(node)});
    // A null node is a structural constant (an index map's origin), the same in every graph of
    // this signature: nothing to rebind.
    for (const auto& p : param_nodes_)
      if (p.constant.node) b.params.push_back({p.step, p.param, constant(p.constant)});
    for (const auto& r : random_nodes_) b.randoms.push_back({r.step, ordinal.at(r.node)});
    for (const auto& c : collective_nodes_) b.collectives.push_back({c.step, ordinal.at(c.node)});
  }

  static std::vector<int> reads(const Step& s) {
    if (auto* k = std::get_if<KernelStep>(&s)) {
      std::vector<int> r;
      for (const auto& a : k->group.accesses)
        if (a.buffer >= 0) r.push_back(a.buffer);
      return r;
    }
    if (auto* f = std::get_if<FftStep>(&s)) return {f->in};
    if (auto* c = std::get_if<CopyStep>(&s)) return {c->src};
    if (auto* t = std::get_if<ScatterStep>(&s)) return {t->x, t->positions, t->values};
    if (auto* u = std::get_if<ScanStep>(&s)) return {u->in};
    if (auto* c = std::get_if<CompressStep>(&s))
      return c->values >= 0 ? std::vector<int>{c->mask, c->values} : std::vector<int>{c->mask};
    if (auto* m = std::get_if<MatmulStep>(&s))
      return m->bias >= 0 ? std::vector<int>{m->a.buffer, m->b.buffer, m->bias}
                          : std::vector<int>{m->a.buffer, m->b.buffer};
    if (auto* o = std::get_if<SortStep>(&s)) return {o->in};
    if (auto* c = std::get_if<CollectiveStep>(&s)) {  // its scratch results: freed after it
      std::vector<int> r = c->in;
      r.insert(r.end(), c->scratch.begin(), c->scratch.end());
      return r;
    }
    return {};
  }

  // Free each intermediate buffer right after its last reader.
  void add_frees() {
    std::set<int> keep(plan_.outputs.begin(), plan_.outputs.end());
    std::map<int, size_t> last;
    for (size_t i = 0; i < plan_.steps.size(); ++i)
      for (int b : reads(plan_.steps[i])) last[b] = i;
    std::vector<Step> steps;
    std::vector<int> moved_to(plan_.steps.size());
    for (size_t i = 0; i < plan_.steps.size(); ++i) {
      moved_to[i] = static_cast<int>(steps.size());
      steps.push_back(std::move(plan_.steps[i]));
      for (auto& [b, at] : last)
        if (at == i && !keep.count(b) && !plan_.buffers[b].external) steps.push_back(FreeStep{b});
    }
    plan_.steps = std::move(steps);
    for (auto& p : plan_.bindings.params) p.step = moved_to[p.step];
    for (auto& r : plan_.bindings.randoms) r.step = moved_to[r.step];
    for (auto& c : plan_.bindings.collectives) c.step = moved_to[c.step];
  }

  static inline const std::vector<graph::NodeRef> kNoArgs{};
  const std::vector<graph::NodeRef>& outputs_;
  const size_t required_;  // outputs_ past these are held values (make_plan)
  std::vector<const Node*> order_;
  std::unordered_map<const Node*, size_t> position_;  // in order_
  std::unordered_set<const Node*> recomputed_;        // shared, but computed in each reader
  std::unordered_set<const Node*> roots_;
  std::unordered_set<const Node*> read_from_memory_;  // roots whose dependants never join them
  std::unordered_set<const Node*> not_inlinable_;     // reductions their reader cannot fold
  std::unordered_set<const Node*> library_inputs_;    // what FFTs and copies read
  std::unordered_map<const Node*, EpilogueFold> epilogues_;      // by the node the step writes
  std::unordered_map<const Node*, const Node*> scan_producers_;  // scan -> input it computes
  std::unordered_map<const Node*, int> buffer_ids_;
  const graph::Signature* sig_;
  struct ParamNode {
    int step, param;
    graph::Value constant;  // a null node: a structural constant
  };
  // A step whose values come from its node: a random draw's seed, a collective's runner.
  struct StepNode {
    int step;
    const Node* node;
  };
  std::vector<ParamNode> param_nodes_;
  std::vector<StepNode> random_nodes_;
  std::vector<StepNode> collective_nodes_;
  Plan plan_;
};

}  // namespace

Plan make_plan(const std::vector<graph::NodeRef>& outputs, const graph::Signature* signature,
               size_t held) {
  return Planner(outputs, signature, held).run();
}

}  // namespace kiln::plan
