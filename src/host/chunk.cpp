#include "host/chunk.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "host/column_ops.hpp"
#include "host/convert.hpp"
#include "host/divide_by_scalar.hpp"

namespace kiln::cpu {

using plan::InstrKind;

void element_offsets(const Shape& shape, const plan::Strides& st, int64_t offset, int64_t start,
                     int64_t len, int64_t* out) {
  int nd = static_cast<int>(shape.size());
  int64_t coord[kMaxRank] = {};
  int64_t rem = start, base = offset;
  for (int d = nd - 1; d >= 0; --d) {
    coord[d] = rem % shape[d];
    rem /= shape[d];
    base += coord[d] * st[d];
  }
  int64_t inner = nd ? shape[nd - 1] : 1, istride = nd ? st[nd - 1] : 0;
  for (int64_t i = 0; i < len;) {
    int64_t run = std::min(len - i, inner - (nd ? coord[nd - 1] : 0));
    for (int64_t k = 0; k < run; ++k) out[i + k] = base + k * istride;
    i += run;
    if (nd == 0) break;
    base += run * istride;
    coord[nd - 1] += run;
    for (int d = nd - 1; d > 0 && coord[d] == shape[d]; --d) {  // carry
      base -= coord[d] * st[d];
      coord[d] = 0;
      ++coord[d - 1];
      base += st[d - 1];
    }
  }
}

ChunkEvaluator::ChunkEvaluator(const plan::FusedGroup& g, const plan::IterationSpace& space,
                               const std::vector<const char*>& bases,
                               const std::vector<Scalar>& params)
    : g_(g),
      space_(space),
      bases_(bases),
      params_(params),
      chunk_(std::clamp<int64_t>(shape_size(space.shape), 1, kChunk)),
      cols_(g.code.size()),
      filled_(g.code.size()),
      idx_(chunk_) {
  size_t bytes = 0;
  slot_.reserve(g.code.size());  // one allocation each: an evaluator is made per evaluation
  modes_.reserve(space.strides.size());
  for (const auto& ins : g.code) {
    slot_.push_back(bytes);
    bytes += (chunk_ * itemsize(ins.dtype) + 63) / 64 * 64;
  }
  storage_.resize(bytes / sizeof(storage_[0]) + 1);
  for (const auto& st : space.strides)
    modes_.push_back(plan::is_constant(st)             ? Mode::Constant
                     : plan::is_dense(space.shape, st) ? Mode::Dense
                                                       : Mode::Gather);
}

void ChunkEvaluator::load(int i, const plan::Instr& ins, int64_t start, int64_t len) {
  const int access = ins.access();
  Mode m = modes_[access];
  int64_t isz = itemsize(ins.dtype);
  const char* base = bases_[access];
  int64_t offset = g_.accesses[access].offset;
  if (m == Mode::Dense) {
    cols_[i] = base + (offset + start) * isz;
  } else if (m == Mode::Constant) {
    if (!filled_[i]) {
      visit_dtype(ins.dtype, [&](auto z) {
        using T = decltype(z);
        T value;
        std::memcpy(&value, base + offset * isz, sizeof value);  // may be unaligned in a view
        std::fill_n(reinterpret_cast<T*>(scratch(i)), chunk_, value);
      });
      filled_[i] = true;
    }
    cols_[i] = scratch(i);
  } else {
    element_offsets(space_.shape, space_.strides[access], g_.accesses[access].offset, start, len,
                    idx_.data());
    char* out = scratch(i);
    visit_dtype(ins.dtype, [&](auto z) {
      using T = decltype(z);
      auto* src = reinterpret_cast<const T*>(base);
      auto* dst = reinterpret_cast<T*>(out);
      for (int64_t k = 0; k < len; ++k) dst[k] = src[idx_[k]];
    });
    cols_[i] = out;
  }
}

void ChunkEvaluator::set_row_values(int i, int64_t first_row, int64_t row_length,
                                    const std::vector<unsigned char>& values) {
  row_values_.resize(g_.code.size());
  row_values_[i] = values;
  first_row_ = first_row;
  row_length_ = row_length;
}

// Each row's value of Reduce instruction i over its part of [start, start + len).
void ChunkEvaluator::fill_rows(int i, int64_t start, int64_t len, char* out) {
  const plan::Instr& ins = g_.code[i];
  visit_dtype(ins.dtype, [&](auto z) {
    using T = decltype(z);
    auto* r = reinterpret_cast<T*>(out);
    const auto& values = row_values_.at(i);
    for (int64_t k = 0; k < len;) {
      int64_t row = (start + k) / row_length_;
      int64_t end = std::min(len, (row + 1) * row_length_ - start);
      T v;
      std::memcpy(&v, values.data() + (row - first_row_) * sizeof(T), sizeof v);
      std::fill(r + k, r + end, v);
      k = end;
    }
  });
}

void ChunkEvaluator::run(int64_t start, int64_t len, const std::vector<char*>& dest, int end) {
  if (end < 0) end = static_cast<int>(g_.code.size());
  for (int i = 0; i < end; ++i) {
    const plan::Instr& ins = g_.code[i];
    bool computed = ins.kind != InstrKind::Load && ins.kind != InstrKind::Param;
    char* out = computed && !dest.empty() && dest[i] ? dest[i] : scratch(i);
    switch (ins.kind) {
      case InstrKind::Load:
        load(i, ins, start, len);
        continue;
      case InstrKind::Param:
        if (!filled_[i]) fill_column(ins.dtype, params_[ins.param_index()], out, chunk_);
        filled_[i] = true;
        break;
      case InstrKind::Iota: {
        element_offsets(space_.shape, space_.strides[ins.access()],
                        g_.accesses[ins.access()].offset, start, len, idx_.data());
        visit_dtype(ins.dtype, [&](auto z) {
          using T = decltype(z);
          if constexpr (!is_half_v<T>) {  // (lowering gives a half's iota float32)
            T a = *static_cast<const T*>(cols_[ins.start()]);
            T b = *static_cast<const T*>(cols_[ins.step()]);
            auto* r = reinterpret_cast<T*>(out);
            for (int64_t k = 0; k < len; ++k) r[k] = a + static_cast<T>(idx_[k]) * b;
          }
        });
        break;
      }
      case InstrKind::Unary:
        unary_column(ins.unary_op(), g_.code[ins.a].dtype, cols_[ins.a], out, len);
        break;
      case InstrKind::Binary:
        if (!uniform(ins.b) || !divide_by_scalar(ins.binary_op(), g_.code[ins.a].dtype,
                                                 cols_[ins.a], cols_[ins.b], out, len))
          binary_column(ins.binary_op(), g_.code[ins.a].dtype, cols_[ins.a], cols_[ins.b], out,
                        len);
        break;
      case InstrKind::Where:
        where_column(ins.dtype, static_cast<const bool*>(cols_[ins.a]), cols_[ins.b], cols_[ins.c],
                     out, len);
        break;
      case InstrKind::Cast:
        cast_column(g_.code[ins.a].dtype, ins.dtype, cols_[ins.a], out, len);
        break;
      case InstrKind::Reduce:
        fill_rows(i, start, len, out);
        break;
      case InstrKind::Gather: {
        const int a = ins.access();
        const auto* index = static_cast<const int64_t*>(cols_[ins.a]);
        visit_dtype(ins.dtype, [&](auto z) {
          using T = decltype(z);
          auto* src = reinterpret_cast<const T*>(bases_[a]) + g_.accesses[a].offset;
          auto* r = reinterpret_cast<T*>(out);
          for (int64_t k = 0; k < len; ++k) r[k] = src[index[k]];
        });
        break;
      }
      case InstrKind::User:  // run_group refuses such groups before any chunk runs
        throw std::logic_error("host: a user CUDA expression reached the interpreter (kiln bug)");
    }
    cols_[i] = out;
  }
}

}  // namespace kiln::cpu
