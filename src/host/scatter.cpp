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
// so a negative (left out) position needs no test there. An output that stays in the caches
// (bincount's counts) has no miss to hide: there the prefetches would only cost time.
constexpr int64_t kAhead = 16;
constexpr int64_t kCachedBytes = int64_t{1} << 18;

// The updates' values: value k at values[k * stride] (a stride of 0: one value for all).
template <class T>
struct Values {
  const T* values;
  int64_t stride;
  T operator[](int64_t k) const { return values[k * stride]; }
  Values from(int64_t k) const { return {values + k * stride, stride}; }
};

// Where each update lands. Flat positions as they are, a negative one an update left out (a
// mask's); indices into a 1-d output of n elements (ScatterStep::indices) with a negative
// one counted from the end, and one still outside [0, n) left out too, with a select rather than
// a branch: the step then reports it (fold_out_of_range).
struct Flat {
  const int64_t* p;
  int64_t operator[](int64_t k) const { return p[k]; }
  Flat from(int64_t k) const { return {p + k}; }
};
struct Indices {
  const int64_t* p;
  int64_t n;
  int64_t operator[](int64_t k) const {
    const int64_t i = p[k] < 0 ? p[k] + n : p[k];
    return i < n ? i : -1;
  }
  Indices from(int64_t k) const { return {p + k, n}; }
};

// Whether the update was applied (false: left out).
template <int OP, class T>
bool apply_one(T* out, int64_t p, T v) {
  if (p < 0) return false;
  out[p] = update<OP>(out[p], v);
  return true;
}

// Every update in order, into out of n elements. Whether none was left out.
template <int OP, class T, class P>
bool apply_all(T* out, int64_t n, P positions, Values<T> values, int64_t count) {
  bool all = true;
  int64_t k = 0;
  if (n * int64_t{sizeof(T)} > kCachedBytes)
    for (; k + kAhead < count; ++k) {
      __builtin_prefetch(out + positions[k + kAhead], 1);
      all &= apply_one<OP>(out, positions[k], values[k]);
    }
  for (; k < count; ++k) all &= apply_one<OP>(out, positions[k], values[k]);
  return all;
}

// A set keeps the last update of every position: walking the updates from the last one back,
// the first one met for a position is the one to store, and a bitmap of the positions met
// skips the rest. Each position is written once, and the bitmap (n / 8 bytes) stays in the
// caches; but while the walk meets new and old positions alike its branch is a coin toss.
// It pays where updates outnumber positions kBitmapUpdates to one (developer machine, AMD
// EPYC, float64, 1e7 updates in order with prefetch / by the bitmap: into 1e5 elements 11.7 /
// 6.7 ms, 3e5 11.7 / 10.2, 5e5 12.8 / 16.0, 1e6 14.3 / 22.3, 2e6 16.4 / 31.9).
template <class T, class P>
bool set_last(T* out, P positions, Values<T> values, int64_t count, uint64_t* seen) {
  bool all = true;
  for (int64_t k = count; k-- > 0;) {
    const int64_t p = positions[k];
    if (p < 0) {  // an update left out
      all = false;
      continue;
    }
    uint64_t& word = seen[p >> 6];
    const uint64_t bit = uint64_t{1} << (p & 63);
    if (word & bit) continue;
    word |= bit;
    out[p] = update<scatter::Set>(out[p], values[k]);
  }
  return all;
}

// Worth it: enough updates to pay for a bitmap, or for private copies.
constexpr int64_t kSplitUpdates = int64_t{1} << 20;
constexpr int64_t kBitmapUpdates = 32;  // per position, for set_last (above)
// Outputs no larger than this take a private copy per thread for the operations below.
constexpr int64_t kPrivateElements = int64_t{1} << 16;

