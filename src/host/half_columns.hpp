// Columns converted to and from float16 with the CPU's F16C instructions, eight values at a
// time, giving kernels/half.cuh's recipes bit for bit (tests/test_dtypes.cpp checks every half
// and the float32 and float64 values around each rounding point). Without F16C at compile time
// the caller's element-by-element recipe runs instead.
#pragma once
#include <cstdint>

#include "kiln/dtype.hpp"

namespace kiln::cpu {

// out[k] = a[k] converted, for float32/float64 -> float16 and float16 -> float32/float64.
// Returns false, having written nothing, for any other pair or where F16C is absent.
bool cast_half_column(DType from, DType to, const void* a, void* out, int64_t n);

}  // namespace kiln::cpu
