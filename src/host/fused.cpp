#include "host/fused.hpp"

#ifdef __AVX__
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "common/parallel.hpp"
#include "host/chunk.hpp"
#include "host/column_ops.hpp"
#include "host/reduce.hpp"
#include "kiln/errors.hpp"
#include "plan/row_passes.hpp"

namespace kiln::cpu {
namespace {

// Work is cut into parts whose number depends only on the size, never on the core count, so
// reductions add in the same order, and give the same bits, on every machine.
constexpr int64_t kPartElements = 1 << 16;
constexpr int64_t kMaxParts = 1024;

int64_t part_count(int64_t n) {
  return std::clamp<int64_t>((n + kPartElements - 1) / kPartElements, 1, kMaxParts);
}
int64_t part_begin(int64_t p, int64_t parts, int64_t n) {
  return n / parts * p + std::min(p, n % parts);
}

std::vector<const char*> access_bases(const plan::FusedGroup& g,
                                      const std::function<void*(int)>& data) {
  std::vector<const char*> bases;
  for (const auto& a : g.accesses)
    bases.push_back(a.buffer >= 0 ? static_cast<const char*>(data(a.buffer)) : nullptr);
  if (g.check_buffer >= 0) bases.push_back(static_cast<const char*>(data(g.check_buffer)));
  return bases;
}

// Copies `bytes` to `to`, with streaming stores from the first 32-byte boundary of `to` on:
// an output much larger than the caches is not read into them first (a store that misses
// reads the line it writes), which was a third of the traffic of a concatenate.
void stream_copy(char* to, const char* from, int64_t bytes) {
#ifdef __AVX__
  const int64_t head = std::min<int64_t>(bytes, (32 - reinterpret_cast<uintptr_t>(to) % 32) % 32);
  std::memcpy(to, from, head);
  int64_t k = head;
  for (; k + 32 <= bytes; k += 32)
    _mm256_stream_si256(reinterpret_cast<__m256i*>(to + k),
                        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + k)));
  std::memcpy(to + k, from + k, bytes - k);
#else
  std::memcpy(to, from, bytes);
#endif
}

// Outputs at least this large are copied with streaming stores.
constexpr int64_t kStreamBytes = int64_t{16} << 20;

// Evaluates elements [begin, end) chunk by chunk and writes every output there: in place where
// the evaluator can compute into the output; loads and constants are not written in place,
// and a value that several outputs share (x and a view of x with the same shape) is written
// to only one of them, so those are copied. A group over columns iterates in another order
// than its outputs lie (IterationSpace::out_strides): its values are scattered to their places.
void write_outputs(const plan::FusedGroup& g, const plan::IterationSpace& space, ChunkEvaluator& ev,
                   const std::function<void*(int)>& data, int64_t begin, int64_t end) {
  const bool scatter = !space.out_strides.empty();
  std::vector<char*> dest(g.code.size());
  std::vector<int64_t> at(scatter ? kChunk : 0);
  for (int64_t s = begin; s < end; s += kChunk) {
    int64_t len = std::min(kChunk, end - s);
    for (const auto& o : g.outputs)
      if (!scatter)
        dest[o.instr] = static_cast<char*>(data(o.buffer)) + s * itemsize(g.code[o.instr].dtype);
    ev.run(s, len, dest);
    if (scatter) element_offsets(space.shape, space.out_strides, 0, s, len, at.data());
    for (const auto& o : g.outputs) {
      int64_t isz = itemsize(g.code[o.instr].dtype);
      const char* from = static_cast<const char*>(ev.column(o.instr));
      char* out = static_cast<char*>(data(o.buffer));
      if (scatter)
        for (int64_t k = 0; k < len; ++k) std::memcpy(out + at[k] * isz, from + k * isz, isz);
      else if (from != out + s * isz && shape_size(g.shape) * isz >= kStreamBytes)
        stream_copy(out + s * isz, from, len * isz);
      else if (from != out + s * isz)
        std::memcpy(out + s * isz, from, len * isz);
    }
  }
#ifdef __AVX__
  _mm_sfence();  // the streamed stores are seen before the step ends
#endif
}

