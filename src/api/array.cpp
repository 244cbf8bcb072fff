// kiln::Array's members: properties, views and evaluation.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "api/build.hpp"
#include "api/promotion.hpp"
#include "graph/dtype_table.hpp"
#include "graph/shape.hpp"
#include "graph/value_range.hpp"
#include "kiln/selection.hpp"
#include "runtime/backends.hpp"
#include "runtime/pipeline.hpp"

namespace kiln {

using api::node_of;
using graph::NodeSpec;
using graph::OpKind;

DType Array::dtype() const { return node_of(*this).dtype; }
const Shape& Array::shape() const { return node_of(*this).shape; }
int Array::ndim() const { return static_cast<int>(shape().size()); }
int64_t Array::size() const { return shape_size(shape()); }
int64_t Array::nbytes() const { return size() * itemsize(dtype()); }
Device Array::device() const { return node_of(*this).device; }

Array Array::astype(DType t) const { return api::finish(api::cast(api::ref_of(*this), t)); }

Array Array::reshape(Shape s) const {
  const auto& n = node_of(*this);
  Shape to = graph::resolve_reshape(n.shape, std::move(s));
  if (to == n.shape) return *this;
  NodeSpec spec{OpKind::Reshape, 0, n.dtype, to, n.device, {node_}};
  return api::finish(graph::make_node(std::move(spec)));
}

Array Array::transpose() const {
  std::vector<int> axes(ndim());
  std::iota(axes.rbegin(), axes.rend(), 0);
  return transpose(axes);
}

Array Array::transpose(std::vector<int> axes) const {
  const auto& n = node_of(*this);
  int nd = ndim();
  if (static_cast<int>(axes.size()) != nd)
    throw ShapeError("transpose: axes has " + std::to_string(axes.size()) +
                     " entries but the array has " + std::to_string(nd) +
                     " dimensions; give a permutation of 0.." + std::to_string(nd - 1));
  std::vector<int> perm;
  Shape shape;
  for (int a : axes) {
    int ax = graph::normalize_axis(a, nd, "transpose");
    perm.push_back(ax);
    shape.push_back(n.shape[ax]);
  }
  auto sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw ShapeError("transpose: axes repeat an axis; give a permutation of 0.." +
                     std::to_string(nd - 1));
  bool identity = std::is_sorted(perm.begin(), perm.end());
  if (identity) return *this;
  NodeSpec spec{
      OpKind::Permute, 0, n.dtype, shape, n.device, {node_}, graph::PermuteAttrs{std::move(perm)}};
  return api::finish(graph::make_node(std::move(spec)));
}

Array Array::broadcast_to(Shape s) const {
  graph::check_rank(s, "broadcast_to");
  return api::finish(api::broadcast(api::ref_of(*this), s));
}

namespace {

// NumPy's slice.indices(): clamps start and stop, returns (start, length).
std::pair<int64_t, int64_t> slice_range(const Slice& s, int64_t dim, int axis) {
  if (s.step == 0)
    throw ShapeError("slice step cannot be zero (axis " + std::to_string(axis) + ")");
  int64_t step = s.step;
  auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v < 0 ? *v + dim : *v;
    if (step > 0) return std::clamp<int64_t>(x, 0, dim);
    return std::clamp<int64_t>(x, -1, dim - 1);
  };
  int64_t start = clamp(s.start, step > 0 ? 0 : dim - 1);
  int64_t stop = clamp(s.stop, step > 0 ? dim : -1);
  // Written so that no step overflows (|step| may be up to 2^63): start and stop lie in
  // [-1, dim], so their differences are small.
  int64_t len = step > 0 ? (stop > start ? (stop - start - 1) / step + 1 : 0)
                         : (start > stop ? (stop - start + 1) / step + 1 : 0);
  return {start, len};
}

// The indices with the ellipsis (or, without one, the trailing axes left out) expanded into
// whole slices: one entry per axis of the array, plus the newaxis entries in their places.
std::vector<Index> expand_ellipsis(const std::vector<Index>& idx, size_t ndim) {
  size_t axes = 0, ellipses = 0;
  for (const Index& ix : idx) {
    axes += std::holds_alternative<int64_t>(ix) || std::holds_alternative<Slice>(ix);
    ellipses += std::holds_alternative<Ellipsis>(ix);
  }
  if (ellipses > 1) throw ShapeError("an index can only have a single ellipsis; give one");
  if (axes > ndim)
    throw ShapeError("too many indices: the array has " + std::to_string(ndim) +
                     " dimensions but " + std::to_string(axes) + " were given");
  std::vector<Index> out;
  for (const Index& ix : idx)
    if (std::holds_alternative<Ellipsis>(ix))
      out.insert(out.end(), ndim - axes, Index(Slice{}));
    else
      out.push_back(ix);
  if (!ellipses) out.insert(out.end(), ndim - axes, Index(Slice{}));
  return out;
}

}  // namespace

