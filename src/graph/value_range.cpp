#include "graph/value_range.hpp"

#include <limits>
#include <type_traits>

namespace kiln::graph {
namespace {

// Whether every value of r fits in the integer dtype t, so a cast to t keeps each one.
bool holds_all(DType t, IntRange r) { return holds(t, r.lo) && holds(t, r.hi); }

// An integer arange: first + i * delta for i < length, both constants integers (creation.cpp
// keeps them so when the dtype holds them), its ends in the dtype (then no value wraps).
std::optional<IntRange> iota_range(const Node& n) {
  const Node& first = *n.inputs[0];
  const Node& delta = *n.inputs[1];
  if (first.kind != OpKind::Scalar || delta.kind != OpKind::Scalar || n.shape.at(0) == 0)
    return std::nullopt;
  const Scalar& a = first.scalar_value();
  const Scalar& d = delta.scalar_value();
  if (a.kind() != Scalar::Kind::Int || d.kind() != Scalar::Kind::Int) return std::nullopt;
  const __int128 start = a.as_int(),
                 end = start + static_cast<__int128>(n.shape[0] - 1) * d.as_int();
  const __int128 lo = start < end ? start : end, hi = start < end ? end : start;
  if (lo < std::numeric_limits<int64_t>::min() || hi > std::numeric_limits<int64_t>::max())
    return std::nullopt;
  const IntRange r{static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
  return holds_all(n.dtype, r) ? std::optional(r) : std::nullopt;
}

}  // namespace

bool holds(DType t, int64_t v) {
  return visit_dtype(t, [&](auto z) {
    using T = decltype(z);
    if constexpr (std::is_same_v<T, uint64_t>)
      return v >= 0;  // (every non-negative int64 is a uint64)
    else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      return v >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
             v <= static_cast<int64_t>(std::numeric_limits<T>::max());
    else
      return false;
  });
}

std::optional<IntRange> known_range(const Node& n) {
  if (!is_integer(n.dtype)) return std::nullopt;
  // What the node itself says, evaluated or not (its attributes and shape stay).
  if (n.kind == OpKind::Random) {
    if (n.random_dist() != RandomDist::Randint) return std::nullopt;
    const RandomAttrs& draw = n.attr<RandomAttrs>();  // [a, b), b > a (random.cpp checks)
    return IntRange{draw.a.as_int(), draw.b.as_int() - 1};
  }
  if (n.kind == OpKind::Sort) {  // argsort: positions along the last axis
    if (n.sort_op() != SortOp::Indices || n.shape.empty() || n.shape.back() == 0)
      return std::nullopt;
    return IntRange{0, n.shape.back() - 1};
  }
  // The rest follows inputs, which an evaluated node no longer has.
  if (n.is_leaf()) return std::nullopt;
  switch (n.kind) {
    case OpKind::Iota:
      return iota_range(n);
    case OpKind::Reshape:
    case OpKind::Permute:
    case OpKind::Slice:
    case OpKind::Broadcast:  // the input's values, some of them, rearranged
      return known_range(*n.inputs[0]);
    case OpKind::Cast: {
      const auto r = known_range(*n.inputs[0]);
      return r && holds_all(n.dtype, *r) ? r : std::nullopt;
    }
    case OpKind::Reduce: {  // argmax, argmin: positions along the one axis reduced
      const ReduceOp op = n.reduce_op();
      const auto& axes = n.attr<ReduceAttrs>().axes;
      if ((op != ReduceOp::ArgMax && op != ReduceOp::ArgMin) || axes.size() != 1)
        return std::nullopt;
      const int64_t length = n.inputs[0]->shape.at(static_cast<size_t>(axes[0]));
      return length > 0 ? std::optional(IntRange{0, length - 1}) : std::nullopt;
    }
    case OpKind::Compress: {  // flatnonzero: positions in its mask
      if (n.inputs.size() != 1) return std::nullopt;
      const int64_t size = shape_size(n.inputs[0]->shape);
      return size > 0 ? std::optional(IntRange{0, size - 1}) : std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace kiln::graph
