// Random arrays as lazy graph nodes. A Random node carries (seed, offset, a, b); the planner
// turns it into a RandomStep, which a backend fills from the Philox word stream described in
// kiln/random.hpp. This file checks the arguments and keeps each generator's offset, which
// must advance by exactly the words the backends consume (tests/test_random.cpp checks that
// consecutive calls continue one stream).
#include "kiln/random.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

#include "api/build.hpp"
#include "graph/shape.hpp"

namespace kiln::random {
namespace {

using graph::RandomDist;

// One checked call, not yet placed in a stream.
struct Call {
  RandomDist dist;
  DType dtype;
  Shape shape;
  Scalar a, b;
  uint64_t words;  // how far the call moves its generator's offset
};

std::string num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

uint64_t element_count(const Shape& s, const char* what) {
  graph::check_rank(s, what);  // ShapeError for negative dimensions
  return static_cast<uint64_t>(shape_size(s));
}

void check_device(Device d) {
  if (d.is_cuda()) cuda(d.index);  // DeviceError when that GPU does not exist
}

void check_float_dtype(DType t, const char* what) {
  if (!is_floating(t))
    throw DTypeError(std::string(what) + ": dtype " + dtype_name(t) +
                     " is not a float type; use float32 or float64 (randint gives integers)");
}

// The dtype the random kernels draw a randint of t in (they have int32 and int64 forms): the
// values lie in [low, high), which t holds, so the cast to t that follows is exact, and the
// numbers are those of int32/int64 for one seed.
DType randint_draw_dtype(DType t) {
  if (t == DType::Int32 || t == DType::Int64) return t;
  return itemsize(t) < 4 ? DType::Int32 : DType::Int64;
}

// The array of a draw in the dtype asked for.
Array as_drawn(Array drawn, DType t) { return drawn.dtype() == t ? drawn : drawn.astype(t); }

// float16 and bfloat16 draw float32 numbers (the same for a seed) and round each once, by the
// cast both executors take from kernels/half.cuh. (A uniform draw just below `high` may round
// to it.)
DType float_draw_dtype(DType t) { return is_half(t) ? DType::Float32 : t; }

Call randint_call(int64_t low, int64_t high, Shape shape, DType t) {
  if (!is_integer(t))
    throw DTypeError(std::string("randint: dtype ") + dtype_name(t) +
                     " is not an integer type; use int32 or int64 (uniform gives floats)");
  if (high <= low)
    throw Error("randint: high (" + std::to_string(high) + ") must be greater than low (" +
                std::to_string(low) + "), since values are drawn from [low, high)");
  bool fits = visit_dtype(t, [&](auto z) {
    using T = decltype(z);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      return (std::is_same_v<T, uint64_t>
                  ? low >= 0
                  : low >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                        high - 1 <= static_cast<int64_t>(std::numeric_limits<T>::max()));
    else
      return true;
  });
  if (!fits)
    throw DTypeError("randint: [" + std::to_string(low) + ", " + std::to_string(high) +
                     ") does not fit " + dtype_name(t) + "; use int64 or narrower bounds");
  uint64_t n = element_count(shape, "randint");
  // Words per element, as kiln/random.hpp defines: one for ranges up to 2^16, else two.
  uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  uint64_t k = range <= (uint64_t{1} << 16) ? 1 : 2;
  return {RandomDist::Randint, randint_draw_dtype(t), std::move(shape), low, high, n * k};
}

// The bounds as the dtype sees them: low < high and a finite span, or kiln::Error.
template <class T>
void check_uniform_bounds(double low, double high, DType t) {
  T lo = static_cast<T>(low), hi = static_cast<T>(high);
  if (!std::isfinite(low) || !std::isfinite(high) || !std::isfinite(hi - lo))
    throw Error("uniform: low (" + num(low) + ") and high (" + num(high) + ") and their " +
                "difference must be finite in " + dtype_name(t));
  if (!(lo < hi))
    throw Error("uniform: high (" + num(high) + ") must be greater than low (" + num(low) +
                ") in " + dtype_name(t) + ", since values are drawn from [low, high)");
}

Call uniform_call(double low, double high, Shape shape, DType t) {
  check_float_dtype(t, "uniform");
  t = float_draw_dtype(t);
  if (t == DType::Float32)
    check_uniform_bounds<float>(low, high, t);
  else
    check_uniform_bounds<double>(low, high, t);
  uint64_t n = element_count(shape, "uniform");
  uint64_t k = static_cast<uint64_t>(itemsize(t)) / 4;  // float32: one word, float64: two
  return {RandomDist::Uniform, t, std::move(shape), low, high, n * k};
}

Call normal_call(double mean, double std, Shape shape, DType t) {
  check_float_dtype(t, "normal");
  t = float_draw_dtype(t);
  if (!std::isfinite(mean) || !std::isfinite(std) || std < 0)
    throw Error("normal: mean (" + num(mean) + ") must be finite and std (" + num(std) +
                ") finite and >= 0");
  uint64_t n = element_count(shape, "normal");
  uint64_t k = static_cast<uint64_t>(itemsize(t)) / 4;
  // Box-Muller makes elements in pairs; an odd count still uses its last pair's words.
  return {RandomDist::Normal, t, std::move(shape), mean, std, (n + 1) / 2 * 2 * k};
}

// The node of a call placed at (seed, offset) of the stream.
Array build(Call c, Device d, uint64_t seed, uint64_t offset) {
  graph::NodeSpec spec{graph::OpKind::Random,
                       static_cast<uint8_t>(c.dist),
                       c.dtype,
                       std::move(c.shape),
                       d,
                       {},
                       graph::RandomAttrs{seed, offset, c.a, c.b}};
  return api::finish(graph::make_node(std::move(spec)));
}

// Places a checked call at a generator's offset and moves the offset past it. Everything is
// checked first, so bad input leaves the offset unchanged.
Array issue(Call c, Device d, uint64_t seed, uint64_t& offset) {
  check_device(d);
  uint64_t words = c.words;
  Array a = build(std::move(c), d, seed, offset);
  offset += words;
  return a;
}

// ---- the default generators -----------------------------------------------------------------
struct Defaults {
  std::mutex mu;
  std::optional<uint64_t> seed;  // set by kiln::random::seed
  std::map<std::pair<int, int>, Generator> per_device;
};

Defaults& defaults() {
  static Defaults d;
  return d;
}

uint64_t fresh_seed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) | rd();
}

