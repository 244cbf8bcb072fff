#include "host/fused.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "host/chunk.hpp"
#include "host/parallel.hpp"
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

void run_elementwise(const plan::FusedGroup& g, const std::vector<Scalar>& params,
                     const plan::IterationSpace& space, const std::vector<const char*>& bases,
                     const std::function<void*(int)>& data) {
  int64_t n = shape_size(g.shape), parts = part_count(n);
  parallel_for(parts, [&](int64_t p) {
    ChunkEvaluator ev(g, space, bases, params);
    int64_t end = part_begin(p + 1, parts, n);
    std::vector<char*> dest(g.code.size());
    for (int64_t s = part_begin(p, parts, n); s < end; s += kChunk) {
      int64_t len = std::min(kChunk, end - s);
      for (const auto& o : g.outputs)
        dest[o.instr] = static_cast<char*>(data(o.buffer)) + s * itemsize(g.code[o.instr].dtype);
      ev.run(s, len, dest);
      // Loads and constants are not written in place, and a value that several outputs
      // share (x and a view of x with the same shape) is written to only one of them.
      for (const auto& o : g.outputs) {
        int64_t isz = itemsize(g.code[o.instr].dtype);
        char* to = static_cast<char*>(data(o.buffer)) + s * isz;
        if (ev.column(o.instr) != to) std::memcpy(to, ev.column(o.instr), len * isz);
      }
    }
  });
}

void run_reduction(const plan::FusedGroup& g, const std::vector<Scalar>& params,
                   const plan::IterationSpace& space, const std::vector<const char*>& bases,
                   const std::function<void*(int)>& data) {
  const auto& red = *g.reduction;
  int64_t r = 1;  // elements folded into each output
  for (size_t i = space.shape.size() - space.reduced; i < space.shape.size(); ++i)
    r *= space.shape[i];
  int64_t n = shape_size(g.shape), outputs = shape_size(g.out_shape());
  int64_t parts = part_count(n);
  int value = g.outputs[0].instr;
  DType t = g.code[value].dtype;
  // partial[p]: accumulators of the outputs part p touches, from its first output on.
  std::vector<std::vector<Accumulator>> partial(parts);
  parallel_for(parts, [&](int64_t p) {
    int64_t begin = part_begin(p, parts, n), end = part_begin(p + 1, parts, n);
    if (begin == end) return;
    partial[p].resize((end - 1) / r - begin / r + 1);
    ChunkEvaluator ev(g, space, bases, params);
    for (int64_t s = begin; s < end; s += kChunk) {
      int64_t len = std::min(kChunk, end - s);
      ev.run(s, len);
      auto* col = static_cast<const char*>(ev.column(value));
      for (int64_t i = s; i < s + len;) {  // one segment per output the chunk crosses
        int64_t o = i / r, seg_end = std::min(s + len, (o + 1) * r);
        fold(red.op, t, col + (i - s) * itemsize(t), seg_end - i, i - o * r,
             partial[p][o - begin / r]);
        i = seg_end;
      }
    }
  });
  std::vector<Accumulator> total(outputs);
  for (int64_t p = 0; p < parts; ++p) {
    if (partial[p].empty()) continue;  // an empty part (n == 0 when r == 0): nothing to merge
    int64_t first = part_begin(p, parts, n) / r;
    for (size_t k = 0; k < partial[p].size(); ++k)
      merge(red.op, t, partial[p][k], total[first + k]);
  }
  auto* out = static_cast<char*>(data(g.outputs[0].buffer));
  DType out_t = g.out_dtype(0);
  for (int64_t o = 0; o < outputs; ++o) finish(red.op, t, total[o], r, out + o * itemsize(out_t));
}

