// A node's attributes: what a node of each kind carries besides its operation, dtype, shape
// and inputs, as one small struct per kind with named fields (instead of integers decoded by
// position). Equality is what hash-consing compares and hash_attrs what it and the structural
// hash mix, so two nodes are one node exactly when their attributes are equal.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <variant>
#include <vector>

#include "graph/collective.hpp"
#include "graph/ops.hpp"
#include "kiln/dtype.hpp"
#include "kiln/scalar.hpp"

namespace kiln::graph {

// Scalar: the constant. A value, not structure: the structural hash leaves it out and a
// cached plan is rebound to a new one.
struct ScalarAttrs {
  Scalar value;
  bool operator==(const ScalarAttrs& o) const { return value.same_as(o.value); }
};

// Binary with one constant operand (x * 2, 1 - x): the constant, held in the node instead of
// a Scalar node of its own, so building it costs no second hash-cons lookup. A value, as a
// Scalar's: the structural hash mixes its side and which equal constants it shares a
// parameter with (graph/signature.cpp), never the value, and a cached plan is rebound to a new
// one. `dtype` is the constant's: the other operand's (a comparison's node is bool).
struct ImmediateAttrs {
  Scalar value;
  DType dtype = DType::Float64;
  bool left = false;  // the first operand (2 - x), else the second (x - 2)
  bool operator==(const ImmediateAttrs& o) const {
    return value.same_as(o.value) && dtype == o.dtype && left == o.left;
  }
};

// Affine: the two steps, in order, each a Binary node's operation and constant (x * 2 + 1:
// multiply by 2, then add 1). The constants are values as an immediate's: the structural hash
// keeps their sides, dtypes and which equal constants they share a parameter with, never the
// values.
struct AffineStep {
  BinaryOp op = BinaryOp::Add;
  ImmediateAttrs constant;
  bool operator==(const AffineStep&) const = default;
};
struct AffineAttrs {
  AffineStep steps[2];
  bool operator==(const AffineAttrs&) const = default;
};

// Permute (transpose): output axis i is input axis perm[i].
struct PermuteAttrs {
  std::vector<int> perm;
  bool operator==(const PermuteAttrs&) const = default;
};

// Slice: per axis of the input, the first index taken and the step between taken indices
// (1 where at most one index is taken); the node's shape says how many.
struct SliceAxis {
  int64_t start = 0, step = 1;
  bool operator==(const SliceAxis&) const = default;
};
struct SliceAttrs {
  std::vector<SliceAxis> axes;
  bool operator==(const SliceAttrs&) const = default;
};

// Reduce: the reduced axes of the input, sorted; keepdims keeps them in the output as 1s.
struct ReduceAttrs {
  std::vector<int> axes;
  bool keepdims = false;
  bool operator==(const ReduceAttrs&) const = default;
};

// Fft: the axes transformed, in order, with each one's logical length (NumPy's n / s), the
// direction, and the factor applied to the output (the norm). The kind is the node's op.
struct FftAttrs {
  std::vector<int> axes;
  std::vector<int64_t> lengths;
  bool inverse = false;
  double scale = 1;
  bool operator==(const FftAttrs& o) const;  // scale compared bit for bit, as scalars are
};

// Random: where the draw sits in the generator's stream and the distribution's arguments
// (randint: low, high; uniform: low, high; normal: mean, std). The distribution is the node's
// op. Values, not structure, as a Scalar's: the structural hash leaves them out and a cached
// plan is rebound to new ones.
struct RandomAttrs {
  uint64_t seed = 0, offset = 0;
  Scalar a, b;
  bool operator==(const RandomAttrs& o) const;
};

// User (kiln::elementwise): the expression's id from graph::intern_user_code.
struct UserAttrs {
  int64_t code = 0;
  bool operator==(const UserAttrs&) const = default;
};

// Remap: output position c along axis d reads the input at a per-axis map of c, so joining,
// rolling, padding and slice assignment are index arithmetic on the reading kernel's loads
// (src/plan/lower.cpp), never a copy. With t = c - origin and n the input's length on that axis:
//   Offset     t / step when step divides t and 0 <= t / step < n; elsewhere the element is
//              the node's second input (the fill), and the input is not read there
//   Clamp      t clamped to [0, n - 1] (NumPy pad's 'edge')
//   Wrap       t mod n (roll, pad's 'wrap')
//   Reflect    t reflected at the ends without repeating them, period 2n - 2 (pad's 'reflect')
//   Symmetric  t reflected repeating the end elements, period 2n (pad's 'symmetric')
// An `indexed` axis (take, fancy indexing; at most one per node) has t = the node's last input
// (a 1-d integer array as long as the output's axis) at c instead: Wrap and Clamp as above
// (NumPy take's 'wrap' and 'clip'), Offset a negative t counted from the end and clamped (for
// indices known to be in range), so no read leaves the input either way; Raise as Offset, and
// the kernel reports any t outside [-n, n) (NumPy take's 'raise'; FusedGroup::checks): the
// evaluation then throws and stores nothing.
// origin and step are structure, in the structural hash: they decide which positions read what.
enum class IndexMode : uint8_t { Offset, Clamp, Wrap, Reflect, Symmetric, Raise };
struct RemapAxis {
  IndexMode mode = IndexMode::Offset;
  int64_t origin = 0;
  int64_t step = 1;  // Offset only; never 0
  bool indexed = false;
  bool operator==(const RemapAxis&) const = default;
};
struct RemapAttrs {
  std::vector<RemapAxis> axes;  // one per axis of the input (and output: same rank)
  bool operator==(const RemapAttrs&) const = default;
};
const char* mode_name(IndexMode m);  // "offset", "clamp", ...

// Kinds with no attributes (leaves, elementwise, reshape, broadcast, copy) hold monostate.
// Scan: the axis it runs along (non-negative).
struct ScanAttrs {
  int axis;
  bool operator==(const ScanAttrs&) const = default;
};

// Scatter: how its positions are read. Flat positions of x, a negative one an update left out
// (a mask's); or `indices` along a 1-d x's one axis (x.at(i)): a negative one counts from the
// end, and any outside [-n, n) makes the evaluation throw and store nothing (the step's own
// range check; ScatterStep::check_buffer).
struct ScatterAttrs {
  bool indices = false;
  bool operator==(const ScatterAttrs&) const = default;
};

// Matmul: whether a float32 product may use TF32 tensor cores (kiln::set_matmul_precision when
// it was built). Structure: the plan and the library's algorithm depend on it.
struct MatmulAttrs {
  bool tf32 = false;
  bool operator==(const MatmulAttrs&) const = default;
};

// Collective: rank `rank`'s result of a collective over the mesh's `size` ranks, whose inputs
// are the parts of `ranks` (the ranks this process holds, in order). The runner (the mesh's
// communicator) is a value, as a Random's draw: the structural hash leaves it out, and a cached
// plan is bound to this graph's runner; hash-consing compares it, so two meshes never share a
// node.
struct CollectiveAttrs {
  std::shared_ptr<CollectiveRunner> runner;
  CollectiveKind kind = CollectiveKind::AllReduce;
  CollectiveReduction reduction = CollectiveReduction::Sum;
  int size = 1;
  int rank = 0;
  std::vector<int> ranks;
  bool operator==(const CollectiveAttrs& o) const {
    return runner == o.runner && kind == o.kind && reduction == o.reduction && size == o.size &&
           rank == o.rank && ranks == o.ranks;
  }
};
using Attrs = std::variant<std::monostate, ScalarAttrs, PermuteAttrs, SliceAttrs, ReduceAttrs,
                           FftAttrs, RandomAttrs, UserAttrs, RemapAttrs, ScanAttrs, ImmediateAttrs,
                           MatmulAttrs, ScatterAttrs, CollectiveAttrs, AffineAttrs>;

// `seed` mixed with the attributes (with hash_mix, graph/hash.hpp): equal attributes mix equal
// values, and the alternative is mixed too, so an empty Permute differs from an empty Slice.
size_t hash_attrs(size_t seed, const Attrs& a);

}  // namespace kiln::graph