Slice::Slice(const char* text) {
  std::string t(text ? text : "");
  auto bad = [&] {
    return ShapeError("slice \"" + t + "\" is not NumPy's start:stop:step (integers, each part " +
                      "optional, e.g. \"1:-1\", \"::2\" or \":\")");
  };
  std::vector<std::string> parts(1);
  for (char c : t)
    if (c == ':')
      parts.emplace_back();
    else if (c != ' ')
      parts.back() += c;
  if (parts.size() < 2 || parts.size() > 3) throw bad();
  auto number = [&](const std::string& p) -> std::optional<int64_t> {
    if (p.empty()) return std::nullopt;
    size_t used = 0;
    int64_t v = 0;
    try {
      v = std::stoll(p, &used);
    } catch (const std::exception&) {
      throw bad();
    }
    if (used != p.size()) throw bad();
    return v;
  };
  start = number(parts[0]);
  stop = number(parts[1]);
  if (parts.size() == 3) step = number(parts[2]).value_or(1);
}

namespace {

// What an index selects: per axis of the array, the first position and step (SliceAttrs),
// the selection's shape with every axis kept (`sliced`, integers as length 1) and as NumPy
// gives it (`kept`: integers dropped, newaxis added).
struct Region {
  graph::SliceAttrs attrs;
  Shape sliced, kept;
};

Region region_of(const Shape& shape, const std::vector<Index>& idx_in) {
  std::vector<Index> idx = expand_ellipsis(idx_in, shape.size());
  Region r;
  size_t i = 0;  // the array's axis the next integer or slice indexes
  for (const Index& ix : idx) {
    if (std::holds_alternative<NewAxis>(ix)) {
      r.kept.push_back(1);
      continue;
    }
    int64_t dim = shape[i];
    if (auto* k = std::get_if<int64_t>(&ix)) {
      int64_t j = *k < 0 ? *k + dim : *k;
      if (j < 0 || j >= dim)
        throw ShapeError("index " + std::to_string(*k) + " is out of bounds for axis " +
                         std::to_string(i) + " with size " + std::to_string(dim));
      r.attrs.axes.push_back({j, 1});
      r.sliced.push_back(1);
    } else {
      auto [start, len] = slice_range(std::get<Slice>(ix), dim, static_cast<int>(i));
      // With at most one element the step does not matter; 1 keeps the planner's strides
      // (step times stride) from overflowing for a huge one.
      r.attrs.axes.push_back({start, len > 1 ? std::get<Slice>(ix).step : 1});
      r.sliced.push_back(len);
      r.kept.push_back(len);
    }
    ++i;
  }
  return r;
}

}  // namespace

Array Array::index(std::vector<Index> idx_in) const {
  const auto& n = node_of(*this);
  Region r = region_of(n.shape, idx_in);
  Array out = *this;
  bool identity = r.sliced == n.shape;
  for (const auto& ax : r.attrs.axes) identity &= ax.start == 0 && ax.step == 1;
  if (!identity) {
    NodeSpec spec{OpKind::Slice, 0, n.dtype, r.sliced, n.device, {node_}, std::move(r.attrs)};
    out = Array(graph::make_node(std::move(spec)));
  }
  return r.kept == r.sliced ? out : out.reshape(r.kept);
}

// ---- integer-array indexing (take) -----------------------------------------------------------

