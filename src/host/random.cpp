// Random steps on the host. cuRAND's host generator supplies the 32-bit Philox words and the
// mappings of kiln/random.hpp turn them into values: the words are bit-identical to those of
// cuRAND's device generator, so a GPU that applies the same mappings computes the same arrays.
//
// Only curandGenerate is used. cuRAND's own float64 distributions lay their words out in
// blocks that depend on its internal thread count (element 4g+2 of curandGenerateUniformDouble
// reads counter g + 65536), so their offsets cannot be accounted in words and a later call
// could reuse words of an earlier one; the word stream itself is linear in the offset.
#include "host/random.hpp"

#include <curand.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <numbers>
#include <string>
#include <utility>

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

// ---- words to numbers (kiln/random.hpp defines these) -------------------------------------
uint64_t load64(const uint32_t* w) { return w[0] | static_cast<uint64_t>(w[1]) << 32; }

// Words per element of a float dtype, and the maps from its words to [0, 1) and (0, 1].
template <class T>
struct Unit;
template <>
struct Unit<float> {
  static constexpr int k = 1;
  static float closed_open(const uint32_t* w) { return static_cast<float>(w[0] >> 8) * 0x1p-24f; }
  static float open_closed(const uint32_t* w) {
    return std::fma(static_cast<float>(w[0]), 0x1p-32f, 0x1p-33f);
  }
};
template <>
struct Unit<double> {
  static constexpr int k = 2;
  static double closed_open(const uint32_t* w) {
    return static_cast<double>(load64(w) >> 11) * 0x1p-53;
  }
  static double open_closed(const uint32_t* w) {
    return std::fma(static_cast<double>(load64(w) >> 11), 0x1p-53, 0x1p-54);
  }
};

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

template <class T>
void randint(const RandomStep& s, T* out, int64_t n) {
  const uint64_t low = static_cast<uint64_t>(s.a.as_int());
  const uint64_t range = static_cast<uint64_t>(s.b.as_int()) - low;
  const int k = range <= (uint64_t{1} << 16) ? 1 : 2;
  // The words go straight into the output when an element's words fill its own slot;
  // otherwise into scratch.
  std::unique_ptr<uint32_t[]> scratch;
  uint32_t* w = reinterpret_cast<uint32_t*>(out);
  if (4 * k != static_cast<int>(sizeof(T))) {
    scratch = std::make_unique_for_overwrite<uint32_t[]>(n * k);
    w = scratch.get();
  }
  words().fill(s.seed, s.offset, w, static_cast<uint64_t>(n) * k);
  for_each_index(n, [&](int64_t i) {
    uint64_t step = k == 1 ? (w[i] * range) >> 32
                           : static_cast<uint64_t>(
                                 (static_cast<unsigned __int128>(load64(w + 2 * i)) * range) >> 64);
    // Modular arithmetic: low + step is below high, so it fits T.
    out[i] = static_cast<T>(static_cast<int64_t>(low + step));
  });
}

template <class T>
void uniform(const RandomStep& s, T* out, int64_t n) {
  const T lo = static_cast<T>(s.a.as_double()), hi = static_cast<T>(s.b.as_double());
  const T span = hi - lo, below_hi = std::nextafter(hi, lo);
  // One element's words are exactly its own bytes, so the mapping runs in place.
  uint32_t* w = reinterpret_cast<uint32_t*>(out);
  words().fill(s.seed, s.offset, w, static_cast<uint64_t>(n) * Unit<T>::k);
  for_each_index(n, [&](int64_t i) {
    T v = std::fma(span, Unit<T>::closed_open(w + Unit<T>::k * i), lo);
    out[i] = v < hi ? v : below_hi;
  });
}

// Two standard normal samples from one pair's 2k words.
template <class T>
std::pair<T, T> box_muller(const uint32_t* w) {
  T u = Unit<T>::open_closed(w), t = Unit<T>::closed_open(w + Unit<T>::k);
  T rad = std::sqrt(T(-2) * std::log(u)), angle = 2 * std::numbers::pi_v<T> * t;
  return {rad * std::cos(angle), rad * std::sin(angle)};
}

template <class T>
void normal(const RandomStep& s, T* out, int64_t n) {
  constexpr int k = Unit<T>::k;
  const T mean = static_cast<T>(s.a.as_double()), sd = static_cast<T>(s.b.as_double());
  const int64_t pairs = n / 2;
  // A pair's words are the bytes of its two elements: in place again, each pair read whole
  // before it is written.
  uint32_t* w = reinterpret_cast<uint32_t*>(out);
  words().fill(s.seed, s.offset, w, static_cast<uint64_t>(pairs) * 2 * k);
  for_each_index(pairs, [&](int64_t j) {
    auto [z0, z1] = box_muller<T>(w + 2 * k * j);
    out[2 * j] = std::fma(sd, z0, mean);
    out[2 * j + 1] = std::fma(sd, z1, mean);
  });
  if (n % 2) {  // the last pair has one element; its words do not fit the output
    uint32_t tail[2 * k];
    words().fill(s.seed, s.offset + static_cast<uint64_t>(pairs) * 2 * k, tail, 2 * k);
    out[n - 1] = std::fma(sd, box_muller<T>(tail).first, mean);
  }
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
