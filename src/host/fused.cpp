#include "host/fused.hpp"

#include <algorithm>
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
  return bases;
}

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
      else if (from != out + s * isz)
        std::memcpy(out + s * isz, from, len * isz);
    }
  }
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
  std::vector<Accumulator> total(outputs);
  for (int64_t p = 0; p < cuts.parts; ++p) {
    if (partial[p].empty()) continue;  // an empty part (n == 0 when r == 0): nothing to merge
    int64_t first = cuts.begin(p) / r;
    for (size_t k = 0; k < partial[p].size(); ++k)
      merge(red.op, t, partial[p][k], total[first + k]);
  }
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