Array take(const Array& a, const Array& indices, std::optional<int> axis, TakeMode mode) {
  if (!is_integer(indices.dtype()))
    throw DTypeError(std::string("take: indices are ") + dtype_name(indices.dtype()) +
                     "; give an integer array (astype(kiln::DType::Int64))");
  if (!axis) return take(a.reshape({-1}), indices, 0, mode);
  const int ax = graph::normalize_axis(*axis, a.ndim(), "take");
  const int64_t n = a.shape()[ax], count = indices.size();
  // NumPy raises IndexError on a bad index, unless the result is empty (then nothing is read).
  // Here the kernel that gathers checks each index it reads (IndexMode::Raise): the
  // evaluation throws and stores nothing, and no pass over the indices runs before it.
  Shape mapped = a.shape(), out;
  mapped[ax] = count;
  for (int d = 0; d < a.ndim(); ++d) {
    if (d != ax) {
      out.push_back(a.shape()[d]);
      continue;
    }
    for (int64_t e : indices.shape()) out.push_back(e);
  }
  if (n == 0 && count > 0) {  // nothing to take from: only an empty result is possible
    if (shape_size(out) == 0) return zeros(out, a.dtype(), a.device());
    throw ShapeError("take: cannot take " + std::to_string(count) + " elements from axis " +
                     std::to_string(ax) + ", which is empty");
  }
  // Indices known to lie in [0, n) by how they were made (randint(0, n), argsort along an axis
  // of n, graph/value_range.hpp) need no check: clamping them, which changes none, gathers
  // without the check's words and the wait for them at the end of the evaluation.
  const auto known = graph::known_range(api::node_of(indices));
  if (mode == TakeMode::Raise && known && known->lo >= 0 && known->hi < n) mode = TakeMode::Clip;
  std::vector<graph::RemapAxis> axes(a.ndim());
  axes[ax] = {mode == TakeMode::Wrap   ? graph::IndexMode::Wrap
              : mode == TakeMode::Clip ? graph::IndexMode::Clamp
                                       : graph::IndexMode::Raise,
              0, 1, true};
  const graph::Node* nodes[] = {&api::node_of(a), &api::node_of(indices)};
  Device d = api::common_device(nodes, "take");
  graph::NodeRef idx = api::copy_to(api::ref_of(indices.reshape({-1})), d);
  return api::finish(
             api::remap(api::copy_to(api::ref_of(a), d), mapped, std::move(axes), nullptr, idx))
      .reshape(out);
}

Array Array::index(const Array& indices) const {
  return indices.dtype() == DType::Bool ? masked(*this, indices) : take(*this, indices, 0);
}

namespace {

// x[i0, i1, ...] on x's leading axes. The indexed axes become one (a reshape, a view where x's
// layout allows it), and each index array's position along it is summed in: flat = (i0 * n1 +
// i1) * n2 + i2 ..., taken in Clip mode, since every index is checked here, at the call (the
// indices are evaluated): one out of range throws ShapeError naming its axis as the user counts
// it, `user_axes[k]` (advanced indexing moves the indexed axes to the front first).
Array gather_leading(const Array& x, const std::vector<Array>& indices,
                     const std::vector<int>& user_axes) {
  const Shape& shape = x.shape();
  const size_t m = indices.size();
  if (m > shape.size())
    throw ShapeError("index: " + std::to_string(m) + " index arrays for an array of " +
                     std::to_string(shape.size()) + " dimensions");
  Shape common = indices[0].shape();
  for (size_t k = 1; k < m; ++k) common = graph::broadcast_shapes(common, indices[k].shape());
  Array flat;
  for (size_t k = 0; k < m; ++k) {
    const Array& i = indices[k];
    if (!is_integer(i.dtype()))
      throw DTypeError(std::string("index: index array ") + std::to_string(k) + " is " +
                       dtype_name(i.dtype()) +
                       "; give an integer array (astype(kiln::DType::Int64))");
    const int64_t len = shape[k];
    if (i.size() > 0 && shape_size(common) > 0) {
      if (const auto bad = api::out_of_range(i, len))
        throw ShapeError("index: index " + std::to_string(*bad) + " is out of bounds for axis " +
                         std::to_string(user_axes[k]) + " with size " + std::to_string(len));
    }
    Array i64 = i.astype(DType::Int64);
    Array pos = where(i64 < 0, i64 + len, i64);
    flat = k == 0 ? pos : flat * len + pos;
  }
  Shape folded = {-1};
  folded.insert(folded.end(), shape.begin() + static_cast<std::ptrdiff_t>(m), shape.end());
  if (shape_size(shape) == 0) folded[0] = shape_size(Shape(shape.begin(), shape.begin() + m));
  return take(x.reshape(folded), flat.broadcast_to(common), 0, TakeMode::Clip);
}

}  // namespace

