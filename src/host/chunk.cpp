#include "host/chunk.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>

#include "../../kernels/scalar.cuh"
#include "host/column_ops.hpp"
#include "host/convert.hpp"
#include "host/divide_by_scalar.hpp"

namespace kiln::cpu {

using plan::InstrKind;

namespace {

// Calls f(k, base, run) for each stretch of iteration indices [start + k, start + k + run)
// along the innermost axis, base being the element offset of the first (the others follow
// at the innermost stride).
template <class F>
void for_each_run(const Shape& shape, const plan::Strides& st, int64_t offset, int64_t start,
                  int64_t len, F f) {
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
    f(i, base, run);
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

}  // namespace

void element_offsets(const Shape& shape, const plan::Strides& st, int64_t offset, int64_t start,
                     int64_t len, int64_t* out) {
  const int64_t istride = shape.empty() ? 0 : st.back();
  for_each_run(shape, st, offset, start, len, [&](int64_t i, int64_t base, int64_t run) {
    for (int64_t k = 0; k < run; ++k) out[i + k] = base + k * istride;
  });
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
      idx_(chunk_),
      one_values_(g.code.size()) {
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
  classify();
  find_short_circuits();
}

namespace {
// Rows shorter than this are computed chunk by chunk: per row, each Outer instruction costs a
// call, which short rows would not repay. Rows longer than this are too: a table as long as a
// part of the work would cost what it saves.
constexpr int64_t kMinRow = 128, kMaxRow = 16384;
// Gathered loads copy whole runs of consecutive elements when rows are at least this long.
constexpr int64_t kMinRun = 16;

// Whether index[k + 1] == index[k] + 1 throughout: the ends first (a random index fails
// there), then a loop GCC vectorises (no early exit).
bool consecutive(const int64_t* index, int64_t len) {
  if (len < 2 || index[len - 1] - index[0] != len - 1 || index[1] - index[0] != 1) return false;
  bool all = true;
  for (int64_t k = 1; k < len; ++k) all &= index[k] - index[k - 1] == 1;
  return all;
}

// For each column c of the row, the end of the run of consecutive addresses in `index` (an Inner
// table) that holds c.
std::vector<int32_t> run_ends(const int64_t* index, int64_t row) {
  std::vector<int32_t> end(row);
  for (int64_t c = row; c-- > 0;)
    end[c] = static_cast<int32_t>(c + 1 < row && index[c + 1] == index[c] + 1 ? end[c + 1] : c + 1);
  return end;
}

}  // namespace

void ChunkEvaluator::classify() {
  const size_t n = g_.code.size(), rank = space_.shape.size();
  reach_.assign(n, Reach::Chunk);
  // The axes along which each instruction's values vary, and a bit for values read from memory
  // (or folded from it), which are never tabulated.
  const uint32_t inner = rank ? 1u << (rank - 1) : 0, data = 1u << 31;
  std::vector<uint32_t> axes(n, data);
  bool by_rows = false;
  for (size_t i = 0; i < n; ++i) {
    const plan::Instr& ins = g_.code[i];
    auto of = [&](int j) { return j >= 0 ? axes[j] : 0u; };
    switch (ins.kind) {
      case InstrKind::Param:
        axes[i] = 0;
        break;
      case InstrKind::Load:
        if (modes_[ins.access()] == Mode::Constant) axes[i] = 0;
        break;
      case InstrKind::Reduce:
      case InstrKind::User:
        break;
      case InstrKind::Iota:
        axes[i] = 0;
        for (size_t d = 0; d < rank; ++d)
          if (space_.strides[ins.access()][d] != 0) axes[i] |= 1u << d;
        break;
      case InstrKind::Gather:
        axes[i] = of(ins.a);  // the index's
        break;
      default:
        axes[i] = of(ins.a) | of(ins.b) | of(ins.c);
    }
    // A check has no value for a table to hold: it runs with every chunk (or once, Fixed).
    if (ins.kind == InstrKind::Check && axes[i] != 0) continue;
    if (axes[i] == 0) {
      reach_[i] = Reach::Fixed;
    } else if (!(axes[i] & ~inner) || !(axes[i] & (inner | data))) {
      reach_[i] = axes[i] & inner ? Reach::Inner : Reach::Outer;
      by_rows = true;
    }
  }
  if (rank == 0 || space_.shape[rank - 1] < kMinRow || space_.shape[rank - 1] > kMaxRow ||
      !by_rows) {
    for (auto& r : reach_)
      if (r != Reach::Fixed) r = Reach::Chunk;
    return find_dense_gathers();
  }
  row_ = space_.shape[rank - 1];
  find_row_gathers();
  find_dense_gathers();
  needed_.assign(n, false);
  auto need = [&](int j) {
    if (j >= 0 && (reach_[j] == Reach::Inner || reach_[j] == Reach::Outer)) needed_[j] = true;
  };
  for (size_t i = 0; i < n; ++i)
    if (reach_[i] == Reach::Chunk && row_gathers_[i].inner < 0)
      need(g_.code[i].a), need(g_.code[i].b), need(g_.code[i].c);
  for (const auto& o : g_.outputs) need(o.instr);
  size_t bytes = 0;
  table_slot_.assign(n, 0);
  for (size_t i = 0; i < n; ++i)
    if (reach_[i] == Reach::Inner) {
      table_slot_[i] = bytes;
      bytes += (row_ * itemsize(g_.code[i].dtype) + 63) / 64 * 64;
    }
  tables_.resize(bytes / sizeof(tables_[0]));
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
  } else if (!space_.shape.empty() && space_.strides[access].back() == 1 &&
             space_.shape.back() >= kMinRun) {
    // Rows of consecutive elements (a slice's rows, a tile of columns): copied run by run,
    // or read in place when the chunk is one run.
    char* out = scratch(i);
    cols_[i] = out;
    for_each_run(space_.shape, space_.strides[access], offset, start, len,
                 [&](int64_t k, int64_t at, int64_t run) {
                   if (run == len)
                     cols_[i] = base + at * isz;
                   else
                     std::memcpy(out + k * isz, base + at * isz, run * isz);
                 });
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

void ChunkEvaluator::read(int i, const plan::Instr& ins, int64_t start, int64_t len) {
  if (ins.kind == InstrKind::Load) return load(i, ins, start, len);
  if (!filled_[i]) {
    if (ins.kind == InstrKind::Param) {
      fill_column(ins.dtype, params_[ins.param_index()], scratch(i), chunk_);
    } else {
      compute_into(i, start, 1, one_value(i), cols_);
      spread(i, 0, chunk_);
    }
    filled_[i] = true;
  }
  cols_[i] = scratch(i);
}

void ChunkEvaluator::spread(int i, int64_t a, int64_t b) {
  visit_dtype(g_.code[i].dtype, [&](auto z) {
    using T = decltype(z);
    auto* col = reinterpret_cast<T*>(scratch(i));
    std::fill(col + a, col + b, *reinterpret_cast<const T*>(one_value(i)));
  });
}

// An integer operation with a uniform operand that leaves the other as it is (x + 0, 0 + x,
// x - 0, x * 1, 1 * x: index maps are full of them, strides of 1 and offsets of 0): that
// operand's column, or null.
const void* ChunkEvaluator::identity(const plan::Instr& ins, const std::vector<const void*>& cols) {
  const DType t = g_.code[ins.a].dtype;
  if (!is_integer(t)) return nullptr;
  const graph::BinaryOp op = ins.binary_op();
  const int64_t unit = op == graph::BinaryOp::Mul ? 1 : 0;
  if (op != graph::BinaryOp::Add && op != graph::BinaryOp::Sub && op != graph::BinaryOp::Mul)
    return nullptr;
  auto is_unit = [&](int j) {
    return uniform(j) && visit_dtype(t, [&](auto z) {
             using T = decltype(z);
             if constexpr (std::is_integral_v<T>)
               return *static_cast<const T*>(cols[j]) == static_cast<T>(unit);
             return false;
           });
  };
  if (is_unit(ins.b)) return cols[ins.a];
  if (op != graph::BinaryOp::Sub && is_unit(ins.a)) return cols[ins.b];
  return nullptr;
}

void ChunkEvaluator::compute_into(int i, int64_t start, int64_t len, char* out,
                                  const std::vector<const void*>& cols) {
  const void* r = compute(i, start, len, out, cols);
  if (r != out) std::memcpy(out, r, len * itemsize(g_.code[i].dtype));
}

const void* ChunkEvaluator::compute(int i, int64_t start, int64_t len, char* out,
                                    const std::vector<const void*>& cols) {
  const plan::Instr& ins = g_.code[i];
  switch (ins.kind) {
    case InstrKind::Iota: {
      element_offsets(space_.shape, space_.strides[ins.access()], g_.accesses[ins.access()].offset,
                      start, len, idx_.data());
      visit_dtype(ins.dtype, [&](auto z) {
        using T = decltype(z);
        if constexpr (!is_half_v<T>) {  // (lowering gives a half's iota float32)
          T a = *static_cast<const T*>(cols[ins.start()]);
          T b = *static_cast<const T*>(cols[ins.step()]);
          auto* r = reinterpret_cast<T*>(out);
          for (int64_t k = 0; k < len; ++k) r[k] = a + static_cast<T>(idx_[k]) * b;
        }
      });
      break;
    }
    case InstrKind::Unary:
      unary_column(ins.unary_op(), g_.code[ins.a].dtype, cols[ins.a], out, len);
      break;
    case InstrKind::Binary:
      if (const void* same = identity(ins, cols)) return same;
      if (!uniform(ins.b) || !divide_by_scalar(ins.binary_op(), g_.code[ins.a].dtype, cols[ins.a],
                                               cols[ins.b], out, len))
        binary_column(ins.binary_op(), g_.code[ins.a].dtype, cols[ins.a], cols[ins.b], out, len);
      break;
    case InstrKind::Where:
      where_column(ins.dtype, static_cast<const bool*>(cols[ins.a]), cols[ins.b], cols[ins.c], out,
                   len);
      break;
    case InstrKind::Cast:
      cast_column(g_.code[ins.a].dtype, ins.dtype, cols[ins.a], out, len);
      break;
    case InstrKind::Reduce:
      fill_rows(i, start, len, out);
      break;
    case InstrKind::Gather: {
      const int a = ins.access();
      const auto* index = static_cast<const int64_t*>(cols[ins.a]);
      // Consecutive addresses (a stretch of a concatenate's input, an unclamped index map): the
      // values are the source's own, read in place.
      if (consecutive(index, len))
        return bases_[a] + (g_.accesses[a].offset + index[0]) * itemsize(ins.dtype);
      visit_dtype(ins.dtype, [&](auto z) {
        using T = decltype(z);
        auto* src = reinterpret_cast<const T*>(bases_[a]) + g_.accesses[a].offset;
        auto* r = reinterpret_cast<T*>(out);
        for (int64_t k = 0; k < len; ++k) r[k] = src[index[k]];
      });
      break;
    }
    case InstrKind::Check:
      check(ins, len, cols);
      return cols[ins.a];  // no value of its own
    case InstrKind::Load:
    case InstrKind::Param:
      throw std::logic_error("host: a load or parameter reached compute (kiln bug)");
    case InstrKind::User:  // run_group refuses such groups before any chunk runs
      throw std::logic_error("host: a user CUDA expression reached the interpreter (kiln bug)");
  }
  return out;
}

void ChunkEvaluator::check(const plan::Instr& ins, int64_t len,
                           const std::vector<const void*>& cols) {
  const auto* out = static_cast<const bool*>(cols[ins.a]);
  int64_t count = 0;  // vectorised: no early exit
  for (int64_t k = 0; k < len; ++k) count += out[k];
  if (count == 0) return;
  const auto* index = static_cast<const int64_t*>(cols[ins.b]);
  auto* words = reinterpret_cast<uint64_t*>(const_cast<char*>(bases_[g_.accesses.size()])) +
                2 * ins.check_index();
  for (int64_t k = 0; k < len; ++k) {
    if (!out[k]) continue;
    const int64_t v = index[k];
    // parts of a group run concurrently
    std::atomic_ref<uint64_t> w(words[scalar::range_word_index(v)]);
    const uint64_t mine = scalar::range_word(v);
    for (uint64_t seen = w.load(); seen < mine && !w.compare_exchange_weak(seen, mine);) {
    }
  }
}

// How many instructions and outputs read each instruction.
void ChunkEvaluator::find_short_circuits() {
  const size_t n = g_.code.size();
  wheres_of_.assign(n, {});
  if (row_) return;  // by rows, instructions are also read through tables and row gathers
  std::vector<std::vector<int>> users(n);
  std::vector<bool> output(n);
  for (size_t i = 0; i < n; ++i) {
    const plan::Instr& ins = g_.code[i];
    // User calls have operands beyond a, b, c; a Reduce's operand is read by the row passes
    // (src/host/fused.cpp) outside this evaluator.
    if (ins.kind == InstrKind::User || ins.kind == InstrKind::Reduce) return;
    for (int j : {ins.a, ins.b, ins.c})
      if (j >= 0) users[j].push_back(static_cast<int>(i));
  }
  for (const auto& o : g_.outputs) output[o.instr] = true;
  bool any = false;
  dead_.assign(n, {});
  for (size_t w = 0; w < n; ++w) {
    const plan::Instr& ins = g_.code[w];
    if (ins.kind != InstrKind::Where || reach_[w] != Reach::Chunk ||
        reach_[ins.a] != Reach::Chunk || dense_from_[ins.a] >= 0)
      continue;
    const int cond = ins.a;
    for (int side = 0; side < 2; ++side) {  // 0: the false side (c), 1: the true side (b)
      const int top = side ? ins.b : ins.c;
      // The instructions after the condition that only `top`'s expression reads.
      std::vector<bool> in(n);
      auto only_here = [&](int j) {
        if (j <= cond || output[j] || reach_[j] != Reach::Chunk || users[j].empty()) return false;
        for (int u : users[j])
          if (!(u == static_cast<int>(w) && j == top) && !in[u]) return false;
        return true;
      };
      // `top` may be read by this Where only (twice: b == c is not a choice).
      if (ins.b == ins.c || !only_here(top)) continue;
      in[top] = true;
      std::vector<int> set{top};
      for (int j = top - 1; j > cond; --j)
        if (only_here(j)) in[j] = true, set.push_back(j);
      dead_[w][side ? 0 : 1] = std::move(set);  // the true side dies when all is false
    }
    wheres_of_[cond].push_back(static_cast<int>(w));
    any = true;
  }
  if (!any) return;
  live_.assign(n, 0);
  skip_.assign(n, 0);
}

void ChunkEvaluator::short_circuit(int i, int64_t len) {
  const auto* c = static_cast<const unsigned char*>(cols_[i]);
  int64_t count = 0;  // vectorised: no early exit
  for (int64_t k = 0; k < len; ++k) count += c[k] != 0;
  if (count != 0 && count != len) return;
  for (int w : wheres_of_[i]) {
    live_[w] = count ? 1 : -1;
    touched_.push_back(w);
    for (int j : dead_[w][count ? 1 : 0]) {
      skip_[j] = 1;
      touched_.push_back(j);
    }
  }
}

std::vector<int> ChunkEvaluator::use_counts() const {
  std::vector<int> uses(g_.code.size());
  for (const auto& ins : g_.code)
    for (int j : {ins.a, ins.b, ins.c})
      if (j >= 0) ++uses[j];
  for (const auto& o : g_.outputs) ++uses[o.instr];
  return uses;
}

// Gathers at an iota that walks the iteration space densely with step 1 (a take's index array
// read where it lies): they read consecutive elements, so their column is the source itself,
// from the iota's first value on, and the iota goes uncomputed where nothing else reads it.
void ChunkEvaluator::find_dense_gathers() {
  const std::vector<int> uses = use_counts();
  dense_from_.assign(g_.code.size(), -1);
  for (size_t i = 0; i < g_.code.size(); ++i) {
    const plan::Instr& ins = g_.code[i];
    if (ins.kind != InstrKind::Gather || reach_[i] != Reach::Chunk) continue;
    const plan::Instr& at = g_.code[ins.a];
    if (at.kind != InstrKind::Iota || at.dtype != DType::Int64 ||
        modes_[at.access()] != Mode::Dense || reach_[ins.a] != Reach::Chunk)
      continue;
    const auto value = [&](int j) { return params_[g_.code[j].param_index()].as<int64_t>(); };
    if (g_.code[at.start()].kind != InstrKind::Param ||
        g_.code[at.step()].kind != InstrKind::Param || value(at.step()) != 1)
      continue;
    dense_from_[i] = value(at.start()) + g_.accesses[at.access()].offset;
    if (uses[ins.a] == 1) reach_[ins.a] = Reach::Folded;
  }
}

// Gathers whose index is a sum of one Inner value and values fixed in a row (an address
// offset + row * stride + table[column], as index maps give): per row segment they read the
// Inner table from the row's base, copying whole runs of consecutive addresses, and the sum
// (Folded) is never computed where nothing else reads it.
void ChunkEvaluator::find_row_gathers() {
  const size_t n = g_.code.size();
  row_gathers_.assign(n, {});
  const std::vector<int> uses = use_counts();
  for (size_t i = 0; i < n; ++i) {
    const plan::Instr& ins = g_.code[i];
    if (ins.kind != InstrKind::Gather || reach_[i] != Reach::Chunk) continue;
    RowGather rg;
    // The sum's instructions, each with whether it may go uncomputed: when read only by the
    // gather or by a sum that goes uncomputed itself.
    std::vector<std::pair<int, bool>> sums, todo{{ins.a, true}};
    bool ok = true;
    while (ok && !todo.empty()) {
      auto [j, only_here] = todo.back();
      todo.pop_back();
      const plan::Instr& t = g_.code[j];
      if (reach_[j] == Reach::Chunk && t.kind == InstrKind::Binary &&
          t.binary_op() == graph::BinaryOp::Add && t.dtype == DType::Int64) {
        only_here = only_here && uses[j] == 1;
        sums.push_back({j, only_here});
        todo.push_back({t.a, only_here});
        todo.push_back({t.b, only_here});
      } else if (reach_[j] == Reach::Inner && rg.inner < 0 && t.dtype == DType::Int64) {
        rg.inner = j;
      } else if (reach_[j] == Reach::Fixed || reach_[j] == Reach::Outer) {
        ok = t.dtype == DType::Int64;
        rg.row_terms.push_back(j);
      } else {
        ok = false;
      }
    }
    if (!ok || rg.inner < 0) continue;
    for (auto [j, only_here] : sums)
      if (only_here) reach_[j] = Reach::Folded;
    row_gathers_[i] = std::move(rg);
  }
}

// Every Inner instruction over one row, chunk by chunk (a row's iteration indices are those of
// the first row: Inner values do not depend on the row).
void ChunkEvaluator::build_tables() {
  tables_built_ = true;
  view_ = cols_;
  for (int64_t c = 0; c < row_; c += chunk_)
    for (size_t i = 0; i < g_.code.size(); ++i)
      if (reach_[i] == Reach::Inner) {
        char* out = table(i) + c * itemsize(g_.code[i].dtype);
        compute_into(static_cast<int>(i), c, std::min(chunk_, row_ - c), out, view_);
        view_[i] = out;
      }
}

// Every Outer instruction's value in `row`, each computed for one element.
void ChunkEvaluator::outer_values(int64_t row) {
  if (values_row_ == row) return;
  view_ = cols_;
  for (size_t i = 0; i < g_.code.size(); ++i)
    if (reach_[i] == Reach::Outer) {
      compute_into(static_cast<int>(i), row * row_, 1, one_value(i), view_);
      view_[i] = one_value(i);
    }
  values_row_ = row;
}

// The needed Outer columns over [start, start + len): each row's value over its segment. A
// column filled whole with one row's values stays so for the next chunks of that row.
void ChunkEvaluator::outer_columns(int64_t start, int64_t len) {
  const int64_t first = start / row_, last = (start + len - 1) / row_;
  if (first != last || filled_row_ != first) {
    for (int64_t r = first; r <= last; ++r) {
      outer_values(r);
      const int64_t a = first == last ? 0 : std::max(start, r * row_) - start;
      const int64_t b = first == last ? chunk_ : std::min(start + len, (r + 1) * row_) - start;
      for (size_t i = 0; i < g_.code.size(); ++i)
        if (reach_[i] == Reach::Outer && needed_[i]) spread(static_cast<int>(i), a, b);
    }
    filled_row_ = first == last ? first : -1;
  }
  for (size_t i = 0; i < g_.code.size(); ++i)
    if (reach_[i] == Reach::Outer && needed_[i]) cols_[i] = scratch(i);
}

// The needed Inner columns over [start, start + len): a slice of the table, or where the chunk
// crosses rows, the table's pieces copied in turn.
void ChunkEvaluator::inner_columns(int64_t start, int64_t len) {
  const int64_t c0 = start % row_;
  for (size_t i = 0; i < g_.code.size(); ++i) {
    if (reach_[i] != Reach::Inner || !needed_[i]) continue;
    const int64_t isz = itemsize(g_.code[i].dtype);
    if (c0 + len <= row_) {
      cols_[i] = table(i) + c0 * isz;
      continue;
    }
    for (int64_t k = 0, c = c0; k < len; c = 0) {
      const int64_t m = std::min(len - k, row_ - c);
      std::memcpy(scratch(i) + k * isz, table(i) + c * isz, m * isz);
      k += m;
    }
    cols_[i] = scratch(i);
  }
}

void ChunkEvaluator::row_gather(int i, int64_t start, int64_t len, char* out) {
  const plan::Instr& ins = g_.code[i];
  RowGather& rg = row_gathers_[i];
  const auto* index = reinterpret_cast<const int64_t*>(table(rg.inner));
  if (rg.run_end.empty()) rg.run_end = run_ends(index, row_);
  const int64_t isz = itemsize(ins.dtype);
  const char* src = bases_[ins.access()] + g_.accesses[ins.access()].offset * isz;
  visit_dtype(ins.dtype, [&](auto z) {
    using T = decltype(z);
    for (int64_t k = 0; k < len;) {
      const int64_t row = (start + k) / row_, stop = std::min(len, (row + 1) * row_ - start);
      outer_values(row);
      int64_t base = 0;  // wrapping, as the Add instructions it stands for
      for (int j : rg.row_terms)
        base = scalar::wrap_add(base, *reinterpret_cast<const int64_t*>(
                                          reach_[j] == Reach::Fixed ? scratch(j) : one_value(j)));
      for (int64_t c = (start + k) % row_; k < stop;) {
        const int64_t m = std::min<int64_t>(rg.run_end[c], c + stop - k) - c;
        const char* from = src + scalar::wrap_add(base, index[c]) * isz;
        if (m >= 8) {
          std::memcpy(out + k * isz, from, m * isz);
        } else {
          auto* r = reinterpret_cast<T*>(out) + k;
          for (int64_t q = 0; q < m; ++q) r[q] = reinterpret_cast<const T*>(from)[q];
        }
        k += m;
        c += m;
      }
    }
  });
}

void ChunkEvaluator::by_rows(int64_t start, int64_t len) {
  for (size_t i = 0; i < g_.code.size(); ++i)
    if (reach_[i] == Reach::Fixed) read(static_cast<int>(i), g_.code[i], start, len);
  if (!tables_built_) build_tables();
  outer_columns(start, len);
  inner_columns(start, len);
}

void ChunkEvaluator::run(int64_t start, int64_t len, const std::vector<char*>& dest, int end) {
  if (end < 0) end = static_cast<int>(g_.code.size());
  if (row_) by_rows(start, len);
  const bool short_circuits = !skip_.empty();
  for (int i = 0; i < end; ++i) {
    const plan::Instr& ins = g_.code[i];
    if (reach_[i] == Reach::Inner || reach_[i] == Reach::Outer || reach_[i] == Reach::Folded)
      continue;                                // by_rows did them, or a gather reads without them
    if (short_circuits && skip_[i]) continue;  // only a Where's unselected side reads it
    if (reach_[i] == Reach::Fixed || ins.kind == InstrKind::Load) {
      read(i, ins, start, len);
    } else if (short_circuits && ins.kind == InstrKind::Where && live_[i]) {
      cols_[i] = cols_[live_[i] > 0 ? ins.b : ins.c];  // one side throughout the chunk
    } else {
      char* out = !dest.empty() && dest[i] ? dest[i] : scratch(i);
      if (dense_from_[i] >= 0) {  // a gather that reads consecutive elements: no copy
        const int a = ins.access();
        cols_[i] =
            bases_[a] + (g_.accesses[a].offset + dense_from_[i] + start) * itemsize(ins.dtype);
      } else if (row_ && row_gathers_[i].inner >= 0) {
        row_gather(i, start, len, out);
        cols_[i] = out;
      } else {
        cols_[i] = compute(i, start, len, out, cols_);
      }
    }
    if (short_circuits && !wheres_of_[i].empty()) short_circuit(i, len);
  }
  for (int j : touched_) skip_[j] = 0, live_[j] = 0;
  touched_.clear();
}

}  // namespace kiln::cpu
