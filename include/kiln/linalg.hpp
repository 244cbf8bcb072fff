// Matrix products with numpy's names, arguments and results.
//
// kiln::matmul is NumPy's `a @ b`: the last two axes of each operand are matrices and the axes
// before them a batch, broadcast against each other; a 1-d operand is a matrix of one row (a)
// or one column (b) for the product, and that axis is left out of the result. The result's
// dtype is NumPy's promotion of the two.
//  - float32, float64, complex64, complex128: a BLAS (Eigen on the host, cuBLASLt on a GPU),
//    reading transposed, sliced and batch-broadcast operands in place. float32 rounds as
//    NumPy's (IEEE float32 products and sums) unless set_matmul_precision(Tf32) allows TF32
//    tensor cores on a GPU (inputs rounded to 10 mantissa bits, about 1e-3 relative error).
//  - float16, bfloat16: accumulated in float32, rounded once to the dtype.
//  - bool and integers: exact, with the result dtype's wraparound as NumPy; a fused
//    multiply-and-sum kernel on either device rather than a BLAS (m * n * k multiply-adds with
//    no BLAS blocking: expect it to be much slower than a float product of the same size).
// Errors: ShapeError for a 0-d operand (NumPy refuses scalars: use a * b), for contracted axes
// of different lengths and for batch axes that do not broadcast, naming both shapes; nothing
// is evaluated then.
//
// dot, vdot, inner, outer and tensordot are NumPy's, built from matmul (a transpose and reshape
// of each operand into one matrix, which the planner writes densely when it is not a view) or,
// for outer and 0-d operands, from a broadcast multiply. Their dtypes and errors are NumPy's
// (ShapeError where NumPy raises ValueError).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/array.hpp"

namespace kiln {

Array matmul(const Array& a, const Array& b);
// 0-d: a * b; 1-d . 1-d: the inner product (0-d); otherwise a sum over a's last axis and b's
// second-to-last (its only one when 1-d): shape a.shape[:-1] + b.shape[:-2] + b.shape[-1:].
Array dot(const Array& a, const Array& b);
// sum(conj(ravel(a)) * ravel(b)); the sizes must agree. 0-d.
Array vdot(const Array& a, const Array& b);
// 0-d: a * b; otherwise a sum over both last axes: shape a.shape[:-1] + b.shape[:-1].
Array inner(const Array& a, const Array& b);
// ravel(a)[i] * ravel(b)[j]: shape (a.size, b.size).
Array outer(const Array& a, const Array& b);
// A sum over a's last `axes` axes and b's first `axes` (0: the outer product over every axis).
Array tensordot(const Array& a, const Array& b, int axes = 2);
// A sum over a_axes of a against b_axes of b, pairwise (negative axes count from the end; each
// axis once). Shape: a's other axes, then b's, in order.
Array tensordot(const Array& a, const Array& b, const std::vector<int>& a_axes,
                const std::vector<int>& b_axes);

// How float32 matrix products may round on a GPU. Float32 (the default, as NumPy and CuPy):
// IEEE float32 arithmetic. Tf32: tensor cores round the inputs to TF32 (PyTorch's
// allow_tf32), several times faster on large products. A product takes the setting in effect
// when matmul is called; other dtypes and the host ignore it. Process-wide.
enum class MatmulPrecision { Float32, Tf32 };
void set_matmul_precision(MatmulPrecision p);
MatmulPrecision get_matmul_precision();

// The GPU's cache of matmul plans (cuBLASLt descriptors, layouts and the chosen algorithm per
// shape, strides, dtype, batch, precision and device), least recently used evicted first.
struct MatmulPlanCacheInfo {
  size_t plans, max_plans;  // cached now, and the limit (default 256)
  int64_t hits, misses;     // lookups since the process started
};
MatmulPlanCacheInfo matmul_plan_cache();
// Evicts the least recently used plans at once when over the limit; 0 turns caching off.
void set_matmul_plan_cache_limit(size_t max_plans);
void clear_matmul_plan_cache();

namespace linalg {

// numpy.linalg.norm. Integer and bool arrays are taken as float64; the result is real, in the
// input's precision (complex64 -> float32).
//  - No ord and no axis: the 2-norm of the flattened array (the Frobenius norm of a matrix).
//  - One axis (or a 1-d x with none): vector norms, ord p: (sum |x|^p)^(1/p); inf: max |x|;
//    -inf: min |x|; 0: the count of nonzeros; none or 2: sqrt(sum |x|^2).
//  - Two axes (or a 2-d x with none): matrix norms, ord "fro" or none: sqrt(sum |x|^2); 1 / -1:
//    the largest / smallest column sum of |x|; inf / -inf: the largest / smallest row sum. 2, -2
//    and "nuc" need singular values, which kiln does not compute: Error, saying so.
// keepdims keeps the normed axes with length 1. Bad axes or orders: ShapeError (NumPy's
// ValueError).
Array norm(const Array& x, std::optional<double> ord = std::nullopt, AxesArg axis = {},
           bool keepdims = false);
Array norm(const Array& x, const std::string& ord, AxesArg axis = {}, bool keepdims = false);

}  // namespace linalg
}  // namespace kiln
