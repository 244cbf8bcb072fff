// kiln::random: random arrays from one counter-based stream, so a (seed, offset) pair names
// the same numbers on the host and on a GPU.
//
// The stream. Every distribution is computed from the 32-bit words of cuRAND's
// Philox4_32_10 generator (curandGenerate; ordering CURAND_ORDERING_PSEUDO_LEGACY, which cuRAND
// keeps fixed across releases): the host uses cuRAND's host generator; a GPU computes the same
// words in its kernel from Philox's closed form (kernels/random.cuh, checked word for word
// against cuRAND in tests/test_philox.cpp), so one pass writes the output. A Generator's
// offset counts words: each call starts at the current offset and advances it by the words it
// consumed, so consecutive calls never reuse a word, and a call's numbers depend only on the
// seed, the offset and the call's arguments. Element i of a call reads the words
// [offset + k*i, offset + k*(i+1)), where k is the call's words per element:
//
//   randint   r = high - low (up to 2^64 - 1).
//             r <= 2^16: k = 1, value = low + ((w * r) >> 32).
//             r >  2^16: k = 2, x = w0 | w1 << 32, value = low + ((x * r) >> 64) (128-bit product).
//             This is a multiply-shift without rejection, so every call uses a fixed number of
//             words. Values are slightly uneven: each occurs floor or ceil of 2^32/r (2^64/r)
//             times over all word values, a relative bias below r / 2^32 (r / 2^64), that is
//             below 2^-16 unless r exceeds 2^48.
//   uniform   float32: k = 1, t = (w >> 8) * 2^-24; float64: k = 2, t = (x >> 11) * 2^-53.
//             t lies in [0, 1), exactly. value = fma(hi - lo, t, lo) in the output dtype,
//             where lo and hi are low and high rounded to it; a value that rounds up to hi is
//             replaced by the largest number below hi, so the result lies in [low, high).
//   normal    Box-Muller on pairs of elements: elements 2j and 2j+1 read the 2k words of pair j.
//             u = float(w0) * 2^-32 + 2^-33 (float32) or (x0 >> 11) * 2^-53 + 2^-54 (float64),
//             in (0, 1]; t from the next word(s) as for uniform; rad = sqrt(-2 log u);
//             element 2j = mean + std * rad * cos(2 pi t), element 2j+1 = mean + std * rad *
//             sin(2 pi t), in the output dtype. A call of odd size still consumes whole pairs.
//             log, sin and cos differ between the host's libm and CUDA by a few ulps, so normal
//             samples agree across devices to rounding, not bit for bit; the others are exact.
//
// Thread safety: a Generator is a plain value (like std::mt19937); share one between threads
// only with your own lock. The free functions use one default generator per device, guarded
// by a mutex.
#pragma once
#include <cstdint>

#include "kiln/array.hpp"

namespace kiln::random {

class Generator {
 public:
  explicit Generator(uint64_t seed = 0, Device d = host());

  // Integers in [low, high). DTypeError for a non-integer dtype, or bounds outside int32 for
  // int32; kiln::Error when high <= low; ShapeError for a negative dimension.
  Array randint(int64_t low, int64_t high, Shape shape, DType t = DType::Int64);
  // Floats in [low, high). DTypeError for a non-float dtype; kiln::Error unless low < high
  // in that dtype and both bounds and their difference are finite.
  Array uniform(double low = 0, double high = 1, Shape shape = {}, DType t = DType::Float64);
  // Normal samples. DTypeError for a non-float dtype; kiln::Error for std < 0 or a non-finite
  // mean or std.
  Array normal(double mean = 0, double std = 1, Shape shape = {}, DType t = DType::Float64);

  uint64_t seed() const { return seed_; }
  Device device() const { return device_; }
  // Words consumed so far: the position of the next call in the stream.
  uint64_t offset() const { return offset_; }
  // Moves to a position in the stream, e.g. to replay a call made at a saved offset().
  void set_offset(uint64_t words) { offset_ = words; }

 private:
  uint64_t seed_;
  uint64_t offset_ = 0;
  Device device_;
};

// The same calls on the process-wide default generator of device d. The default generators
// start from a random seed (as NumPy's do) until seed() fixes them.
Array randint(int64_t low, int64_t high, Shape shape, DType t = DType::Int64, Device d = host());
Array uniform(double low = 0, double high = 1, Shape shape = {}, DType t = DType::Float64,
              Device d = host());
Array normal(double mean = 0, double std = 1, Shape shape = {}, DType t = DType::Float64,
             Device d = host());
// Restarts every device's default generator at (s, offset 0), so the same seed gives the
// same arrays on the host and on a GPU.
void seed(uint64_t s);

}  // namespace kiln::random
