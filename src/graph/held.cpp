// Which unevaluated nodes below some outputs the program still holds: every reference to a
// node is an input of a node above it or a handle from outside the graph (an Array the program
// keeps, an expression it has not evaluated yet), so a node referenced more often than the
// graph's own edges to it is held. An evaluation writes those too (runtime::realize), so a loop
// that keeps reading a value it holds does not recompute that value's history every time.
#include "graph/hash.hpp"
#include "graph/node.hpp"

namespace kiln::graph {
namespace {

// Nodes that compute values (not views, which cost nothing to redo, nor constants).
bool computes(const Node& n) {
  return n.kind == OpKind::Unary || n.kind == OpKind::Binary || n.kind == OpKind::Where ||
         n.kind == OpKind::Cast || n.kind == OpKind::User;
}

}  // namespace

std::vector<NodeRef> held_nodes(const std::vector<NodeRef>& outputs) {
  struct Seen {
    const Node* node;
    NodeRef ref;  // one of the graph's own references (an input of some node above)
    long edges = 0;
    bool output = false;
  };
  std::vector<Seen> seen;
  PtrMap<size_t> index;  // node -> its place in seen
  auto find = [&](const Node* n) -> Seen* {
    const size_t* i = index.find(n);
    return i ? &seen[*i] : nullptr;
  };
  auto add = [&](const Node* n) -> Seen& {
    index.add(n, seen.size());
    seen.push_back({n, nullptr});
    return seen.back();
  };
  for (const auto& o : outputs)
    if (Seen* s = find(o.get()))
      s->output = true;
    else
      add(o.get()).output = true;
  // seen doubles as the work list: entries past `next` are still to be walked.
  for (size_t next = 0; next < seen.size(); ++next) {
    const Node* n = seen[next].node;
    if (n->is_leaf()) continue;
    for (const auto& in : n->args()) {
      Seen* s = find(in.get());
      if (!s) s = &add(in.get());
      if (!s->ref) s->ref = in;
      ++s->edges;
    }
  }
  std::vector<NodeRef> held;
  for (const auto& s : seen) {
    if (s.output || !s.ref || s.node->is_leaf() || !computes(*s.node)) continue;
    // Our own copy in Seen::ref is one reference more than the graph's edges.
    if (s.ref.use_count() > s.edges + 1) held.push_back(s.ref);
  }
  return held;
}

}  // namespace kiln::graph
