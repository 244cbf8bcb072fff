#include "host/sort.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

#include "../../kernels/sort_keys.cuh"  // the order, as the GPU's radix sort applies it
#include "common/parallel.hpp"
#include "kiln/errors.hpp"

namespace kiln::cpu {
namespace {

using sort_keys::order;

// A value's keys, most significant first, then its position: distinct entries, so std::sort
// (or merging sorted parts) gives the stable order, the same whatever the parts.
template <class Tag>
struct Entry {
  std::array<sort_keys::u64, order<Tag>::keys> key;  // key[0] the most significant
  int64_t pos;
  bool operator<(const Entry& o) const { return key != o.key ? key < o.key : pos < o.pos; }
};

template <class Tag>
void fill(Entry<Tag>* e, const typename order<Tag>::bits* row, int64_t lo, int64_t hi) {
  constexpr int K = order<Tag>::keys;
  for (int64_t i = lo; i < hi; ++i) {
    for (int k = 0; k < K; ++k) e[i].key[k] = order<Tag>::key(row[i], K - 1 - k);
    e[i].pos = i;
  }
}

// Writes entries [lo, hi) of row r: the values they came from, or their positions.
template <class Tag>
void write(const Entry<Tag>* e, const typename order<Tag>::bits* row, void* out, bool values,
           int64_t n, int64_t r, int64_t lo, int64_t hi) {
  if (values) {
    auto* o = static_cast<typename order<Tag>::bits*>(out) + r * n;
    for (int64_t i = lo; i < hi; ++i) o[i] = row[e[i].pos];
  } else {
    auto* o = static_cast<int64_t*>(out) + r * n;
    for (int64_t i = lo; i < hi; ++i) o[i] = e[i].pos;
  }
}

template <class Tag>
void sort_row(const typename order<Tag>::bits* x, void* out, bool values, int64_t n, int64_t r) {
  const auto* row = x + r * n;
  std::vector<Entry<Tag>> e(static_cast<size_t>(n));
  fill<Tag>(e.data(), row, 0, n);
  std::sort(e.begin(), e.end());
  write<Tag>(e.data(), row, out, values, n, r, 0, n);
}

// A long row on every worker: parts sorted at once, then merged pairwise, each round's merges
// at once (the pool runs one parallel region at a time, so this is not called from inside one).
template <class Tag>
void sort_long_row(const typename order<Tag>::bits* x, void* out, bool values, int64_t n,
                   int64_t r) {
  const auto* row = x + r * n;
  int64_t parts = 1;
  while (parts < thread_count()) parts *= 2;
  auto bound = [&](int64_t p) { return n * std::min(p, parts) / parts; };
  std::vector<Entry<Tag>> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
  parallel_for(parts, [&](int64_t p) {
    fill<Tag>(a.data(), row, bound(p), bound(p + 1));
    std::sort(a.begin() + bound(p), a.begin() + bound(p + 1));
  });
  for (int64_t width = 1; width < parts; width *= 2) {
    parallel_for(parts / (2 * width), [&](int64_t q) {
      const int64_t lo = bound(2 * q * width), mid = bound((2 * q + 1) * width),
                    hi = bound((2 * q + 2) * width);
      std::merge(a.begin() + lo, a.begin() + mid, a.begin() + mid, a.begin() + hi, b.begin() + lo);
    });
    a.swap(b);
  }
  parallel_for(parts, [&](int64_t p) {
    write<Tag>(a.data(), row, out, values, n, r, bound(p), bound(p + 1));
  });
}

// Rows long enough to sort on every worker one at a time, when there are fewer rows than workers.
constexpr int64_t kLongRow = 1 << 16;

template <class Tag>
void sort_rows(const plan::SortStep& s, const void* in, void* out) {
  const auto* x = static_cast<const typename order<Tag>::bits*>(in);
  const bool values = s.op == graph::SortOp::Values;
  if (s.n >= kLongRow && s.rows < thread_count()) {
    for (int64_t r = 0; r < s.rows; ++r) sort_long_row<Tag>(x, out, values, s.n, r);
    return;
  }
  // Rows in a few chunks per worker (a task per row would cost more than a short row's sort).
  const int64_t chunks = std::min<int64_t>(s.rows, 4 * static_cast<int64_t>(thread_count()));
  parallel_for(chunks, [&](int64_t c) {
    for (int64_t r = s.rows * c / chunks; r < s.rows * (c + 1) / chunks; ++r)
      sort_row<Tag>(x, out, values, s.n, r);
  });
}

}  // namespace

void run_sort(const plan::SortStep& step, const plan::PlanBuffer&, const void* in, void* out) {
  if (step.rows * step.n == 0) return;
  switch (step.dtype) {
    case DType::Bool:
    case DType::UInt8:
      return sort_rows<sort_keys::U8>(step, in, out);
    case DType::Int8:
      return sort_rows<sort_keys::I8>(step, in, out);
    case DType::UInt16:
      return sort_rows<sort_keys::U16>(step, in, out);
    case DType::Int16:
      return sort_rows<sort_keys::I16>(step, in, out);
    case DType::UInt32:
      return sort_rows<sort_keys::U32>(step, in, out);
    case DType::Int32:
      return sort_rows<sort_keys::I32>(step, in, out);
    case DType::UInt64:
      return sort_rows<sort_keys::U64>(step, in, out);
    case DType::Int64:
      return sort_rows<sort_keys::I64>(step, in, out);
    case DType::Float16:
      return sort_rows<sort_keys::F16>(step, in, out);
    case DType::BFloat16:
      return sort_rows<sort_keys::BF16>(step, in, out);
    case DType::Float32:
      return sort_rows<sort_keys::F32>(step, in, out);
    case DType::Float64:
      return sort_rows<sort_keys::F64>(step, in, out);
    case DType::Complex64:
      return sort_rows<sort_keys::C64>(step, in, out);
    case DType::Complex128:
      return sort_rows<sort_keys::C128>(step, in, out);
  }
  throw Error("sort: a dtype the host executor does not sort; this is a kiln bug");
}

}  // namespace kiln::cpu
