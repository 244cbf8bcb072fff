// Joining and reshaping (include/kiln/joining.hpp) as compositions of kiln's lazy views and
// elementwise operations, so each fuses with what feeds it and runs on the host and the GPU
// alike. Two building blocks carry the joining functions: `select_along` (one where per piece
// on an iota of the joined axis, fused into the reading kernel) and `wrapped` (an array read
// periodically along an axis, so that each piece can be read at "position minus its offset"
// without leaving its memory; the header says what that costs).
#include "kiln/joining.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "api/build.hpp"
#include "api/promotion.hpp"
#include "graph/shape.hpp"

namespace kiln {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

// Axes made non-negative for rank `ndim`; ShapeError naming `what` for one out of range or
// repeated.
std::vector<int> checked_axes(const Axes& axes, int ndim, const char* what) {
  std::vector<int> out;
  for (int a : axes) out.push_back(graph::normalize_axis(a, ndim, what));
  auto sorted = out;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw ShapeError(std::string(what) + ": an axis is given twice; give each axis once");
  return out;
}

int64_t floor_mod(int64_t a, int64_t n) {
  int64_t r = a % n;
  return r < 0 ? r + n : r;
}

// 0, 1, ..., n - 1 along `axis` of a rank-`ndim` result (length 1 elsewhere), to compare
// positions with.
Array iota_along(int64_t n, int axis, int ndim, Device d) {
  Shape s(ndim, 1);
  s[axis] = n;
  return arange(0, n, 1, DType::Int64, d).reshape(s);
}

Array with_length(const Array& a, int axis, int64_t n) {
  Shape s = a.shape();
  s[axis] = n;
  return a.broadcast_to(s);
}

// a with axis `axis` remapped: length `len`, position t reading a at the mode's map of
// t - origin (graph::RemapAttrs); every other axis as it is. Index arithmetic on the reading
// kernel's loads, so it fuses with what feeds and reads it.
Array remap_axis(const Array& a, int axis, int64_t len, graph::IndexMode mode, int64_t origin,
                 const Array& fill = {}) {
  std::vector<graph::RemapAxis> axes(a.ndim());
  axes[axis] = {mode, origin, 1};
  Shape out = a.shape();
  out[axis] = len;
  return api::finish(
      api::remap(api::ref_of(a), out, std::move(axes), fill.valid() ? api::ref_of(fill) : nullptr));
}

// a read periodically along axis: length `len`, position t holding a[(t + r) mod n].
Array wrapped(const Array& a, int axis, int64_t len, int64_t r) {
  return remap_axis(a, axis, len, graph::IndexMode::Wrap, -r);
}

// pieces[i] (each of the result's shape) where start[i] <= position along axis < start[i + 1]:
// one where per piece after the first, which fuse into the kernel that reads the result.
Array select_along(const std::vector<Array>& pieces, const std::vector<int64_t>& start, int axis) {
  Array out = pieces.back();
  const Shape& s = pieces.back().shape();
  Array pos = iota_along(s[axis], axis, static_cast<int>(s.size()), out.device());
  for (size_t i = pieces.size() - 1; i-- > 0;) out = where(pos < start[i + 1], pieces[i], out);
  return out;
}

// NumPy's checks for joining: one or more arrays, one rank, shapes equal off the axis.
void check_joinable(const std::vector<Array>& arrays, int axis, const char* what) {
  const Shape& s0 = arrays[0].shape();
  for (size_t i = 1; i < arrays.size(); ++i) {
    const Shape& s = arrays[i].shape();
    if (s.size() != s0.size())
      throw ShapeError(std::string(what) + ": array 0 has " + str(s0.size()) +
                       " dimensions but array " + str(i) + " has " + str(s.size()) +
                       "; give arrays of one rank (reshape or expand_dims the others)");
    for (size_t d = 0; d < s.size(); ++d)
      if (static_cast<int>(d) != axis && s[d] != s0[d])
        throw ShapeError(std::string(what) + ": array 0 has shape " + shape_str(s0) +
                         " and array " + str(i) + " has shape " + shape_str(s) +
                         "; they must agree on every axis but " + str(axis));
  }
}

void check_some(const std::vector<Array>& arrays, const char* what) {
  if (arrays.empty()) throw ShapeError(std::string(what) + ": needs at least one array to join");
}

Array atleast_1d(const Array& a) { return a.ndim() == 0 ? a.reshape({1}) : a; }

}  // namespace

// ---- views -----------------------------------------------------------------------------------