// An elementwise group's values do not depend on how its work is cut (no reduction orders
// them), so it takes no more parts than keep the cores busy: each part's evaluator sets itself
// up (an index map's tables, src/host/chunk.cpp), which 64K-element parts repeated 140 times
// for a 3000x3000 pad.
void run_elementwise(const plan::FusedGroup& g, const std::vector<Scalar>& params,
                     const plan::IterationSpace& space, const std::vector<const char*>& bases,
                     const std::function<void*(int)>& data) {
  int64_t n = shape_size(g.shape), parts = std::min<int64_t>(part_count(n), 8 * thread_count());
  parallel_for(parts, [&](int64_t p) {
    ChunkEvaluator ev(g, space, bases, params);
    write_outputs(g, space, ev, data, part_begin(p, parts, n), part_begin(p + 1, parts, n));
  });
}

// Where the host cuts the values a reduction folds, which decides the bits of a float sum:
// parts of whole rows when there are at least as many rows as parts (else parts of the flat
// space, rows split between them and merged), and within a part steps of as many whole rows as
// fill a chunk, or a row of its own in chunks from its start when rows are longer. A reduction
// group and the Reduce instructions of a group with row axes cut rows alike, so softmax gives
// the same bits fused in one group and evaluated step by step (eager).
struct RowCuts {
  int64_t n, row, rows, parts;
  bool whole_rows;
  RowCuts(int64_t n_, int64_t row_) : n(n_), row(row_), rows(row_ ? n_ / row_ : 0) {
    parts = part_count(n);
    whole_rows = rows >= parts;
  }
  int64_t begin(int64_t p) const {  // first element of part p
    return whole_rows ? part_begin(p, parts, rows) * row : part_begin(p, parts, n);
  }
  int64_t rows_per_step() const { return std::max<int64_t>(1, kChunk / row); }
  // f(start, len) for each chunk of part p, in order.
  template <class F>
  void chunks(int64_t p, F f) const {
    int64_t end = begin(p + 1), step = whole_rows ? rows_per_step() * row : end - begin(p);
    for (int64_t s0 = begin(p); s0 < end; s0 += step)
      for (int64_t s = s0, stop = std::min(end, s0 + step); s < stop; s += kChunk)
        f(s, std::min(kChunk, stop - s));
  }
};

// Folds column `col` (values at indices [s, s + len)) into the accumulators of the rows it
// crosses, acc[0] being row first_row's: one fold per row segment.
void fold_segments(graph::ReduceOp op, DType t, const char* col, int64_t s, int64_t len,
                   int64_t row, int64_t first_row, Accumulator* acc) {
  for (int64_t i = s; i < s + len;) {
    int64_t o = i / row, seg_end = std::min(s + len, (o + 1) * row);
    fold(op, t, col + (i - s) * itemsize(t), seg_end - i, i - o * row, acc[o - first_row]);
    i = seg_end;
  }
}

// Column sums in memory order. A reduction down columns (the reduced axis last in the
// iteration space but not contiguous in memory, the columns' axis contiguous) gathered each
// column's values with one cache line per element. Here a block of neighbouring columns is
// evaluated row after row (the same accesses walked in another order), and each column is
// folded in exactly the order fold_segments and ordered_fold give it (src/host/reduce.cpp):
// chunks of kChunk values from the column's start, each chunk into kLanes lanes (value j to
// lane j % kLanes) as Eigen's packet-wise rowwise sum adds them (the first value, then groups
// of four as p + ((a + b) + (c + d)), then one by one), the chunk's tail into the first lanes,
// the lanes pairwise, and the chunks in order. Same bits as the column-by-column fold, which
// the fused column groups (run_row_fused) keep, so eager and lazy evaluation agree; only the
// loads and the loop order change.
template <class T>
class TiledColumnSums {
 public:
  static constexpr int64_t kLanes = 256 / sizeof(T);   // ordered_fold's
  static constexpr int64_t kWidth = 2048 / sizeof(T);  // columns per block: 2 KB of each row