// Operations whose result does not depend on the order of an element's updates: on integers
// (not bools: vector<bool>), wrapping add and multiply, minimum and maximum.
template <int OP, class T>
inline constexpr bool any_order_v =
    OP != scatter::Set&& std::is_integral_v<T> && !std::is_same_v<T, bool>;

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
template <int OP, class T, class P>
bool private_split(T* out, const T* x, int64_t n, P positions, Values<T> values, int64_t count,
                   int64_t threads) {
  std::vector<std::vector<T>> own(threads);
  std::vector<char> all(threads);
  auto first = [&](int64_t t) { return count / threads * t + std::min(t, count % threads); };
  parallel_for(threads, [&](int64_t t) {
    own[t].assign(n, identity_of<OP, T>());
    all[t] = apply_all<OP>(own[t].data(), n, positions.from(first(t)), values.from(first(t)),
                           first(t + 1) - first(t));
  });
  if (out != x) std::memcpy(out, x, n * sizeof(T));
  for (int64_t t = 0; t < threads; ++t)
    for (int64_t i = 0; i < n; ++i) out[i] = update<OP>(out[i], own[t][i]);
  return std::find(all.begin(), all.end(), 0) == all.end();
}

template <int OP, class T, class P>
bool apply(T* out, const T* x, int64_t n, P positions, Values<T> values, int64_t count) {
  const int64_t threads = thread_count();
  if constexpr (OP == scatter::Set) {
    if (count >= kSplitUpdates && count >= kBitmapUpdates * n) {
      if (out != x) std::memcpy(out, x, n * sizeof(T));
      std::vector<uint64_t> seen((n + 63) / 64);
      return set_last(out, positions, values, count, seen.data());
    }
  }
  if constexpr (any_order_v<OP, T>)
    if (threads > 1 && count >= kSplitUpdates && n <= kPrivateElements)
      return private_split<OP>(out, x, n, positions, values, count, threads);
  if (out != x) std::memcpy(out, x, n * sizeof(T));
  return apply_all<OP>(out, n, positions, values, count);
}

// The two words of a scatter's range check (kernels/scalar.cuh) from every index outside
// [-n, n): run only when an update was left out, so a scatter whose indices are in range
// reads them once.
void fold_out_of_range(const int64_t* indices, int64_t count, int64_t n, uint64_t* words) {
  for (int64_t k = 0; k < count; ++k) {
    const int64_t v = indices[k];
    if (v >= -n && v < n) continue;
    uint64_t& w = words[scalar::range_word_index(v)];
    w = std::max<uint64_t>(w, scalar::range_word(v));
  }
}

// Every update by op, with positions read as P says.
template <class T, class P>
bool dispatch(graph::ScatterOp op, T* out, const T* x, int64_t n, P positions, Values<T> v,
              int64_t count) {
  switch (op) {
    case graph::ScatterOp::Set:
      return apply<scatter::Set>(out, x, n, positions, v, count);
    case graph::ScatterOp::Add:
      return apply<scatter::Add>(out, x, n, positions, v, count);
    case graph::ScatterOp::Multiply:
      return apply<scatter::Multiply>(out, x, n, positions, v, count);
    case graph::ScatterOp::Min:
      if constexpr (!is_std_complex_v<T>)
        return apply<scatter::Min>(out, x, n, positions, v, count);
      break;
    case graph::ScatterOp::Max:
      if constexpr (!is_std_complex_v<T>)
        return apply<scatter::Max>(out, x, n, positions, v, count);
      break;
  }
  throw Error(
      "scatter min/max of a complex array reached the host executor; this is a kiln "
      "bug, please report it");
}

}  // namespace

void run_scatter(const plan::ScatterStep& step, const plan::PlanBuffer& out_desc, const void* x,
                 const int64_t* positions, const void* values, int64_t count, void* out,
                 uint64_t* check) {
  const int64_t n = shape_size(out_desc.shape);
  visit_dtype(out_desc.dtype, [&](auto tag) {
    using T = decltype(tag);
    auto* o = static_cast<T*>(out);
    auto* from = static_cast<const T*>(x);
    const Values<T> v{static_cast<const T*>(values), step.values_stride};
    if (!step.indices) {
      dispatch(step.op, o, from, n, Flat{positions}, v, count);
      return;
    }
    if (!dispatch(step.op, o, from, n, Indices{positions, n}, v, count))
      fold_out_of_range(positions, count, n, check);
  });
}

}  // namespace kiln::cpu
