// Which unevaluated nodes below some outputs the program still holds: every reference to a
// node is an input of a node above it or a handle from outside the graph (an Array the program
// keeps, an expression it has not evaluated yet), so a node referenced more often than the
// graph's own edges to it is held. An evaluation writes those too (api::realize), so a loop
// that keeps reading a value it holds does not recompute that value's history every time.
#include <unordered_map>

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
    NodeRef ref;  // one of the graph's own references (an input of some node above)
    long edges = 0;
  };
  std::unordered_map<const Node*, Seen> seen;
  std::unordered_map<const Node*, bool> is_output;
  std::vector<const Node*> order, stack;
  for (const auto& o : outputs) {
    is_output[o.get()] = true;
    if (seen.emplace(o.get(), Seen{}).second) stack.push_back(o.get());
  }
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    order.push_back(n);
    if (n->is_leaf()) continue;
    for (const auto& in : n->args()) {
      auto [it, fresh] = seen.emplace(in.get(), Seen{});
      if (!it->second.ref) it->second.ref = in;
      ++it->second.edges;
      if (fresh) stack.push_back(in.get());
    }
  }
  std::vector<NodeRef> held;
  for (const Node* n : order) {
    auto& s = seen[n];
    if (is_output.count(n) || n->is_leaf() || !computes(*n) || !s.ref) continue;
    // Our own copy in Seen::ref is one reference more than the graph's edges.
    if (s.ref.use_count() > s.edges + 1) held.push_back(s.ref);
  }
  return held;
}

}  // namespace kiln::graph
