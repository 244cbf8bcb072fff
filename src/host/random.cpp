// Random steps on the host, computed as the GPU computes them: the same Philox4x32-10 blocks
// and the same mappings from words to values (kernels/random.cuh, compiled here as plain C++),
// so both executors give the same arrays. Each block's words are computed where they are used,
// eight blocks side by side (vector instructions), in parallel chunks; no word goes through
// memory. tests/test_philox.cpp checks the words against cuRAND's host generator (Philox4_32_10,
// LEGACY ordering), which the host executor used before: the stream is the same.
#include "host/random.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "../../kernels/random.cuh"  // the stream and the mappings, as the GPU runs them

#include "common/parallel.hpp"
#include "kiln/errors.hpp"

namespace kiln::cpu {
namespace {

using graph::RandomDist;
using plan::RandomStep;
using rng::u64;

using rng::kLanes;
constexpr u64 kBlocksPerTask = u64{1} << 12;  // Philox blocks per task of the pool

// Writes the units that start in blocks [first, end) of step s (counted from its first block),
// kLanes blocks at a time. A unit that starts in a block and reads on into the next (when the
// step's offset is not a multiple of its words per unit) takes that block's first words too, as
// a GPU lane takes them from its neighbour.
template <class D>
void write_blocks(const D& d, const RandomStep& s, typename D::value_type* out, int64_t n,
                  u64 first, u64 end) {
  const u64 base = s.offset >> 2;
  const bool straddles = s.offset % D::K != 0;
  for (u64 b = first; b < end; b += kLanes) {
    unsigned w[kLanes][4], next[4] = {0, 0, 0, 0};
    rng::philox_blocks(s.seed, base + b, w);
    if (straddles) rng::philox_block(s.seed, base + b + kLanes, next);
    for (int l = 0; l < kLanes && b + l < end; ++l) {
      unsigned ws[4 + D::K - 1];
      for (int j = 0; j < 4; ++j) ws[j] = w[l][j];
      const unsigned* after = l + 1 < kLanes ? w[l + 1] : next;
      for (int j = 4; j < 4 + D::K - 1; ++j) ws[j] = after[j - 4];
      rng::write_block(d, out, n, s.offset, b + l, ws, false);
    }
  }
}

// The n values of distribution d (a unit of kernels/random.cuh: unit u maps words
// [K u, K u + K) of the step to elements [E u, E u + E)).
template <class D>
void generate(const D& d, const RandomStep& s, typename D::value_type* out, int64_t n) {
  const u64 blocks = rng::blocks_of<D>(n, s.offset);
  const auto tasks = static_cast<int64_t>((blocks + kBlocksPerTask - 1) / kBlocksPerTask);
  parallel_for(tasks, [&](int64_t t) {
    const u64 first = static_cast<u64>(t) * kBlocksPerTask;
    write_blocks(d, s, out, n, first, std::min(blocks, first + kBlocksPerTask));
  });
}

template <class T>
void randint(const RandomStep& s, T* out, int64_t n) {
  const uint64_t low = static_cast<uint64_t>(s.a.as_int());
  const uint64_t range = static_cast<uint64_t>(s.b.as_int()) - low;
  if (range <= (uint64_t{1} << 16))
    generate(rng::Randint<T, 1>{low, range}, s, out, n);
  else
    generate(rng::Randint<T, 2>{low, range}, s, out, n);
}

template <class T>
void uniform(const RandomStep& s, T* out, int64_t n) {
  const T lo = static_cast<T>(s.a.as_double()), hi = static_cast<T>(s.b.as_double());
  generate(rng::Uniform<T>{lo, hi - lo, hi, std::nextafter(hi, lo)}, s, out, n);
}

template <class T>
void normal(const RandomStep& s, T* out, int64_t n) {
  const T mean = static_cast<T>(s.a.as_double()), sd = static_cast<T>(s.b.as_double());
  generate(rng::Normal<T>{mean, sd}, s, out, n);
}

[[noreturn]] void bad_dtype(DType t) {
  throw Error(std::string("random step with dtype ") + dtype_name(t) +
              " reached the host executor; this is a kiln bug, please report it");
}

}  // namespace

void run_random(const RandomStep& step, const plan::PlanBuffer& out_desc, void* out) {
  const int64_t n = shape_size(out_desc.shape);
  if (n == 0) return;
  const DType t = out_desc.dtype;
  switch (step.dist) {
    case RandomDist::Randint:
      if (t == DType::Int32) return randint(step, static_cast<int32_t*>(out), n);
      if (t == DType::Int64) return randint(step, static_cast<int64_t*>(out), n);
      bad_dtype(t);
    case RandomDist::Uniform:
      if (t == DType::Float32) return uniform(step, static_cast<float*>(out), n);
      if (t == DType::Float64) return uniform(step, static_cast<double*>(out), n);
      bad_dtype(t);
    case RandomDist::Normal:
      if (t == DType::Float32) return normal(step, static_cast<float*>(out), n);
      if (t == DType::Float64) return normal(step, static_cast<double*>(out), n);
      bad_dtype(t);
  }
  bad_dtype(t);
}

}  // namespace kiln::cpu
