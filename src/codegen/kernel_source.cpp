#include "codegen/kernel_source.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "codegen/expressions.hpp"
#include "codegen/summary.hpp"
#include "plan/row_passes.hpp"

namespace kiln::codegen {
namespace {

using plan::FusedGroup;
using plan::Instr;
using plan::InstrKind;

constexpr int kBlock = 256;  // threads per block, matched by the launcher

std::string num(int64_t v) { return std::to_string(v); }

// Everything the emitters need to know about one group.
struct Context {
  const FusedGroup& g;
  KernelSource& k;
  std::vector<bool> staged{};      // Tiled: accesses read through a shared-memory tile
  std::vector<bool> row_staged{};  // RowFused: accesses whose rows are staged in shared memory
                                   // (ColumnFused: whose tiles of 32 columns are)
  bool strided_vectors = false;    // ReduceColumns: strided loads were done as vectors v<a>
  // Strided accesses index as b<a> + pos * (the reduced axis's stride), from a base each
  // thread computes once (row and column reductions with one reduced axis), instead of
  // dividing per element; `pos` is the position along the row.
  bool incremental = false;
  std::string pos = "j";
  bool lane_bases = false;  // NarrowRows: strided accesses at b<a>[l], lane l's own offset
  // RowFused over rows staged in shared memory: the pass being emitted, and whether its
  // staged values come as vectors sv<a> of V (16-byte shared loads) rather than one by one.
  int row_pass = 0;
  bool shared_vectors = false;
  // A value a reducing pass computes and a later pass needs again (softmax's exp(x - max),
  // folded by the sum and divided by it after), kept in the shared memory of a staged input
  // that no later pass reads, so the later passes load it instead of recomputing it.
  struct RowCache {
    int instr = -1, access = -1, pass = -1;
  } row_cache{};
};

void classify(Context& c) {
  const auto& s = c.k.space;
  for (const auto& st : s.strides)
    c.k.access_kinds.push_back(plan::is_constant(st)         ? AccessKind::Constant
                               : plan::is_dense(s.shape, st) ? AccessKind::Dense
                                                             : AccessKind::Strided);
  for (size_t d = 0; d < s.shape.size(); ++d)
    (d + s.reduced < s.shape.size() ? c.k.kept : c.k.row) *= s.shape[d];
}

bool has_strided(const Context& c) {
  for (auto k : c.k.access_kinds)
    if (k == AccessKind::Strided) return true;
  return false;
}

// The axis (not the last) along which some input in memory is contiguous while it is not along
// the last axis, as in a transpose; -1 when there is none.
int transposed_axis(const Context& c) {
  const auto& sp = c.k.space;
  if (sp.shape.size() < 2) return -1;
  for (size_t a = 0; a < sp.strides.size(); ++a) {
    if (c.k.access_kinds[a] != AccessKind::Strided || c.g.accesses[a].buffer < 0) continue;
    if (sp.strides[a].back() == 1 || sp.strides[a].back() == 0) continue;
    for (size_t d = 0; d + 1 < sp.shape.size(); ++d)
      if (sp.strides[a][d] == 1) return static_cast<int>(d);
  }
  return -1;
}

// At most this many columns read as one stream (ReduceNarrowColumns). Below a warp's width
// the column form idles lanes or reads short lines (colsum 1000000x7 and 100000x64 on the H200:
// 40% and 22% of the memory roof, bench/results/h200.md of 2026-12-02).
constexpr int64_t kNarrowColumns = 64;

// Whether a column reduction can read its inputs as one flat stream: a 2-d space (columns
// kept, rows reduced) where every input lies row-major in memory (strides 1 and the column
// count) or is a constant, so that iteration (o, j) is element j * kept + o of every input.
bool narrow_columns(const Context& c) {
  const auto& s = c.k.space;
  if (s.shape.size() != 2 || c.k.kept < 1 || c.k.kept > kNarrowColumns) return false;
  for (const Instr& ins : c.g.code)
    if (ins.kind == InstrKind::Gather) return false;
  for (size_t a = 0; a < s.strides.size(); ++a)
    if (c.k.access_kinds[a] != AccessKind::Constant &&
        (s.strides[a][0] != 1 || s.strides[a][1] != c.k.kept))
      return false;
  return true;
}

// Whether an elementwise group over a 2-d space of rows of 2..kNarrowColumns values reads an
// input strided or broadcast (not as the output lies): its rows are too short for the 16-byte
// path's whole-row steps, and each element would find its offsets by division.
bool narrow_rows(const Context& c) {
  const auto& s = c.k.space;
  if (s.shape.size() != 2 || s.shape[1] < 2 || s.shape[1] > kNarrowColumns) return false;
  for (const Instr& ins : c.g.code)
    if (ins.kind == InstrKind::Gather) return false;
  return has_strided(c);
}

// Reductions: rows that are contiguous in memory get a block each (a thread each when
// shorter than a warp); otherwise neighbouring threads take neighbouring outputs, so every
// step of the row reads a coalesced line (ReduceColumns), or, for few columns of a row-major
// matrix, the whole matrix streams through every thread's lanes (ReduceNarrowColumns).
Form choose_form(const Context& c) {
  if (c.g.scan) return Form::Scan;
  if (!c.g.row_axes.empty()) return c.g.folds_columns() ? Form::ColumnFused : Form::RowFused;
  if (!c.g.reduction)
    return transposed_axis(c) >= 0 ? Form::Tiled
           : narrow_rows(c)        ? Form::NarrowRows
                                   : Form::Elementwise;
  if (c.k.kept == 1) return Form::ReduceFull;
  // An access broadcast along the row (stride 0: one value per row, as max(x, 1, keepdims) in
  // softmax's sum(exp(x - max))) reads the same element all along it and says nothing here.
  bool rows_contiguous = c.k.space.reduced > 0;
  for (size_t a = 0; a < c.k.space.strides.size(); ++a)
    if (c.k.access_kinds[a] != AccessKind::Constant && c.k.space.strides[a].back() != 0)
      rows_contiguous &= c.k.space.strides[a].back() == 1;
  if (!rows_contiguous) return narrow_columns(c) ? Form::ReduceNarrowColumns : Form::ReduceColumns;
  return c.k.row >= 32 ? Form::ReduceRows : Form::ReducePerThread;
}

// 16-byte steps: V lanes of the widest dense value (1 when any is 16 bytes wide).
int column_vec(const Context& c);

int choose_vec(const Context& c) {
  if (c.k.form == Form::ReduceColumns) return column_vec(c);
  // kernels/scan.cuh's 16 bytes of scanned values at once (Dense::items), whatever the inputs.
  if (c.k.form == Form::Scan) return std::max(1, 16 / itemsize(c.g.out_dtype(0)));
  if (c.k.form != Form::Elementwise && c.k.form != Form::ReduceFull &&
      c.k.form != Form::ReduceRows && c.k.form != Form::RowFused &&
      c.k.form != Form::ReduceNarrowColumns && c.k.form != Form::NarrowRows)
    return 1;
  int widest = 1;
  for (size_t a = 0; a < c.g.accesses.size(); ++a)
    if (c.k.form == Form::RowFused
            ? c.row_staged[a]
            : c.k.access_kinds[a] == AccessKind::Dense && c.g.accesses[a].buffer >= 0)
      for (const Instr& ins : c.g.code)
        if (ins.kind == InstrKind::Load && ins.access() == static_cast<int>(a))
          widest = std::max(widest, itemsize(ins.dtype));
  if (!c.g.reduction && c.k.form != Form::RowFused)
    for (const auto& o : c.g.outputs) widest = std::max(widest, itemsize(c.g.code[o.instr].dtype));
  // Narrow columns keep 256 V accumulators in shared memory to merge, 24 bytes each for an
  // argmax: at most 4 (as column_vec).
  if (c.k.form == Form::ReduceNarrowColumns) return std::clamp(16 / widest, 1, 4);
  return std::max(1, 16 / widest);
}

bool needs_index64(const Context& c) {
  const int64_t limit = int64_t{1} << 31;
  int64_t n = shape_size(c.k.space.shape);
  if (n >= limit) return true;
  // A narrow-column stream's position runs up to a grid's stride past the end.
  if ((c.k.form == Form::ReduceNarrowColumns || c.k.form == Form::NarrowRows) &&
      n + (int64_t{1} << 28) >= limit)
    return true;
  for (size_t a = 0; a < c.k.space.strides.size(); ++a) {
    int64_t reach = std::abs(c.g.accesses[a].offset);
    for (size_t d = 0; d < c.k.space.shape.size(); ++d)
      reach += (c.k.space.shape[d] - 1) * std::abs(c.k.space.strides[a][d]);
    if (reach >= limit) return true;
  }
  return false;
}

// ---- the parameter list ----------------------------------------------------------------

std::string out_type(const Context& c) { return cuda_type(c.g.out_dtype(0)); }

std::string signature(Context& c) {
  std::vector<std::string> ps;
  auto add = [&](Arg::Kind kind, int index, std::string decl) {
    c.k.args.push_back({kind, index});
    ps.push_back(std::move(decl));
  };
  for (size_t a = 0; a < c.g.accesses.size(); ++a) {
    int i = static_cast<int>(a);
    if (c.g.accesses[a].buffer >= 0)
      add(Arg::Input, i,
          std::string("const ") + cuda_type(c.g.load_dtype(i)) + "* __restrict__ in" + num(i));
    else
      add(Arg::IotaOffset, i, "I io" + num(i));
  }
  for (size_t o = 0; o < c.g.outputs.size(); ++o) {
    std::string t = c.g.reduction ? out_type(c) : cuda_type(c.g.code[c.g.outputs[o].instr].dtype);
    add(Arg::Output, static_cast<int>(o), t + "* __restrict__ out" + num(o));
  }
  for (const Instr& ins : c.g.code)
    if (ins.kind == InstrKind::Param)
      add(Arg::Param, ins.param_index(),
          std::string(cuda_type(ins.dtype)) + " s" + num(ins.param_index()));
  if (c.k.form != Form::Scan) add(Arg::Count, -1, "I n");
  const bool narrow = c.k.form == Form::ReduceNarrowColumns;
  if (c.k.form == Form::ReduceRows || c.k.form == Form::ReducePerThread ||
      c.k.form == Form::ReduceColumns || c.k.form == Form::RowFused ||
      c.k.form == Form::ColumnFused || narrow)
    add(Arg::RowLength, -1, "I r");
  if (c.k.form == Form::Elementwise || c.k.form == Form::ReduceFull ||
      c.k.form == Form::ReduceRows || c.k.form == Form::RowFused ||
      (c.k.form == Form::ReduceColumns && c.k.vec > 1) || narrow || c.k.form == Form::NarrowRows ||
      c.k.form == Form::Scan)
    add(Arg::VecFlag, -1, "int vec");
  if (c.k.form == Form::Scan) {
    add(Arg::ScanExtent, 0, "long long outer");
    add(Arg::ScanExtent, 1, "long long len");
    add(Arg::ScanExtent, 2, "long long inner");
    add(Arg::ScanTiles, -1, "long long tiles");
    add(Arg::LookBack, -1, "void* scratch");
  }
  if (!c.g.checks.empty()) add(Arg::CheckWords, -1, "kiln::u64* __restrict__ ck");
  if (c.k.form == Form::RowFused) add(Arg::RowsPerBlock, -1, "I rpb");
  if (c.k.long_rows || c.k.tall_columns) add(Arg::StagedLength, -1, "I sr");
  if (c.k.form == Form::ReduceFull || c.k.form == Form::ReduceColumns ||
      c.k.form == Form::ReduceRows || narrow) {
    add(Arg::Partials, -1, "Op::acc* partials");
    add(Arg::Counter, -1, "unsigned int* done");
  }
  // ColumnFused's layout has one more row of strides: where its outputs lie.
  if (has_strided(c) || c.k.form == Form::ColumnFused)
    add(Arg::Layout, -1,
        "kiln::layout<" + num(c.k.space.shape.size()) + ", " + num(c.k.space.strides.size()) +
            "> L");
  std::string out;
  for (size_t i = 0; i < ps.size(); ++i) out += (i ? ", " : "") + ps[i];
  return out;
}

// The kernel's first line, then one kiln::RangeCheck per range check of the group
// (kernels/types.cuh) at the kernel's scope: each thread keeps the indices it met out of range
// in registers and folds them into the check's words when it ends.
std::string kernel_head(Context& c, int block) {
  std::string s = "extern \"C\" __global__ void __launch_bounds__(" + num(block) +
                  ") KILN_KERNEL(" + signature(c) + ") {\n";
  for (size_t k = 0; k < c.g.checks.size(); ++k)
    s += "  kiln::RangeCheck rc" + num(k) + "(ck + " + num(2 * k) + ");\n";
  return s;
}

// ---- the body: one lane of the SSA program at iteration index `idx` -----------------------

// The element index of access a at iteration index `idx` (dense: idx itself).
std::string element_index(const Context& c, int a, const std::string& idx) {
  switch (c.k.access_kinds[a]) {
    case AccessKind::Constant:
      return "0";
    case AccessKind::Dense:
      return idx;
    default:
      if (c.k.form == Form::Tiled)
        return "(ob" + num(a) + " + dd * (I)L.strides[" + num(a) + "][" + num(c.k.tile_axis) +
               "] + ll * (I)L.strides[" + num(a) + "][" + num(c.k.space.shape.size() - 1) + "])";
      if (c.lane_bases) return "b" + num(a) + "[l]";
      if (c.incremental)
        return "(b" + num(a) + " + " + c.pos + " * (I)L.strides[" + num(a) + "][" +
               num(c.k.space.shape.size() - 1) + "])";
      return "kiln::offset_of<" + num(c.k.space.shape.size()) + ">(" + idx +
             ", L.shape, L.strides[" + num(a) + "])";
  }
}

// A user expression (kiln::elementwise) as a capture-less lambda called on its operands: the
// parameters bind the user's names, the arguments are read in the enclosing scope, so a name
// can never shadow a value it is initialised from (`x` bound to t5 and `t5` bound to x both
// work), and the expression cannot reach the kernel's own variables. The text stands on lines
// of its own, so a trailing // comment ends at its line, and an empty line follows it, so a
// trailing backslash splices only that; double parentheses keep a top-level comma from
// splitting the call. user_result converts to the output dtype as astype does.
std::string user_expr(const FusedGroup& g, const Instr& ins) {
  const plan::UserCall& call = g.user_calls[ins.user_call()];
  std::string params, args;
  for (size_t k = 0; k < call.operands.size(); ++k) {
    const char* sep = k ? ", " : "";
    params += sep + std::string("const ") + cuda_type(g.code[call.operands[k]].dtype) + " " +
              call.code->names[k];
    args += sep + std::string("t") + num(call.operands[k]);
  }
  return std::string("[](") + params + ") {\n        return kiln::user_result<" +
         cuda_type(ins.dtype) + ">((\n" + call.code->expr + "\n\n        ));\n      }(" + args +
         ")";
}

// Lines computing t0..tN for one lane. `lane` is the lane number within a vector step and
// `vectorised` says whether dense loads were done as vectors named v<access>.
// `needed`, when given, says which instructions to compute (a RowFused reducing pass).
std::string lane_program(const Context& c, const std::string& idx, bool vectorised,
                         const std::vector<bool>* needed = nullptr) {
  std::ostringstream os;
  for (size_t i = 0; i < c.g.code.size(); ++i) {
    if (needed && !(*needed)[i]) continue;
    const Instr& ins = c.g.code[i];
    auto t = [&](int j) { return "t" + num(j); };
    std::string e;
    if (static_cast<int>(i) == c.row_cache.instr && c.row_pass > c.row_cache.pass) {
      const std::string a = num(c.row_cache.access);
      os << "      " << cuda_type(ins.dtype) << " t" << i << " = "
         << (c.shared_vectors ? "sv" + a + "[l]" : "sm" + a + "[q * r + j]") << ";\n";
      continue;
    }
    if (ins.kind == InstrKind::Check) {  // a statement: no value (kernel_head declares rc<k>)
      os << "      rc" << ins.check_index() << ".note(" << t(ins.a) << ", " << t(ins.b) << ");\n";
      continue;
    }
    switch (ins.kind) {
      case InstrKind::Load: {
        const int a = ins.access();
        if (c.k.form == Form::ColumnFused && c.row_staged[a] && c.k.tall_columns)
          e = "(j - lo < sr ? sm" + num(a) + "[(j - lo) * 32 + threadIdx.x] : in" + num(a) + "[" +
              element_index(c, a, idx) + "])";
        else if (c.k.form == Form::ColumnFused && c.row_staged[a])
          e = "sm" + num(a) + "[j * 32 + threadIdx.x]";
        else if (!c.staged.empty() && c.staged[a])
          e = "tile" + num(a) + "[threadIdx.y + k][threadIdx.x + h]";
        else if (!c.row_staged.empty() && c.row_staged[a] && c.k.row_registers)
          e = "rg" + num(a) + "[k][l]";
        else if (!c.row_staged.empty() && c.row_staged[a] && c.shared_vectors)
          e = "sv" + num(a) + "[l]";
        else if (!c.row_staged.empty() && c.row_staged[a] && c.k.long_rows)
          e = "(j < sr ? sm" + num(a) + "[j + shift] : in" + num(a) + "[i])";
        else if (!c.row_staged.empty() && c.row_staged[a])
          e = "sm" + num(a) + "[q * r + j]";
        else if (vectorised && (c.k.access_kinds[a] == AccessKind::Dense ||
                                (c.strided_vectors && c.k.access_kinds[a] == AccessKind::Strided)))
          e = "v" + num(a) + "[l]";
        else
          e = "in" + num(a) + "[" + element_index(c, a, idx) + "]";
        break;
      }
      case InstrKind::Param:
        e = "s" + num(ins.param_index());
        break;
      case InstrKind::Iota:
        e = "(" + t(ins.start()) + " + (" + cuda_type(ins.dtype) + ")(io" + num(ins.access()) +
            " + " + element_index(c, ins.access(), idx) + ") * " + t(ins.step()) + ")";
        break;
      case InstrKind::Unary:
        e = unary_expr(ins.unary_op(), c.g.code[ins.a].dtype, t(ins.a));
        break;
      case InstrKind::Binary:
        e = binary_expr(ins.binary_op(), c.g.code[ins.a].dtype, t(ins.a), t(ins.b));
        break;
      case InstrKind::Where:
        e = "(" + t(ins.a) + " ? " + t(ins.b) + " : " + t(ins.c) + ")";
        break;
      case InstrKind::Cast:
        e = cast_expr(c.g.code[ins.a].dtype, ins.dtype, t(ins.a));
        break;
      case InstrKind::User:
        e = user_expr(c.g, ins);
        break;
      case InstrKind::Reduce:  // its row's value, found by an earlier pass
        e = "red" + num(static_cast<int64_t>(i));
        break;
      case InstrKind::Gather:  // a 64-bit element index, whatever the iteration's index type
        e = "in" + num(ins.access()) + "[" + t(ins.a) + "]";
        break;
      case InstrKind::Check:  // written above
        break;
    }
    // Not const: NVRTC's front end tries to fold each const local as a constant expression,
    // following the locals it reads, again for every reader (no memo), so a chain whose values
    // feed two later ones, as y = where(y > i, y, c) does, compiled in exponential time (22
    // steps: 20 s; 0.26 s without const). Nothing is assigned twice either way.
    os << "      " << cuda_type(ins.dtype) << " t" << i << " = " << e << ";\n";
  }
  return os.str();
}

// Vector loads of the dense inputs for a V-lane step at index i; `load` names the kernel
// helper (kiln::load_streaming for a stream read once).
std::string vector_loads(const Context& c, const char* load = "load") {
  std::ostringstream os;
  for (size_t a = 0; a < c.g.accesses.size(); ++a)
    if (c.k.access_kinds[a] == AccessKind::Dense && c.g.accesses[a].buffer >= 0)
      os << "    const kiln::vec<" << cuda_type(c.g.load_dtype(static_cast<int>(a))) << ", V> v"
         << a << " = kiln::" << load << "<V>(in" << a << " + i);\n";
  return os.str();
}

// Whether access a is read through a tile: strided, contiguous along the tile axis.
bool tiled_input(const Context& c, int a) {
  const auto& sp = c.k.space;
  return c.k.access_kinds[a] == AccessKind::Strided && c.g.accesses[a].buffer >= 0 &&
         sp.strides[a][c.k.tile_axis] == 1 && sp.strides[a].back() != 1;
}

// Tiles of 64 x 64 when every tiled input is at most 4 bytes wide (16 loads in flight per
// thread where 32 x 32 tiles gave 4: transpose 8192x8192 float32 ran 0.155 ms, 82% of the
// roof, with 32 x 32); 32 x 32 for wider values, whose 64 x 65 tile would not leave room.
int choose_tile(const Context& c) {
  for (size_t a = 0; a < c.g.accesses.size(); ++a)
    if (tiled_input(c, static_cast<int>(a)) && itemsize(c.g.load_dtype(static_cast<int>(a))) > 4)
      return 32;
  return 64;
}

// Form::Tiled. A block takes a T x T tile (choose_tile) of the (tile axis D, last axis) plane at
// one outer coordinate o (the other axes). Inputs contiguous along D are staged: thread (x, y)
// reads elements (d0 + x + h, l0 + y + k), so a warp reads 32 neighbours along D, and keeps them
// in shared memory; then thread (x, y) computes outputs (d0 + y + k, l0 + x + h), so a warp
// writes 32 neighbours along the last axis. Everything else is read where it lies.
std::string tiled_kernel(Context& c) {
  std::ostringstream os;
  const auto& sp = c.k.space;
  const int rank = static_cast<int>(sp.shape.size()), D = c.k.tile_axis, last = rank - 1;
  const std::string T = num(c.k.tile), T1 = num(c.k.tile + 1);
  // Tiles of T x (T + 1) elements (the pad keeps the column reads free of bank conflicts),
  // within the 48 KB of static shared memory a block may have; inputs past that are read in
  // place.
  constexpr size_t kTileBudget = 40 * 1024;
  size_t tile_bytes = 0;
  c.staged.assign(c.g.accesses.size(), false);
  for (size_t a = 0; a < c.g.accesses.size(); ++a) {
    size_t bytes =
        size_t(c.k.tile) * (c.k.tile + 1) * itemsize(c.g.load_dtype(static_cast<int>(a)));
    c.staged[a] = tiled_input(c, static_cast<int>(a)) && tile_bytes + bytes <= kTileBudget;
    if (c.staged[a]) tile_bytes += bytes;
  }
  os << kernel_head(c, kBlock);
  for (size_t a = 0; a < c.staged.size(); ++a)
    if (c.staged[a])
      os << "  __shared__ " << cuda_type(c.g.load_dtype(static_cast<int>(a))) << " tile" << a << "["
         << T << "][" << T1 << "];\n";
  os << "  const I nl = (I)L.shape[" << last << "], nd = (I)L.shape[" << D << "];\n"
     << "  const I tiles_l = (nl + " << c.k.tile - 1 << ") / " << T << ", outer = n / (nl * nd);\n"
     << "  const I l0 = (I)(blockIdx.x % tiles_l) * " << T << ", d0 = (I)(blockIdx.x / tiles_l) * "
     << T << ";\n"
     << "  I sd = 1;  // the output's stride along D\n"
     << "  for (int a = " << D + 1 << "; a < " << rank << "; ++a) sd *= (I)L.shape[a];\n"
     << "  for (I o = blockIdx.y; o < outer; o += gridDim.y) {\n"
     << "    I rest = o, dense = 1, oi = 0;\n";
  for (size_t a = 0; a < c.g.accesses.size(); ++a)
    if (c.k.access_kinds[a] == AccessKind::Strided) os << "    I ob" << a << " = 0;\n";
  os << "#pragma unroll\n    for (int ax = " << last << "; ax >= 0; --ax) {\n"
     << "      const I extent = (I)L.shape[ax];\n"
     << "      if (ax != " << D << " && ax != " << last << ") {\n"
     << "        const I x = rest % extent;\n        rest /= extent;\n"
     << "        oi += x * dense;\n";
  for (size_t a = 0; a < c.g.accesses.size(); ++a)
    if (c.k.access_kinds[a] == AccessKind::Strided)
      os << "        ob" << a << " += x * (I)L.strides[" << a << "][ax];\n";
  // Thread (x, y) of the 32 x 8 block reads elements (d0 + x + h, l0 + y + k) and writes
  // (d0 + y + k, l0 + x + h), h a multiple of 32 below T and k of 8: a warp reads 32
  // neighbours along D and writes 32 along the last axis.
  os << "      }\n      dense *= extent;\n    }\n"
     << "#pragma unroll\n    for (int h = 0; h < " << T << "; h += 32)\n"
     << "#pragma unroll\n    for (int k = 0; k < " << T << "; k += 8) {\n"
     << "      const I dd = d0 + threadIdx.x + h, ll = l0 + threadIdx.y + k;\n"
     << "      if (dd < nd && ll < nl) {\n";
  for (size_t a = 0; a < c.staged.size(); ++a)
    if (c.staged[a])
      os << "        tile" << a << "[threadIdx.x + h][threadIdx.y + k] = in" << a << "["
         << element_index(c, static_cast<int>(a), "") << "];\n";
  os << "      }\n    }\n    __syncthreads();\n"
     << "#pragma unroll\n    for (int h = 0; h < " << T << "; h += 32)\n"
     << "#pragma unroll\n    for (int k = 0; k < " << T << "; k += 8) {\n"
     << "      const I dd = d0 + threadIdx.y + k, ll = l0 + threadIdx.x + h;\n"
     << "      if (dd < nd && ll < nl) {\n"
     << "        const I i = oi + dd * sd + ll;\n"
     << lane_program(c, "i", false);
  for (size_t o = 0; o < c.g.outputs.size(); ++o)
    os << "        out" << o << "[i] = t" << c.g.outputs[o].instr << ";\n";
  os << "      }\n    }\n    __syncthreads();\n  }\n}\n";
  c.staged.clear();
  return os.str();
}

// Declares b<a> = the element offset of strided access a at iteration index `at`, from which
// element_index steps along the last axis (see Context::incremental).
std::string strided_bases(const Context& c, const std::string& at, const std::string& indent) {
  std::ostringstream os;
  for (size_t a = 0; a < c.k.access_kinds.size(); ++a)
    if (c.k.access_kinds[a] == AccessKind::Strided)
      os << indent << "const I b" << a << " = kiln::offset_of<" << c.k.space.shape.size() << ">("
         << at << ", L.shape, L.strides[" << a << "]);\n";
  return os.str();
}

// The 16-byte path of a kernel with strided accesses takes V elements of one row per step
// (the last axis's extent a multiple of V), so those accesses find their offsets once per step.
std::string vec_condition(const Context& c) {
  if (!has_strided(c) || c.k.vec == 1) return "vec";
  return "vec && L.shape[" + num(c.k.space.shape.size() - 1) + "] % " + num(c.k.vec) + " == 0";
}

// Rows of a few values (NarrowRows): positions p of the output stream, V lanes a step, with a
// grid stride that is a whole number of rows (the launch makes blockDim.x * V a multiple of the
// row length), so lane l keeps one column and its row advances by the same count each step:
// each strided input's offset for lane l (b<a>[l]) is found once and then advanced by adding.
std::string narrow_rows_kernel(Context& c) {
  c.lane_bases = true;
  std::string bases, set_bases, advance;
  for (size_t a = 0; a < c.k.access_kinds.size(); ++a) {
    if (c.k.access_kinds[a] != AccessKind::Strided) continue;
    const std::string b = "b" + num(a), s = "(I)L.strides[" + num(a) + "]";
    bases += "  I " + b + "[V];\n";
    set_bases += "    " + b + "[l] = (row + q / cols) * " + s + "[0] + q % cols * " + s + "[1];\n";
    advance += "      " + b + "[l] += rows * " + s + "[0];\n";
  }
  std::string results, stores, vector_stores, singles;
  for (size_t o = 0; o < c.g.outputs.size(); ++o) {
    const std::string t = cuda_type(c.g.code[c.g.outputs[o].instr].dtype);
    const std::string r = "r" + num(o), v = "t" + num(c.g.outputs[o].instr);
    results += "      kiln::vec<" + t + ", V> " + r + ";\n";
    stores += "        " + r + "[l] = " + v + ";\n";
    vector_stores += "      kiln::store<V>(out" + num(o) + " + i, " + r + ");\n";
    singles += "          out" + num(o) + "[i] = " + v + ";\n";
  }
  std::ostringstream os;
  os << kernel_head(c, kBlock) << "  constexpr int V = " << c.k.vec << ";\n"
     << "  const I cols = (I)L.shape[1], stride = (I)gridDim.x * blockDim.x * V;\n"
     << "  const I rows = stride / cols;\n"
     << "  I p = ((I)blockIdx.x * blockDim.x + threadIdx.x) * V;\n"
     << "  const I row = p / cols;\n"
     << bases << "#pragma unroll\n  for (int l = 0; l < V; ++l) {\n"
     << "    const I q = p % cols + l;\n"
     << set_bases << "  }\n"
     << "  for (; p < n; p += stride) {\n"
     << "    if (vec && p + V <= n) {\n"
     << "      const I i = p;\n"
     << vector_loads(c) << results << "#pragma unroll\n      for (int l = 0; l < V; ++l) {\n"
     << lane_program(c, "(i + l)", true) << stores << "      }\n"
     << vector_stores << "    } else {\n"
     << "#pragma unroll\n      for (int l = 0; l < V; ++l)\n        if (p + l < n) {\n"
     << "          const I i = p + l;\n"
     << lane_program(c, "i", false) << singles << "        }\n    }\n"
     << "#pragma unroll\n    for (int l = 0; l < V; ++l) {\n"
     << advance << "    }\n  }\n}\n";
  c.lane_bases = false;
  return os.str();
}

std::string elementwise_kernel(Context& c) {
  std::ostringstream os;
  c.incremental = true;
  c.pos = "l";
  os << kernel_head(c, kBlock) << "  auto step = [&](auto lanes, I i) {\n"
     << "    constexpr int V = decltype(lanes)::value;\n"
     << vector_loads(c) << strided_bases(c, "i", "    ");
  for (size_t o = 0; o < c.g.outputs.size(); ++o)
    os << "    kiln::vec<" << cuda_type(c.g.code[c.g.outputs[o].instr].dtype) << ", V> r" << o
       << ";\n";
  os << "#pragma unroll\n    for (int l = 0; l < V; ++l) {\n" << lane_program(c, "(i + l)", true);
  for (size_t o = 0; o < c.g.outputs.size(); ++o)
    os << "      r" << o << "[l] = t" << c.g.outputs[o].instr << ";\n";
  os << "    }\n";
  for (size_t o = 0; o < c.g.outputs.size(); ++o)
    os << "    kiln::store<V>(out" << o << " + i, r" << o << ");\n";
  os << "  };\n  kiln::contiguous_loop<" << c.k.vec << ">(n, " << vec_condition(c)
     << ", step);\n}\n";
  c.incremental = false;
  c.pos = "j";
  return os.str();
}

// Form::Scan: kernels/scan.cuh's scan of the group's value, which it loads through the group's
// program rather than from memory: `one` computes the value at a position of the scan's dense
// shape, `many` the V values (16 bytes) from a position at once, reading every dense input in
// vectors (when `vec` says they are aligned, the rows are contiguous and whole vectors long),
// streaming, as each is read once (the scan step's own loads are streaming too).
// The lane program is the one every elementwise kernel emits, so the values are those the
// group would write unfused. The launch picks the form: a row's tiles, or a thread per lane.
std::string scan_kernel(Context& c) {
  const std::string T = cuda_type(c.g.out_dtype(0)), value = "t" + num(c.g.outputs[0].instr);
  const std::string op = c.g.scan->op == graph::ScanOp::Sum ? "Add" : "Multiply";
  std::ostringstream os;
  os << "static_assert(kiln::scan::kThreads == " << kScanBlock
     << " && kiln::scan::kTileBytes == " << kScanTileBytes
     << ", \"codegen's scan constants (kernel_source.hpp)\");\n"
     << kernel_head(c, kScanBlock) << "  auto one = [&](long long at) {\n"
     << "    const I i = (I)at;\n"
     << lane_program(c, "i", false) << "    return " << value << ";\n  };\n"
     << "  auto many = [&](long long at, " << T << "* x) {\n"
     << "    constexpr int V = " << c.k.vec << ";\n"
     << "    const I i = (I)at;\n"
     << vector_loads(c, "load_streaming") << "#pragma unroll\n    for (int l = 0; l < V; ++l) {\n"
     << lane_program(c, "(i + l)", true) << "      x[l] = " << value << ";\n    }\n  };\n"
     << "  const auto in = kiln::scan::produced(one, many);\n"
     << "  if (tiles)\n"
     << "    kiln::scan::single_pass<kiln::scatter::" << op
     << ">(in, out0, outer, len, inner, tiles, scratch,\n"
     << "        vec && inner == 1 && len % " << c.k.vec << " == 0);\n"
     << "  else\n"
     << "    kiln::scan::lanes<kiln::scatter::" << op << ">(in, out0, outer, len, inner);\n}\n";
  return os.str();
}

// The accumulator type (reduction.cuh) of reduction `op` accumulating in dtype t.
std::string op_type(graph::ReduceOp op, DType t) {
  using graph::ReduceOp;
  std::string ty = cuda_type(t);
  bool ints = is_integer(t);
  switch (op) {
    case ReduceOp::Sum:
      return (ints ? "kiln::IntSumOp<" : "kiln::SumOp<") + ty + ">";
    case ReduceOp::Prod:
      return (ints ? "kiln::IntProdOp<" : "kiln::ProdOp<") + ty + ">";
    case ReduceOp::Mean:
      return "kiln::MeanOp<" + ty + ", " + cuda_type(real_dtype(t)) + ">";
    case ReduceOp::Max:
      return (is_complex(t) ? "kiln::ExtremumOp<" : "kiln::MaxMinOp<") + ty + ", true" +
             (is_complex(t) ? ", false>" : ">");
    case ReduceOp::Min:
      return (is_complex(t) ? "kiln::ExtremumOp<" : "kiln::MaxMinOp<") + ty + ", false" +
             (is_complex(t) ? ", false>" : ">");
    case ReduceOp::ArgMax:
      return "kiln::ExtremumOp<" + ty + ", true, true>";
    case ReduceOp::ArgMin:
      return "kiln::ExtremumOp<" + ty + ", false, true>";
    case ReduceOp::Any:
      return "kiln::AnyOp";
    case ReduceOp::All:
      return "kiln::AllOp";
  }
  return "";
}

// Every block folds its share and leaves a partial; the last block to finish (counted on
// `done`, which it resets for the next launch) merges the partials: one launch, no second pass.
std::string reduce_full_kernel(Context& c) {
  std::ostringstream os;
  int value = c.g.outputs[0].instr;
  c.incremental = true;
  c.pos = "l";
  os << kernel_head(c, kBlock) << "  Op::acc acc = Op::init();\n"
     << "  auto step = [&](auto lanes, I i) {\n"
     << "    constexpr int V = decltype(lanes)::value;\n"
     << vector_loads(c, "load_streaming") << strided_bases(c, "i", "    ")
     << "#pragma unroll\n    for (int l = 0; l < V; ++l) {\n"
     << lane_program(c, "(i + l)", true) << "      Op::fold(acc, t" << value
     << ", (kiln::i64)(i + l));\n    }\n  };\n"
     << "  kiln::contiguous_loop<" << c.k.vec << ", 2>(n, " << vec_condition(c) << ", step);\n"
     << "  kiln::finish_full_reduction<Op, " << kBlock
     << ">(acc, partials, done, out0, (kiln::i64)n);\n}\n";
  c.incremental = false;
  c.pos = "j";
  return os.str();
}

// Few columns of row-major inputs (ReduceNarrowColumns): the n x r iteration space is element
// j * n + o of every input, so the kernel streams positions p, 16 bytes per lane step, with a
// grid stride that is a whole number of rows (the launch makes blockDim.x * V a multiple of n):
// lane l of a thread then meets column (p + l) % n at every step and keeps its accumulator, and
// its row advances by the same count each step (no division per element for argmax's index).
std::string reduce_narrow_columns_kernel(Context& c) {
  std::ostringstream os;
  const int value = c.g.outputs[0].instr;
  const std::string fold =
      "        Op::fold(acc[l], t" + num(value) + ", (kiln::i64)(row + lr[l]));\n";
  os << kernel_head(c, kBlock) << "  constexpr int V = " << c.k.vec << ";\n"
     << "  Op::acc acc[V];\n  I lr[V];  // lane l's row, less the step's first row\n"
     << "  const I total = n * r, stride = (I)gridDim.y * blockDim.x * V, rows = stride / n;\n"
     << "  I p = ((I)blockIdx.y * blockDim.x + threadIdx.x) * V, row = p / n;\n"
     << "#pragma unroll\n  for (int l = 0; l < V; ++l) {\n"
     << "    acc[l] = Op::init();\n    lr[l] = (p % n + l) / n;\n  }\n"
     // Two steps unrolled: eight (session 15) lost on the H200, colsum 100000x64 0.0289 ms
     // against 0.0270, 1000000x7 0.0132 against 0.0117.
     << "  if (vec) {\n#pragma unroll 2\n"
     << "    for (; p + V <= total; p += stride, row += rows) {\n"
     << "      const I i = p;\n"
     << vector_loads(c, "load_streaming") << "#pragma unroll\n      for (int l = 0; l < V; ++l) {\n"
     << lane_program(c, "(i + l)", true) << fold << "      }\n    }\n  }\n"
     << "  for (; p < total; p += stride, row += rows)\n"
     << "#pragma unroll\n    for (int l = 0; l < V; ++l)\n      if (p + l < total) {\n"
     << "        const I i = p + l;\n"
     << lane_program(c, "i", false) << fold << "      }\n"
     << "  kiln::finish_narrow_columns<Op, V>(acc, partials, done, out0, (kiln::i64)n, "
        "(kiln::i64)r);\n}\n";
  return os.str();
}

// A warp per row (row_threads lanes for short rows, lanes_per_row), 256 / row_threads rows per
// block; blockIdx.y splits long rows (kiln::row_loop). Dense inputs are read 16 bytes at a
// time when the row length keeps every row aligned.
std::string reduce_rows_kernel(Context& c) {
  std::ostringstream os;
  int value = c.g.outputs[0].instr;
  const int tpr = c.k.row_threads;
  const std::string lanes = tpr == 32 ? "" : ", " + num(tpr);  // the templates' default: 32
  c.incremental = c.k.space.reduced == 1;
  c.pos = "(j + l)";
  os << kernel_head(c, kBlock) << "  const I o = (I)blockIdx.x * " << kBlock / tpr
     << " + threadIdx.x / " << tpr << ";\n"
     << "  Op::acc acc = Op::init();\n"
     << "  if (o < n) {\n"
     << (c.incremental ? strided_bases(c, "o * r", "    ") : "")
     << "    auto step = [&](auto lanes, I j) {\n"
     << "      constexpr int V = decltype(lanes)::value;\n"
     << "      const I i = o * r + j;\n"
     << vector_loads(c) << "#pragma unroll\n      for (int l = 0; l < V; ++l) {\n"
     << lane_program(c, "(i + l)", true) << "        Op::fold(acc, t" << value
     << ", (kiln::i64)(j + l));\n      }\n    };\n"
     << "    kiln::row_loop<" << c.k.vec << lanes << ">(r, vec && r % " << c.k.vec
     << " == 0, (int)(threadIdx.x % " << tpr << "), step);\n  }\n"
     << "  kiln::finish_rows<Op" << lanes
     << ">(acc, partials, done, out0, (kiln::i64)o, (kiln::i64)n, (kiln::i64)r);\n}\n";
  c.incremental = false;
  c.pos = "j";
  return os.str();
}

// A thread per output, for rows shorter than a warp.
std::string reduce_per_thread_kernel(Context& c) {
  std::ostringstream os;
  int value = c.g.outputs[0].instr;
  os << kernel_head(c, kBlock)
     << "  for (I o = (I)blockIdx.x * blockDim.x + threadIdx.x; o < n; o += (I)gridDim.x * "
        "blockDim.x) {\n"
     << "    Op::acc acc = Op::init();\n"
     << "    for (I j = 0; j < r; ++j) {\n"
     << "      const I i = o * r + j;\n"
     << lane_program(c, "i", false) << "      Op::fold(acc, t" << value
     << ", (kiln::i64)j);\n    }\n"
     << "    out0[o] = Op::finish(acc, r);\n  }\n}\n";
  return os.str();
}

// Thread (x, y) of a BX x BY block (column_block in launch.cpp: 32 x 8, or fewer columns when
// the outputs are narrow, or fewer rows when the reduced axis is short) folds outputs
// o .. o + V - 1, o = (blockIdx.x * BX + x) * V, over the rows j = y + BY * blockIdx.y +
// BY * gridDim.y * k; kiln::finish_columns merges the block's BY rows of threads and then, when
// gridDim.y > 1, the blocks of a column in a fixed order (deterministic). The block's shape is
// read from blockDim, so every width shares one kernel. With V > 1 (column_vec) a row's V values
// come in one 16-byte load when `vec` says every input is aligned for it, one at a time otherwise
// and at the last outputs.
std::string reduce_columns_kernel(Context& c) {
  std::ostringstream os;
  const int value = c.g.outputs[0].instr, V = c.k.vec;
  const std::string last = num(c.k.space.shape.size() - 1);
  c.incremental = c.k.space.reduced == 1;
  os << kernel_head(c, kBlock) << "  const I o = ((I)blockIdx.x * blockDim.x + threadIdx.x) * " << V
     << ";\n"
     << "  Op::acc acc[" << V << "];\n"
     << "#pragma unroll\n  for (int l = 0; l < " << V << "; ++l) acc[l] = Op::init();\n"
     << "  if (o < n) {\n";
  if (V == 1) {
    os << (c.incremental ? strided_bases(c, "o * r", "    ") : "") << "#pragma unroll 4\n"
       << "    for (I j = (I)blockIdx.y * blockDim.y + threadIdx.y; j < r;\n"
       << "         j += (I)gridDim.y * blockDim.y) {\n"
       << "      const I i = o * r + j;\n"
       << lane_program(c, "i", false) << "      Op::fold(acc[0], t" << value
       << ", (kiln::i64)j);\n    }\n";
  } else {
    std::ostringstream bases, shifted, loads;
    for (size_t a = 0; a < c.k.access_kinds.size(); ++a) {
      if (c.k.access_kinds[a] != AccessKind::Strided) continue;
      bases << "    const I B" << a << " = kiln::offset_of<" << c.k.space.shape.size()
            << ">(o * r, L.shape, L.strides[" << a << "]);\n";
      shifted << "          const I b" << a << " = B" << a << " + l;\n";
      loads << "        const kiln::vec<" << cuda_type(c.g.load_dtype(static_cast<int>(a))) << ", "
            << V << "> v" << a << " = kiln::load<" << V << ">(in" << a << " + B" << a
            << " + j * (I)L.strides[" << a << "][" << last << "]);\n";
    }
    c.strided_vectors = true;
    std::string vector_lane = lane_program(c, "i", true);
    c.strided_vectors = false;
    os << bases.str() << "    const bool whole = vec && o + " << V << " <= n;\n"
       << "#pragma unroll 2\n"
       << "    for (I j = (I)blockIdx.y * blockDim.y + threadIdx.y; j < r;\n"
       << "         j += (I)gridDim.y * blockDim.y) {\n"
       << "      if (whole) {\n"
       << loads.str() << "#pragma unroll\n        for (int l = 0; l < " << V << "; ++l) {\n"
       << vector_lane << "          Op::fold(acc[l], t" << value << ", (kiln::i64)j);\n"
       << "        }\n      } else {\n"
       << "        for (int l = 0; l < " << V << " && o + l < n; ++l) {\n"
       << shifted.str() << "          const I i = (o + l) * r + j;\n"
       << lane_program(c, "i", false) << "          Op::fold(acc[l], t" << value
       << ", (kiln::i64)j);\n        }\n      }\n    }\n";
  }
  os << "  }\n  kiln::finish_columns<Op, " << V
     << ">(acc, partials, done, out0, (kiln::i64)o, (kiln::i64)n, (kiln::i64)r);\n}\n";
  c.incremental = false;
  return os.str();
}

// Columns take V outputs per thread (16-byte loads along them) when the kept axes collapse to
// one that every input in memory walks contiguously (or not at all), each row of them starts
// aligned for V (reduced strides multiples of V), and nothing is an iota.
int column_vec(const Context& c) {
  const auto& sp = c.k.space;
  if (sp.reduced != 1 || sp.shape.size() != 2) return 1;
  int widest = 1;
  for (size_t a = 0; a < c.g.accesses.size(); ++a) {
    if (c.g.accesses[a].buffer < 0) return 1;
    if (c.k.access_kinds[a] == AccessKind::Constant) continue;
    if (sp.strides[a][0] != 1) return 1;
    widest = std::max(widest, itemsize(c.g.load_dtype(static_cast<int>(a))));
  }
  // At most 4: kiln::finish_columns keeps 256 V accumulators and 256 more in shared memory,
  // an argmax's 24 bytes each (V = 8 needed 49 KB of the 48 KB a block may have).
  int v = std::clamp(16 / widest, 1, 4);
  for (size_t a = 0; a < c.g.accesses.size(); ++a)
    if (c.k.access_kinds[a] != AccessKind::Constant && sp.strides[a][1] % v != 0) return 1;
  return v;
}

// Lanes that share a short row (RowFused, ReduceRows): about kPerLane values each, from 4 to a
// warp, so a warp holds several short rows and no lane idles. rowsum of 1000000x33 float32 ran
// 0.136 ms with a warp per row (24% of the roof): a lane's one or two loads left too few in
// flight.
int lanes_per_row(int64_t row) {
  constexpr int64_t kPerLane = 8;
  int tpr = 4;
  while (tpr < 32 && tpr * kPerLane < row) tpr *= 2;
  return tpr;
}

// ReduceRows: a block per row from kBlockRow values (16-byte loads, merged through shared
// memory), a warp per row below, and a few lanes per row for short rows (lanes_per_row).
// Measured on the H200 (gpu_bench layout rowsum, float32, ms for 32 / 128 / 256 threads a row,
// one run through a knob since removed):
// 16384x4096 0.0674 / 0.0672 / 0.0668, 4096x16384 0.0708 / 0.0669 / 0.0656, 132x1000000
// 0.1332 / 0.1319 / 0.1296, 1000x100000 0.1059 / 0.1031 / 0.1036, 4096x4097 0.0231 / 0.0209 /
// 0.0219; but 65536x2048 0.1263 / 0.1272 / 0.1328 and 100000x2048 0.1912 / 0.1920 / 0.1995.
int reduce_row_threads(int64_t row) {
  constexpr int64_t kBlockRow = 4096;
  return row >= kBlockRow ? kBlock : lanes_per_row(row);
}

// RowFused: the threads per row (row_threads) and the dense inputs whose rows a block stages in
// shared memory. Short rows take a few lanes each, about kPerLane values per lane, so a warp
// holds several rows and no lane idles; rows past kWarpRow values take the whole block. Inputs
// are staged while the rows the block takes at once fit in the 48 KB a block may have without
// opting in; the rest are read where they lie (from L1 and L2 on the later passes). Rows whose
// dense inputs do not fit in 48 KB together are long rows: a block of kLongBlock threads per
// row stages every dense input, as much of each row as the device's shared memory holds
// (softmax over 50257 values: 201 KB of the H200's 227), and reads the rest in place.
void choose_row_staging(Context& c) {
  constexpr int64_t kWarpRow = 1024, kStageBytes = 48 * 1024;
  constexpr int kLongBlock = 1024;
  c.k.row_threads = c.k.row <= kWarpRow ? lanes_per_row(c.k.row) : kBlock;
  c.row_staged.assign(c.g.accesses.size(), false);
  std::vector<int> dense;
  int64_t row_bytes = 0;
  for (size_t a = 0; a < c.g.accesses.size(); ++a) {
    if (c.k.access_kinds[a] != AccessKind::Dense || c.g.accesses[a].buffer < 0) continue;
    dense.push_back(static_cast<int>(a));
    row_bytes += (c.k.row * itemsize(c.g.load_dtype(static_cast<int>(a))) + 15) / 16 * 16;
  }
  c.k.long_rows = c.k.row > kWarpRow && row_bytes > kStageBytes;
  if (c.k.long_rows) c.k.row_threads = c.k.block = kLongBlock;
  const int64_t budget = kStageBytes / (kBlock / std::min(kBlock, c.k.row_threads));
  int64_t bytes = 0;
  for (int a : dense) {
    int isz = itemsize(c.g.load_dtype(a));
    int64_t one = (c.k.row * isz + 15) / 16 * 16;
    if (!c.k.long_rows && bytes + one > budget) continue;
    c.row_staged[a] = true;
    bytes += one;
    c.k.staged_itemsizes.push_back(isz);
  }
}

// Short rows keep their staged values in registers when each lane's share of them is at most
// kRegisterBytes: P = ceil(row / (row_threads * V)) vectors of V values per input, vector k of a
// lane holding row positions (k * row_threads + lane) * V .. + V - 1. Every load of a row is
// then in flight at once, with no shared memory and no barrier between staging and the passes.
// Measured on the H200 (bench/shape_sweep.py, float32, ms, registers / shared memory):
// softmax 500000x32 0.041 / 0.086, 131072x128 0.043 / 0.054, 262144x33 0.035 / 0.043;
// layernorm 100000x64 0.018 / 0.027, 8192x2048 0.045 / 0.057 (2 vectors a lane). With 4 or
// more vectors a lane it lost: softmax 16384x4096 0.168 / 0.153, 32768x1024 0.114 / 0.093,
// 4096x8192 0.121 / 0.093; and with rows of 7 (one vector): 1000000x7 0.046 / 0.037.
void choose_row_registers(Context& c) {
  constexpr int64_t kRegisterBytes = 32, kMinRow = 32;
  if (c.k.long_rows || c.k.staged_itemsizes.empty() || c.k.row < kMinRow) return;
  for (size_t a = 0; a < c.g.accesses.size(); ++a)
    if (c.k.access_kinds[a] == AccessKind::Dense && c.g.accesses[a].buffer >= 0 && !c.row_staged[a])
      return;  // some dense input did not fit in shared memory: too many for registers too
  const int64_t per_vector = int64_t{c.k.row_threads} * c.k.vec;
  const int64_t p = (c.k.row + per_vector - 1) / per_vector;
  int64_t bytes = 0;
  for (int isz : c.k.staged_itemsizes) bytes += p * c.k.vec * isz;
  if (bytes > kRegisterBytes) return;
  c.k.row_registers = static_cast<int>(p);
  c.k.staged_itemsizes.clear();  // nothing in shared memory
}

// The folds of pass p at row position j (index i), and in the last pass the outputs' values.
std::string pass_body(Context& c, const plan::RowPasses& passes, int p) {
  std::ostringstream os;
  os << lane_program(c, "i", false, &passes.needed[p]);
  for (int f : passes.folds(p))
    os << "        Op" << f << "::fold(a" << f << ", t" << c.g.code[f].a << ", (kiln::i64)j);\n";
  return os.str();
}

// What pass q evaluates when `known` values need no computing: the closure of `roots` over
// operands, stopping at known values (which are still marked, as they are read).
std::vector<bool> closure(const FusedGroup& g, const std::vector<int>& roots,
                          const std::vector<bool>& known) {
  std::vector<bool> need(g.code.size(), false);
  std::vector<int> stack = roots;
  for (int i : roots) need[i] = true;
  while (!stack.empty()) {
    int i = stack.back();
    stack.pop_back();
    if (known[i]) continue;
    for (int v : plan::operands_of(g, g.code[i]))
      if (!need[v]) {
        need[v] = true;
        stack.push_back(v);
      }
  }
  return need;
}

// Context::row_cache: the operand of a reducing pass's last fold, when it is computed (not a
// load) and a later pass needs it, and a staged input of its dtype is read by no later pass
// once that value is known. Only for rows staged in shared memory (registers hold their rows
// already; long rows read part of theirs in place). Updates `passes.needed` to match.
void choose_row_cache(Context& c, plan::RowPasses& passes) {
  if (c.k.long_rows || c.k.row_registers) return;
  const FusedGroup& g = c.g;
  for (int p = passes.reducing - 1; p >= 0; --p) {
    auto folds = passes.folds(p);
    if (folds.empty()) continue;
    const int v = g.code[folds.back()].a;
    const InstrKind kind = g.code[v].kind;
    if (kind == InstrKind::Load || kind == InstrKind::Param || kind == InstrKind::Reduce) continue;
    std::vector<std::vector<bool>> later;
    std::vector<bool> known(g.code.size(), false);
    known[v] = true;
    for (int q = p + 1; q <= passes.reducing; ++q) {
      std::vector<int> roots;
      for (int f : passes.folds(q)) roots.push_back(g.code[f].a);
      if (q == passes.reducing) {  // the last pass: outputs, and range checks (no value)
        for (const auto& o : g.outputs) roots.push_back(o.instr);
        for (size_t i = 0; i < g.code.size(); ++i)
          if (g.code[i].kind == InstrKind::Check) roots.push_back(static_cast<int>(i));
      }
      for (size_t i = 0; i < g.code.size(); ++i)
        known[i] = known[i] || (g.code[i].kind == InstrKind::Reduce && passes.pass[i] < q);
      later.push_back(closure(g, roots, known));
    }
    bool used_later = false;
    std::vector<bool> read_later(g.accesses.size(), false);
    for (const auto& need : later) {
      used_later = used_later || need[v];
      for (size_t i = 0; i < g.code.size(); ++i)
        if (need[i] && g.code[i].kind == InstrKind::Load) read_later[g.code[i].access()] = true;
    }
    if (!used_later) continue;
    for (size_t a = 0; a < g.accesses.size(); ++a) {
      if (!c.row_staged[a] || read_later[a] || g.load_dtype(static_cast<int>(a)) != g.code[v].dtype)
        continue;
      c.row_cache = {v, static_cast<int>(a), p};
      c.k.row_kept = true;
      for (int q = p + 1; q <= passes.reducing; ++q) passes.needed[q] = later[q - p - 1];
      return;
    }
  }
}

// The staged accesses pass p reads from shared memory: its loads, and the kept value
// (Context::row_cache) once a pass before stored it.
std::vector<int> shared_reads(const Context& c, const plan::RowPasses& passes, int p) {
  std::vector<bool> reads(c.g.accesses.size(), false);
  for (size_t i = 0; i < c.g.code.size(); ++i) {
    if (!passes.needed[p][i]) continue;
    if (static_cast<int>(i) == c.row_cache.instr && p > c.row_cache.pass)
      reads[c.row_cache.access] = true;
    else if (c.g.code[i].kind == InstrKind::Load && c.row_staged[c.g.code[i].access()])
      reads[c.g.code[i].access()] = true;
  }
  std::vector<int> out;
  for (size_t a = 0; a < reads.size(); ++a)
    if (reads[a]) out.push_back(static_cast<int>(a));
  return out;
}

// Pass p over a row staged in shared memory (or read in place), one position at a time: the
// row's lanes take every row_threads-th position; the last pass writes each output where it
// computes it, the caching pass stores the kept value over the position it read.
std::string scalar_shared_pass(Context& c, const plan::RowPasses& passes, int p) {
  std::ostringstream os;
  os << "      for (I j = lane; j < end; j += " << c.k.row_threads << ") {\n"
     << "        const I i = o * r + j;\n"
     << pass_body(c, passes, p);
  if (p == passes.reducing)
    for (size_t o = 0; o < c.g.outputs.size(); ++o)
      os << "        out" << o << "[i] = t" << c.g.outputs[o].instr << ";\n";
  if (p == c.row_cache.pass)
    os << "        sm" << c.row_cache.access << "[q * r + j] = t" << c.row_cache.instr << ";\n";
  return os.str() + "      }\n";
}

// The same pass over rows whose length is a multiple of V (and `vec` set): each lane takes V
// neighbouring positions per step, read from shared memory 16 bytes at a time (one lane's V
// scalars a step apart would hit the same banks) and written to the output 16 bytes at a time.
std::string vector_shared_pass(Context& c, const plan::RowPasses& passes, int p) {
  std::ostringstream os;
  const int V = c.k.vec;
  const bool last = p == passes.reducing, caching = p == c.row_cache.pass;
  auto vec_of = [&](DType t) {
    return std::string("kiln::vec<") + cuda_type(t) + ", " + num(V) + ">";
  };
  os << "      for (I j0 = lane * " << V << "; j0 < end; j0 += " << c.k.row_threads * V << ") {\n";
  for (int a : shared_reads(c, passes, p))
    os << "        const " << vec_of(c.g.load_dtype(a)) << " sv" << a << " = kiln::load<" << V
       << ">(sm" << a << " + q * r + j0);\n";
  for (size_t o = 0; last && o < c.g.outputs.size(); ++o)
    os << "        " << vec_of(c.g.code[c.g.outputs[o].instr].dtype) << " w" << o << ";\n";
  if (caching) os << "        " << vec_of(c.g.code[c.row_cache.instr].dtype) << " kw;\n";
  os << "#pragma unroll\n      for (int l = 0; l < " << V << "; ++l) {\n"
     << "        const I j = j0 + l, i = o * r + j;\n"
     << pass_body(c, passes, p);
  for (size_t o = 0; last && o < c.g.outputs.size(); ++o)
    os << "        w" << o << "[l] = t" << c.g.outputs[o].instr << ";\n";
  if (caching) os << "        kw[l] = t" << c.row_cache.instr << ";\n";
  os << "      }\n";
  for (size_t o = 0; last && o < c.g.outputs.size(); ++o)
    os << "        kiln::store<" << V << ">(out" << o << " + o * r + j0, w" << o << ");\n";
  if (caching)
    os << "        kiln::store<" << V << ">(sm" << c.row_cache.access << " + q * r + j0, kw);\n";
  return os.str() + "      }\n";
}

// Pass p over rows staged in shared memory: 16-byte steps where every row is aligned for
// them, one position at a time otherwise. Every pass takes the same branch, so each position
// stays with one lane from pass to pass (the kept value needs no barrier).
std::string shared_pass(Context& c, const plan::RowPasses& passes, int p) {
  c.row_pass = p;
  if (c.k.vec == 1 || c.k.long_rows) return scalar_shared_pass(c, passes, p);
  std::string out = "      if (vec && r % " + num(c.k.vec) + " == 0) {\n";
  c.shared_vectors = true;
  out += vector_shared_pass(c, passes, p);
  c.shared_vectors = false;
  return out + "      } else {\n" + scalar_shared_pass(c, passes, p) + "      }\n";
}

// Pass p over a row held in registers (choose_row_registers), position by position of each
// lane's vectors; the last pass gathers each output's V values and stores them 16 bytes at a
// time where the row is aligned and whole.
std::string register_pass(Context& c, const plan::RowPasses& passes, int p) {
  std::ostringstream os;
  const int P = c.k.row_registers, V = c.k.vec, tpr = c.k.row_threads;
  const bool last = p == passes.reducing;
  os << "#pragma unroll\n      for (int k = 0; k < " << P << "; ++k) {\n"
     << "        const I j0 = ((I)k * " << tpr << " + lane) * " << V << ";\n";
  for (size_t o = 0; last && o < c.g.outputs.size(); ++o)
    os << "        kiln::vec<" << cuda_type(c.g.code[c.g.outputs[o].instr].dtype) << ", " << V
       << "> w" << o << ";\n";
  os << "#pragma unroll\n      for (int l = 0; l < " << V << "; ++l) {\n"
     << "        const I j = j0 + l, i = o * r + j;\n"
     << "        if (j >= end) continue;\n"
     << pass_body(c, passes, p);
  for (size_t o = 0; last && o < c.g.outputs.size(); ++o)
    os << "        w" << o << "[l] = t" << c.g.outputs[o].instr << ";\n";
  os << "      }\n";
  if (last) {
    os << "        if (vec && r % " << V << " == 0 && j0 + " << V << " <= end) {\n";
    for (size_t o = 0; o < c.g.outputs.size(); ++o)
      os << "          kiln::store<" << V << ">(out" << o << " + o * r + j0, w" << o << ");\n";
    os << "        } else {\n"
       << "          for (int l = 0; l < " << V << " && j0 + l < end; ++l) {\n";
    for (size_t o = 0; o < c.g.outputs.size(); ++o)
      os << "            out" << o << "[o * r + j0 + l] = w" << o << "[l];\n";
    os << "          }\n        }\n";
  }
  return os.str() + "      }\n";
}

// A block stages rows o0 .. o0 + rpb - 1 of its dense inputs in shared memory (16-byte loads),
// then each row's threads (row_threads of them) make the reducing passes of plan::row_passes
// over it, each folding its Reduce instructions' operands and merging them across the row's
// threads (kiln::group_merge), and last the pass that computes and writes the outputs.
std::string row_fused_kernel(Context& c) {
  std::ostringstream os;
  plan::RowPasses passes = plan::row_passes(c.g);
  choose_row_cache(c, passes);
  const int tpr = c.k.row_threads, block = c.k.block;
  // Long rows stage the first sr values of the one row a block takes, from the 16-byte
  // boundary before the row (`shift` values earlier, so odd lengths load whole vectors too);
  // the others stage all of their rpb rows.
  const std::string span = c.k.long_rows ? "(sr + 16)" : "rpb * r";
  c.incremental = c.k.space.reduced == 1;
  c.pos = "j";
  os << kernel_head(c, block)
     << (c.k.row_registers ? ""
                           : "  extern __shared__ __align__(16) unsigned char smem[];\n"
                             "  unsigned char* at = smem;\n");
  for (size_t a = 0; a < c.row_staged.size(); ++a) {
    if (!c.row_staged[a] || c.k.row_registers) continue;
    std::string t = cuda_type(c.g.load_dtype(static_cast<int>(a)));
    os << "  " << t << "* sm" << a << " = (" << t << "*)at;\n"
       << "  at += ((size_t)" << span << " * sizeof(" << t << ") + 15) / 16 * 16;\n";
  }
  const int P = c.k.row_registers, V = c.k.vec;
  os << "  const int lane = threadIdx.x % " << tpr << ";\n"
     << "  for (I o0 = (I)blockIdx.x * rpb; o0 < n; o0 += (I)gridDim.x * rpb) {\n"
     << "    const I rows = n - o0 < rpb ? n - o0 : rpb;\n";
  if (!P) os << "    __syncthreads();  // the rows before are done with the staging buffers\n";
  if (c.k.long_rows) os << "    const I shift = vec ? (I)((o0 * r) % " << c.k.vec << ") : 0;\n";
  for (size_t a = 0; a < c.row_staged.size(); ++a)
    if (c.k.row_registers)
      break;  // each row's lanes load it below
    else if (c.row_staged[a] && c.k.long_rows)
      os << "    kiln::stage<" << c.k.vec << ", " << block << ", true>(sm" << a << ", in" << a
         << " + o0 * r - shift, sr ? sr + shift : 0, vec);\n";
    else if (c.row_staged[a])
      os << "    kiln::stage<" << c.k.vec << ", " << block << ">(sm" << a << ", in" << a
         << " + o0 * r, rows * r, vec && r % " << c.k.vec << " == 0);\n";
  if (!P) os << "    __syncthreads();\n";
  os  // rpb is a multiple of the rows a block takes at once, so the lanes of a warp run this
      // loop alike (its merges shuffle between them); rows past the last hold no values.
      << "    for (I q = threadIdx.x / " << tpr << "; q < rpb; q += " << block / tpr << ") {\n"
      << "      const I o = o0 + q;\n"
      << "      const I end = q < rows ? r : 0;  // no values in rows past the last\n"
      << (c.incremental ? strided_bases(c, "o * r", "      ") : "");
  for (size_t a = 0; P && a < c.row_staged.size(); ++a)
    if (c.row_staged[a])
      os << "      kiln::vec<" << cuda_type(c.g.load_dtype(static_cast<int>(a))) << ", " << V
         << "> rg" << a << "[" << P << "];\n"
         << "      kiln::load_row<" << P << ", " << V << ", " << tpr << ">(rg" << a << ", in" << a
         << " + o * r, end, lane, vec && r % " << V << " == 0);\n";
  for (int p = 0; p <= passes.reducing; ++p) {
    auto folds = passes.folds(p);
    for (int f : folds) os << "      Op" << f << "::acc a" << f << " = Op" << f << "::init();\n";
    os << (P ? register_pass(c, passes, p) : shared_pass(c, passes, p));
    for (int f : folds)
      os << "      const " << cuda_type(c.g.code[f].dtype) << " red" << f << " = Op" << f
         << "::finish(kiln::group_merge<Op" << f << ", " << tpr << ">(a" << f
         << "), (kiln::i64)r);\n";
  }
  os << "    }\n  }\n}\n";
  c.incremental = false;
  return os.str();
}

// ColumnFused: every access that varies along the columns is staged, tile by tile (r rows of
// 32 columns), while the tiles fit in what a cluster of blocks can hold (kStageBytes); the
// planner (row_reducible) keeps a column short enough for the first. The rest are read where
// they lie, from L1 and L2 after the first pass. How many rows of each block's slice are
// staged is the launch's (launch.cpp: column_fused), which knows the device's shared memory
// and whether it has clusters; rows past that are read in place too.
// Tiles of up to kBlockStage (a block's, beside its merges' static arrays, without opting in:
// 48 KB of tiles made launches fail, GPU fuzz seeds 5695, 7146, 7651) keep the one-block
// kernel; taller ones take the cluster kernel (tall_columns), which splits the rows.
void choose_column_staging(Context& c) {
  constexpr int64_t kStageBytes = 512 * 1024;  // 8 blocks of 64 KB (launch.cpp)
  constexpr int64_t kBlockStage = 32 * 1024;
  c.row_staged.assign(c.g.accesses.size(), false);
  int64_t bytes = 0;
  for (size_t a = 0; a < c.g.accesses.size(); ++a) {
    if (c.k.access_kinds[a] == AccessKind::Constant || c.g.accesses[a].buffer < 0) continue;
    const int isz = itemsize(c.g.load_dtype(static_cast<int>(a)));
    const int64_t tile = (c.k.row * 32 * isz + 15) / 16 * 16;
    if (bytes + tile > kStageBytes) continue;
    c.row_staged[a] = true;
    bytes += tile;
    c.k.staged_itemsizes.push_back(isz);
  }
  c.k.tall_columns = bytes > kBlockStage;
}

// Thread (x, y) of a 32 x 8 block takes column o = o0 + x of a tile of 32 and its rows
// j = y, y + 8, ...: a warp reads and writes 32 neighbouring columns of a row, so both
// coalesce although each column is folded. The tile's staged inputs go to shared memory; each
// reducing pass folds its Reduce instructions' operands down the column, and the 8 rows of
// threads merge in a fixed order (kiln::column_merge); the last pass writes the outputs at
// their own strides (the layout's last row), since the iteration runs column by column.
std::string column_fused_kernel(Context& c) {
  std::ostringstream os;
  plan::RowPasses passes = plan::row_passes(c.g);
  const std::string R = num(c.k.space.shape.size()), last = num(c.k.space.shape.size() - 1);
  const std::string outs = num(c.k.space.strides.size() - 1);
  c.incremental = c.k.space.reduced == 1;
  c.pos = "j";
  os << kernel_head(c, kBlock) << "  extern __shared__ __align__(16) unsigned char smem[];\n"
     << "  unsigned char* at = smem;\n";
  const bool tall = c.k.tall_columns;
  for (size_t a = 0; a < c.row_staged.size(); ++a) {
    if (!c.row_staged[a]) continue;
    std::string t = cuda_type(c.g.load_dtype(static_cast<int>(a)));
    os << "  " << t << "* sm" << a << " = (" << t << "*)at;\n"
       << "  at += ((size_t)" << (tall ? "sr" : "r") << " * 32 * sizeof(" << t
       << ") + 15) / 16 * 16;\n";
  }
  // Tall tiles: the blocks of a cluster share one, block q taking rows lo .. hi - 1.
  if (tall)
    os << "  const unsigned blocks = kiln::cluster_blocks();\n"
       << "  const I span = (r + blocks - 1) / blocks;\n"
       << "  const I lo = kiln::cluster_rank() * span < r ? kiln::cluster_rank() * span : r;\n"
       << "  const I hi = r - lo < span ? r : lo + span;\n"
       << "  for (I o0 = (I)(blockIdx.x / blocks) * 32; o0 < n; o0 += (I)(gridDim.x / blocks) * "
          "32) {\n";
  else
    os << "  for (I o0 = (I)blockIdx.x * 32; o0 < n; o0 += (I)gridDim.x * 32) {\n";
  const std::string first_row = tall ? "lo + threadIdx.y" : "threadIdx.y";
  os << "    const I o = o0 + threadIdx.x;\n"
     << "    const I end = o < n ? " << (tall ? "hi : lo" : "r : 0")
     << ";  // no values in columns past the last\n"
     << "    const I first = (o < n ? o : 0) * r;  // a column's first index, in range\n"
     << (c.incremental ? strided_bases(c, "first", "    ") : "");
  std::string at_out = "kiln::offset_of<" + R + ">(i, L.shape, L.strides[" + outs + "])";
  if (c.incremental) {
    os << "    const I bo = kiln::offset_of<" << R << ">(first, L.shape, L.strides[" << outs
       << "]);\n";
    at_out = "bo + j * (I)L.strides[" + outs + "][" + last + "]";
  }
  os << "    __syncthreads();  // the tile before is done with the staging buffers\n"
     // Tall: a slice's loads in flight together (a cluster block has 768 threads per SM).
     << (tall ? "    const I staged_end = end - lo < sr ? end : lo + sr;\n#pragma unroll 16\n" : "")
     << "    for (I j = " << first_row << "; j < " << (tall ? "staged_end" : "end")
     << "; j += 8) {\n"
     << "      const I i = o * r + j;\n";
  for (size_t a = 0; a < c.row_staged.size(); ++a)
    if (c.row_staged[a])
      os << "      sm" << a << "[" << (tall ? "(j - lo)" : "j") << " * 32 + threadIdx.x] = in" << a
         << "[" << element_index(c, static_cast<int>(a), "i") << "];\n";
  os << "    }\n    __syncthreads();\n";
  for (int p = 0; p <= passes.reducing; ++p) {
    auto folds = passes.folds(p);
    for (int f : folds) os << "    Op" << f << "::acc a" << f << " = Op" << f << "::init();\n";
    os << "    for (I j = " << first_row << "; j < end; j += 8) {\n"
       << "      const I i = o * r + j;\n"
       << pass_body(c, passes, p);
    if (p == passes.reducing)
      for (size_t o = 0; o < c.g.outputs.size(); ++o)
        os << "      out" << o << "[" << at_out << "] = t" << c.g.outputs[o].instr << ";\n";
    os << "    }\n";
    for (int f : folds)
      os << "    const " << cuda_type(c.g.code[f].dtype) << " red" << f << " = Op" << f
         << "::finish(kiln::" << (tall ? "cluster_column_merge" : "column_merge") << "<Op" << f
         << ">(a" << f << "), (kiln::i64)r);\n";
  }
  os << "  }\n}\n";
  c.incremental = false;
  return os.str();
}

// A short stable hash of the text, for the kernel name (the cache key is separate and full).
std::string short_hash(const std::string& s) {
  uint32_t h = 2166136261u;
  for (unsigned char ch : s) h = (h ^ ch) * 16777619u;
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", h);
  return buf;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
}

}  // namespace

KernelSource generate(const FusedGroup& g) {
  KernelSource k;
  k.space = plan::iteration_space(g);
  Context c{g, k};
  classify(c);
  k.form = choose_form(c);
  if (g.scan) {
    k.scan = *g.scan;
    k.scan_itemsize = itemsize(g.out_dtype(0));
    k.block = kScanBlock;
  }
  if (k.form == Form::ReduceNarrowColumns)  // every input is read at its stream position
    for (auto& kind : k.access_kinds)
      if (kind == AccessKind::Strided) kind = AccessKind::Dense;
  if (k.form == Form::Tiled) k.tile_axis = transposed_axis(c);
  if (k.form == Form::Tiled) k.tile = choose_tile(c);
  if (k.form == Form::RowFused) choose_row_staging(c);
  if (k.form == Form::ReduceRows) k.row_threads = reduce_row_threads(k.row);
  k.vec = choose_vec(c);
  if (k.form == Form::RowFused) choose_row_registers(c);
  if (k.form == Form::ColumnFused) choose_column_staging(c);
  k.index64 = needs_index64(c);
  for (const Instr& ins : g.code) k.gathers |= ins.kind == InstrKind::Gather;
  if (k.form == Form::ColumnFused) k.space.strides.push_back(k.space.out_strides);
  std::ostringstream os;
  // A backslash ending the comment would splice the next line into it.
  std::string comment = summarize(g);
  std::replace(comment.begin(), comment.end(), '\\', '/');
  os << "// kiln: " << comment << "\n"
     << "#include \"kiln/" << (g.reduction || !g.row_axes.empty() ? "reduction" : "elementwise")
     << ".cuh\"\n";
  if (g.scan) os << "#include \"kiln/scan.cuh\"\n";
  if (!g.user_calls.empty()) os << "#include \"kiln/user.cuh\"\n";
  os << "typedef " << (k.index64 ? "long long" : "int") << " I;\n";
  if (g.reduction) os << "typedef " << op_type(g.reduction->op, g.reduction->acc_dtype) << " Op;\n";
  for (size_t i = 0; i < g.code.size(); ++i)
    if (g.code[i].kind == InstrKind::Reduce)
      os << "typedef " << op_type(g.code[i].reduce_op(), g.code[i].dtype) << " Op" << i << ";\n";
  os << "\n";
  if (k.form == Form::Elementwise)
    os << elementwise_kernel(c);
  else if (k.form == Form::Tiled)
    os << tiled_kernel(c);
  else if (k.form == Form::ReduceFull)
    os << reduce_full_kernel(c);
  else if (k.form == Form::ReduceColumns)
    os << reduce_columns_kernel(c);
  else if (k.form == Form::ReduceNarrowColumns)
    os << reduce_narrow_columns_kernel(c);
  else if (k.form == Form::NarrowRows)
    os << narrow_rows_kernel(c);
  else if (k.form == Form::ReduceRows)
    os << reduce_rows_kernel(c);
  else if (k.form == Form::RowFused)
    os << row_fused_kernel(c);
  else if (k.form == Form::ColumnFused)
    os << column_fused_kernel(c);
  else if (k.form == Form::Scan)
    os << scan_kernel(c);
  else
    os << reduce_per_thread_kernel(c);
  k.source = os.str();
  k.name = g.name + "_" + short_hash(k.source);
  replace_all(k.source, "KILN_KERNEL", k.name);
  k.summary = summarize(g);
  k.dtypes = dtype_signature(g);
  return k;
}

}  // namespace kiln::codegen
