#include "host/matmul.hpp"

#include <Eigen/Core>
#include <complex>
#include <type_traits>

#include "host/convert.hpp"
#include "kiln/errors.hpp"

namespace kiln::cpu {
namespace {

template <class T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Strided = Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>;

// One batch entry of an operand: its first element and its rows x cols matrix's strides, as
// matrix_layout normalises them (so axes of length 1 never carry a stride Eigen would check).
template <class T>
struct Operand {
  const T* data;
  int64_t rows, cols, row, col;

  Eigen::Map<const RowMatrix<T>, 0, Strided> map() const {
    return {data, rows, cols, Strided(row, col)};
  }
};

template <class T>
Operand<T> operand(const plan::MatmulOperand& o, const void* base, int64_t batch_offset,
                   int64_t rows, int64_t cols) {
  const size_t r = o.strides.size();
  auto layout = plan::matrix_layout(rows, cols, o.strides[r - 2], o.strides[r - 1]);
  if (!layout)
    throw Error(
        "matmul: an operand's strides reached the host executor unreadable by a BLAS; "
        "this is a kiln bug, please report it");
  int64_t row = layout->col_major ? 1 : layout->ld, col = layout->col_major ? layout->ld : 1;
  return {static_cast<const T*>(base) + o.offset + batch_offset, rows, cols, row, col};
}

// The element offset of batch entry `index` (row-major over `batch`) in an operand.
int64_t batch_offset(const Shape& batch, const plan::Strides& strides, int64_t index) {
  int64_t off = 0;
  for (size_t d = batch.size(); d-- > 0;) {
    off += (index % batch[d]) * strides[d];
    index /= batch[d];
  }
  return off;
}

// float16 and bfloat16 in float32, as kiln computes them everywhere.
template <class T>
RowMatrix<float> widened(const Operand<T>& o) {
  RowMatrix<float> w(o.rows, o.cols);
  for (int64_t i = 0; i < o.rows; ++i)
    for (int64_t j = 0; j < o.cols; ++j) w(i, j) = convert<float>(o.data[i * o.row + j * o.col]);
  return w;
}

template <class T>
void multiply(const Operand<T>& a, const Operand<T>& b, T* out) {
  const int64_t m = a.rows, n = b.cols;
  if constexpr (is_half_v<T>) {
    RowMatrix<float> c = widened(a) * widened(b);
    for (int64_t i = 0; i < m * n; ++i) out[i] = convert<T>(c.data()[i]);
  } else {
    Eigen::Map<RowMatrix<T>> c(out, m, n);
    if (a.cols == 0)
      c.setZero();
    else
      c.noalias() = a.map() * b.map();
  }
}

template <class T>
constexpr bool kBlasType = std::is_floating_point_v<T> || is_complex_v<T> || is_half_v<T>;

}  // namespace

void run_matmul(const plan::MatmulStep& step, const plan::PlanBuffer& out_desc, const void* a,
                const void* b, void* out) {
  visit_dtype(out_desc.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!kBlasType<T>) {
      throw Error(
          "matmul: an integer or bool step reached the host executor (kiln computes "
          "those as a fused reduction); this is a kiln bug, please report it");
    } else {
      const int64_t count = shape_size(step.batch);
      for (int64_t i = 0; i < count; ++i) {
        auto x = operand<T>(step.a, a, batch_offset(step.batch, step.a.strides, i), step.m, step.k);
        auto y = operand<T>(step.b, b, batch_offset(step.batch, step.b.strides, i), step.k, step.n);
        multiply(x, y, static_cast<T*>(out) + i * step.m * step.n);
      }
    }
  });
}

}  // namespace kiln::cpu