  // Whether `space` (of a Sum or Mean of dtype T) is worth folding this way.
  static bool applies(const plan::IterationSpace& space, const RowCuts& cuts) {
    const size_t rank = space.shape.size();
    if (space.reduced != 1 || rank < 2 || !cuts.whole_rows) return false;
    const int64_t rows = space.shape[rank - 1], cols = space.shape[rank - 2];
    if (rows < 2 * kLanes || cols < 16) return false;
    bool walks_columns = false;
    for (const auto& st : space.strides) {
      const int64_t down = std::abs(st[rank - 1]), across = std::abs(st[rank - 2]);
      if (down == 0) continue;  // the same value all down a column (a broadcast row)
      if (across == 0 || down <= across) return false;
      walks_columns |= across == 1;
    }
    return walks_columns;
  }

  TiledColumnSums(const plan::FusedGroup& g, const std::vector<Scalar>& params,
                  const plan::IterationSpace& space, const std::vector<const char*>& bases,
                  int value)
      : g_(g), params_(params), bases_(bases), value_(value) {
    const size_t rank = space.shape.size();
    rows_ = space.shape[rank - 1];
    cols_ = space.shape[rank - 2];
    blocks_ = cols_ / kWidth;
    batch_ = 1;
    for (size_t d = 0; d + 2 < rank; ++d) batch_ *= space.shape[d];
    // blocks_: [batch..., block, row, kWidth]; rows_of_: [batch..., row, column].
    blocks_space_.shape.assign(space.shape.begin(), space.shape.end() - 2);
    rows_space_.shape = blocks_space_.shape;
    blocks_space_.shape.insert(blocks_space_.shape.end(), {blocks_, rows_, kWidth});
    rows_space_.shape.insert(rows_space_.shape.end(), {rows_, cols_});
    for (const auto& st : space.strides) {
      plan::Strides s(st.begin(), st.end() - 2), r = s;
      const int64_t across = st[rank - 2], down = st[rank - 1];
      s.insert(s.end(), {kWidth * across, down, across});
      r.insert(r.end(), {down, across});
      blocks_space_.strides.push_back(std::move(s));
      rows_space_.strides.push_back(std::move(r));
    }
  }

  // Folds every column into total[o] (o: the column's index among the outputs).
  void run(std::vector<Accumulator>& total) {
    const bool ragged = cols_ % kWidth != 0;
    const int64_t tiles = batch_ * blocks_, tasks = tiles + (ragged ? batch_ : 0);
    parallel_for(tasks, [&](int64_t task) {
      Folder f(rows_);
      if (task < tiles) {  // a whole block: several rows a chunk
        const int64_t b = task / blocks_, block = task % blocks_;
        ChunkEvaluator ev(g_, blocks_space_, bases_, params_);
        // A row a chunk: the loads that walk it are read in place (ChunkEvaluator::load).
        const int64_t base = (b * blocks_ + block) * rows_ * kWidth, step = 1;
        const std::vector<Stream> streams = streams_of(b, block);
        for (int64_t r = 0; r < rows_; r += step) {
          const int64_t count = std::min(step, rows_ - r);
          // Rows kAhead on, whose pieces no prefetcher sees coming.
          for (const Stream& st : streams)
            for (int64_t q = r + kAhead; q < std::min(rows_, r + kAhead + count); ++q)
              for (int64_t byte = 0; byte < st.bytes; byte += 64)
                __builtin_prefetch(st.first + q * st.down + byte);
          ev.run(base + r * kWidth, count * kWidth);
          const T* v = static_cast<const T*>(ev.column(value_));
          for (int64_t k = 0; k < count; ++k) f.row(r + k, v + k * kWidth, kWidth);
        }
        f.store(total, b * cols_ + block * kWidth, kWidth);
      } else {  // the columns past the last whole block, a row at a time
        const int64_t b = task - tiles, first = blocks_ * kWidth, width = cols_ - first;
        ChunkEvaluator ev(g_, rows_space_, bases_, params_);
        for (int64_t r = 0; r < rows_; ++r) {
          ev.run((b * rows_ + r) * cols_ + first, width);
          f.row(r, static_cast<const T*>(ev.column(value_)), width);
        }
        f.store(total, b * cols_ + first, width);
      }
    });
  }

 private:
  // A block's row pieces of one access that walks the columns contiguously: kWidth elements
  // from `first` + row * `down` (bytes).
  struct Stream {
    const char* first;
    int64_t down, bytes;
  };
  static constexpr int64_t kAhead = 16;  // rows

