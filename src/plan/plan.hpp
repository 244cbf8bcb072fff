// The Plan: what the planner hands to a backend. Both executors (host and CUDA) read this one
// IR, which is what makes host-vs-GPU and eager-vs-fused comparisons meaningful.
#pragma once
#include <atomic>
#include <cassert>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "graph/node.hpp"
#include "graph/shape.hpp"
#include "graph/user_code.hpp"

namespace kiln::plan {

using graph::BinaryOp;
using graph::ReduceOp;
using graph::Strides;
using graph::UnaryOp;

// ---- fused groups -----------------------------------------------------------------------
// An instruction of a group's SSA program; operands are earlier instruction indices.
// Reduce (only in a group with row_axes): operand `a` folded over its row, the same value at
// every position of that row, as max(x, -1, keepdims) broadcast back in softmax.
// Gather: the memory of an access at an element index the program computed (a Remap's or
// take's index arithmetic), rather than at the access's strides.
enum class InstrKind : uint8_t {
  Load,
  Param,
  Iota,
  Unary,
  Binary,
  Where,
  Cast,
  User,
  Reduce,
  Gather,
  Check
};
// Made by the named constructors and read through the named accessors, which say what the
// shared fields mean for each kind (the accessors assert the kind):
//   Load   access()                      the group's input through accesses[access()]
//   Param  param_index()                 the scalar FusedGroup::params[param_index()]
//   Iota   start(), step(), access()     start + index * step; start, step: Param instructions
//   Unary  unary_op() of a               Binary  binary_op() of a, b
//   Where  a ? b : c                     Cast    a converted to dtype
//   User   user_call()                   FusedGroup::user_calls[user_call()] (its operands)
//   Reduce reduce_op() of a, along the row
//   Gather access()'s buffer at element offset + a (a, an int64 instruction, is in range:
//          lowering clamps it, so no read leaves the buffer)
//   Check  check_index(): where a (bool) holds, the int64 index b is out of range: recorded
//          in FusedGroup::checks[check_index()]'s words; no value (a statement)
struct Instr {
  InstrKind kind;
  uint8_t op = 0;              // UnaryOp / BinaryOp / ReduceOp
  DType dtype;                 // result dtype
  int a = -1, b = -1, c = -1;  // operands (Iota: start, step)
  int arg = -1;                // Load / Iota / Gather: access; Param: scalar; User: call
  // Index arithmetic (a Remap's map, a gather's address), not a value of the expression:
  // kernel names and summaries leave it out. The generated source does not depend on it.
  bool addressing = false;
  // A Cast between a float16/bfloat16's storage and its float32 register (src/plan/lower.cpp),
  // not a cast of the program: kernel names leave it out.
  bool storage = false;

  static Instr load(DType t, int access) { return {InstrKind::Load, 0, t, -1, -1, -1, access}; }
  static Instr param(DType t, int index) { return {InstrKind::Param, 0, t, -1, -1, -1, index}; }
  static Instr iota(DType t, int start, int step, int access) {
    return {InstrKind::Iota, 0, t, start, step, -1, access};
  }
  static Instr unary(UnaryOp op, DType t, int x) {
    return {InstrKind::Unary, static_cast<uint8_t>(op), t, x};
  }
  static Instr binary(BinaryOp op, DType t, int x, int y) {
    return {InstrKind::Binary, static_cast<uint8_t>(op), t, x, y};
  }
  static Instr where(DType t, int cond, int x, int y) {
    return {InstrKind::Where, 0, t, cond, x, y};
  }
  static Instr cast(DType t, int x) { return {InstrKind::Cast, 0, t, x}; }
  static Instr user(DType t, int call) { return {InstrKind::User, 0, t, -1, -1, -1, call}; }
  static Instr reduce(ReduceOp op, DType t, int x) {
    return {InstrKind::Reduce, static_cast<uint8_t>(op), t, x};
  }
  static Instr gather(DType t, int access, int index) {
    return {InstrKind::Gather, 0, t, index, -1, -1, access};
  }
  static Instr check(int out_of_range, int index, int check) {
    return {InstrKind::Check, 0, DType::Bool, out_of_range, index, -1, check};
  }

