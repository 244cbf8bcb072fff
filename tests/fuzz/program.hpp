// A fuzz program: inputs plus a list of kiln calls, each reading earlier values by number.
// Plain data, so that it can be generated from a seed, rebuilt on any device and in any mode,
// shrunk by editing, and printed as C++.
#pragma once
#include <cstdint>
#include <kiln/kiln.hpp>
#include <string>
#include <vector>

#include "graph/ops.hpp"

namespace kiln::fuzz {

// How an input's values are made. Each kind has known facts (bounds, grid, specials) that
// decide which operations may follow it without legitimately differing between paths.
enum class DataKind : uint8_t {
  Small,     // integers in [-4, 4]
  Quarters,  // multiples of 1/4 in [-8, 8]
  Tiny,      // multiples of 1/4 in [-0.75, 0.75]
  General,   // uniform reals in [-3, 3] (not on any grid)
  Specials,  // quarters with NaN, +-Inf and -0 sprinkled in
  Wide,      // integers over the whole range of the dtype, extremes included
  Random,    // kiln::random::Generator(seed, device): randint or uniform, made on the device
  Arange,    // kiln::arange on the device, reshaped
  Steps,     // kiln::arange with a step that is not a power of 2 (start + i * step rounds)
  Linspace,  // kiln::linspace on the device, reshaped
  Full,      // kiln::full on the device
};
const char* kind_name(DataKind k);

struct InputSpec {
  DType dtype = DType::Float64;
  Shape shape;
  DataKind kind = DataKind::Small;
  uint64_t seed = 0;
};

enum class OpKind : uint8_t {
  Unary,
  Binary,
  Where,
  Clip,
  AsType,
  Transpose,
  Index,
  Reshape,
  BroadcastTo,
  Reduce,
  Fft,
  Scan,  // cumsum (fn 0) or cumprod (fn 1) along axes[0], or of the raveled value (no axes)
  // x.at(positions).set / add / min / max (ScatterFn) of args[1] (a scalar, or a value of x's
  // shape without its first axis): NumPy's x[i] = v and add / minimum / maximum.at.
  Scatter,
  // kiln::masked(x, mask): NumPy's x[mask], mask over x's first mask_rank axes true at the
  // flat positions i with i % period == phase. A selection whose size depends on data (kiln
  // evaluates the mask's count first), with a count the oracle derives from the shapes.
  Mask,
  Sort,  // sort (fn 0) or argsort (fn 1) along axes[0], or of the raveled value (no axes)
  // kiln::matmul(a, swapaxes(b, -1, -2)) (a @ b.T of matrices, batch-broadcast; for 1-d a and
  // b, the inner product matmul(a, b)): the transposed operand a view the BLAS reads in place.
  Matmul,
  // kiln::take(x, indices, axis, mode) (NumPy's take): the 1-d `positions` along axes[0], or of
  // the raveled x (no axes); fn is the kiln::TakeMode (Raise: indices in range, negatives too;
  // Wrap and Clip: any). A gather the consumer's kernel computes, with Raise's range check.
  Take,
  Eval,  // evaluates an intermediate value in the middle of the program
};
// "unary", "scatter", ...: the word explanations and coverage counts use for a kind.
const char* kind_name(OpKind k);
// The elementwise functions are the graph's own (graph::UnaryOp / BinaryOp are exactly the
// kiln calls the fuzzer makes), so a second list cannot drift from the first.
using UnaryFn = graph::UnaryOp;
using BinaryFn = graph::BinaryOp;
using ReduceFn = graph::ReduceOp;
// FftFn names the API's ten functions, not the graph's four FftKinds.
enum class FftFn : uint8_t { Fft, Ifft, Fft2, Ifft2, Fftn, Ifftn, Rfft, Irfft, Rfftn, Irfftn };
enum class ScatterFn : uint8_t { Set, Add, Min, Max };
inline constexpr int kScatterCount = 4;
// How many of each the generator draws from: every row of graph/op_table.hpp (and every
// reduction of graph/reduce_table.hpp), so that a new row
// is fuzzed without edits (a Math row's dtypes come from fuzz_dtypes.txt, which
// make_fuzz_fixtures.py writes from the table; its call, printing, reference and error bound
// from the row). A new row changes the program a recorded seed gives: each seed that once
// failed also has a direct test of what it found.
#define KILN_FUZZ_COUNT_ROW(...) +1
inline constexpr int kUnaryCount = 0 KILN_UNARY_OPS(KILN_FUZZ_COUNT_ROW);
inline constexpr int kBinaryCount = 0 KILN_BINARY_OPS(KILN_FUZZ_COUNT_ROW);
inline constexpr int kReduceCount = 0 KILN_REDUCE_OPS(KILN_FUZZ_COUNT_ROW);
#undef KILN_FUZZ_COUNT_ROW
inline constexpr int kFftCount = 10;
// Whether the generator draws a binary row: not integer division and shifts yet, which are
// discontinuous in their operands and have no reference or error bounds here;
// tests/test_elementwise.cpp checks them against NumPy (on the host and through NVRTC) and
// tests/test_gpu.cpp the GPU against the host.
inline bool fuzzed(BinaryFn fn) {
  return fn != BinaryFn::FloorDivide && fn != BinaryFn::Remainder && fn != BinaryFn::Fmod &&
         fn != BinaryFn::LeftShift && fn != BinaryFn::RightShift;
}

// An operand: an earlier value (value >= 0) or a C++ scalar (weak in NumPy's promotion).
struct Operand {
  int value = -1;
  Scalar scalar;
  bool is_scalar() const { return value < 0; }
};

struct Op {
  OpKind kind = OpKind::Unary;
  uint8_t fn = 0;  // UnaryFn, BinaryFn, ReduceFn, FftFn, ScatterFn the scan (0 cumsum, 1 cumprod)
                   // or the sort (0 sort, 1 argsort)
  std::vector<Operand> args;
  DType dtype = DType::Float64;  // AsType
  // Reshape and BroadcastTo: the target shape. Fft: the lengths n / s (when has_lengths).
  std::vector<int64_t> shape;
  bool has_lengths = false;
  // Transpose: the permutation (none: .T()). Reduce: the axes (argmax: at most one; none:
  // every axis, or the flattened array). Fft: the axes (when has_axes).
  std::vector<int> axes;
  bool has_axes = false;
  bool keepdims = false;
  std::vector<Index> index;        // Index
  uint8_t norm = 0;                // Fft: backward, ortho, forward
  std::vector<int64_t> positions;  // Scatter: along the first axis, repeats and negatives too;
                                   // Take: the indices
  int mask_rank = 1;               // Mask: the axes of x the mask covers
  int64_t period = 1, phase = 0;   // Mask: which of their flat positions it selects
};
// Mask: the axes of a value of shape x its mask covers (a 0-d x: none, and its one element is
// selected or not, as NumPy's x[True]), and the number of flat positions i < n with
// i % period == phase.
size_t mask_rank(const Op& op, const Shape& x);
int64_t mask_count(const Op& op, int64_t n);

// Values are numbered inputs first, then one per op.
struct Program {
  std::vector<InputSpec> inputs;
  std::vector<Op> ops;
  std::vector<int> outputs;
  int value_count() const { return static_cast<int>(inputs.size() + ops.size()); }
};

// The input's values on device d (the same numbers on every device).
Array make_input(const InputSpec& spec, Device d);
// Applies op to the values built so far (throws what kiln throws).
Array apply_op(const Op& op, const std::vector<Array>& values);
// The same, except that an arithmetic operator (+ - * /) of an array and a constant whose array
// nothing after it reads (`last_use`, the program's last read of it, and not an output) takes
// that array out of `values`: a temporary, as in a program's x * 2 + 1, which kiln may join to
// the operation with a constant that made it (graph::fuse_constant_step).
Array apply_op(const Op& op, std::vector<Array>& values, bool last_use);
// Whether op `op` of p is the last reader of every array it reads, none of them an output.
bool last_use(const Program& p, size_t op);
// Whether op is an arithmetic operator (+ - * /) of one array and one constant: the ops whose
// array apply_op takes out of the values at its last use.
bool takes_temporary(const Op& op);
// Every value of the program: inputs made on d, then each op applied in the current mode.
std::vector<Array> build(const Program& p, Device d);

// The program as C++ statements (values v0, v1, ...) ending in kiln::eval of the outputs.
std::string to_cpp(const Program& p);
std::string op_to_cpp(const Op& op);

}  // namespace kiln::fuzz