Array Array::index(const std::vector<Array>& indices) const {
  node_of(*this);
  if (indices.empty()) return *this;
  std::vector<int> axes(indices.size());
  std::iota(axes.begin(), axes.end(), 0);
  return gather_leading(*this, indices, axes);
}

// ---- NumPy's advanced indexing: arrays mixed with slices ------------------------------------

namespace {

// How many of the array's axes an entry indexes: a bool array one per dimension, a new axis
// none, an ellipsis none here (it stands for the axes the others leave).
int axes_indexed(const IndexEntry& e) {
  if (e.is_array) return e.array.dtype() == DType::Bool ? e.array.ndim() : 1;
  const bool none =
      std::holds_alternative<NewAxis>(e.index) || std::holds_alternative<Ellipsis>(e.index);
  return none ? 0 : 1;
}

// Each bool array must have the shape of the axes it selects from, as NumPy requires: its
// nonzero() would otherwise pick elements of a different layout, or run past the axis.
void check_masks(const std::vector<IndexEntry>& entries, const Shape& shape) {
  int named = 0;
  for (const IndexEntry& e : entries) named += axes_indexed(e);
  const int rank = static_cast<int>(shape.size()), elided = std::max(0, rank - named);
  int axis = 0;
  for (const IndexEntry& e : entries) {
    if (!e.is_array && std::holds_alternative<Ellipsis>(e.index)) axis += elided;
    if (e.is_array && e.array.dtype() == DType::Bool) {
      const Shape& m = e.array.shape();
      for (int j = 0; j < static_cast<int>(m.size()) && axis + j < rank; ++j)  // (past: too many)
        if (m[j] != shape[axis + j])
          throw ShapeError("index: a bool index of shape " + shape_str(m) +
                           " does not match the indexed array of shape " + shape_str(shape) +
                           " along axis " + std::to_string(axis + j) + " (" + std::to_string(m[j]) +
                           " against " + std::to_string(shape[axis + j]) +
                           "); a mask needs the shape of the axes it selects from");
    }
    axis += axes_indexed(e);
  }
}

// Where any entry is an array: the entries with every bool array replaced by the integer
// arrays of its nonzero() (one per axis it covers) and every integer by a 0-d int64 array on
// device d, as NumPy treats them beside arrays.
std::vector<IndexEntry> integer_arrays(const std::vector<IndexEntry>& entries, const Shape& shape,
                                       Device d) {
  if (std::none_of(entries.begin(), entries.end(), [](const IndexEntry& e) { return e.is_array; }))
    return entries;
  check_masks(entries, shape);
  std::vector<IndexEntry> out;
  for (const IndexEntry& e : entries) {
    if (e.is_array) {
      if (e.array.dtype() != DType::Bool) {
        out.push_back(e.array);
        continue;
      }
      for (const Array& coordinates : nonzero(e.array)) out.push_back(coordinates);
      continue;
    }
    const Index& i = e.index;
    if (const int64_t* v = std::get_if<int64_t>(&i))
      out.push_back(full({}, *v, DType::Int64, d));  // where x is: take refuses two devices
    else
      out.push_back(i);
  }
  return out;
}

}  // namespace

