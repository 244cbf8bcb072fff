// Elementwise operations on sharded arrays: each rank combines its own pieces, so the work
// stays on its device, lazy and fused with whatever else that rank computes. Operands whose
// pieces do not line up are resharded first, the smaller one moving (aligned, below).
#include <string>

#include "graph/shape.hpp"
#include "kiln/mesh.hpp"
#include "mesh/map_shards.hpp"
#include "mesh/split.hpp"

namespace kiln {
namespace {

// Where an operand's split axis lands in a result of rank `ndim` (broadcasting aligns the
// trailing axes).
std::optional<int> axis_in_result(const ShardedArray& x, int ndim) {
  if (!x.axis()) return std::nullopt;
  return *x.axis() + (ndim - x.ndim());
}

// The result axis x's pieces cover whole: its split axis where that axis spans the result's
// length (not one that broadcasts), else none.
std::optional<int> usable_axis(const ShardedArray& x, const Shape& out) {
  const std::optional<int> r = axis_in_result(x, static_cast<int>(out.size()));
  if (r && x.shape()[static_cast<size_t>(*x.axis())] == out[static_cast<size_t>(*r)]) return r;
  return std::nullopt;
}

// The axis the result of a op b is split along, or none: the operands' common axis, else the
// larger operand's (so the smaller one is the one that moves), else none (both replicated).
std::optional<int> result_axis(const ShardedArray& a, const ShardedArray& b, const Shape& out) {
  const std::optional<int> ra = usable_axis(a, out), rb = usable_axis(b, out);
  if (ra && rb) return a.size() >= b.size() ? ra : rb;
  return ra ? ra : rb;
}

// x laid out for a result of shape `out` split along `axis` (none: replicated): as it is when
// its pieces line up with the result's (or it is replicated), else resharded: an all-to-all to
// the result's axis where x spans it, an all-gather to replicated where x does not (an axis it
// lacks or broadcasts along), which moves x's pieces to every rank.
ShardedArray aligned(const ShardedArray& x, const Shape& out, std::optional<int> axis) {
  if (!x.axis()) return x;
  if (axis && usable_axis(x, out) == axis) return x;
  const int d = axis ? *axis - (static_cast<int>(out.size()) - x.ndim()) : -1;
  if (d >= 0 && x.shape()[static_cast<size_t>(d)] == out[static_cast<size_t>(*axis)])
    return reshard(x, d);
  return reshard(x, std::nullopt);
}

// Rank r's part of operand x for a result of shape `out` split along `axis`: its own piece, or
// for a replicated x that spans the split axis, the slice that rank's result covers.
Array local_operand(const ShardedArray& x, int rank, const Shape& out, std::optional<int> axis) {
  if (x.axis() || !axis) return x.shard(rank);
  const int d = *axis - (static_cast<int>(out.size()) - x.ndim());
  if (d < 0 || x.shape()[d] == 1) return x.shard(rank);  // broadcasts along the split axis
  return mesh::slice_along(x.shard(rank), d, mesh::piece_of(out[*axis], x.mesh().size(), rank));
}

template <class F>
ShardedArray zip(const ShardedArray& a, const ShardedArray& b, F&& f) {
  if (!(a.mesh() == b.mesh()))
    throw DeviceError("arrays on different meshes (" + a.mesh().str() + " and " + b.mesh().str() +
                      ") cannot be combined; shard both onto the same kiln::Mesh object");
  const Shape out = graph::broadcast_shapes(a.shape(), b.shape());
  const std::optional<int> axis = result_axis(a, b, out);
  const ShardedArray x = aligned(a, out, axis), y = aligned(b, out, axis);
  std::vector<Array> pieces = mesh::per_held_rank(a.mesh(), [&](int r) {
    return f(local_operand(x, r, out, axis), local_operand(y, r, out, axis));
  });
  return ShardedArray(a.mesh(), axis, out, std::move(pieces));
}

}  // namespace

#define KILN_SHARDED_BINARY(op)                                                      \
  ShardedArray operator op(const ShardedArray& a, const ShardedArray& b) {           \
    return zip(a, b, [](Array x, Array y) { return std::move(x) op std::move(y); }); \
  }                                                                                  \
  ShardedArray operator op(const ShardedArray& a, Scalar b) {                        \
    return mesh::map_shards(a, [b](const Array& x) { return x op b; });              \
  }                                                                                  \
  ShardedArray operator op(Scalar a, const ShardedArray& b) {                        \
    return mesh::map_shards(b, [a](const Array& x) { return a op x; });              \
  }
KILN_SHARDED_BINARY(+)
KILN_SHARDED_BINARY(-)
KILN_SHARDED_BINARY(*)
KILN_SHARDED_BINARY(/)
#undef KILN_SHARDED_BINARY

ShardedArray operator-(const ShardedArray& a) {
  return mesh::map_shards(a, [](const Array& x) { return -x; });
}

#define KILN_SHARDED_UNARY(fn)                                              \
  ShardedArray fn(const ShardedArray& a) {                                  \
    return mesh::map_shards(a, [](const Array& x) { return kiln::fn(x); }); \
  }
KILN_SHARDED_UNARY(abs)
KILN_SHARDED_UNARY(sqrt)
KILN_SHARDED_UNARY(exp)
KILN_SHARDED_UNARY(log)
KILN_SHARDED_UNARY(sin)
KILN_SHARDED_UNARY(cos)
KILN_SHARDED_UNARY(tanh)
#undef KILN_SHARDED_UNARY

}  // namespace kiln
