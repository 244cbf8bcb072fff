// Scans and selection with NumPy's names and semantics: cumulative sums and products along an
// axis, the positions of nonzero elements, and boolean-mask reads.
//
// Each is a library step of the plan, as an FFT is (explain() shows it; its input is written by
// the kernel that computes it), except a scan of an elementwise expression that nothing else
// needs, which computes the expression as it loads it: one kernel (explain() says "fused").
// Selections have a size that depends on the data: they evaluate their mask's count when called (a
// synchronisation on a GPU), then build lazily: the positions (a scan of the mask) and the selected
// values are computed and placed by a scatter step.
#pragma once
#include <optional>
#include <vector>

#include "kiln/array.hpp"

namespace kiln {

// NumPy's cumsum / cumprod: the inclusive scan along `axis` (none: of the raveled array, as
// NumPy's axis=None). The dtype is `dtype`, or NumPy's: bool and integers narrower than 64 bits
// in int64 (unsigned in uint64), others their own; float16 and bfloat16 add in float32 and
// round each step to their dtype. Integer overflow wraps. On a GPU, long
// rows scan in tiles of 32 KiB in one pass (decoupled look-back): each value is the fold of its
// row's earlier tiles (left to right, tile by tile), then of the values before it in its tile
// (a fixed tree). Integer results equal the host's; float results are the same bits every run but
// may differ from the host's (sequential, as NumPy's) in the last bits: by at most about
// 2 * n * eps times the scan of the magnitudes along a row of n, as any two summation orders.
// `a` is taken by value as the elementwise operators take theirs: a temporary (cumsum(x * 2 + 1))
// is consumed, not held, so the scan computes it as it loads it, reading x once and writing only
// the scan; a producer the program holds, or that something else reads, is written and read
// back. Either way the host gives the same bits.
Array cumsum(Array a, std::optional<int> axis = std::nullopt,
             std::optional<DType> dtype = std::nullopt);
Array cumprod(Array a, std::optional<int> axis = std::nullopt,
              std::optional<DType> dtype = std::nullopt);

// NumPy's nonzero: one int64 array per axis of a, the coordinates of its nonzero elements in
// C order. Evaluates a's count of nonzeros when called. A 0-d array raises ShapeError, as
// NumPy 2 does.
std::vector<Array> nonzero(const Array& a);
// where(cond) with one argument: nonzero(cond).
std::vector<Array> where(const Array& cond);
// The flat (raveled) positions of a's nonzero elements, int64.
Array flatnonzero(const Array& a);
// NumPy's x[mask] with a boolean mask over x's leading axes (mask.shape == x.shape[:mask.ndim]):
// the selected elements in C order, shape (count, x.shape[mask.ndim:]...). Array::index(mask)
// calls this for a bool index array. Evaluates the mask's count when called.
Array masked(const Array& x, const Array& mask);
// NumPy's compress: the slices of a along axis (none: of the raveled a) where condition (1-d,
// bool, at most that axis's length; missing entries count as false) is true.
Array compress(const Array& condition, const Array& a, std::optional<int> axis = std::nullopt);

// NumPy's take_along_axis: out[..., j, ...] = a[..., indices[..., j, ...], ...] along axis (none:
// of the raveled a, indices 1-d). a and indices have one rank; their other axes broadcast. Negative
// indices count from the end; one out of range throws ShapeError (the indices are evaluated to
// see it when called, unless their range is known from how they were made, as argsort's: see
// take). One gather, fused with what reads it, like take.
Array take_along_axis(const Array& a, const Array& indices, std::optional<int> axis);

}  // namespace kiln
