// NumPy's .npy files, so arrays move between kiln and Python (numpy.load / numpy.save).
#pragma once
#include <string>

#include "kiln/array.hpp"

namespace kiln {

// Reads a .npy file (format 1.0, 2.0 or 3.0) of any kiln dtype: |b1 <i4 <i8 <f4 <f8 <c8 <c16.
// Fortran-ordered files come back in C order with the same logical shape, as numpy.load
// gives them. On a cuda device the result is a planned copy of the host data. A file kiln cannot
// read (bad magic, truncated, big-endian, object or other dtypes) throws a kiln::Error (a
// DTypeError for the dtype) that names the file and says how to convert it.
Array load_npy(const std::string& path, Device d = host());

// Writes a in C order (format 1.0, or 2.0 when the header needs it). Evaluates a, and copies
// it to the host first if it lives on a GPU. Throws kiln::Error when the file cannot be written.
void save_npy(const std::string& path, const Array& a);

}  // namespace kiln