// Slices and new axes first, each array's axis kept whole (a view); those axes then move to
// the front, in order, and index(arrays) gathers them into the broadcast shape; when the arrays
// were next to each other, the broadcast axes move back to where the first of them was.
Array Array::advanced_index(const std::vector<IndexEntry>& entries_in) const {
  const std::vector<IndexEntry> entries = integer_arrays(entries_in, shape(), device());
  int consumed = 0, ellipses = 0;
  for (const IndexEntry& e : entries) {
    if (e.is_array || std::holds_alternative<Slice>(e.index))
      ++consumed;
    else if (std::holds_alternative<Ellipsis>(e.index))
      ++ellipses;
  }
  if (ellipses > 1) throw ShapeError("index: an index can only have a single ellipsis ('...')");
  if (consumed > ndim())
    throw ShapeError("index: too many indices for an array of " + std::to_string(ndim()) +
                     " dimensions (" + std::to_string(consumed) + " given)");
  std::vector<Index> basic;
  std::vector<Array> arrays;
  std::vector<int> array_axes;  // their axes in the sliced array
  std::vector<int> user_axes;   // and in this array, for messages (new axes not counted)
  int axis = 0, user_axis = 0, first_entry = -1, last_entry = -1;
  for (size_t k = 0; k < entries.size(); ++k) {
    if (entries[k].is_array) {
      arrays.push_back(entries[k].array);
      array_axes.push_back(axis++);
      user_axes.push_back(user_axis++);
      basic.push_back(Slice());
      if (first_entry < 0) first_entry = static_cast<int>(k);
      last_entry = static_cast<int>(k);
      continue;
    }
    const Index& i = entries[k].index;
    if (std::holds_alternative<Ellipsis>(i)) {
      for (int w = 0; w < ndim() - consumed; ++w) basic.push_back(Slice()), ++axis, ++user_axis;
      continue;
    }
    if (!std::holds_alternative<NewAxis>(i)) ++user_axis;
    basic.push_back(i);
    ++axis;  // a slice or a new axis: one axis of the result
  }
  if (arrays.empty()) return index(basic);
  Array sliced = index(basic);
  std::vector<int> order = array_axes;
  for (int d = 0; d < sliced.ndim(); ++d)
    if (std::find(array_axes.begin(), array_axes.end(), d) == array_axes.end()) order.push_back(d);
  Array gathered = gather_leading(sliced.transpose(order), arrays, user_axes);
  const bool adjacent = last_entry - first_entry + 1 == static_cast<int>(arrays.size());
  if (!adjacent || array_axes[0] == 0) return gathered;
  // The broadcast axes (the first b) go back after the array_axes[0] axes sliced before them.
  const int b = gathered.ndim() - (sliced.ndim() - static_cast<int>(arrays.size()));
  std::vector<int> back;
  for (int d = 0; d < array_axes[0]; ++d) back.push_back(b + d);
  for (int d = 0; d < b; ++d) back.push_back(d);
  for (int d = b + array_axes[0]; d < gathered.ndim(); ++d) back.push_back(d);
  return gathered.transpose(back);
}

// ---- functional updates (Array::at) ---------------------------------------------------------

Array::At Array::at(std::vector<Index> idx) const {
  node_of(*this);  // an empty handle fails here, not at the update
  return At(*this, std::move(idx));
}

Array::At Array::at(const Array& indices) const { return at(std::vector<Array>{indices}); }

Array::At Array::at(const std::vector<Array>& indices) const {
  node_of(*this);
  if (indices.empty()) return At(*this, std::vector<Index>{});  // as index({}): all of x
  return At(*this, indices);
}

namespace {

// NumPy's same_kind casting, which its in-place operators (x[i] += v) follow: to a dtype of
// the same or a higher kind (bool < integer < float < complex).
int kind_rank(DType t) { return t == DType::Bool ? 0 : is_integer(t) ? 1 : is_complex(t) ? 3 : 2; }

}  // namespace

// x with the region replaced by `value` (already of the region's NumPy shape, or broadcastable
// to it): `value` cast to x's dtype, broadcast, and placed by an Offset index map whose fill is
// x, so a position outside the region reads x and one inside reads value at (position - start)
// / step. One Remap node: the kernel that reads it computes value's expression there.
Array Array::At::place(const Array& value) const {
  const auto& n = node_of(x_);
  Region r = region_of(n.shape, idx_);
  Array v = value.astype(n.dtype).broadcast_to(r.kept).reshape(r.sliced);
  std::vector<graph::RemapAxis> axes;
  for (const auto& ax : r.attrs.axes) axes.push_back({graph::IndexMode::Offset, ax.start, ax.step});
  // One node reads both: they must share a device (DeviceError), or be copied under Auto.
  const graph::Node* nodes[] = {&n, &api::node_of(v)};
  Device d = api::common_device(nodes, "at");
  return api::finish(api::remap(api::copy_to(api::ref_of(v), d), n.shape, std::move(axes),
                                api::copy_to(api::ref_of(x_), d)));
}