// Reserves the call's words on d's default generator and builds the node outside the lock,
// so an eager evaluation does not hold up other threads.
Array draw_default(Call c, Device d) {
  check_device(d);
  uint64_t seed, offset;
  {
    Defaults& D = defaults();
    std::lock_guard lock(D.mu);
    auto key = std::make_pair(static_cast<int>(d.kind), d.index);
    auto it = D.per_device.find(key);
    if (it == D.per_device.end())
      it = D.per_device.emplace(key, Generator(D.seed.value_or(fresh_seed()), d)).first;
    Generator& g = it->second;
    seed = g.seed();
    offset = g.offset();
    g.set_offset(offset + c.words);
  }
  return build(std::move(c), d, seed, offset);
}

}  // namespace

Generator::Generator(uint64_t seed, Device d) : seed_(seed), device_(d) {}

Array Generator::randint(int64_t low, int64_t high, Shape shape, DType t) {
  return as_drawn(issue(randint_call(low, high, std::move(shape), t), device_, seed_, offset_), t);
}

Array Generator::uniform(double low, double high, Shape shape, DType t) {
  return as_drawn(issue(uniform_call(low, high, std::move(shape), t), device_, seed_, offset_), t);
}

Array Generator::normal(double mean, double std, Shape shape, DType t) {
  return as_drawn(issue(normal_call(mean, std, std::move(shape), t), device_, seed_, offset_), t);
}

Array randint(int64_t low, int64_t high, Shape shape, DType t, Device d) {
  return as_drawn(draw_default(randint_call(low, high, std::move(shape), t), d), t);
}

Array uniform(double low, double high, Shape shape, DType t, Device d) {
  return as_drawn(draw_default(uniform_call(low, high, std::move(shape), t), d), t);
}

Array normal(double mean, double std, Shape shape, DType t, Device d) {
  return as_drawn(draw_default(normal_call(mean, std, std::move(shape), t), d), t);
}

void seed(uint64_t s) {
  Defaults& D = defaults();
  std::lock_guard lock(D.mu);
  D.seed = s;
  D.per_device.clear();  // each device restarts at (s, 0) on its next call
}

}  // namespace kiln::random