Array squeeze(const Array& a, AxesArg axes) {
  const Shape& s = a.shape();
  std::vector<bool> drop(s.size(), false);
  if (!axes.given()) {
    for (size_t i = 0; i < s.size(); ++i) drop[i] = s[i] == 1;
  } else {
    for (int ax : checked_axes(axes.axes(), a.ndim(), "squeeze")) {
      if (s[ax] != 1)
        throw ShapeError("squeeze: axis " + str(ax) + " of shape " + shape_str(s) + " has length " +
                         str(s[ax]) + "; only axes of length 1 can be removed");
      drop[ax] = true;
    }
  }
  Shape out;
  for (size_t i = 0; i < s.size(); ++i)
    if (!drop[i]) out.push_back(s[i]);
  return a.reshape(out);
}

Array expand_dims(const Array& a, AxesArg axes) {
  if (!axes.given()) throw ShapeError("expand_dims: give the positions of the new axes");
  int nd = a.ndim() + static_cast<int>(axes.axes().size());
  std::vector<bool> is_new(nd, false);
  for (int ax : checked_axes(axes.axes(), nd, "expand_dims")) is_new[ax] = true;
  Shape out;
  size_t next = 0;
  for (int i = 0; i < nd; ++i) out.push_back(is_new[i] ? 1 : a.shape()[next++]);
  graph::check_rank(out, "expand_dims");
  return a.reshape(out);
}

Array swapaxes(const Array& a, int axis1, int axis2) {
  int i = graph::normalize_axis(axis1, a.ndim(), "swapaxes");
  int j = graph::normalize_axis(axis2, a.ndim(), "swapaxes");
  std::vector<int> perm(a.ndim());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[i], perm[j]);
  return a.transpose(perm);
}

Array moveaxis(const Array& a, AxesArg source, AxesArg destination) {
  if (source.axes().size() != destination.axes().size())
    throw ShapeError("moveaxis: " + str(source.axes().size()) + " source axes but " +
                     str(destination.axes().size()) +
                     " destinations; give one destination per source axis");
  int nd = a.ndim();
  auto src = checked_axes(source.axes(), nd, "moveaxis");
  auto dst = checked_axes(destination.axes(), nd, "moveaxis");
  // NumPy's construction: the other axes in order, then each source inserted at its
  // destination, lowest destination first.
  std::vector<int> perm;
  for (int i = 0; i < nd; ++i)
    if (std::find(src.begin(), src.end(), i) == src.end()) perm.push_back(i);
  std::vector<std::pair<int, int>> moves;
  for (size_t i = 0; i < src.size(); ++i) moves.push_back({dst[i], src[i]});
  std::sort(moves.begin(), moves.end());
  for (auto [d, s] : moves) perm.insert(perm.begin() + d, s);
  return a.transpose(perm);
}

Array ravel(const Array& a) { return a.reshape({-1}); }

Array flip(const Array& a, AxesArg axes) {
  std::vector<int> which;
  if (axes.given()) {
    which = checked_axes(axes.axes(), a.ndim(), "flip");
  } else {
    which.resize(a.ndim());
    std::iota(which.begin(), which.end(), 0);
  }
  std::vector<Index> idx(a.ndim(), Slice{});
  for (int ax : which) idx[ax] = Slice(std::nullopt, std::nullopt, -1);
  return a.index(idx);
}

// ---- built from iota masks ---------------------------------------------------------------------

namespace {

// Where column - row <= k (lower) or >= k (upper), for an n x m grid.
Array triangle_mask(int64_t n, int64_t m, int64_t k, bool lower, Device d) {
  Array diff = iota_along(m, 1, 2, d) - iota_along(n, 0, 2, d);
  return lower ? diff <= k : diff >= k;
}

Array triangle(const Array& m, int64_t k, bool lower, const char* what) {
  if (m.ndim() == 0)
    throw ShapeError(std::string(what) + ": needs an array of at least one dimension");
  const Shape& s = m.shape();
  int64_t cols = s.back(), rows = m.ndim() >= 2 ? s[s.size() - 2] : cols;
  Array zero = zeros({}, m.dtype(), m.device());
  return where(triangle_mask(rows, cols, k, lower, m.device()), m, zero);
}

}  // namespace

Array eye(int64_t n, std::optional<int64_t> m, int64_t k, DType t, Device d) {
  int64_t cols = m.value_or(n);
  if (n < 0 || cols < 0)
    throw ShapeError("eye: negative dimensions (" + str(n) + ", " + str(cols) +
                     ") are not allowed");
  Array on = iota_along(cols, 1, 2, d) - iota_along(n, 0, 2, d) == k;
  return on.astype(t);
}