  std::vector<Stream> streams_of(int64_t b, int64_t block) const {
    std::vector<Stream> out;
    const size_t lead = blocks_space_.shape.size() - 3;
    for (size_t a = 0; a < g_.accesses.size(); ++a) {
      const plan::Strides& st = blocks_space_.strides[a];
      if (!bases_[a] || st[lead + 2] != 1 || st[lead + 1] == 0) continue;
      const int64_t isz = itemsize(g_.load_dtype(static_cast<int>(a)));
      int64_t off = g_.accesses[a].offset + block * st[lead], rem = b;
      for (size_t d = lead; d-- > 0;) {
        off += rem % blocks_space_.shape[d] * st[d];
        rem /= blocks_space_.shape[d];
      }
      out.push_back({bases_[a] + off * isz, st[lead + 1] * isz, kWidth * isz});
    }
    return out;
  }

  // The fold of up to kWidth columns, fed their rows in order.
  class Folder {
   public:
    explicit Folder(int64_t rows)
        : rows_(rows),
          p_(kLanes * kWidth),
          t1_(kLanes * kWidth),
          t2_(kLanes * kWidth),
          sum_(kWidth) {}
    void row(int64_t r, const T* v, int64_t width) {
      const int64_t r0 = r / kChunk * kChunk, n = std::min(kChunk, rows_ - r0), j = r - r0;
      const int64_t m = n / kLanes, size4 = m ? (m - 1) & ~int64_t{3} : 0;
      const int64_t i = j / kLanes, k = j % kLanes;
      T* p = lane(p_, k);
      if (m == 0) {  // ordered_fold's short case: one by one
        p = lane(p_, 0);
        if (j == 0)
          std::copy(v, v + width, p);
        else
          for (int64_t w = 0; w < width; ++w) p[w] = p[w] + v[w];
      } else if (i >= m) {  // the tail, into the first lanes
        p = lane(p_, j - m * kLanes);
        for (int64_t w = 0; w < width; ++w) p[w] = p[w] + v[w];
      } else if (i == 0) {
        std::copy(v, v + width, p);
      } else if (i <= size4) {  // p + ((a + b) + (c + d)), a, b, c, d a lane's next four values
        T *t1 = lane(t1_, k), *t2 = lane(t2_, k);
        switch ((i - 1) % 4) {
          case 0:
            std::copy(v, v + width, t1);
            break;
          case 1:
            for (int64_t w = 0; w < width; ++w) t1[w] = t1[w] + v[w];
            break;
          case 2:
            std::copy(v, v + width, t2);
            break;
          default:
            for (int64_t w = 0; w < width; ++w) p[w] = p[w] + (t1[w] + (t2[w] + v[w]));
        }
      } else {
        for (int64_t w = 0; w < width; ++w) p[w] = p[w] + v[w];
      }
      if (j + 1 < n) return;
      if (m)  // the lanes pairwise
        for (int64_t h = kLanes / 2; h > 0; h /= 2)
          for (int64_t q = 0; q < h; ++q) {
            T *a = lane(p_, q), *b = lane(p_, q + h);
            for (int64_t w = 0; w < width; ++w) a[w] = a[w] + b[w];
          }
      const T* c = lane(p_, 0);
      for (int64_t w = 0; w < width; ++w) sum_[w] = r0 == 0 ? c[w] : sum_[w] + c[w];
    }
    void store(std::vector<Accumulator>& total, int64_t first, int64_t width) const {
      for (int64_t w = 0; w < width; ++w) {
        Accumulator& acc = total[first + w];
        std::memcpy(acc.value, &sum_[w], sizeof(T));
        acc.set = true;
      }
    }

   private:
    static T* lane(std::vector<T>& v, int64_t k) { return v.data() + k * kWidth; }
    const int64_t rows_;
    std::vector<T> p_, t1_, t2_, sum_;
  };

  const plan::FusedGroup& g_;
  const std::vector<Scalar>& params_;
  const std::vector<const char*>& bases_;
  const int value_;
  int64_t rows_, cols_, blocks_, batch_;
  plan::IterationSpace blocks_space_, rows_space_;
};

