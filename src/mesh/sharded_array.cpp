// ShardedArray: one Array per rank, and the functions that make one, gather it and print it.
#include <ostream>
#include <string>

#include "graph/shape.hpp"
#include "kiln/joining.hpp"
#include "kiln/mesh.hpp"
#include "mesh/map_shards.hpp"
#include "mesh/split.hpp"

namespace kiln {
namespace {

// The shape rank r's piece must have.
Shape piece_shape(const Shape& whole, std::optional<int> axis, int ranks, int rank) {
  Shape s = whole;
  if (axis) s[*axis] = mesh::piece_of(whole[*axis], ranks, rank).length();
  return s;
}

void check_pieces(const Mesh& m, std::optional<int> axis, const Shape& shape,
                  const std::vector<Array>& shards) {
  auto fail = [&](const std::string& why) {
    throw ShapeError("kiln::ShardedArray over " + m.str() + ": " + why);
  };
  if (static_cast<int>(shards.size()) != m.size())
    fail(std::to_string(shards.size()) + " pieces for " + std::to_string(m.size()) + " ranks");
  if (axis && (*axis < 0 || *axis >= static_cast<int>(shape.size())))
    fail("axis " + std::to_string(*axis) + " is not an axis of shape " + shape_str(shape));
  const Array* first = nullptr;
  for (int r = 0; r < m.size(); ++r) {
    const Array& s = shards[r];
    if (!m.holds(r)) {
      if (s.valid())
        fail("rank " + std::to_string(r) + "'s piece is given, but another process holds rank " +
             std::to_string(r));
      continue;
    }
    if (!s.valid()) fail("rank " + std::to_string(r) + "'s piece is an empty handle");
    if (s.device() != m.device(r))
      throw DeviceError("kiln::ShardedArray: rank " + std::to_string(r) + "'s piece is on " +
                        s.device().str() + ", not on " + m.device(r).str());
    if (!first) first = &s;
    if (s.dtype() != first->dtype()) fail("the pieces differ in dtype");
    if (s.shape() != piece_shape(shape, axis, m.size(), r))
      fail("rank " + std::to_string(r) + "'s piece has shape " + shape_str(s.shape()) + ", not " +
           shape_str(piece_shape(shape, axis, m.size(), r)));
  }
}

}  // namespace

ShardedArray::ShardedArray(Mesh mesh, std::optional<int> axis, Shape shape,
                           std::vector<Array> shards)
    : mesh_(std::move(mesh)), axis_(axis), shape_(std::move(shape)), shards_(std::move(shards)) {
  check_pieces(mesh_, axis_, shape_, shards_);
}

DType ShardedArray::dtype() const { return mesh::first_held(*this).dtype(); }

const Array& ShardedArray::shard(int rank) const {
  if (rank < 0 || rank >= static_cast<int>(shards_.size()))
    throw Error("kiln::ShardedArray::shard: rank " + std::to_string(rank) + " is not in " +
                mesh_.str());
  if (!shards_[rank].valid())
    throw Error("kiln::ShardedArray::shard: rank " + std::to_string(rank) + " of " + mesh_.str() +
                " is held by another process; get() gathers the whole array");
  return shards_[rank];
}

std::string ShardedArray::layout() const {
  if (!axis_) return "replicated over " + mesh_.str() + ": " + shape_str(shape_);
  std::string s = "sharded along axis " + std::to_string(*axis_) + " over " + mesh_.str() + ":";
  for (int r = 0; r < mesh_.size(); ++r)
    s += (r ? ", " : " ") + shape_str(piece_shape(shape_, axis_, mesh_.size(), r));
  return s;
}

// One evaluation of every piece held: one plan, in which each collective the pieces wait for is
// one step for all ranks (on GPUs it returns once the work is queued).
const ShardedArray& ShardedArray::eval() const {
  std::vector<Array> held;
  for (const Array& s : shards_)
    if (s.valid()) held.push_back(s);
  kiln::eval(held);
  return *this;
}

// With every piece here, they are copied to the host and joined; otherwise the pieces other
// processes hold come by an all-gather (reshard to replicated). Evaluated before it returns, so
// a collective that fails (a rank gone, a timeout) throws here.
Array ShardedArray::get() const {
  auto evaluated = [](Array a) {
    a.eval();
    return a;
  };
  if (!axis_) return evaluated(mesh::first_held(*this).get());
  for (const Array& s : shards_)
    if (!s.valid()) return evaluated(mesh::first_held(reshard(*this, std::nullopt)).get());
  eval();
  std::vector<Array> pieces;
  for (const Array& s : shards_) pieces.push_back(s.get());
  return evaluated(pieces.size() == 1 ? pieces.front() : concatenate(pieces, *axis_));
}

ShardedArray ShardedArray::astype(DType t) const {
  return mesh::map_shards(*this, [t](const Array& s) { return s.astype(t); });
}

ShardedArray shard(const Array& x, const Mesh& mesh, int axis) {
  axis = graph::normalize_axis(axis, x.ndim(), "kiln::shard");
  std::vector<Array> pieces = mesh::per_held_rank(mesh, [&](int r) {
    auto piece = mesh::piece_of(x.shape()[axis], mesh.size(), r);
    return asarray(mesh::slice_along(x, axis, piece), mesh.device(r));
  });
  return ShardedArray(mesh, axis, x.shape(), std::move(pieces));
}

ShardedArray replicate(const Array& x, const Mesh& mesh) {
  std::vector<Array> copies =
      mesh::per_held_rank(mesh, [&](int r) { return asarray(x, mesh.device(r)); });
  return ShardedArray(mesh, std::nullopt, x.shape(), std::move(copies));
}

std::ostream& operator<<(std::ostream& os, const ShardedArray& a) { return os << a.get(); }

}  // namespace kiln
