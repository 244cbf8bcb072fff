#include <algorithm>
#include <string>

#include "plan/plan.hpp"

namespace kiln::plan {

// A stride along an axis of length 1 is never used to step, so such an axis fits either layout.
std::optional<MatrixLayout> matrix_layout(int64_t rows, int64_t cols, int64_t row, int64_t col) {
  if ((cols <= 1 || col == 1) && (rows <= 1 || row >= std::max<int64_t>(cols, 1)))
    return MatrixLayout{false, rows <= 1 ? std::max<int64_t>(cols, 1) : row};
  if ((rows <= 1 || row == 1) && (cols <= 1 || col >= std::max<int64_t>(rows, 1)))
    return MatrixLayout{true, cols <= 1 ? std::max<int64_t>(rows, 1) : col};
  return std::nullopt;
}

bool blas_readable(const Shape& shape, const Strides& strides) {
  const size_t r = shape.size();
  for (size_t d = 0; d + 2 < r; ++d)
    if (strides[d] < 0 && shape[d] > 1) return false;
  return matrix_layout(shape[r - 2], shape[r - 1], strides[r - 2], strides[r - 1]).has_value();
}

namespace {

// The arithmetic the library does for dtype t (a GPU's; the host's Eigen computes in t, and
// float16 / bfloat16 in float32).
std::string arithmetic(DType t, bool tf32, bool gpu) {
  if (!gpu) return "Eigen";
  switch (t) {
    case DType::Float32:
      return tf32 ? "cuBLASLt, TF32" : "cuBLASLt, FP32";
    case DType::Float64:
    case DType::Complex128:
      return "cuBLASLt, FP64";
    default:  // complex64, float16, bfloat16
      return "cuBLASLt, FP32";
  }
}

std::string operand_str(const MatmulOperand& o, const Shape& batch, int64_t rows, int64_t cols) {
  Shape s = batch;
  s.push_back(rows);
  s.push_back(cols);
  const size_t r = o.strides.size();
  auto layout = matrix_layout(rows, cols, o.strides[r - 2], o.strides[r - 1]);
  return shape_str(s) + (layout && layout->col_major && rows > 1 && cols > 1 ? "^T" : "");
}

}  // namespace

std::string describe(const MatmulStep& s, const Plan& p) {
  const PlanBuffer& out = p.buffers[s.out];
  return "matmul (" + arithmetic(out.dtype, s.tf32, out.device.is_cuda()) + ") " +
         dtype_name(out.dtype) + " " + operand_str(s.a, s.batch, s.m, s.k) + " @ " +
         operand_str(s.b, s.batch, s.k, s.n) + " -> " + shape_str(out.shape) +
         epilogue_str(s.epilogue);
}

std::string epilogue_str(Epilogue e) {
  switch (e) {
    case Epilogue::Bias:
      return " + bias";
    case Epilogue::Relu:
      return " + relu";
    case Epilogue::BiasRelu:
      return " + bias, relu";
    default:
      return "";
  }
}

}  // namespace kiln::plan
