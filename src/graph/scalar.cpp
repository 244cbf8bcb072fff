#include "kiln/scalar.hpp"

#include <cmath>
#include <cstring>

#include "../../kernels/scalar.cuh"  // float to integer, as the kernels convert
#include "graph/hash.hpp"

namespace kiln {

// NumPy on x86 turns NaN and out-of-range values into INT64_MIN; so does as_integer.
int64_t Scalar::as_int() const { return as_integer<int64_t>(); }

int64_t Scalar::float_to_int(size_t bytes, bool is_signed) const {
  switch (bytes) {
    case 1:
      return is_signed ? scalar::float_to_int<int8_t>(re_) : scalar::float_to_int<uint8_t>(re_);
    case 2:
      return is_signed ? scalar::float_to_int<int16_t>(re_) : scalar::float_to_int<uint16_t>(re_);
    case 4:
      return is_signed ? scalar::float_to_int<int32_t>(re_) : scalar::float_to_int<uint32_t>(re_);
    default:
      return is_signed ? scalar::float_to_int<int64_t>(re_)
                       : static_cast<int64_t>(scalar::float_to_int<uint64_t>(re_));
  }
}

double Scalar::as_double() const {
  return kind_ == Kind::Bool || kind_ == Kind::Int ? static_cast<double>(i_) : re_;
}

std::complex<double> Scalar::as_complex() const {
  return {as_double(), kind_ == Kind::Complex ? im_ : 0.0};
}

bool Scalar::as_bool() const {
  if (kind_ == Kind::Bool || kind_ == Kind::Int) return i_ != 0;
  return re_ != 0 || im_ != 0;
}

size_t Scalar::hash(uint64_t salt) const {
  uint64_t re, im;
  std::memcpy(&re, &re_, sizeof re);
  std::memcpy(&im, &im_, sizeof im);
  // One mix: the integer, the kind and the salt as the seed, the real and imaginary bits folded
  // (hashed for every constant built). Values that fold alike only cost a comparison where
  // hashed.
  return graph::hash_mix(
      static_cast<uint64_t>(i_) ^ (static_cast<uint64_t>(kind_) << 56) ^ (salt << 40),
      re ^ ((im << 29) | (im >> 35)));
}

}  // namespace kiln
