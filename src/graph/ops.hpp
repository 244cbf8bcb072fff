// The operation vocabulary of the graph, shared by the planner and every backend.
#pragma once
#include <cstdint>

#include "graph/op_table.hpp"
#include "graph/reduce_table.hpp"
#include "kiln/dtype.hpp"

namespace kiln::graph {

enum class OpKind : uint8_t {
  // Leaves: no inputs that the planner looks through.
  Buffer,  // evaluated data
  Scalar,  // a 0-d constant; its value is a kernel parameter
  Iota,    // 1-d arange: value[i] = start + i * step (inputs: start and step Scalars)
  // Elementwise: operands have the node's shape (the builder inserts broadcasts and casts).
  Unary,
  Binary,
  // Two Binary nodes with constants in one: (x op c) op' c', each op one of + - * / and every
  // operand of the node's dtype (AffineAttrs). Built when a program applies the second to a
  // temporary that nothing else holds (x * 0.999f + 0.001f: graph::fuse_constant_step), so a
  // loop's multiply-add builds, hashes and frees one node, not two. Lowered to the two nodes'
  // instructions, so the kernel is the same.
  Affine,
  Where,
  Cast,
  User,  // kiln::elementwise: UserAttrs names the code; inputs bind its names in order
  // Views: index maps, never copies.
  Reshape,
  Permute,
  Slice,
  Broadcast,
  // An index map per axis (RemapAttrs), lowered to arithmetic on the reader's loads: view-like,
  // but it may read outside its input's strides (wrap, reflect) or not at all (a fill).
  Remap,
  // Boundaries of fusion groups.
  Reduce,
  Fft,
  Random,
  Copy,
  // x with values placed at flat positions (x.at(integer arrays)): inputs x, the int64
  // positions, the values (of x's dtype, one per position); `op` is a ScatterOp.
  Scatter,
  // Inclusive scan along ScanAttrs' axis of an input of the result's dtype and shape (cumsum,
  // cumprod); `op` is a ScanOp.
  Scan,
  // The rows of a (L, R) input whose entry in a bool mask (L) is true, in order, as one 1-d
  // array (count * R), count known when the node is built (kiln::masked evaluates it first);
  // with the mask as the only input, the positions of its true entries (int64: flatnonzero).
  Compress,
  // Matrix product over the last two axes (kiln::matmul): inputs a of (batch..., m, k) and b of
  // (batch..., k, n), both of the result's dtype (a float or complex one) and broadcast to its
  // batch shape; the result is (batch..., m, n). MatmulAttrs says how float32 may round.
  Matmul,
  // A stable sort of each row along the last axis in NumPy's order (kernels/sort_keys.cuh: NaNs
  // last, -0.0 equal to 0.0): `op` is a SortOp, the sorted values (the input's dtype) or the
  // positions along the row they came from (int64); the shape is the input's.
  Sort,
  // Rank CollectiveAttrs::rank's result of a collective (graph/collective.hpp) over the mesh's
  // ranks: inputs the parts of the ranks this process holds, each on its rank's device, of one
  // dtype and shape; the node is on its rank's device.
  Collective,
};

// The elementwise operations and their traits come from graph/op_table.hpp, one row each.
#define KILN_ENUM_ROW(Enum, name, cfn, form, complex, heavy) Enum,
enum class UnaryOp : uint8_t { KILN_UNARY_OPS(KILN_ENUM_ROW) };
enum class BinaryOp : uint8_t { KILN_BINARY_OPS(KILN_ENUM_ROW) };
#undef KILN_ENUM_ROW
enum class UnaryForm : uint8_t { Custom, Math };
enum class BinaryForm : uint8_t { Arith, Compare, Bitwise, Math };
// The reductions come from graph/reduce_table.hpp, one row each.
#define KILN_ENUM_ROW(Enum, name, acc, result, identity) Enum,
enum class ReduceOp : uint8_t { KILN_REDUCE_OPS(KILN_ENUM_ROW) };
#undef KILN_ENUM_ROW
// C2C: complex to complex. R2C / C2R: rfftn / irfftn (the last of the axes is the halved one).
// R2CFull: a forward transform of real input with the full complex spectrum as output (fft /
// fftn of real arrays): executors run a real transform, halving whichever transformed axis they
// choose, and fill the rest from Hermitian symmetry, X[k] = conj(X[-k mod n]) over every axis.
enum class FftKind : uint8_t { C2C, R2C, C2R, R2CFull };
enum class RandomDist : uint8_t { Randint, Uniform, Normal };
// What a scatter does at each position: NumPy's x[i] = v (the last of repeated positions wins)
// and add / multiply / minimum / maximum.at (repeated positions apply every update). The order
// of kiln::scatter::Op in kernels/scatter.cuh.
enum class ScatterOp : uint8_t { Set, Add, Multiply, Min, Max };
const char* op_name(ScatterOp op);  // "set", "add", ...
// A scan's operation: Sum and Prod are ScatterOp's Add and Multiply in kernels/scan.cuh.
enum class ScanOp : uint8_t { Sum, Prod };
const char* op_name(ScanOp op);  // "cumsum", "cumprod"
// What a sort gives: the sorted values (kiln::sort) or where they came from (kiln::argsort).
enum class SortOp : uint8_t { Values, Indices };
const char* op_name(SortOp op);  // "sort", "argsort"

const char* op_name(UnaryOp op);   // "neg", "sin", ...
const char* op_name(BinaryOp op);  // "add", "lt", ...
const char* op_name(ReduceOp op);  // "sum", "argmax", ...
// The dtype a reduction accumulates in, given its input's (NumPy's: int32 and bool sums in
// int64, integer means in float64, any / all in bool).
DType accumulation_dtype(ReduceOp op, DType input);
// A reduction's result dtype given its accumulator and input: argmax/argmin give indices
// (int64); a float16 or bfloat16 input its own dtype (rounded from the float32 accumulator).
DType reduce_result_dtype(ReduceOp op, DType acc, DType input);
// Whether a reduction over no elements has a value (max, min, argmax and argmin raise).
bool has_identity(ReduceOp op);
UnaryForm form_of(UnaryOp op);
BinaryForm form_of(BinaryOp op);
bool is_comparison(BinaryOp op);
bool is_bitwise(BinaryOp op);
bool is_heavy(UnaryOp op);  // transcendental (op_table.hpp's heavy column)
bool is_heavy(BinaryOp op);
bool takes_complex(UnaryOp op);  // op_table.hpp's complex column
bool takes_complex(BinaryOp op);
const char* c_function(UnaryOp op);  // the C math function of a Math op ("" for Custom)
const char* c_function(BinaryOp op);

}  // namespace kiln::graph