namespace {

void check_same_kind(DType result, DType to, const char* what) {
  if (kind_rank(result) > kind_rank(to))
    throw DTypeError(std::string("at(...).") + what + ": the result is " + dtype_name(result) +
                     " and cannot be stored in the " + dtype_name(to) +
                     " array under NumPy's same_kind rule (as x[i] " +
                     "op= v raises); cast x (astype) or the value first");
}

// The dtype of f(x[i], v) by NumPy's promotion (a C++ scalar v weak), from 0-d stand-ins: the
// check needs no region, and its errors (a scalar the dtype cannot hold) are f's own.
DType result_dtype(const Array& x, const Operand& v, Array (*f)(const Array&, const Operand&)) {
  Array x0 = full({}, 0, x.dtype(), x.device());
  if (auto* a = std::get_if<Array>(&v)) return f(x0, full({}, 0, a->dtype(), x.device())).dtype();
  return f(x0, v).dtype();
}

}  // namespace

Array Array::At::combined(const Array& value, const char* what) const {
  check_same_kind(value.dtype(), x_.dtype(), what);
  return place(value);
}

namespace {

// The flat positions of x that the index arrays select: an iota over x read through the same
// indexing. A bad index of one array along the first axis is refused here, when the update is
// made (index() with several arrays checks its own; one array's take would check only when the
// result is evaluated, naming take).
Array scatter_positions(const Array& x, const std::vector<Array>& arrays) {
  const Array& first = arrays[0];
  if (x.ndim() > 0 && arrays.size() == 1 && is_integer(first.dtype()) && first.size() > 0 &&
      x.size() > 0) {
    const int64_t n = x.shape()[0];
    if (const auto bad = api::out_of_range(first, n))
      throw ShapeError("at: index " + std::to_string(*bad) +
                       " is out of bounds for axis 0 with size " + std::to_string(n));
  }
  return arange(0, x.size(), 1, DType::Int64, x.device()).reshape(x.shape()).index(arrays);
}

// Whether the scatter reads the one index array of a 1-d x as it is: its indices are then the
// positions, negatives counted from the end and the range checked by the scatter step itself,
// so no pass over the indices comes before it and nothing waits for the device.
bool indices_in_place(const Array& x, const std::vector<Array>& arrays) {
  return x.ndim() == 1 && arrays.size() == 1 && is_integer(arrays[0].dtype());
}

}  // namespace

// x with the values placed at the flat positions the index arrays select, the values cast to
// x's dtype and broadcast to the positions' shape, both read by a Scatter step (a scalar as one
// value for every update).
Array Array::At::scatter(const Operand& v, uint8_t op, DType result, const char* what) const {
  const auto& n = node_of(x_);
  check_same_kind(result, n.dtype, what);
  const auto sop = static_cast<graph::ScatterOp>(op);
  if (is_complex(n.dtype) && (sop == graph::ScatterOp::Min || sop == graph::ScatterOp::Max))
    throw DTypeError(std::string("at(...).") + what + " with index arrays: a " +
                     dtype_name(n.dtype) +
                     " array has no scatter minimum or maximum in kiln; compare real parts, "
                     "or update through kiln::where");
  if ((sop == graph::ScatterOp::Min || sop == graph::ScatterOp::Max) && result != n.dtype) {
    // NumPy's minimum.at compares in the promoted dtype and stores the winner cast back: an
    // int16 -1 into a uint16 0 wins and wraps to 65535, where casting it first (to 65535) would
    // lose. Min and max are exact, so comparing in the wider dtype is all it takes.
    At wide(x_.astype(result), arrays_);
    return (sop == graph::ScatterOp::Min ? wide.min(v) : wide.max(v)).astype(n.dtype);
  }
  const bool in_place = indices_in_place(x_, arrays_);
  Array positions = in_place ? arrays_[0].astype(DType::Int64) : scatter_positions(x_, arrays_);
  Array values = std::holds_alternative<Array>(v)
                     ? std::get<Array>(v).astype(n.dtype)
                     : full({}, std::get<Scalar>(v), n.dtype, n.device);
  values = values.broadcast_to(positions.shape());
  if (positions.size() == 0) return x_;
  return api::finish(
      api::scatter(x_, positions.reshape({-1}), values.reshape({-1}), sop, in_place));
}

