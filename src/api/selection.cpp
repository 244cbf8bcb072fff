#include "kiln/selection.hpp"

#include <string>

#include "api/build.hpp"
#include "graph/ops.hpp"
#include "graph/shape.hpp"
#include "kiln/joining.hpp"
#include "kiln/statistics.hpp"

namespace kiln {
namespace {

// `a` is consumed: a temporary operand (cumsum(x * 2 + 1)) is moved into the scan's graph, so
// it is not a handle the program holds when the statement evaluates, and the scan may compute
// it as it loads it (plan/planner.cpp: fold_scan_producers) instead of writing it.
Array scanned(Array a, std::optional<int> axis, std::optional<DType> dtype, graph::ScanOp op,
              graph::ReduceOp like) {
  // A 0-d array scans as one of one element, axis 0 or -1 included (as NumPy's axis check).
  const bool ravel = !axis || a.ndim() == 0;
  const DType from = a.dtype();
  Array src = ravel ? a.reshape({-1}) : std::move(a);
  const int ax = axis ? graph::normalize_axis(*axis, src.ndim(), graph::op_name(op)) : 0;
  // NumPy's sum / prod dtype (float16 stays float16: each step computes in float32 and rounds).
  const DType t =
      dtype ? *dtype
            : graph::reduce_result_dtype(like, graph::accumulation_dtype(like, from), from);
  Array in = src.astype(t);
  if (in.size() == 0) return in;
  // A bool accumulator (NumPy's dtype=bool): a running OR for a sum, AND for a product, the
  // values made bool first. The scans work in int64: counts of trues, products of 0s and 1s.
  if (t == DType::Bool)
    return api::finish(api::scan(in.astype(DType::Int64), ax, op)) != int64_t{0};
  return api::finish(api::scan(in, ax, op));
}

// A mask computed from other arrays (x > 0.5) is written once, then counted and compacted from
// memory: counting the expression itself would compute it in that pass and again in the pass
// that writes it for the compress step. (A reshape of a leaf is in memory already.)
void write_mask(const Array& mask) {
  if (!graph::below_reshapes(&api::node_of(mask))->is_leaf()) mask.eval();
}

// The rows of `rows` (L, R; null: the positions of the true entries) where mask (L, bool) is
// true, shaped (count, rest...) with R the size of `rest`. The count is evaluated first: the
// result's shape depends on it.
Array selected(const Array& mask, const Array* rows, const Shape& rest, DType t, Device d) {
  write_mask(mask);
  Shape out{mask.size() == 0 ? 0 : count_nonzero(mask).item<int64_t>()};
  out.insert(out.end(), rest.begin(), rest.end());
  if (shape_size(out) == 0) return zeros(out, t, d);
  return api::finish(api::compress(mask, rows, out));
}

}  // namespace

Array cumsum(Array a, std::optional<int> axis, std::optional<DType> dtype) {
  return scanned(std::move(a), axis, dtype, graph::ScanOp::Sum, graph::ReduceOp::Sum);
}
Array cumprod(Array a, std::optional<int> axis, std::optional<DType> dtype) {
  return scanned(std::move(a), axis, dtype, graph::ScanOp::Prod, graph::ReduceOp::Prod);
}

Array masked(const Array& x, const Array& mask) {
  if (mask.dtype() != DType::Bool)
    throw DTypeError(std::string("masked: the mask is ") + dtype_name(mask.dtype()) +
                     "; give a bool array (x != 0, say)");
  const Shape& s = x.shape();
  const Shape& m = mask.shape();
  if (m.size() > s.size() || !std::equal(m.begin(), m.end(), s.begin()))
    throw ShapeError("masked: a mask of shape " + shape_str(m) +
                     " does not match the leading axes of an array of shape " + shape_str(s));
  Shape rest(s.begin() + static_cast<std::ptrdiff_t>(m.size()), s.end());
  Array flat_rows = x.reshape({shape_size(m), shape_size(rest)});
  return selected(mask.reshape({-1}), &flat_rows, rest, x.dtype(), x.device());
}

Array flatnonzero(const Array& a) {
  Array mask = a.dtype() == DType::Bool ? a.reshape({-1}) : (a != 0).reshape({-1});
  return selected(mask, nullptr, {}, DType::Int64, a.device());
}

std::vector<Array> nonzero(const Array& a) {
  if (a.ndim() == 0)
    throw ShapeError(
        "nonzero of a 0-d array, which NumPy 2 refuses too; use atleast_1d "
        "(reshape({1})) first");
  Array flat = flatnonzero(a);
  std::vector<Array> coords;
  int64_t stride = a.size() == 0 ? 1 : a.size();
  for (size_t k = 0; k < a.shape().size(); ++k) {
    const int64_t len = a.shape()[k];
    stride = len == 0 ? 1 : stride / len;
    // (flat // stride) % len, without the division where stride is 1 (the last axis) or the
    // remainder where flat // stride < len already (the first): integer division is the
    // costliest arithmetic on either executor.
    Array c = len == 0 || stride == 1 ? flat : floor_divide(flat, stride);
    coords.push_back(len == 0 || k == 0 ? c : c % len);
  }
  return coords;
}

std::vector<Array> where(const Array& cond) { return nonzero(cond); }

// The flat position in a of each output element: its coordinates (the index array's along
// axis, an iota along the others, 0 where a's extent is 1 and broadcast), folded in C order; then
// take of the raveled a in Clip mode, every index checked already.
Array take_along_axis(const Array& a, const Array& indices, std::optional<int> axis) {
  if (!axis) {
    if (indices.ndim() != 1)
      throw ShapeError("take_along_axis: without an axis the indices must be 1-d, not of shape " +
                       shape_str(indices.shape()));
    return take_along_axis(a.reshape({-1}), indices, 0);
  }
  if (!is_integer(indices.dtype()))
    throw DTypeError(std::string("take_along_axis: indices are ") + dtype_name(indices.dtype()) +
                     "; give an integer array (astype(kiln::DType::Int64))");
  if (indices.ndim() != a.ndim())
    throw ShapeError("take_along_axis: indices of rank " + std::to_string(indices.ndim()) +
                     " for an array of rank " + std::to_string(a.ndim()) + "; they must match");
  const int ax = graph::normalize_axis(*axis, a.ndim(), "take_along_axis");
  const Shape& s = a.shape();
  Shape out = indices.shape();
  for (int d = 0; d < a.ndim(); ++d)
    if (d != ax && s[d] != out[d] && s[d] != 1 && out[d] != 1)
      throw ShapeError("take_along_axis: indices of shape " + shape_str(indices.shape()) +
                       " do not broadcast against an array of shape " + shape_str(s) +
                       " along axis " + std::to_string(d) + " (" + std::to_string(out[d]) +
                       " against " + std::to_string(s[d]) +
                       "); away from `axis` each must match or be 1");
    else if (d != ax)
      out[d] = s[d] == 1 ? out[d] : s[d];  // (0 against 1 is 0)
  const int64_t n = s[ax];
  if (indices.size() > 0 && shape_size(out) > 0) {
    if (const auto bad = api::out_of_range(indices, n))
      throw ShapeError("take_along_axis: index " + std::to_string(*bad) +
                       " is out of bounds for axis " + std::to_string(ax) + " with size " +
                       std::to_string(n));
  }
  Array i = indices.astype(DType::Int64);
  Array flat = full({}, int64_t{0}, DType::Int64, a.device());
  for (int d = 0; d < a.ndim(); ++d) {
    Shape along(a.ndim(), 1);
    along[d] = out[d];
    Array coord = d == ax     ? where(i < 0, i + n, i)
                  : s[d] == 1 ? full({}, int64_t{0}, DType::Int64, a.device())
                              : arange(0, out[d], 1, DType::Int64, a.device()).reshape(along);
    flat = flat * s[d] + coord;
  }
  return take(a.reshape({-1}), flat.broadcast_to(out), 0, TakeMode::Clip);
}

Array compress(const Array& condition, const Array& a, std::optional<int> axis) {
  if (condition.ndim() != 1)
    throw ShapeError("compress: the condition must be 1-d, not of shape " +
                     shape_str(condition.shape()));
  Array src =
      axis ? moveaxis(a, graph::normalize_axis(*axis, a.ndim(), "compress"), 0) : a.reshape({-1});
  const int64_t len = src.ndim() ? src.shape()[0] : 0, given = condition.size();
  Array cond = condition.astype(DType::Bool);
  if (given > len) {  // entries past the axis must be false, as NumPy requires
    if (any(cond(Slice(len, given))).item<bool>()) {
      const int64_t past =
          len + argmax(cond(Slice(len, given)).astype(DType::Int8)).item<int64_t>();
      throw ShapeError("compress: the condition selects index " + std::to_string(past) +
                       ", past the axis's length " + std::to_string(len) +
                       "; entries of the condition past the axis must be false");
    }
    cond = cond(Slice(0, len));
  } else if (given < len) {
    cond = concatenate({cond, zeros({len - given}, DType::Bool, cond.device())});
  }
  Array picked = masked(src, cond);
  return axis ? moveaxis(picked, 0, *axis) : picked;
}

}  // namespace kiln