// A group with row axes, a few whole rows at a time (or one row of several chunks): each
// reducing pass folds its Reduce instructions' operands row by row and hands the rows' values
// to the evaluator, then the last pass computes the outputs as an elementwise group does.
class RowFusedRun {
 public:
  RowFusedRun(const plan::FusedGroup& g, const std::vector<Scalar>& params,
              const plan::IterationSpace& space, const std::vector<const char*>& bases,
              const std::function<void*(int)>& data)
      : g_(g), passes_(plan::row_passes(g)), ev_(g, space, bases, params), data_(data) {
    for (size_t i = space.shape.size() - space.reduced; i < space.shape.size(); ++i)
      row_ *= space.shape[i];
  }
  int64_t row() const { return row_; }

  void rows(int64_t first, int64_t count) {
    for (const auto& ins : g_.code)  // values for Reduce instructions of later passes
      if (ins.kind == plan::InstrKind::Reduce)
        ev_.set_row_values(static_cast<int>(&ins - g_.code.data()), first, row_,
                           std::vector<unsigned char>(count * itemsize(ins.dtype)));
    for (int p = 0; p < passes_.reducing; ++p) fold_pass(p, first, count);
    write(first * row_, (first + count) * row_);
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
        DType t = g_.code[ins.a].dtype;
        auto* col = static_cast<const char*>(ev_.column(ins.a));
        for (int64_t i = s; i < s + len;) {  // one segment per row the chunk crosses
          int64_t o = i / row_, seg_end = std::min(s + len, (o + 1) * row_);
          fold(static_cast<graph::ReduceOp>(ins.op), t, col + (i - s) * itemsize(t), seg_end - i,
               i - o * row_, acc[f][o - first]);
          i = seg_end;
        }
      }
    }
    for (size_t f = 0; f < folds.size(); ++f) {
      const plan::Instr& ins = g_.code[folds[f]];
      int64_t isz = itemsize(ins.dtype);
      std::vector<unsigned char> values(count * isz);
      for (int64_t o = 0; o < count; ++o)
        finish(static_cast<graph::ReduceOp>(ins.op), g_.code[ins.a].dtype, acc[f][o], row_,
               values.data() + o * isz);
      ev_.set_row_values(folds[f], first, row_, values);
    }
  }

  void write(int64_t begin, int64_t end) {
    std::vector<char*> dest(g_.code.size());
    for (int64_t s = begin; s < end; s += kChunk) {
      int64_t len = std::min(kChunk, end - s);
      for (const auto& o : g_.outputs)
        dest[o.instr] = static_cast<char*>(data_(o.buffer)) + s * itemsize(g_.code[o.instr].dtype);
      ev_.run(s, len, dest);
      for (const auto& o : g_.outputs) {
        int64_t isz = itemsize(g_.code[o.instr].dtype);
        char* to = static_cast<char*>(data_(o.buffer)) + s * isz;
        if (ev_.column(o.instr) != to) std::memcpy(to, ev_.column(o.instr), len * isz);
      }
    }
  }

  const plan::FusedGroup& g_;
  const plan::RowPasses passes_;
  ChunkEvaluator ev_;
  const std::function<void*(int)>& data_;
  int64_t row_ = 1;
};

void run_row_fused(const plan::FusedGroup& g, const std::vector<Scalar>& params,
                   const plan::IterationSpace& space, const std::vector<const char*>& bases,
                   const std::function<void*(int)>& data) {
  int64_t n = shape_size(g.shape);
  if (n == 0) return;
  int64_t row = RowFusedRun(g, params, space, bases, data).row();
  int64_t rows = n / row, parts = std::min(part_count(n), rows);
  // Whole rows per step, about a chunk's worth, so short rows do not pay a step each.
  int64_t per_step = std::max<int64_t>(1, kChunk / row);
  parallel_for(parts, [&](int64_t p) {
    RowFusedRun run(g, params, space, bases, data);
    int64_t end = part_begin(p + 1, parts, rows);
    for (int64_t r = part_begin(p, parts, rows); r < end; r += per_step)
      run.rows(r, std::min(per_step, end - r));
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
