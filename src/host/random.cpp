// Random steps on the host. cuRAND's host generator supplies the 32-bit Philox words and the
// mappings of kiln/random.hpp turn them into values: the words are bit-identical to those of
// cuRAND's device generator, and the mappings are the GPU kernels' own functions
// (kernels/random.cuh, compiled here as plain C++), so both compute the same arrays.
//
// Only curandGenerate is used. cuRAND's own float64 distributions lay their words out in
// blocks that depend on its internal thread count (element 4g+2 of curandGenerateUniformDouble
// reads counter g + 65536), so their offsets cannot be accounted in words and a later call
// could reuse words of an earlier one; the word stream itself is linear in the offset.
#include "host/random.hpp"

#include <curand.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "../../kernels/random.cuh"  // the mappings from words to values, as the GPU runs them

#include "common/parallel.hpp"
#include "kiln/errors.hpp"

namespace kiln::cpu {
namespace {

using graph::RandomDist;
using plan::RandomStep;

void check(curandStatus_t s, const char* call) {
  if (s != CURAND_STATUS_SUCCESS)
    throw CudaError(std::string(call) + " failed with cuRAND status " + std::to_string(s) +
                    " while generating a random array on the host; check that the libcurand "
                    "kiln was built against is installed");
}

// The Philox word stream of this thread. Creating a cuRAND host generator is cheap, but its
// first generation after a seed or offset change costs about 4 ms (cuRAND rebuilds its
// states), while a call that continues where the last one ended costs well under 0.1 ms. So
// the generator remembers where its stream stands and moves only when a step starts elsewhere:
// a Generator's arrays, evaluated in the order they were made, continue one another.
class WordStream {
 public:
  WordStream() = default;
  WordStream(const WordStream&) = delete;
  WordStream& operator=(const WordStream&) = delete;
  ~WordStream() {
    if (gen_) curandDestroyGenerator(gen_);
  }

  // Writes words [offset, offset + n) of the stream of `seed` to out.
  void fill(uint64_t seed, uint64_t offset, uint32_t* out, uint64_t n) {
    if (n == 0) return;
    if (!gen_) create();
    if (!placed_ || seed != seed_ || offset != next_) {
      placed_ = false;
      check(curandSetPseudoRandomGeneratorSeed(gen_, seed), "curandSetPseudoRandomGeneratorSeed");
      check(curandSetGeneratorOffset(gen_, offset), "curandSetGeneratorOffset");
      seed_ = seed;
    }
    placed_ = false;  // unknown until the call succeeds
    check(curandGenerate(gen_, out, n), "curandGenerate");
    next_ = offset + n;
    placed_ = true;
  }

 private:
  void create() {
    check(curandCreateGeneratorHost(&gen_, CURAND_RNG_PSEUDO_PHILOX4_32_10),
          "curandCreateGeneratorHost");
    // The one ordering cuRAND promises to keep across releases; the GPU must use it too.
    check(curandSetGeneratorOrdering(gen_, CURAND_ORDERING_PSEUDO_LEGACY),
          "curandSetGeneratorOrdering");
  }

  curandGenerator_t gen_ = nullptr;
  bool placed_ = false;
  uint64_t seed_ = 0, next_ = 0;
};

WordStream& words() {
  thread_local WordStream s;
  return s;
}

// Runs f(i) for i in [0, n) on the pool, in blocks large enough to outweigh scheduling.
template <class F>
void for_each_index(int64_t n, const F& f) {
  constexpr int64_t kBlock = int64_t{1} << 15;
  int64_t blocks = (n + kBlock - 1) / kBlock;
  parallel_for(blocks, [&](int64_t b) {
    int64_t end = std::min(n, (b + 1) * kBlock);
    for (int64_t i = b * kBlock; i < end; ++i) f(i);
  });
}

// The n values of distribution d (a unit of kernels/random.cuh, the functions a GPU thread
// runs: unit u maps words [K u, K u + K) of the step to elements [E u, E u + E)).
template <class D>
void generate(const D& d, const RandomStep& s, typename D::value_type* out, int64_t n) {
  using T = typename D::value_type;
  const int64_t whole = n / D::E;  // units whose elements all lie in out
  // The words go straight into the output when a unit's words are exactly its elements'
  // bytes (each unit reads its words before it writes); otherwise into scratch.
  std::unique_ptr<uint32_t[]> scratch;
  uint32_t* w = reinterpret_cast<uint32_t*>(out);
  if (4 * D::K != D::E * static_cast<int>(sizeof(T))) {
    scratch = std::make_unique_for_overwrite<uint32_t[]>(whole * D::K);
    w = scratch.get();
  }
  words().fill(s.seed, s.offset, w, static_cast<uint64_t>(whole) * D::K);
  for_each_index(whole, [&](int64_t u) { d(w + D::K * u, out + D::E * u); });
  if (n % D::E) {  // an odd normal step: its last pair's words do not fit in the output
    uint32_t tail[D::K];
    T v[D::E];
    words().fill(s.seed, s.offset + static_cast<uint64_t>(whole) * D::K, tail, D::K);
    d(tail, v);
    std::copy(v, v + n % D::E, out + D::E * whole);
  }
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