void finish_reduction(const plan::FusedGroup& g, const plan::Reduction& red, DType t,
                      const std::vector<Accumulator>& total, int64_t r,
                      const std::function<void*(int)>& data);

void run_reduction(const plan::FusedGroup& g, const std::vector<Scalar>& params,
                   const plan::IterationSpace& space, const std::vector<const char*>& bases,
                   const std::function<void*(int)>& data) {
  const auto& red = *g.reduction;
  int64_t r = 1;  // elements folded into each output
  for (size_t i = space.shape.size() - space.reduced; i < space.shape.size(); ++i)
    r *= space.shape[i];
  int64_t n = shape_size(g.shape), outputs = shape_size(g.out_shape());
  RowCuts cuts(n, r);
  int value = g.outputs[0].instr;
  DType t = g.code[value].dtype;
  std::vector<Accumulator> total(outputs);
  auto tiled = [&](auto z) {
    using T = decltype(z);
    if (!TiledColumnSums<T>::applies(space, cuts)) return false;
    TiledColumnSums<T>(g, params, space, bases, value).run(total);
    return true;
  };
  const bool sums = red.op == graph::ReduceOp::Sum || red.op == graph::ReduceOp::Mean;
  if ((sums && t == DType::Float32 && tiled(float{})) ||
      (sums && t == DType::Float64 && tiled(double{})))
    return finish_reduction(g, red, t, total, r, data);
  // partial[p]: accumulators of the outputs part p touches, from its first output on.
  std::vector<std::vector<Accumulator>> partial(cuts.parts);
  parallel_for(cuts.parts, [&](int64_t p) {
    int64_t begin = cuts.begin(p), end = cuts.begin(p + 1);
    if (begin == end) return;
    partial[p].resize((end - 1) / r - begin / r + 1);
    ChunkEvaluator ev(g, space, bases, params);
    cuts.chunks(p, [&](int64_t s, int64_t len) {
      ev.run(s, len);
      fold_segments(red.op, t, static_cast<const char*>(ev.column(value)), s, len, r, begin / r,
                    partial[p].data());
    });
  });
  for (int64_t p = 0; p < cuts.parts; ++p) {
    if (partial[p].empty()) continue;  // an empty part (n == 0 when r == 0): nothing to merge
    int64_t first = cuts.begin(p) / r;
    for (size_t k = 0; k < partial[p].size(); ++k)
      merge(red.op, t, partial[p][k], total[first + k]);
  }
  finish_reduction(g, red, t, total, r, data);
}

// The reduction's outputs from their accumulators.
void finish_reduction(const plan::FusedGroup& g, const plan::Reduction& red, DType t,
                      const std::vector<Accumulator>& total, int64_t r,
                      const std::function<void*(int)>& data) {
  const int64_t outputs = static_cast<int64_t>(total.size());
  auto* out = static_cast<char*>(data(g.outputs[0].buffer));
  DType out_t = g.out_dtype(0);
  const bool rounds = is_half(out_t);  // a half's float32 result rounds once, here
  for (int64_t o = 0; o < outputs; ++o) {
    if (!rounds) {
      finish(red.op, t, total[o], r, out + o * itemsize(out_t));
      continue;
    }
    float v;
    finish(red.op, t, total[o], r, &v);
    cast_column(t, out_t, &v, out + o * itemsize(out_t), 1);
  }
}

// A group with row axes, part by part as RowCuts cuts rows (rows are never longer than the
// planner folds, so parts hold whole rows): for each step of rows, each reducing pass folds its
// Reduce instructions' operands row by row and hands the rows' values to the evaluator, then
// the last pass computes the outputs as an elementwise group does.
class RowFusedRun {
 public:
  RowFusedRun(const plan::FusedGroup& g, const plan::RowPasses& passes,
              const std::vector<Scalar>& params, const plan::IterationSpace& space,
              const std::vector<const char*>& bases, const std::function<void*(int)>& data,
              int64_t row)
      : g_(g),
        passes_(passes),
        space_(space),
        ev_(g, space, bases, params),
        data_(data),
        row_(row) {}

