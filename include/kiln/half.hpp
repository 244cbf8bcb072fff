// kiln::float16 (IEEE binary16, NumPy's float16) and kiln::bfloat16 (the top half of a
// float32, ml_dtypes' bfloat16): the element types of DType::Float16 and DType::BFloat16, so
// that a program reads and writes their data (data<kiln::float16>(), to_vector, item). They
// hold the bits and convert explicitly; kiln computes on them in float32 (README, dtypes).
#pragma once
#include <cstdint>

namespace kiln {

struct float16 {
  uint16_t bits = 0;
  float16() = default;
  // Rounded to nearest even (65520 and up to infinity, subnormals kept); from a double
  // directly, as NumPy's astype (through float would round twice).
  explicit float16(float x);
  explicit float16(double x);
  explicit operator float() const;  // exact
  explicit operator double() const { return static_cast<float>(*this); }
  static float16 from_bits(uint16_t b) {
    float16 h;
    h.bits = b;
    return h;
  }
};

struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  // Rounded to nearest even; a double through float first, as ml_dtypes (Eigen) converts.
  explicit bfloat16(float x);
  explicit bfloat16(double x) : bfloat16(static_cast<float>(x)) {}
  explicit operator float() const;  // exact
  explicit operator double() const { return static_cast<float>(*this); }
  static bfloat16 from_bits(uint16_t b) {
    bfloat16 h;
    h.bits = b;
    return h;
  }
};

static_assert(sizeof(float16) == 2 && sizeof(bfloat16) == 2, "16-bit storage");

// Bitwise equality (NaN payloads included): what tests and containers want; arithmetic and
// IEEE comparison go through float.
inline bool same_bits(float16 a, float16 b) { return a.bits == b.bits; }
inline bool same_bits(bfloat16 a, bfloat16 b) { return a.bits == b.bits; }

}  // namespace kiln
