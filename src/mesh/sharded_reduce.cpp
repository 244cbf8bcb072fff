// Reductions of sharded arrays. Over axes that leave the split axis alone each rank reduces its
// own piece. Over the split axis each rank reduces its piece to a partial result in a dtype
// collectives carry, a collective combines the partials, and each rank finishes its copy (the
// mean's division, the result dtype), so the result is replicated. The dtype rules are
// kiln::sum's own (graph::accumulation_dtype), so a sharded sum has one device's dtype. An empty
// piece's partial is the reduction's identity: a sum's 0, a product's 1, any's false, all's
// true come from kiln's own reductions; max and min have none, so one is written
// (mesh/identity.hpp).
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <type_traits>

#include "graph/ops.hpp"
#include "graph/shape.hpp"
#include "kiln/mesh.hpp"
#include "mesh/communicator.hpp"
#include "mesh/identity.hpp"
#include "mesh/map_shards.hpp"
#include "mesh/wire_type.hpp"

namespace kiln {
namespace {

enum class Kind { Sum, Mean, Prod, Max, Min, Any, All };

graph::ReduceOp graph_op(Kind k) {
  switch (k) {
    case Kind::Sum:
      return graph::ReduceOp::Sum;
    case Kind::Mean:
      return graph::ReduceOp::Mean;
    case Kind::Prod:
      return graph::ReduceOp::Prod;
    case Kind::Any:
      return graph::ReduceOp::Any;
    case Kind::All:
      return graph::ReduceOp::All;
    case Kind::Max:
      return graph::ReduceOp::Max;
    case Kind::Min:
      return graph::ReduceOp::Min;
  }
  return graph::ReduceOp::Sum;
}

bool is_extremum(Kind k) { return k == Kind::Max || k == Kind::Min; }

Array reduce_local(Kind k, const Array& x, const AxesArg& axes, bool keepdims) {
  switch (k) {
    case Kind::Sum:
      return kiln::sum(x, axes, keepdims);
    case Kind::Mean:
      return kiln::mean(x, axes, keepdims);
    case Kind::Prod:
      return kiln::prod(x, axes, keepdims);
    case Kind::Any:
      return kiln::any(x, axes, keepdims);
    case Kind::All:
      return kiln::all(x, axes, keepdims);
    case Kind::Max:
      return kiln::max(x, axes, keepdims);
    case Kind::Min:
      return kiln::min(x, axes, keepdims);
  }
  return x;
}

Shape reduced_shape(const Shape& s, const std::vector<int>& axes, bool keepdims) {
  Shape out;
  for (int i = 0; i < static_cast<int>(s.size()); ++i) {
    bool reduced = std::find(axes.begin(), axes.end(), i) != axes.end();
    if (!reduced)
      out.push_back(s[i]);
    else if (keepdims)
      out.push_back(1);
  }
  return out;
}

// Rank r's partial result, in the dtype the collective carries. A mean's partial is a sum.
Array partial(Kind k, const ShardedArray& a, int rank, const std::vector<int>& axes, bool keepdims,
              DType carried, const Shape& out) {
  const Array& piece = a.shard(rank);
  if (is_extremum(k) && piece.shape()[*a.axis()] == 0)
    return mesh::extremum_identity(k == Kind::Max, carried, out, piece.device());
  const Kind local = k == Kind::Mean ? Kind::Sum : k;
  return reduce_local(local, piece.astype(carried), Axes(axes), keepdims);
}

// The collective that combines partials of k: any is a max of bools (NCCL carries them as
// bytes), all a min.
mesh::Reduction collective(Kind k) {
  switch (k) {
    case Kind::Prod:
      return mesh::Reduction::Prod;
    case Kind::Max:
    case Kind::Any:
      return mesh::Reduction::Max;
    case Kind::Min:
    case Kind::All:
      return mesh::Reduction::Min;
    default:
      return mesh::Reduction::Sum;
  }
}

// The partials combined on every rank. NCCL's max and min of floats let a number win over NaN
// (fmax), where NumPy's propagate it: a second all-reduce says which elements saw a NaN.
// Complex values have no elementwise max, min or product in NCCL (it combines their parts):
// their partials are gathered and reduced locally, by kiln's own arithmetic.
std::vector<Array> combine(Kind k, mesh::Communicator& comm, const std::vector<Array>& partials) {
  const DType t = mesh::first_held(partials).dtype();
  const mesh::Reduction op = collective(k);
  if (is_complex(t) && op != mesh::Reduction::Sum) {
    std::vector<Array> stacked = comm.all_gather(partials);
    mesh::for_each_held(stacked,
                        [&](const Array& s) { return reduce_local(k, s, Axes{0}, false); });
    return stacked;
  }
  std::vector<Array> combined = comm.all_reduce(partials, op);
  if (is_extremum(k) && is_floating(t)) {
    std::vector<Array> nan_seen = partials;
    mesh::for_each_held(nan_seen, [](const Array& p) { return isnan(p); });
    nan_seen = comm.all_reduce(nan_seen, mesh::Reduction::Max);
    for (size_t r = 0; r < combined.size(); ++r)
      if (combined[r].valid())
        combined[r] = where(nan_seen[r], std::numeric_limits<double>::quiet_NaN(), combined[r]);
  }
  return combined;
}

ShardedArray across_ranks(Kind k, const ShardedArray& a, const std::vector<int>& axes,
                          bool keepdims) {
  const int split = *a.axis();
  // An empty split axis: max and min raise as kiln::max does (every piece is empty).
  if (is_extremum(k) && a.shape()[split] == 0)
    reduce_local(k, mesh::first_held(a), Axes(axes), keepdims);
  const graph::ReduceOp op = graph_op(k);
  const DType acc = graph::accumulation_dtype(op, a.dtype());
  const DType result = graph::reduce_result_dtype(op, acc, a.dtype());
  const DType carried = mesh::wider_for_collective(acc);
  const Shape out = reduced_shape(a.shape(), axes, keepdims);
  std::vector<Array> partials = mesh::per_held_rank(
      a.mesh(), [&](int r) { return partial(k, a, r, axes, keepdims, carried, out); });
  std::vector<Array> combined = combine(k, a.mesh().communicator(), partials);
  int64_t count = 1;
  for (int ax : axes) count *= a.shape()[ax];
  mesh::for_each_held(combined, [&](Array c) {
    if (k == Kind::Mean) c = c / static_cast<double>(count);
    return c.astype(result);
  });
  return ShardedArray(a.mesh(), std::nullopt, out, std::move(combined));
}

ShardedArray reduce(Kind k, const ShardedArray& a, const AxesArg& axes_in, bool keepdims) {
  const char* name = graph::op_name(graph_op(k));
  // NumPy's axis=() reduces nothing; no axes given reduces every axis.
  std::vector<int> axes;
  if (!axes_in.given() || !axes_in.axes().empty())
    axes = graph::normalize_axes(axes_in.axes(), a.ndim(), name);
  const bool splits = a.axis() && std::find(axes.begin(), axes.end(), *a.axis()) != axes.end();
  if (splits) return across_ranks(k, a, axes, keepdims);
  std::vector<Array> pieces = a.shards();
  mesh::for_each_held(pieces,
                      [&](const Array& s) { return reduce_local(k, s, axes_in, keepdims); });
  std::optional<int> axis = a.axis();
  if (axis && !keepdims)
    *axis -= static_cast<int>(
        std::count_if(axes.begin(), axes.end(), [&](int ax) { return ax < *a.axis(); }));
  return ShardedArray(a.mesh(), axis, reduced_shape(a.shape(), axes, keepdims), std::move(pieces));
}

}  // namespace

ShardedArray sum(const ShardedArray& a, AxesArg axes, bool keepdims) {
  return reduce(Kind::Sum, a, axes, keepdims);
}
ShardedArray mean(const ShardedArray& a, AxesArg axes, bool keepdims) {
  return reduce(Kind::Mean, a, axes, keepdims);
}
ShardedArray max(const ShardedArray& a, AxesArg axes, bool keepdims) {
  return reduce(Kind::Max, a, axes, keepdims);
}
ShardedArray min(const ShardedArray& a, AxesArg axes, bool keepdims) {
  return reduce(Kind::Min, a, axes, keepdims);
}
ShardedArray prod(const ShardedArray& a, AxesArg axes, bool keepdims) {
  return reduce(Kind::Prod, a, axes, keepdims);
}
ShardedArray any(const ShardedArray& a, AxesArg axes, bool keepdims) {
  return reduce(Kind::Any, a, axes, keepdims);
}
ShardedArray all(const ShardedArray& a, AxesArg axes, bool keepdims) {
  return reduce(Kind::All, a, axes, keepdims);
}

}  // namespace kiln
