// Shape arithmetic: broadcasting, axes, strides, and when a reshape is a view.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "kiln/shape.hpp"

namespace kiln::graph {

using Strides = std::vector<int64_t>;  // in elements

// NumPy's broadcast of two shapes; ShapeError naming both when they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b);
// Row-major strides of a dense array.
Strides contiguous_strides(const Shape& s);
// Which axes a reduction folds, relative to its input's rank: the trailing ones (rows), a set
// that keeps the last axis (columns: the leading ones as mean(x, 0), a middle one as
// mean(x, 1) of a 3-d x), or neither (every axis, or the last with others not trailing; sorted
// input).
enum class AxesEnd { Trailing, KeepsLast, Neither };
AxesEnd folded_end(const std::vector<int>& axes, size_t rank);
// Axes made non-negative, checked, and sorted; empty `axes` means all. `what` names the caller
// for the error message.
std::vector<int> normalize_axes(const std::vector<int>& axes, int ndim, const char* what);
int normalize_axis(int axis, int ndim, const char* what);
// Resolves one -1 and checks the element count; ShapeError otherwise.
Shape resolve_reshape(const Shape& from, Shape to);
// Strides for viewing an array of shape `from` with `strides` as shape `to` without copying,
// or nothing when the data would have to move (NumPy's attempt_nocopy_reshape).
std::optional<Strides> reshape_strides(const Shape& from, const Strides& strides, const Shape& to);
void check_rank(const Shape& s, const char* what);

}  // namespace kiln::graph