  UnaryOp unary_op() const {
    assert(kind == InstrKind::Unary);
    return static_cast<UnaryOp>(op);
  }
  BinaryOp binary_op() const {
    assert(kind == InstrKind::Binary);
    return static_cast<BinaryOp>(op);
  }
  ReduceOp reduce_op() const {
    assert(kind == InstrKind::Reduce);
    return static_cast<ReduceOp>(op);
  }
  int access() const {
    assert(kind == InstrKind::Load || kind == InstrKind::Iota || kind == InstrKind::Gather);
    return arg;
  }
  int param_index() const {
    assert(kind == InstrKind::Param);
    return arg;
  }
  int user_call() const {
    assert(kind == InstrKind::User);
    return arg;
  }
  int check_index() const {
    assert(kind == InstrKind::Check);
    return arg;
  }
  int start() const {
    assert(kind == InstrKind::Iota);
    return a;
  }
  int step() const {
    assert(kind == InstrKind::Iota);
    return b;
  }
};

// A user expression (kiln::elementwise) in a group. It takes any number of operands, more
// than Instr's a, b, c, so they live here; the text itself stays in the graph's registry.
struct UserCall {
  const graph::UserCode* code;  // expression and input names (graph::user_code)
  std::vector<int> operands;    // the instruction bound to each name, in order
};

// How a group reads an input at its iteration coordinates: element offset + per-axis strides
// over the group's iteration shape (0 for broadcast axes). Composed from every view between
// the leaf and the group, so views cost nothing.
struct Access {
  int buffer = -1;  // plan buffer id; -1 for Iota, which has no memory
  int64_t offset = 0;
  Strides strides;
};

struct Reduction {
  ReduceOp op;
  std::vector<int> axes;  // of the iteration shape, sorted
  DType acc_dtype;        // accumulator: the output dtype, except ArgMax/ArgMin (input's)
                          // and the halves' (float32)
  DType result;           // the output's dtype
};

// What a group whose output is scanned folds (FusedGroup::scan): the inclusive scan by `op`
// of the group's value, seen densely as (outer, n, inner) around the scanned axis.
struct ScanFold {
  graph::ScanOp op;
  int64_t outer, n, inner;
};

struct FusedGroup {
  std::string name;  // readable kernel name, e.g. k_sin_mul_add_f32
  Shape shape;       // iteration shape (a reduction's input shape)
  std::vector<Instr> code;
  std::vector<Access> accesses;
  std::vector<Scalar> params;        // values of Param instructions (typed by their instruction)
  std::vector<UserCall> user_calls;  // operands and code of User instructions
  struct Output {
    int instr;   // which value
    int buffer;  // written densely in the group's output shape
  };
  std::vector<Output> outputs;
  std::optional<Reduction> reduction;  // when set, outputs[0] is the reduced value
  // The axes of `shape` that the group's Reduce instructions fold (empty when it has none):
  // the trailing ones (rows), or a set that keeps the last axis (columns). Such a group keeps
  // each row or column on chip while it reduces it and then computes its outputs from it,
  // written in the full shape: a reduction and its broadcast in one pass.
  std::vector<int> row_axes;
  // When set, the group's one output is not its value but that value's inclusive scan: an
  // elementwise producer computed as the scan loads it (planner.cpp: fold_scan_producers), so
  // the value never goes to memory. An elementwise group otherwise (no reduction, no row axes).
  std::optional<ScanFold> scan;
  // Range checks of take's indices (graph::IndexMode::Raise), one per Check instruction: the
  // kernel folds the indices it meets outside [-length, length) into two words of plan buffer
  // check_buffer (int64, 2 per check; kernels/scalar.cuh: below_word, above_word), which start
  // at zero (Backend::allocate_check_words); the plan runner reads them after the plan and
  // throws before any result is stored. The axis is the take's, for the message.
  struct IndexCheck {
    int64_t length;
    int axis;
  };
  std::vector<IndexCheck> checks;
  int check_buffer = -1;
  // Whether row_axes fold columns: the last axis kept, so neighbouring threads take
  // neighbouring columns (codegen's ColumnFused) and the outputs lie in another order than the
  // iteration (IterationSpace::out_strides).
  bool folds_columns() const;
  Shape out_shape() const;             // the shape outputs are written in
  DType out_dtype(size_t o) const;     // the dtype output o is written in
  DType load_dtype(int access) const;  // the dtype access `access` is read in
};

// ---- steps ---------------------------------------------------------------------------------
// Whatever a backend derives from a group once (generated source, loaded kernels). Copies of
// a cached plan share it, so a repeated expression skips code generation and kernel lookup.
struct BackendCache {
  std::shared_ptr<void> value;
};
struct KernelStep {
  FusedGroup group;
  std::shared_ptr<BackendCache> compiled = std::make_shared<BackendCache>();
};
struct FftStep {
  int in, out;
  graph::FftKind kind;
  std::vector<int> axes;
  std::vector<int64_t> lengths;  // logical transform length per axis (NumPy's n / s)
  bool inverse;
  double scale;  // applied to the output (the norm)
};
struct RandomStep {
  int out;
  graph::RandomDist dist;
  uint64_t seed, offset;
  Scalar a, b;  // randint: low, high; uniform: low, high; normal: mean, std
};
struct CopyStep {
  int src, dst;
};
// out = the inclusive scan of `in` along `axis`, seen as (outer, n, inner) around it.
struct ScanStep {
  int in, out;
  graph::ScanOp op;
  int64_t outer, n, inner;
};
// out = each of the `rows` rows of `n` values of `in` (dense, rows x n) sorted stably in
// NumPy's order (kernels/sort_keys.cuh): the values (out of in's dtype) or their positions
// along the row (int64). `dtype` is in's.
struct SortStep {
  int in, out;
  graph::SortOp op;
  DType dtype;
  int64_t rows, n;
};
// out = x with values[k] placed at flat position positions[k] by `op`, for every k in order.
// values[k] is element values_offset + k * values_stride of plan buffer `values`: a stride of 0
// gives every update the same value (a scalar, or one element broadcast: bincount's ones),
// which is then never written out once per update. With `indices` (graph::ScatterAttrs) the
// positions are indices into a 1-d x of n elements, a negative one counted from the end: the
// step folds those outside [-n, n) into the two words of plan buffer
// check_buffer (kernels/scalar.cuh: below_word, above_word; they start at zero) and leaves
// their updates out; the plan runner reads the words after the plan and throws.
struct ScatterStep {
  int x, positions, values, out;
  graph::ScatterOp op;
  int64_t values_offset = 0, values_stride = 1;
  bool indices = false;
  int check_buffer = -1;
};
// out = the rows of `values` (rows x width, C order) whose entry in `mask` (rows, bool) is true,
// in order (count of them); with no values (-1), the positions of the true entries (int64).
struct CompressStep {
  int mask, values, out;
  int64_t rows, width, count;
};
// A matmul operand: the matrices of plan buffer `buffer` read in place, element (batch..., i,
// j) at offset + the dot product of those coordinates with `strides` (in elements). Transposed
// and sliced views, and batch axes broadcast with stride 0, cost no copy; the planner writes
// any other view densely first (matrix_layout says which a BLAS can read).
struct MatmulOperand {
  int buffer;
  int64_t offset;
  Strides strides;  // over (batch..., rows, cols); 0 on a batch axis of length 1
};
// What follows the product inside the step: a bias (n values, the same for every row and
// batch entry) added to it, a relu (maximum(x, +0)), or both, bias first (cuBLASLt's epilogues).
enum class Epilogue : uint8_t { None, Bias, Relu, BiasRelu };
inline bool has_bias(Epilogue e) { return e == Epilogue::Bias || e == Epilogue::BiasRelu; }
// out (dense, batch... x m x n) = a (batch... x m x k) times b (batch... x k x n), all of one
// float or complex dtype (out's); float16 and bfloat16 accumulate in float32 and round once.
// tf32: a float32 product may round its inputs to TF32 (kiln::MatmulPrecision::Tf32).
// With an epilogue, out is that of the product: the bias is n dense values of out's dtype at
// element `bias_offset` of plan buffer `bias`. `unfused` is the same epilogue as the kernel the
// program would run after a plain product (out = max(out + bias, 0), in place): the host
// executor runs it after Eigen's product, so it rounds as the unfused program does, and the
// CUDA executor when cuBLASLt has no algorithm for the fused form.
struct MatmulStep {
  MatmulOperand a, b;
  int out;
  Shape batch;
  int64_t m, n, k;
  bool tf32;
  Epilogue epilogue = Epilogue::None;
  int bias = -1;
  int64_t bias_offset = 0;
  std::shared_ptr<KernelStep> unfused = nullptr;  // with an epilogue; shared by plan copies
};
// How a BLAS reads a rows x cols matrix whose element (i, j) is at i * row + j * col: row-major
// (col = 1) or column-major (row = 1), with a leading dimension `ld` (the other stride) no
// smaller than a row's (column's) length. Nothing for other strides (a broadcast row, a step
// along both axes, a negative stride).
struct MatrixLayout {
  bool col_major;
  int64_t ld;
};
std::optional<MatrixLayout> matrix_layout(int64_t rows, int64_t cols, int64_t row, int64_t col);
// Whether a BLAS reads operand `strides` of `shape` (batch..., rows, cols) in place: its matrix
// layout exists and its batch strides are not negative.
bool blas_readable(const Shape& shape, const Strides& strides);

// A collective over the mesh's `size` ranks (graph/collective.hpp): in[i] and out[i] are rank
// ranks[i]'s part and result (ranks: those this process holds), each on that rank's device.
// One step writes every rank's result: the graph's nodes of the ranks this plan evaluates
// (siblings: one node per rank, the same inputs) are among out; the others are `scratch`, freed
// after the step. The runner that moves the data (a mesh's communicator) is bound from the
// graph per evaluation (Bindings::collectives).
struct CollectiveStep {
  graph::CollectiveKind kind;
  graph::CollectiveReduction reduction;
  int size;
  std::vector<int> ranks, in, out, scratch;
};
struct FreeStep {
  int buffer;
};
using Step = std::variant<KernelStep, FftStep, RandomStep, CopyStep, ScatterStep, ScanStep,
                          CompressStep, MatmulStep, SortStep, CollectiveStep, FreeStep>;

struct PlanBuffer {
  DType dtype;
  Shape shape;
  Device device;
  graph::BufferRef external;  // set for leaves that are already evaluated
  // Range-check words (FusedGroup::check_buffer, ScatterStep::check_buffer): allocated by
  // Backend::allocate_check_words, zeroed and readable by the host without a copy.
  bool check_words = false;
};

// Where a plan's values come from, as ordinals into graph::Signature::values, so a cached plan
// can be bound to a new graph with the same structure: new buffers, scalars and random draws.
struct Bindings {
  struct Buffer {
    int buffer, value;
  };
  struct Param {
    int step, param, value;
  };
  struct Random {
    int step, value;
  };
  struct Collective {  // the value is a Collective node: its runner
    int step, value;
  };
  std::vector<Buffer> buffers;
  std::vector<Param> params;
  std::vector<Random> randoms;
  std::vector<Collective> collectives;
};

// A finished plan's sizes and devices, in the form its runs read them: each run of a cached plan
// would otherwise count every buffer's elements again and look each buffer's backend up.
struct RunIndex {
  std::vector<int64_t> buffer_bytes;  // per buffer: its elements times its dtype's size
  std::vector<Device> devices;        // the buffers' devices, each once, in buffer order
  std::vector<int> buffer_device;     // per buffer: its device's position in `devices`
  std::vector<int64_t> step_bytes;    // per step: the bytes it reads and writes
  std::vector<int> checked_steps;     // steps that check indices (their check_buffer is set)
};

struct Plan {
  std::vector<PlanBuffer> buffers;
  std::vector<Step> steps;
  std::vector<int> outputs;  // buffer per requested output, in request order (-1: a held
                             // value the plan does not write, see make_plan)
  Bindings bindings;         // filled when planned against a signature
  // Set once every kernel step was prepared on its backend (runtime/run_plan.cpp: compiled or
  // found, loaded, user code checked), which then holds for good: a cached plan's later runs
  // skip those lookups. Shared by copies, as KernelStep::compiled.
  std::shared_ptr<std::atomic<bool>> prepared = std::make_shared<std::atomic<bool>>(false);
  // What every run of the plan reads, worked out once when it is made (index_plan).
  RunIndex index;
};

// Fills p.index from p.buffers and p.steps (make_plan's last pass).
void index_plan(Plan& p);

// What explain() and KILN_DEBUG say of a matmul step: the library, its arithmetic and the
// operands, e.g. "matmul (cuBLASLt, FP32) float32 (8, 64, 32) @ (8, 32, 16)^T -> (8, 64, 16)"
// (^T: an operand read in place as a transpose).
// With an epilogue it ends in epilogue_str's words, e.g. "... -> (64, 16) + bias, relu".
std::string describe(const MatmulStep& s, const Plan& p);
std::string epilogue_str(Epilogue e);  // " + bias", " + relu", " + bias, relu" or nothing

// The bytes scatter step s moves: x read and out written, the positions, and the values read
// (one element where every update takes it).
int64_t moved_bytes(const ScatterStep& s, const Plan& p);

// What explain() and KILN_DEBUG say of a collective step, e.g. "all-reduce (sum) of float32
// (4, 8) over 3 ranks (host x 3): 85.333 B sent per rank".
std::string describe(const CollectiveStep& s, const Plan& p);

// Human-readable plan (used by KILN_DEBUG=2 and explain()).
std::string to_string(const Plan& p);

}  // namespace kiln::plan