Array Array::At::set(const Operand& v) const {
  // NumPy's x[i] = v takes a Python complex only into a complex (or bool) array: float(v) fails.
  if (const auto* s = std::get_if<Scalar>(&v); s && s->kind() == Scalar::Kind::Complex &&
                                               !is_complex(x_.dtype()) && x_.dtype() != DType::Bool)
    throw DTypeError(std::string("at(...).set: a complex value cannot be stored in the ") +
                     dtype_name(x_.dtype()) +
                     " array (NumPy raises TypeError); store its real part, or cast x to a "
                     "complex dtype first");
  if (const auto* s = std::get_if<Scalar>(&v)) api::check_fits(*s, x_.dtype(), "at(...).set");
  if (!arrays_.empty())
    return scatter(v, static_cast<uint8_t>(graph::ScatterOp::Set), x_.dtype(), "set");
  if (auto* a = std::get_if<Array>(&v)) return place(*a);
  // A scalar takes x's dtype, as NumPy's x[i] = 1.5 on an integer array (which truncates).
  return place(full({}, std::get<Scalar>(v), x_.dtype(), x_.device()));
}
// op(x[i], v): with index arrays a scatter (its dtype checked on 0-d stand-ins), otherwise f of
// the region placed back.
Array Array::At::update(const Operand& v, uint8_t op, Operation f, const char* what) const {
  if (!arrays_.empty()) return scatter(v, op, result_dtype(x_, v, f), what);
  return combined(f(region(), v), what);
}
Array Array::At::add(const Operand& v) const {
  return update(
      v, static_cast<uint8_t>(graph::ScatterOp::Add),
      [](const Array& a, const Operand& b) {
        return std::visit([&](const auto& c) { return a + c; }, b);
      },
      "add");
}
Array Array::At::multiply(const Operand& v) const {
  return update(
      v, static_cast<uint8_t>(graph::ScatterOp::Multiply),
      [](const Array& a, const Operand& b) {
        return std::visit([&](const auto& c) { return a * c; }, b);
      },
      "multiply");
}
Array Array::At::min(const Operand& v) const {
  return update(
      v, static_cast<uint8_t>(graph::ScatterOp::Min),
      [](const Array& a, const Operand& b) { return minimum(a, b); }, "min");
}
Array Array::At::max(const Operand& v) const {
  return update(
      v, static_cast<uint8_t>(graph::ScatterOp::Max),
      [](const Array& a, const Operand& b) { return maximum(a, b); }, "max");
}

const Array& Array::eval() const {
  api::node_of(*this);  // (checks the handle; its node is passed as it is, not copied)
  runtime::realize(node_);
  return *this;
}

void eval(const std::vector<Array>& arrays) { runtime::realize(api::refs_of(arrays)); }

void compile(const std::vector<Array>& arrays) { runtime::compile_ahead(api::refs_of(arrays)); }

Array Array::get() const { return to(host()); }

Array Array::to(Device d) const {
  const auto& n = node_of(*this);
  if (n.device == d) return *this;
  if (d.is_cuda()) cuda(d.index);  // DeviceError when there is no such GPU
  return api::finish(api::copy_to(node_, d));
}

const void* Array::data() const {
  eval();
  // Device work runs on a kiln stream, which the caller's streams do not wait for: finish the
  // one that wrote the array, so the pointer handed out can be read at once.
  const graph::BufferRef& storage = node_of(*this).storage();
  runtime::wait_for_writer(*storage);
  return storage->data();
}

template <class T>
std::vector<T> Array::to_vector() const {
  Array h = get().astype(dtype_v<T>);
  h.eval();
  const T* p = static_cast<const T*>(h.data());
  return std::vector<T>(p, p + h.size());  // element-wise, so std::vector<bool> works too
}

template <class T>
T Array::item() const {
  if (size() != 1)
    throw ShapeError("item(): the array has " + std::to_string(size()) + " elements (shape " +
                     shape_str(shape()) + "); only one-element arrays convert to a scalar");
  // Python's float() of a complex raises; dropping the imaginary part silently would hide it.
  if (is_complex(dtype()) && !is_complex(dtype_v<T>))
    throw DTypeError(std::string("item<") + dtype_name(dtype_v<T>) + ">(): the array is " +
                     dtype_name(dtype()) + ", and converting would drop the imaginary part; " +
                     "use item<std::complex<double>>(), or real(x) or abs(x) first");
  return to_vector<T>()[0];
}

// The C++ type of every dtype (src/graph/dtype_table.hpp's rows).
#define KILN_INSTANTIATE(Enum, name, ctype, cuda, short_name, kind) \
  template std::vector<ctype> Array::to_vector<ctype>() const;      \
  template ctype Array::item<ctype>() const;
KILN_DTYPES(KILN_INSTANTIATE)
#undef KILN_INSTANTIATE

}  // namespace kiln
