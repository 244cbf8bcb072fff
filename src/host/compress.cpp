#include "host/compress.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "common/parallel.hpp"
#include "kiln/dtype.hpp"

namespace kiln::cpu {
namespace {

// Mask entries a task counts and writes: large enough that the count pass and the pool's hand-off
// are a small part of a task, small enough that a few tasks feed every core.
constexpr int64_t kChunk = int64_t{1} << 16;

struct alignas(16) Bytes16 {
  unsigned char b[16];
};

// Writes chunk [first, last)'s selected values (or positions) from out[at] on. Branch-free: each
// entry is written at `at` and `at` moves on only when it is selected, so unselected ones are
// overwritten; the loop stops at the chunk's last selected entry so that nothing lands past its
// own part of `out` (the next chunk's).
template <class T, bool kPositions>
void compress_chunk(const bool* mask, const T* values, T* out, int64_t first, int64_t last,
                    int64_t at) {
  while (last > first && !mask[last - 1]) --last;
  for (int64_t i = first; i < last; ++i) {
    if constexpr (kPositions)
      out[at] = static_cast<T>(i);
    else
      out[at] = values[i];
    at += mask[i] ? 1 : 0;
  }
}

void compress_rows(const bool* mask, const unsigned char* values, unsigned char* out, int64_t first,
                   int64_t last, int64_t at, size_t row_bytes) {
  for (int64_t i = first; i < last; ++i)
    if (mask[i]) std::memcpy(out + row_bytes * at++, values + row_bytes * i, row_bytes);
}

template <class T>
void run_typed(const plan::CompressStep& s, const bool* mask, const void* values, void* out,
               const std::vector<int64_t>& offsets, int64_t chunks) {
  parallel_for(chunks, [&](int64_t c) {
    const int64_t first = c * kChunk, last = std::min(s.rows, first + kChunk);
    if constexpr (std::is_same_v<T, int64_t>)
      if (!values)
        return compress_chunk<T, true>(mask, nullptr, static_cast<T*>(out), first, last,
                                       offsets[c]);
    compress_chunk<T, false>(mask, static_cast<const T*>(values), static_cast<T*>(out), first, last,
                             offsets[c]);
  });
}

}  // namespace

void run_compress(const plan::CompressStep& s, const plan::PlanBuffer& out_desc, const bool* mask,
                  const void* values, void* out) {
  if (s.count == 0 || s.rows == 0) return;
  const int64_t chunks = (s.rows + kChunk - 1) / kChunk;
  std::vector<int64_t> offsets(chunks + 1, 0);
  parallel_for(chunks, [&](int64_t c) {
    const int64_t first = c * kChunk, last = std::min(s.rows, first + kChunk);
    int64_t n = 0;
    for (int64_t i = first; i < last; ++i) n += mask[i] ? 1 : 0;
    offsets[c + 1] = n;
  });
  for (int64_t c = 0; c < chunks; ++c) offsets[c + 1] += offsets[c];
  const size_t row_bytes = static_cast<size_t>(s.width) * itemsize(out_desc.dtype);
  if (!values || row_bytes == 8) return run_typed<int64_t>(s, mask, values, out, offsets, chunks);
  if (row_bytes == 4) return run_typed<int32_t>(s, mask, values, out, offsets, chunks);
  if (row_bytes == 2) return run_typed<int16_t>(s, mask, values, out, offsets, chunks);
  if (row_bytes == 1) return run_typed<int8_t>(s, mask, values, out, offsets, chunks);
  if (row_bytes == 16) return run_typed<Bytes16>(s, mask, values, out, offsets, chunks);
  parallel_for(chunks, [&](int64_t c) {
    const int64_t first = c * kChunk, last = std::min(s.rows, first + kChunk);
    compress_rows(mask, static_cast<const unsigned char*>(values), static_cast<unsigned char*>(out),
                  first, last, offsets[c], row_bytes);
  });
}

}  // namespace kiln::cpu
