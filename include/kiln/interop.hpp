// Zero-copy interop: kiln arrays over memory the program already owns (a std::vector, an Eigen
// matrix, a host or device pointer from other code), and pointers back out (Array::data()).
//
// A wrapped array reads the memory, never copies it and never writes it. Lifetime and timing:
// - The memory must stay valid while any Array may still read it: the wrapped array itself
//   and every expression built from it that has not been evaluated yet. Evaluated results own
//   their memory. Pass `keep_alive` to make kiln hold whatever owns the memory.
// - kiln reads the memory when an expression that uses it is evaluated, not when it is
//   wrapped. Evaluated results are cached per node: after you change the memory, arrays that
//   were already evaluated keep their old values; expressions evaluated afterwards (even ones
//   built before the change) see the new values.
// - On a GPU, evaluation is asynchronous: kernels reading wrapped device memory may still run
//   after eval() returns. Do not change or free it before kiln::synchronize(device). Wrapped
//   device memory must hold its data before evaluation starts: synchronise your own stream
//   first (kiln runs on its own non-blocking stream).
#pragma once
#include <concepts>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/array.hpp"

namespace kiln {

// An array over `data`: dense, row-major (C order) elements of dtype t in shape s, on device d
// (host() for host memory, cuda(i) for device memory of GPU i). kiln holds `keep_alive`, if
// given, as long as it may read the memory. Throws kiln::Error for a null pointer with
// elements or a pointer not aligned for t, DeviceError when CUDA says the memory is on
// another device than d (device memory passed as host memory, or the reverse).
Array wrap(const void* data, DType t, Shape s, Device d = host(),
           std::shared_ptr<void> keep_alive = nullptr);

// A 1-d array over the vector's elements (or shape s). The vector must not be resized (which
// moves its elements) while the array may read it. std::vector<bool> has no element array:
// copy it with kiln::asarray.
template <class T>
Array wrap(const std::vector<T>& v, Shape s) {
  static_assert(!std::is_same_v<T, bool>, "std::vector<bool> is packed bits; use kiln::asarray");
  if (shape_size(s) != static_cast<int64_t>(v.size()))
    throw ShapeError("kiln::wrap: the shape " + shape_str(s) + " has " +
                     std::to_string(shape_size(s)) + " elements, the vector " +
                     std::to_string(v.size()));
  return wrap(v.data(), dtype_v<T>, std::move(s));
}
template <class T>
Array wrap(const std::vector<T>& v) {
  return wrap(v, Shape{static_cast<int64_t>(v.size())});
}
// A temporary would be gone before kiln reads it.
template <class T>
Array wrap(const std::vector<T>&&) = delete;
template <class T>
Array wrap(const std::vector<T>&&, Shape) = delete;

// Eigen's dense objects (Matrix, Array, Map, Block), recognised by their interface, so this
// header needs no Eigen include.
template <class M>
concept EigenDense = requires(const M& m) {
  typename M::Scalar;
  M::IsRowMajor;
  M::IsVectorAtCompileTime;
  { m.data() } -> std::convertible_to<const typename M::Scalar*>;
  m.rows();
  m.cols();
  m.innerStride();
  m.outerStride();
};
// Those that own their storage (Matrix and Array: only they can conservativeResize), as
// opposed to views (Map, Block) of storage that lives elsewhere.
template <class M>
concept EigenOwner = EigenDense<M> && requires(M& m) {
  m.conservativeResize(m.rows(), m.cols());
};

// An array over an Eigen matrix or array, on the host. Vectors (a compile-time single row or
// column) become 1-d; matrices 2-d with the same (rows, cols). A row-major matrix is C order
// already; a column-major one (Eigen's default) is wrapped as its transpose in C order and
// returned as the .T() view, still without a copy (the view folds into the kernels that read
// it). A Map or Block works when its elements are dense (whole columns of a column-major
// matrix); otherwise kiln::Error (copy it with .eval() first).
template <EigenDense M>
Array wrap(const M& m) {
  const int64_t rows = m.rows(), cols = m.cols();
  // Dense: neighbours along the inner (contiguous) dimension one apart, and the outer slices
  // back to back. A dimension of extent 1 has no neighbours to check.
  const int64_t inner = M::IsRowMajor ? cols : rows, outer = M::IsRowMajor ? rows : cols;
  if ((inner > 1 && m.innerStride() != 1) || (outer > 1 && m.outerStride() != inner))
    throw Error(
        "kiln::wrap: the elements of this Eigen object are not dense (a block or a strided "
        "Map); wrap the whole matrix, or copy it first with .eval()");
  const DType t = dtype_v<typename M::Scalar>;
  if (M::IsVectorAtCompileTime) return wrap(m.data(), t, Shape{rows * cols});
  if (M::IsRowMajor) return wrap(m.data(), t, Shape{rows, cols});
  return wrap(m.data(), t, Shape{cols, rows}).T();
}
// A temporary matrix would be gone before kiln reads it (temporary views of a named matrix,
// such as m.leftCols(2), are fine).
template <EigenOwner M>
Array wrap(const M&&) = delete;

}  // namespace kiln
