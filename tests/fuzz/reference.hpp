// An independent scalar reference for the fuzzer: evaluates a program element by element
// with plain loops and NumPy's semantics (kiln's documented choices where NumPy leaves one
// open: integer wrap-around, float -> int giving the minimum integer out of range,
// NaN-propagating minimum / maximum, integer pow, lexicographic complex order), restated here
// rather than included from kiln, and without kiln's executors. Sums and means are carried
// in long double, with the sum of the terms' magnitudes, from which check.cpp bounds a
// sum's rounding error in any order by gamma_{n-1} * sum |x_i|.
#pragma once
#include <complex>
#include <optional>
#include <vector>

#include "fuzz/program.hpp"

namespace kiln::fuzz {

using RefElem = std::complex<long double>;

struct RefValue {
  DType dtype = DType::Float64;
  Shape shape;
  std::vector<RefElem> v;  // each element's value in dtype, exactly (integers too)
  // Sums and means: per element, the number of terms and sum |re| + |im| of them (in the
  // sum's dtype); empty otherwise.
  int64_t terms = 0;
  std::vector<long double> magnitude;
};

// Whether reference() models every op of p (it does not do FFTs).
bool has_reference(const Program& p);
// Every value of p, or nullopt when an op is one the reference does not model or NumPy
// refuses.
std::optional<std::vector<RefValue>> reference(const Program& p);

}  // namespace kiln::fuzz
