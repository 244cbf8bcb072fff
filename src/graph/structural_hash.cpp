// The structural hash: what the plan cache is keyed by. Two graphs with the same hash have
// the same operations, dtypes, shapes and sharing, whatever their scalar values and buffers.
#include <unordered_map>

#include "graph/hash.hpp"
#include "graph/node.hpp"

namespace kiln::graph {
namespace {

struct Hasher {
  std::unordered_map<const Node*, size_t> memo;
  size_t next_leaf = 0;  // leaves are numbered in visiting order: a+a differs from a+b

  size_t of(const Node& n) {
    if (auto it = memo.find(&n); it != memo.end()) return it->second;
    size_t h = hash_mix(static_cast<size_t>(n.dtype) + 1, static_cast<uint64_t>(n.device.kind));
    h = hash_mix(h, n.device.index);
    for (int64_t d : n.shape) h = hash_mix(h, d);
    if (n.is_leaf() || n.kind == OpKind::Scalar) {
      h = hash_mix(h, n.kind == OpKind::Scalar && !n.is_leaf() ? 0x5ca1 : 0x1eaf);
      h = hash_mix(h, next_leaf++);
    } else {
      h = hash_mix(h, static_cast<uint64_t>(n.kind) * 256 + n.op);
      for (int64_t p : n.params) h = hash_mix(h, p);
      for (const auto& in : n.args()) h = hash_mix(h, of(*in));
    }
    memo.emplace(&n, h);
    return h;
  }
};

}  // namespace

size_t structural_hash(const std::vector<NodeRef>& outputs) {
  Hasher hasher;
  size_t h = 0x6b696c6e;  // "kiln"
  for (const auto& n : outputs) h = hash_mix(h, hasher.of(*n));
  return h;
}

}  // namespace kiln::graph
