// Sorting, searching and order statistics with NumPy's names and semantics (NumPy 1.24 is the
// reference of the tests).
//
// The order is NumPy's for every dtype: NaNs last (whatever their sign or payload), -0.0 equal to
// 0.0, complex numbers by real part then imaginary part with NumPy's NaN classes. Sorts are
// stable (NumPy's kind="stable"): equal values keep their input order, so sort(a) is exactly
// take_along_axis(a, argsort(a)) and the host and a GPU give the same bits.
//
// sort and argsort are one library step each (CUB's radix sort on a GPU, a comparison sort on the
// host) after the kernel that writes their input densely along the sorted axis; median, quantile
// and percentile read the sorted rows lazily. unique evaluates how many distinct values there are
// when called (its result's size depends on the data), as kiln::masked does.
#pragma once
#include <optional>
#include <vector>

#include "kiln/array.hpp"

namespace kiln {

// The sorted copy of a along `axis` (negative counts from the end; none: of the raveled array,
// NumPy's axis=None). A 0-d array has no axis to sort along: axis none sorts it as one element.
Array sort(const Array& a, std::optional<int> axis = -1);
// Where sort's values came from: int64 positions along `axis` (of the raveled array for none).
Array argsort(const Array& a, std::optional<int> axis = -1);

// NumPy's partition / argpartition: element kth (negative counts from the end; every one of a
// list) in its sorted place along `axis`, no greater one before it and no smaller one after it
// (NaNs as in sort). NumPy leaves the order within each side unspecified; kiln gives the whole
// stable sort (one sort step), which is one such order. An index outside the axis raises
// ShapeError.
Array partition(const Array& a, const std::vector<int64_t>& kth, std::optional<int> axis = -1);
Array argpartition(const Array& a, const std::vector<int64_t>& kth, std::optional<int> axis = -1);

// The sorted distinct values of the raveled array (NaNs count as one value, as NumPy's
// equal_nan=True; -0.0 and 0.0 as one, the first in the stable order kept). Evaluates the count.
Array unique(const Array& a);
// unique's values and how many times each occurs (int64), NumPy's return_counts=True.
struct UniqueCounts {
  Array values, counts;
};
UniqueCounts unique_counts(const Array& a);

// NumPy's searchsorted: for each value of v (any shape), the position in the 1-d sorted array a
// where inserting it keeps a sorted: before equal values (Left) or after them (Right), in the
// order above (a NaN goes after every number). int64, of v's shape. a and v are compared in
// their promoted dtype. Computed by one stable sort of a and v together (not a binary search):
// O((len(a) + size(v)) log) work, whether or not a is sorted.
enum class Side { Left, Right };
Array searchsorted(const Array& a, const Array& v, Side side = Side::Left);

// The median along `axis` (none: of the raveled array): the middle value of the sorted axis, or
// the mean of the two middle ones. bool and integers give float64, floats and complex their own
// dtype (complex in NumPy's lexicographic order). A NaN in the axis gives NaN; an empty axis NaN.
Array median(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false);
// NumPy's quantile with its default method ('linear'): the value at position q * (n - 1) of the
// sorted axis, interpolated between its neighbours as NumPy's _lerp, in float64 (NumPy 1.24's
// result dtype; integers interpolate from their float64 values, where NumPy 1.24 subtracts in the
// integer dtype and may wrap). q in [0, 1] (else kiln::Error). A vector q adds a leading axis of
// its length. A NaN in the axis gives NaN; an empty axis raises ShapeError; complex and bool
// raise DTypeError (NumPy 1.25 and later: TypeError).
Array quantile(const Array& a, double q, std::optional<int> axis = std::nullopt,
               bool keepdims = false);
Array quantile(const Array& a, const std::vector<double>& q, std::optional<int> axis = std::nullopt,
               bool keepdims = false);
// quantile(a, q / 100): q in [0, 100].
Array percentile(const Array& a, double q, std::optional<int> axis = std::nullopt,
                 bool keepdims = false);
Array percentile(const Array& a, const std::vector<double>& q,
                 std::optional<int> axis = std::nullopt, bool keepdims = false);

}  // namespace kiln
