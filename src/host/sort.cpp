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

// Sorts row r: the keys of each value, most significant first, then its position (so that
// std::sort gives the stable order), and writes values or positions.
template <class Tag>
void sort_row(const typename order<Tag>::bits* x, void* out, bool values, int64_t n, int64_t r) {
  using O = order<Tag>;
  constexpr int K = O::keys;
  struct Entry {
    std::array<sort_keys::u64, K> key;  // key[0] the most significant
    int64_t pos;
    bool operator<(const Entry& o) const { return key != o.key ? key < o.key : pos < o.pos; }
  };
  const auto* row = x + r * n;
  std::vector<Entry> e(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < K; ++k) e[i].key[k] = O::key(row[i], K - 1 - k);
    e[i].pos = i;
  }
  std::sort(e.begin(), e.end());
  if (values) {
    auto* o = static_cast<typename O::bits*>(out) + r * n;
    for (int64_t i = 0; i < n; ++i) o[i] = row[e[i].pos];
  } else {
    auto* o = static_cast<int64_t*>(out) + r * n;
    for (int64_t i = 0; i < n; ++i) o[i] = e[i].pos;
  }
}

template <class Tag>
void sort_rows(const plan::SortStep& s, const void* in, void* out) {
  const auto* x = static_cast<const typename order<Tag>::bits*>(in);
  const bool values = s.op == graph::SortOp::Values;
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
