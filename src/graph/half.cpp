// kiln::float16 and kiln::bfloat16's conversions: kernels/half.cuh's, which the kernels and the
// host executor use, out of line because kernels/ are compiled into the library, not installed.
#include "kiln/half.hpp"

#include "../../kernels/half.cuh"

namespace kiln {

float16::float16(float x) : bits(scalar::float_to_half_bits(x)) {}
float16::float16(double x) : bits(scalar::double_to_half_bits(x)) {}
float16::operator float() const { return scalar::half_bits_to_float(bits); }
bfloat16::bfloat16(float x) : bits(scalar::float_to_bfloat16_bits(x)) {}
bfloat16::operator float() const { return scalar::bfloat16_bits_to_float(bits); }

}  // namespace kiln