Array tril(const Array& m, int64_t k) { return triangle(m, k, true, "tril"); }
Array triu(const Array& m, int64_t k) { return triangle(m, k, false, "triu"); }

std::vector<Array> meshgrid(const std::vector<Array>& xs, const std::string& indexing) {
  if (indexing != "xy" && indexing != "ij")
    throw ShapeError("meshgrid: indexing is \"" + indexing + "\"; give \"xy\" or \"ij\"");
  int nd = static_cast<int>(xs.size());
  Shape out;
  for (const auto& x : xs) out.push_back(x.size());
  bool swap = indexing == "xy" && nd >= 2;
  if (swap) std::swap(out[0], out[1]);
  std::vector<Array> grids;
  for (int i = 0; i < nd; ++i) {
    int axis = swap && i < 2 ? 1 - i : i;
    Shape s(nd, 1);
    s[axis] = out[axis];
    grids.push_back(ravel(xs[i]).reshape(s).broadcast_to(out));
  }
  return grids;
}

Array diag(const Array& v, int64_t k) {
  if (v.ndim() == 1) {
    int64_t n = v.shape()[0], size = n + (k < 0 ? -k : k);
    // Row i holds v[i] at column i + k (k >= 0); column j holds v[j] at row j - k (k < 0).
    // Read periodically so rows or columns past v's length stay in memory; they are masked.
    int vaxis = k >= 0 ? 0 : 1;
    Array vals =
        n == 0 ? zeros({size, size}, v.dtype(), v.device())
               : with_length(
                     wrapped(v, 0, size, 0).reshape(vaxis == 0 ? Shape{size, 1} : Shape{1, size}),
                     1 - vaxis, size);
    Array on = iota_along(size, 1, 2, v.device()) - iota_along(size, 0, 2, v.device()) == k;
    return where(on, vals, zeros({}, v.dtype(), v.device()));
  }
  if (v.ndim() != 2)
    throw ShapeError("diag: the input has shape " + shape_str(v.shape()) +
                     "; give a 1-d array (to build a matrix) or a 2-d one (to read a diagonal)");
  int64_t rows = v.shape()[0], cols = v.shape()[1];
  int64_t first_row = k >= 0 ? 0 : -k, first_col = k >= 0 ? k : 0;
  int64_t len = std::max<int64_t>(0, std::min(rows - first_row, cols - first_col));
  if (len == 0) return ravel(v).index({Slice(0, 0)});
  // Diagonal elements lie cols + 1 apart in the row-major order.
  return ravel(v).index({Slice(first_row * cols + first_col,
                               (first_row + len - 1) * cols + first_col + len, cols + 1)});
}

// ---- repetition --------------------------------------------------------------------------------

Array tile(const Array& a, std::vector<int64_t> reps) {
  for (int64_t r : reps)
    if (r < 0) throw ShapeError("tile: repetition " + str(r) + " is negative");
  Shape s = a.shape();
  size_t nd = std::max(s.size(), reps.size());
  s.insert(s.begin(), nd - s.size(), 1);
  reps.insert(reps.begin(), nd - reps.size(), 1);
  Shape split, bcast, out;
  for (size_t i = 0; i < nd; ++i) {
    split.insert(split.end(), {1, s[i]});
    bcast.insert(bcast.end(), {reps[i], s[i]});
    out.push_back(reps[i] * s[i]);
  }
  graph::check_rank(out, "tile");
  if (shape_size(out) == 0) return zeros(out, a.dtype(), a.device());
  if (2 * nd > 8) {
    // Interleaved, the axes would pass kiln's rank limit: one axis at a time.
    Array r = a.reshape(s);
    for (size_t i = 0; i < nd; ++i)
      if (reps[i] != 1) r = wrapped(r, static_cast<int>(i), reps[i] * s[i], 0);
    return r;
  }
  return a.reshape(split).broadcast_to(bcast).reshape(out);
}

Array repeat(const Array& a, int64_t repeats, std::optional<int> axis) {
  if (repeats < 0) throw ShapeError("repeat: repeats " + str(repeats) + " is negative");
  // NumPy takes a 0-d array as 1-d here, with or without an axis.
  if (!axis || a.ndim() == 0) return repeat(ravel(a), repeats, axis ? *axis : 0);
  int ax = graph::normalize_axis(*axis, a.ndim(), "repeat");
  Shape split = a.shape(), bcast, out = a.shape();
  split.insert(split.begin() + ax + 1, 1);
  bcast = split;
  bcast[ax + 1] = repeats;
  out[ax] *= repeats;
  graph::check_rank(bcast, "repeat");
  return a.reshape(split).broadcast_to(bcast).reshape(out);
}

