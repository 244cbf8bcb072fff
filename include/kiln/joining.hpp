// Joining and reshaping with NumPy's names, arguments and results (NumPy 1.24 is the reference;
// tests/data/make_joining_fixtures.py records the version the fixtures came from).
//
// What each costs, since arrays are lazy and nothing here copies when it is built:
// - Views (index maps, never a write): squeeze, expand_dims, swapaxes, moveaxis, ravel, flip,
//   diag of a 2-d array, meshgrid; ravel of a non-contiguous lazy value is a reshape, which the
//   planner writes first only where no strides can express it (as NumPy copies).
// - Fused into the kernel that reads them (no intermediate): eye, tril, triu (an iota mask and a
//   where), stack (a where on the stacked axis over broadcasts).
// - Index maps (a Remap node: the reading kernel computes, for each output position, where each
//   input is read, and reads it there), so each is one kernel writing only its result, fused
//   with the expressions that compute its inputs and with whatever reads it: concatenate
//   (hstack, vstack) of any lengths, roll, pad in every mode, diag of a 1-d array, and
//   fft::fftshift / ifftshift. Concatenate reads every input at each position (those not
//   selected at a clamped position, so no read leaves its memory) and selects one: K inputs
//   cost K loads per element, of which K - 1 mostly hit the cache. pad's reflect and symmetric
//   with widths past the axis's length nest one map per NumPy step, all in the same kernel.
// - tile and repeat write their result once (a broadcast read through a reshape), as NumPy.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/array.hpp"

namespace kiln {

// ---- views -----------------------------------------------------------------------------------
// Drops the given axes, which must have length 1 (none given: every axis of length 1).
Array squeeze(const Array& a, AxesArg axes = {});
// Inserts axes of length 1 at the given positions of the result (negative counts from its end).
Array expand_dims(const Array& a, AxesArg axes);
Array swapaxes(const Array& a, int axis1, int axis2);
// Moves each source axis to the matching destination position; the others keep their order.
Array moveaxis(const Array& a, AxesArg source, AxesArg destination);
Array ravel(const Array& a);  // reshape({-1})
// Reverses the order along the given axes (none given: every axis), as NumPy's view with
// negative strides.
Array flip(const Array& a, AxesArg axes = {});

// ---- built from iota masks ---------------------------------------------------------------------
// The n x m (m = n by default) array with ones on diagonal k (k > 0 above the main one).
Array eye(int64_t n, std::optional<int64_t> m = std::nullopt, int64_t k = 0,
          DType t = DType::Float64, Device d = host());
// The elements on and below (tril) or above (triu) diagonal k of the last two axes, zeros
// elsewhere; a 1-d array is taken as its (n, n) broadcast, as NumPy.
Array tril(const Array& m, int64_t k = 0);
Array triu(const Array& m, int64_t k = 0);
// Coordinate arrays of the grid spanned by 1-d arrays (others are raveled): "xy" (Cartesian,
// NumPy's default) swaps the first two output axes, "ij" (matrix) keeps them. Views.
std::vector<Array> meshgrid(const std::vector<Array>& xs, const std::string& indexing = "xy");
// 1-d v: the 2-d array with v on diagonal k. 2-d v: diagonal k of it (a view), as NumPy.
Array diag(const Array& v, int64_t k = 0);

// ---- repetition --------------------------------------------------------------------------------
// a repeated reps[i] times along axis i; shorter reps or a lower-rank a are padded with leading
// 1s, as NumPy.
Array tile(const Array& a, std::vector<int64_t> reps);
// Each element repeated `repeats` times along axis (none: of the raveled array). NumPy's
// per-element repeat counts are not supported.
Array repeat(const Array& a, int64_t repeats, std::optional<int> axis = std::nullopt);

// ---- joining -----------------------------------------------------------------------------------
// The arrays joined along an existing axis (none: each raveled first). Shapes must agree off the
// axis; the result's dtype is NumPy's result_type of the inputs; they must share a device.
Array concatenate(const std::vector<Array>& arrays, std::optional<int> axis = 0);
// The arrays (of one shape) joined along a new axis at position `axis` of the result.
Array stack(const std::vector<Array>& arrays, int axis = 0);
// concatenate along axis 1 (axis 0 when the first is 1-d); 0-d arrays count as 1-d.
Array hstack(const std::vector<Array>& arrays);
// concatenate along axis 0, 1-d and 0-d arrays taken as rows (1, n).
Array vstack(const std::vector<Array>& arrays);

// ---- shifting and padding
// ------------------------------------------------------------------------- Elements shifted by
// `shift` along axis, those that leave at one end entering at the other (none: along the raveled
// array, keeping a's shape).
Array roll(const Array& a, int64_t shift, std::optional<int> axis = std::nullopt);
// Several shifts at once: shifts[i] along axes[i] (an axis given twice adds its shifts).
Array roll(const Array& a, const std::vector<int64_t>& shifts, const Axes& axes);

// NumPy's modes: Constant fills with a value, Edge repeats the edge element, Reflect mirrors
// without repeating it (width past the axis's length mirrors again), Wrap repeats periodically.
// Symmetric mirrors repeating the edge element.
enum class PadMode { Constant, Edge, Reflect, Wrap, Symmetric };
// pad_width: one (before, after) pair per axis, or a single pair for every axis.
Array pad(const Array& a, std::vector<std::pair<int64_t, int64_t>> pad_width,
          PadMode mode = PadMode::Constant, Scalar constant = 0);
// The same width before and after every axis.
Array pad(const Array& a, int64_t width, PadMode mode = PadMode::Constant, Scalar constant = 0);

}  // namespace kiln
