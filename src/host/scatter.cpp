#include "host/scatter.hpp"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "common/parallel.hpp"
#include "host/update.hpp"
#include "kiln/errors.hpp"

namespace kiln::cpu {
namespace {

// Updates that land far apart wait on a cache miss each: the element kAhead updates on is
// fetched (for writing) while this one is applied, so misses overlap. A prefetch never faults,
// so a negative (left out) position needs no test there.
constexpr int64_t kAhead = 16;

template <int OP, class T>
void apply_all(T* out, const int64_t* positions, const T* values, int64_t count) {
  int64_t k = 0;
  for (; k + kAhead < count; ++k) {
    __builtin_prefetch(out + positions[k + kAhead], 1);
    if (positions[k] >= 0)  // a negative one: an update left out (a value a mask drops)
      out[positions[k]] = update<OP>(out[positions[k]], values[k]);
  }
  for (; k < count; ++k)
    if (positions[k] >= 0) out[positions[k]] = update<OP>(out[positions[k]], values[k]);
}

// A set split by update, keeping the last update of every position: stretch t of the updates
// skips the positions a later stretch sets (bitmaps of them, made first, in parallel); the
// stretches then write disjoint positions, each the value of the last update that sets it, as
// applied in order. Later stretches write more, so there are several per thread to share out.
template <class T>
void set_split(T* out, const T* x, int64_t n, const int64_t* positions, const T* values,
               int64_t count, int64_t threads) {
  const int64_t words = (n + 63) / 64, stretches = 4 * threads;
  auto first = [&](int64_t t) { return count / stretches * t + std::min(t, count % stretches); };
  std::vector<std::vector<uint64_t>> later(stretches - 1);  // positions set after stretch t
  parallel_for(stretches - 1, [&](int64_t t) {
    std::vector<uint64_t>& own = later[t];
    own.assign(words, 0);
    for (int64_t k = first(t + 1), end = first(t + 2); k < end; ++k)
      if (const int64_t p = positions[k]; p >= 0) own[p >> 6] |= uint64_t{1} << (p & 63);
  });
  for (int64_t t = stretches - 3; t >= 0; --t)  // set by stretch t + 1 or any after it
    for (int64_t w = 0; w < words; ++w) later[t][w] |= later[t + 1][w];
  parallel_for(threads, [&](int64_t t) {
    const int64_t lo = n / threads * t, hi = t + 1 == threads ? n : n / threads * (t + 1);
    if (out != x) std::memcpy(out + lo, x + lo, (hi - lo) * sizeof(T));
  });
  parallel_for(stretches, [&](int64_t t) {
    const int64_t begin = first(t), end = first(t + 1);
    if (t + 1 == stretches)
      return apply_all<scatter::Set>(out, positions + begin, values + begin, end - begin);
    const uint64_t* skip = later[t].data();
    for (int64_t k = begin; k < end; ++k) {
      const int64_t p = positions[k];
      if (p >= 0 && !(skip[p >> 6] >> (p & 63) & 1))
        out[p] = update<scatter::Set>(out[p], values[k]);
    }
  });
}

// Worth splitting: enough updates to pay for the bitmaps (or the private copies).
constexpr int64_t kSplitUpdates = int64_t{1} << 20;
// Outputs no larger than this take a private copy per thread for the operations below.
constexpr int64_t kPrivateElements = int64_t{1} << 16;

// Operations whose result does not depend on the order of an element's updates: on integers
// (not bools: vector<bool>), wrapping add and multiply, minimum and maximum.
template <int OP, class T>
inline constexpr bool any_order_v =
    OP != scatter::Set && std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <int OP, class T>
T identity_of() {
  if constexpr (OP == scatter::Add) return T(0);
  if constexpr (OP == scatter::Multiply) return T(1);
  if constexpr (OP == scatter::Min) return std::numeric_limits<T>::max();
  return std::numeric_limits<T>::lowest();
}

// A histogram-like update (many updates, a small output: bincount's counts) split by update
// into one private copy per thread, started at the operation's identity, then combined into x:
// for these operations the order of an element's updates does not change its result.
template <int OP, class T>
void private_split(T* out, const T* x, int64_t n, const int64_t* positions, const T* values,
                   int64_t count, int64_t threads) {
  std::vector<std::vector<T>> own(threads);
  auto first = [&](int64_t t) { return count / threads * t + std::min(t, count % threads); };
  parallel_for(threads, [&](int64_t t) {
    own[t].assign(n, identity_of<OP, T>());
    apply_all<OP>(own[t].data(), positions + first(t), values + first(t), first(t + 1) - first(t));
  });
  if (out != x) std::memcpy(out, x, n * sizeof(T));
  for (int64_t t = 0; t < threads; ++t)
    for (int64_t i = 0; i < n; ++i) out[i] = update<OP>(out[i], own[t][i]);
}

template <int OP, class T>
void apply(T* out, const T* x, int64_t n, const int64_t* positions, const T* values,
           int64_t count) {
  const int64_t threads = thread_count();
  if constexpr (OP == scatter::Set)
    if (threads > 1 && count >= kSplitUpdates)
      return set_split(out, x, n, positions, values, count, threads);
  if constexpr (any_order_v<OP, T>)
    if (threads > 1 && count >= kSplitUpdates && n <= kPrivateElements)
      return private_split<OP>(out, x, n, positions, values, count, threads);
  if (out != x) std::memcpy(out, x, n * sizeof(T));
  apply_all<OP>(out, positions, values, count);
}

}  // namespace

void run_scatter(const plan::ScatterStep& step, const plan::PlanBuffer& out_desc, const void* x,
                 const int64_t* positions, const void* values, int64_t count, void* out) {
  const int64_t n = shape_size(out_desc.shape);
  visit_dtype(out_desc.dtype, [&](auto tag) {
    using T = decltype(tag);
    auto* o = static_cast<T*>(out);
    auto* from = static_cast<const T*>(x);
    auto* v = static_cast<const T*>(values);
    switch (step.op) {
      case graph::ScatterOp::Set:
        return apply<scatter::Set>(o, from, n, positions, v, count);
      case graph::ScatterOp::Add:
        return apply<scatter::Add>(o, from, n, positions, v, count);
      case graph::ScatterOp::Multiply:
        return apply<scatter::Multiply>(o, from, n, positions, v, count);
      case graph::ScatterOp::Min:
        if constexpr (!is_std_complex_v<T>)
          return apply<scatter::Min>(o, from, n, positions, v, count);
        break;
      case graph::ScatterOp::Max:
        if constexpr (!is_std_complex_v<T>)
          return apply<scatter::Max>(o, from, n, positions, v, count);
        break;
    }
    throw Error(
        "scatter min/max of a complex array reached the host executor; this is a kiln "
        "bug, please report it");
  });
}

}  // namespace kiln::cpu