// ---- joining -----------------------------------------------------------------------------------

Array concatenate(const std::vector<Array>& arrays, std::optional<int> axis) {
  check_some(arrays, "concatenate");
  if (!axis) {
    std::vector<Array> flat;
    for (const auto& a : arrays) flat.push_back(ravel(a));
    return concatenate(flat, 0);
  }
  for (size_t i = 0; i < arrays.size(); ++i)
    if (arrays[i].ndim() == 0)
      throw ShapeError("concatenate: array " + str(i) +
                       " is 0-d and has no axis to join along; use stack, or reshape it to 1-d");
  int ax = graph::normalize_axis(*axis, arrays[0].ndim(), "concatenate");
  check_joinable(arrays, ax, "concatenate");
  if (arrays.size() == 1) return arrays[0];
  // Each input is read at "position minus its start" (an Offset map), later inputs over the
  // earlier ones where they are in range: one where per input in the reading kernel, and each
  // input read at a clamped position where another is selected, so nothing leaves its memory.
  std::vector<const graph::Node*> nodes;
  DType t = arrays[0].dtype();
  for (const auto& a : arrays) {
    nodes.push_back(&api::node_of(a));
    t = promote_types(t, a.dtype());
  }
  Device dev = api::common_device(nodes, "concatenate");
  Shape out = arrays[0].shape();
  out[ax] = 0;
  for (const auto& a : arrays) out[ax] += a.shape()[ax];
  graph::NodeRef acc;
  int64_t offset = 0;
  for (const auto& a : arrays) {
    int64_t n = a.shape()[ax];
    if (n > 0) {
      std::vector<graph::RemapAxis> axes(out.size());
      // The first piece read clamped (never out of its memory, and overwritten by the later
      // pieces past its end), so it needs no fill.
      axes[ax] = {acc ? graph::IndexMode::Offset : graph::IndexMode::Clamp, offset, 1};
      acc = api::remap(api::copy_to(api::cast(api::ref_of(a), t), dev), out, axes, acc);
    }
    offset += n;
  }
  if (!acc) return zeros(out, t, dev);  // every input empty along the axis
  return api::finish(acc);
}

Array stack(const std::vector<Array>& arrays, int axis) {
  check_some(arrays, "stack");
  const Shape& s0 = arrays[0].shape();
  for (size_t i = 1; i < arrays.size(); ++i)
    if (arrays[i].shape() != s0)
      throw ShapeError("stack: array 0 has shape " + shape_str(s0) + " and array " + str(i) +
                       " has shape " + shape_str(arrays[i].shape()) +
                       "; stack joins arrays of one shape (concatenate joins along an axis)");
  int ax = graph::normalize_axis(axis, static_cast<int>(s0.size()) + 1, "stack");
  std::vector<Array> pieces;
  std::vector<int64_t> start;
  for (size_t i = 0; i < arrays.size(); ++i) {
    pieces.push_back(with_length(expand_dims(arrays[i], ax), ax, arrays.size()));
    start.push_back(static_cast<int64_t>(i));
  }
  return select_along(pieces, start, ax);
}

Array hstack(const std::vector<Array>& arrays) {
  check_some(arrays, "hstack");
  std::vector<Array> rows;
  for (const auto& a : arrays) rows.push_back(atleast_1d(a));
  return concatenate(rows, rows[0].ndim() == 1 ? 0 : 1);
}

Array vstack(const std::vector<Array>& arrays) {
  check_some(arrays, "vstack");
  std::vector<Array> rows;
  for (const auto& a : arrays) rows.push_back(a.ndim() < 2 ? a.reshape({1, a.size()}) : a);
  return concatenate(rows, 0);
}

// ---- shifting and padding
// -------------------------------------------------------------------------

Array roll(const Array& a, int64_t shift, std::optional<int> axis) {
  if (!axis) return roll(ravel(a), shift, 0).reshape(a.shape());
  return roll(a, std::vector<int64_t>{shift}, Axes{*axis});
}

Array roll(const Array& a, const std::vector<int64_t>& shifts, const Axes& axes) {
  if (shifts.size() != axes.size())
    throw ShapeError("roll: " + str(shifts.size()) + " shifts but " + str(axes.size()) +
                     " axes; give one shift per axis");
  std::vector<int64_t> total(a.ndim(), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int ax = graph::normalize_axis(axes[i], a.ndim(), "roll");
    // Reduced per step, so adding shifts never overflows.
    if (a.shape()[ax] > 0)
      total[ax] = floor_mod(total[ax] + shifts[i] % a.shape()[ax], a.shape()[ax]);
  }
  // Position t reads (t - shift) mod n: one Remap for every axis.
  std::vector<graph::RemapAxis> maps(a.ndim());
  for (int ax = 0; ax < a.ndim(); ++ax)
    if (total[ax] != 0) maps[ax] = {graph::IndexMode::Wrap, total[ax], 1};
  return api::finish(api::remap(api::ref_of(a), a.shape(), std::move(maps)));
}