  // Rows [first, first + count), whose elements are [start, start + count * row).
  void rows(int64_t first, int64_t count) {
    for (const auto& ins : g_.code)  // values for Reduce instructions of later passes
      if (ins.kind == plan::InstrKind::Reduce)
        ev_.set_row_values(static_cast<int>(&ins - g_.code.data()), first, row_,
                           std::vector<unsigned char>(count * itemsize(ins.dtype)));
    for (int p = 0; p < passes_.reducing; ++p) fold_pass(p, first, count);
    write_outputs(g_, space_, ev_, data_, first * row_, (first + count) * row_);
  }

 private:
  void fold_pass(int p, int64_t first, int64_t count) {
    auto folds = passes_.folds(p);
    int end = 0;
    for (size_t i = 0; i < g_.code.size(); ++i)
      if (passes_.needed[p][i]) end = static_cast<int>(i) + 1;
    std::vector<std::vector<Accumulator>> acc(folds.size(), std::vector<Accumulator>(count));
    for (int64_t s = first * row_, stop = (first + count) * row_; s < stop; s += kChunk) {
      int64_t len = std::min(kChunk, stop - s);
      ev_.run(s, len, {}, end);
      for (size_t f = 0; f < folds.size(); ++f) {
        const plan::Instr& ins = g_.code[folds[f]];
        fold_segments(ins.reduce_op(), g_.code[ins.a].dtype,
                      static_cast<const char*>(ev_.column(ins.a)), s, len, row_, first,
                      acc[f].data());
      }
    }
    for (size_t f = 0; f < folds.size(); ++f) {
      const plan::Instr& ins = g_.code[folds[f]];
      int64_t isz = itemsize(ins.dtype);
      std::vector<unsigned char> values(count * isz);
      for (int64_t o = 0; o < count; ++o)
        finish(ins.reduce_op(), g_.code[ins.a].dtype, acc[f][o], row_, values.data() + o * isz);
      ev_.set_row_values(folds[f], first, row_, values);
    }
  }

  const plan::FusedGroup& g_;
  const plan::RowPasses& passes_;
  const plan::IterationSpace& space_;
  ChunkEvaluator ev_;
  const std::function<void*(int)>& data_;
  const int64_t row_;
};

void run_row_fused(const plan::FusedGroup& g, const std::vector<Scalar>& params,
                   const plan::IterationSpace& space, const std::vector<const char*>& bases,
                   const std::function<void*(int)>& data) {
  int64_t row = 1;
  for (size_t i = space.shape.size() - space.reduced; i < space.shape.size(); ++i)
    row *= space.shape[i];
  RowCuts cuts(shape_size(g.shape), row);
  if (cuts.rows == 0) return;
  if (!cuts.whole_rows)
    throw std::logic_error("host: rows too long to fold inside their group (kiln bug)");
  const plan::RowPasses passes = plan::row_passes(g);
  parallel_for(cuts.parts, [&](int64_t p) {
    RowFusedRun run(g, passes, params, space, bases, data, row);
    int64_t end = cuts.begin(p + 1) / row, step = cuts.rows_per_step();
    for (int64_t r = cuts.begin(p) / row; r < end; r += step) run.rows(r, std::min(step, end - r));
  });
}

}  // namespace

void check_runs_on_host(const plan::FusedGroup& g) {
  if (g.user_calls.empty()) return;
  const auto& code = *g.user_calls[0].code;
  std::string names;
  for (const auto& n : code.names) names += (names.empty() ? "" : ", ") + n;
  throw DeviceError("kiln::elementwise: the user CUDA expression \"" + code.expr + "\" (inputs " +
                    names +
                    ") runs only on a GPU, and its inputs are host arrays; copy them to the "
                    "device first with kiln::asarray(x, kiln::cuda())");
}

void run_group(const plan::FusedGroup& g, const std::vector<Scalar>& params,
               const std::function<void*(int)>& data) {
  check_runs_on_host(g);
  plan::IterationSpace space = plan::iteration_space(g);
  auto bases = access_bases(g, data);
  if (g.reduction)
    run_reduction(g, params, space, bases, data);
  else if (!g.row_axes.empty())
    run_row_fused(g, params, space, bases, data);
  else
    run_elementwise(g, params, space, bases, data);
}

}  // namespace kiln::cpu
