// The structural signature: what the plan cache is keyed by. Two graphs with the same hash
// have the same operations, dtypes, shapes and sharing, whatever their scalar values and
// buffers; `values` lists, in one fixed visiting order, the nodes that carry those values, so
// a cached plan can be bound to a new graph of the same structure.
#include "graph/hash.hpp"
#include "graph/node.hpp"

namespace kiln::graph {
namespace {

struct Hasher {
  PtrMap<size_t> memo;
  std::vector<const Node*>& values;  // numbered in visiting order: a+a differs from a+b

  size_t of(const Node& n) {
    if (const size_t* h = memo.find(&n)) return *h;
    size_t h = hash_mix(static_cast<size_t>(n.dtype) + 1, static_cast<uint64_t>(n.device.kind));
    h = hash_mix(h, n.device.index);
    for (int64_t d : n.shape) h = hash_mix(h, d);
    bool leaf = n.is_leaf();
    if (leaf || n.kind == OpKind::Scalar || n.kind == OpKind::Random) {
      h = hash_mix(h, leaf ? 0x1eaf : static_cast<uint64_t>(n.kind) * 256 + n.op);
      h = hash_mix(h, values.size());
      values.push_back(&n);
    } else {
      h = hash_mix(h, static_cast<uint64_t>(n.kind) * 256 + n.op);
      h = hash_attrs(h, n.attrs);  // a Scalar's or Random's are values, left out above
      for (const auto& in : n.args()) h = hash_mix(h, of(*in));
    }
    memo.add(&n, h);
    return h;
  }
};

}  // namespace

Signature signature(const std::vector<NodeRef>& outputs) {
  Signature sig;
  Hasher hasher{{}, sig.values};
  size_t h = 0x6b696c6e;  // "kiln"
  for (const auto& n : outputs) h = hash_mix(h, hasher.of(*n));
  sig.hash = h;
  return sig;
}

size_t structural_hash(const std::vector<NodeRef>& outputs) { return signature(outputs).hash; }

}  // namespace kiln::graph
