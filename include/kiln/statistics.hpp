// Statistics with NumPy's names, arguments, dtypes and edge cases (NumPy 1.24 is the reference;
// tests/data/make_statistics_fixtures.py records the version the fixtures came from).
//
// Each function is a composition of kiln's lazy operations (reductions, elementwise operations,
// views), so it fuses with what feeds it and runs on the host and the GPU alike. The exceptions,
// which evaluate part of their input when called because a result's shape or an error depends on
// the data, say so: nanargmax / nanargmin, histogram without a range, bincount.
//
// Axes follow kiln's reductions: negative axes count from the end, none given means every axis,
// an empty list (Axes{}) none.
#pragma once
#include <optional>
#include <utility>

#include "kiln/array.hpp"

namespace kiln {

// ---- variance and standard deviation ---------------------------------------------------------
// NumPy's two-pass formula: d = x - mean(x), var = sum(d * conj(d)) / max(n - ddof, 0), so
// ddof >= n gives inf (NaN where every d is 0), as NumPy. Dtypes: bool and integers give float64,
// float32 float32, complex the real dtype of the same width.
Array var(const Array& a, AxesArg axes = {}, double ddof = 0, bool keepdims = false);
// sqrt(var). Call it kiln::std: after `using namespace kiln`, a plain std(...) is ambiguous with
// namespace std (std::vector and the like still work, as a name before :: is never a function).
Array std(const Array& a, AxesArg axes = {}, double ddof = 0, bool keepdims = false);
// max(a) - min(a) in a's dtype (integers wrap, as NumPy); bool raises DTypeError like NumPy's
// subtract.
Array ptp(const Array& a, AxesArg axes = {}, bool keepdims = false);
// The number of elements != 0 (int64).
Array count_nonzero(const Array& a, AxesArg axes = {}, bool keepdims = false);

// ---- NaN-ignoring reductions ---------------------------------------------------------------
// NaNs count as the reduction's identity (0 for sums, 1 for products) or are left out (means,
// extremes, variances). Bool and integer arrays hold no NaN: these are then the plain reductions.
// A slice that is all NaN gives NaN from nanmean, nanmax, nanmin, nanvar and nanstd (NumPy also
// warns); nanvar / nanstd give NaN where the non-NaN count minus ddof is <= 0, as NumPy.
Array nansum(const Array& a, AxesArg axes = {}, bool keepdims = false);
Array nanprod(const Array& a, AxesArg axes = {}, bool keepdims = false);
Array nanmean(const Array& a, AxesArg axes = {}, bool keepdims = false);
Array nanmax(const Array& a, AxesArg axes = {}, bool keepdims = false);
Array nanmin(const Array& a, AxesArg axes = {}, bool keepdims = false);
Array nanvar(const Array& a, AxesArg axes = {}, double ddof = 0, bool keepdims = false);
Array nanstd(const Array& a, AxesArg axes = {}, double ddof = 0, bool keepdims = false);
// argmax / argmin ignoring NaN. An all-NaN slice raises kiln::Error, as NumPy's ValueError: for
// that check the call evaluates any(all(isnan(a), axis)) at once (floating input only); the
// indices themselves stay lazy.
Array nanargmax(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false);
Array nanargmin(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false);

// ---- weighted average -------------------------------------------------------------------------
// sum(a * w, axes) / sum(w, axes); without weights, mean(a, axes). Weights have a's shape, or,
// with axes given, the shape of a's axes (a 1-d array of a.shape[axis] for one axis), as NumPy.
// Dtype: NumPy's result_type(a, w), at least float64 for bool and integer a. Unlike NumPy, which
// raises ZeroDivisionError when called, weights that sum to 0 give inf / NaN (the sum is lazy).
Array average(const Array& a, AxesArg axes = {}, const std::optional<Array>& weights = std::nullopt,
              bool keepdims = false);
// NumPy's returned=True: the average and the sum of the weights (broadcast to the average's
// shape; without weights, the number of elements averaged, in the average's dtype).
std::pair<Array, Array> average_returned(const Array& a, AxesArg axes = {},
                                         const std::optional<Array>& weights = std::nullopt,
                                         bool keepdims = false);

// ---- covariance and correlation ------------------------------------------------------------
// m is 1-d (one variable) or 2-d: rows are variables when rowvar, else columns. ddof defaults to
// 1, or 0 with bias. The result is (variables x variables), squeezed as NumPy (0-d for one
// variable), float64 (complex128 for complex input) like NumPy; n - ddof <= 0 gives inf / NaN.
// Computed as NumPy does, by a matrix product of the centred rows and their conjugate transpose.
// Not supported: NumPy's y, fweights and aweights.
Array cov(const Array& m, bool rowvar = true, bool bias = false,
          std::optional<double> ddof = std::nullopt);
// cov / (stddev_i * stddev_j), clipped to [-1, 1] (real and imaginary parts), as NumPy.
Array corrcoef(const Array& m, bool rowvar = true);

// ---- histograms -------------------------------------------------------------------------------
// numpy.histogram with a bin count (not an array of edges or an estimator name): `bins` equal bins
// over `range` (default: [min(a), max(a)], widened by 0.5 each way when they are equal, [0, 1] for
// an empty a), over the flattened a. Bin i holds edges[i] <= x < edges[i + 1]; the last bin also
// holds x == edges[bins]; values outside the range and NaN are not counted. Edges come out as
// NumPy's linspace (float64, or float32 for float32 input), counts as int64, or sums of `weights`
// (a's shape) in the weights' dtype; density divides by the bin widths and the total. Cost: one
// scatter add over a (one pass; weights summed in float64, on the host in a's order as NumPy, on a
// GPU in any order). Without a range, the call evaluates min(a) and max(a) now (the edges depend on
// them); a non-finite range raises kiln::Error as NumPy.
struct Histogram {
  Array counts, edges;
};
Histogram histogram(const Array& a, int64_t bins = 10,
                    std::optional<std::pair<double, double>> range = std::nullopt,
                    const std::optional<Array>& weights = std::nullopt, bool density = false);
// Occurrences of each value 0..max(x) of a 1-d bool or integer array x (at least minlength
// entries): int64, or sums of `weights` (x's shape) as float64. The result's length depends on
// the data, so the call evaluates min(x) (negative values raise kiln::Error, as NumPy) and
// max(x) now. Cost: one scatter add over x (weights summed in float64, on the host in x's order as
// NumPy, on a GPU in any order).
Array bincount(const Array& x, const std::optional<Array>& weights = std::nullopt,
               int64_t minlength = 0);

// ---- closeness ------------------------------------------------------------------------------
// Elementwise |a - b| <= atol + rtol * |b| (NumPy's formula, not symmetric in a and b), after
// broadcasting; b is made floating first. Where a or b is inf or NaN only equal values are close,
// and NaN with NaN when equal_nan. (allclose, in array.hpp, is all(isclose(...)).)
Array isclose(const Array& a, const Array& b, double rtol = 1e-5, double atol = 1e-8,
              bool equal_nan = false);

}  // namespace kiln
