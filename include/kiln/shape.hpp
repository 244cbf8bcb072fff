// Array shapes. Rank 0 to 8, dimensions may be zero.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

using Shape = std::vector<int64_t>;
inline constexpr int kMaxRank = 8;

// Number of elements (1 for rank 0). ShapeError for a negative dimension, or when the product
// of the non-zero dimensions does not fit in int64 (as NumPy, even when a zero dimension makes
// the array empty).
int64_t shape_size(const Shape& s);
// "(2, 3)" like NumPy; "()" for rank 0 and "(5,)" for rank 1.
std::string shape_str(const Shape& s);

}  // namespace kiln