namespace {

// One axis of pad in NumPy's reflect or symmetric mode (n > 0). NumPy 1.24 pads in steps: each
// reflects the block padded so far, at most its length - 1 (reflect) or its length
// (symmetric) on each side, so widths past that reflect the padded values again (which is not
// periodic when the two widths differ). Each step is one Remap over the last, all fused into
// the kernel that reads the result.
Array reflect_axis(const Array& a, int ax, int64_t before, int64_t after, bool symmetric) {
  if (a.shape()[ax] == 1)
    return remap_axis(a, ax, before + 1 + after, graph::IndexMode::Clamp, before);
  Array block = a;
  auto mode = symmetric ? graph::IndexMode::Symmetric : graph::IndexMode::Reflect;
  for (int64_t lo = before, hi = after; lo > 0 || hi > 0;) {
    int64_t m = block.shape()[ax], most = symmetric ? m : m - 1;
    int64_t l = std::min(lo, most), h = std::min(hi, most);
    block = remap_axis(block, ax, l + m + h, mode, l);
    lo -= l;
    hi -= h;
  }
  return block;
}

}  // namespace

Array pad(const Array& a, std::vector<std::pair<int64_t, int64_t>> pad_width, PadMode mode,
          Scalar constant) {
  size_t nd = a.shape().size();
  api::check_fits(constant, a.dtype(), "pad");
  if (pad_width.empty())
    throw ShapeError(
        "pad: no widths given; give one (before, after) pair per axis, or one for all");
  for (auto [before, after] : pad_width)
    if (before < 0 || after < 0)
      throw ShapeError("pad: widths (" + str(before) + ", " + str(after) +
                       ") are negative; pad only adds elements (slice to remove them)");
  if (pad_width.size() == 1 && nd != 1) pad_width.assign(nd, pad_width[0]);
  if (pad_width.size() != nd)
    throw ShapeError("pad: " + str(pad_width.size()) + " (before, after) pairs for an array of " +
                     str(nd) + " dimensions; give one pair per axis, or one for all");
  Shape out = a.shape();
  std::vector<graph::RemapAxis> maps(nd);
  Array r = a;
  for (size_t i = 0; i < nd; ++i) {
    auto [before, after] = pad_width[i];
    if (before < 0 || after < 0)
      throw ShapeError("pad: widths (" + str(before) + ", " + str(after) + ") for axis " + str(i) +
                       " are negative; pad only adds elements (slice to remove them)");
    if (before == 0 && after == 0) continue;
    int64_t padded;  // (before + after + the length, in int64, or the shape check cannot see it)
    if (__builtin_add_overflow(before, after, &padded) ||
        __builtin_add_overflow(padded, a.shape()[i], &padded))
      throw ShapeError("pad: widths (" + str(before) + ", " + str(after) + ") for axis " + str(i) +
                       " would give it more elements than kiln can address; pad by less");
    if (a.shape()[i] == 0 && mode != PadMode::Constant)
      throw ShapeError("pad: axis " + str(i) +
                       " is empty, and only the constant mode can extend an empty axis");
    if (mode == PadMode::Reflect || mode == PadMode::Symmetric) {
      r = reflect_axis(r, static_cast<int>(i), before, after, mode == PadMode::Symmetric);
      continue;
    }
    out[i] += before + after;
    maps[i] = {mode == PadMode::Constant ? graph::IndexMode::Offset
               : mode == PadMode::Edge   ? graph::IndexMode::Clamp
                                         : graph::IndexMode::Wrap,
               before, 1};
  }
  if (mode == PadMode::Reflect || mode == PadMode::Symmetric) return r;
  // Constant, edge and wrap: one Remap over every axis (the constant where any axis is
  // outside the input, corners included, as NumPy).
  graph::NodeRef fill;
  if (mode == PadMode::Constant)
    fill = api::ref_of(full({}, constant, a.dtype(), a.device()).broadcast_to(out));
  return api::finish(api::remap(api::ref_of(a), out, std::move(maps), fill));
}

Array pad(const Array& a, int64_t width, PadMode mode, Scalar constant) {
  return pad(a, {{width, width}}, mode, constant);
}

}  // namespace kiln
