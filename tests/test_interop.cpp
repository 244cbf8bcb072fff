// kiln::wrap: arrays over the program's own memory (std::vector, Eigen, raw host and device
// pointers) without a copy, what they see when that memory changes, and pointers back out
// through Array::data(). The device part runs only with a GPU.
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <cstdint>
#include <kiln/kiln.hpp>
#include <memory>
#include <numeric>
#include <utility>
#include <vector>

#include "graph/node.hpp"
#include "support/gpu.hpp"

namespace {

using kiln::Array;
using kiln::DType;

template <class T>
concept Wrappable = requires(T&& t) {
  kiln::wrap(std::forward<T>(t));
};

// Temporaries would be gone before kiln reads them: they do not compile.
static_assert(Wrappable<std::vector<float>&>);
static_assert(Wrappable<const std::vector<double>&>);
static_assert(!Wrappable<std::vector<float>>);
static_assert(Wrappable<Eigen::MatrixXf&>);
static_assert(Wrappable<const Eigen::ArrayXXd&>);
static_assert(!Wrappable<Eigen::MatrixXf>);
static_assert(Wrappable<decltype(std::declval<Eigen::MatrixXf&>().leftCols(2))>);
static_assert(!Wrappable<int>);

}  // namespace

TEST_CASE("a wrapped vector is the vector's memory, read when an expression is evaluated") {
  std::vector<float> v = {1, 2, 3, 4};
  Array x = kiln::wrap(v);
  CHECK(x.dtype() == DType::Float32);
  CHECK(x.shape() == kiln::Shape{4});
  CHECK(x.data() == v.data());  // no copy
  Array doubled = (x * 2).eval();
  Array later = x + 10;  // built now, evaluated after the change below
  v[0] = 100;
  // Evaluated results are cached per node: the change is not seen by them.
  CHECK(doubled.to_vector<float>() == std::vector<float>{2, 4, 6, 8});
  // Expressions evaluated after the change read the memory again, even ones built before.
  CHECK(later.to_vector<float>() == std::vector<float>{110, 12, 13, 14});
  CHECK((x * 2).to_vector<float>() == std::vector<float>{200, 4, 6, 8});
  CHECK(kiln::wrap(v).to_vector<float>() == std::vector<float>{100, 2, 3, 4});
  CHECK(x.to_vector<float>() == std::vector<float>{100, 2, 3, 4});
}

TEST_CASE("vectors with a shape, every dtype, empty vectors, keep_alive") {
  std::vector<int64_t> v(6);
  std::iota(v.begin(), v.end(), 0);
  Array m = kiln::wrap(v, {2, 3});
  CHECK(m.dtype() == DType::Int64);
  CHECK(kiln::array_equal(m.T(), kiln::arange(6).reshape({2, 3}).T()));
  CHECK_THROWS_AS(kiln::wrap(v, {4, 4}), kiln::ShapeError);

  std::vector<std::complex<double>> c = {{1, 2}, {3, -4}};
  CHECK(kiln::abs(kiln::wrap(c)).to_vector<double>()[1] == doctest::Approx(5));
  std::vector<int32_t> i32 = {7, -7};
  CHECK(kiln::sum(kiln::wrap(i32)).item<int64_t>() == 0);

  std::vector<double> empty;
  Array e = kiln::wrap(empty);
  CHECK(e.size() == 0);
  CHECK(kiln::sum(e).item<double>() == 0);

  // kiln holds the owner: the array outlives the caller's handle to it.
  auto owned = std::make_shared<std::vector<double>>(std::vector<double>{1.5, 2.5});
  Array k = kiln::wrap(owned->data(), DType::Float64, {2}, kiln::host(), owned);
  std::weak_ptr<std::vector<double>> watch = owned;
  owned.reset();
  CHECK_FALSE(watch.expired());
  CHECK(kiln::sum(k).item<double>() == 4);
  k = Array();
  CHECK(watch.expired());
}

TEST_CASE("Eigen matrices and arrays, column-major or row-major, wrap as their values") {
  Eigen::MatrixXd col(3, 4);  // Eigen's default: column-major
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) col(i, j) = 10 * i + j;
  Array a = kiln::wrap(col);
  REQUIRE(a.shape() == kiln::Shape{3, 4});
  std::vector<double> values = a.to_vector<double>();  // row-major order
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) CHECK(values[i * 4 + j] == col(i, j));
  // The transpose of the memory, as a view: the leaf under it is the matrix's own memory.
  Array view = kiln::wrap(col);
  REQUIRE_FALSE(view.node()->is_leaf());
  CHECK(view.node()->kind == kiln::graph::OpKind::Permute);
  CHECK(view.node()->inputs[0]->storage()->data() == col.data());

  Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> row(2, 3);
  row << 1, 2, 3, 4, 5, 6;
  Array r = kiln::wrap(row);
  CHECK(r.data() == row.data());
  CHECK(r.to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});

  Eigen::ArrayXXf arr = Eigen::ArrayXXf::Constant(2, 2, 0.5f);
  CHECK(kiln::sum(kiln::wrap(arr)).item<double>() == 2);
  Eigen::VectorXd vec = Eigen::VectorXd::LinSpaced(5, 0, 4);
  CHECK(kiln::wrap(vec).shape() == kiln::Shape{5});
  Eigen::RowVectorXf rvec = Eigen::RowVectorXf::Ones(3);
  CHECK(kiln::wrap(rvec).shape() == kiln::Shape{3});

  // Whole columns of a column-major matrix are dense; a block that cuts them is not.
  CHECK(kiln::wrap(col.leftCols(2)).to_vector<double>() ==
        std::vector<double>{0, 1, 10, 11, 20, 21});
  CHECK_THROWS_AS(kiln::wrap(col.block(0, 0, 2, 2)), kiln::Error);
  CHECK_THROWS_AS(kiln::wrap(col.block(1, 0, 1, 3)), kiln::Error);  // one row: strided
  CHECK_THROWS_AS(kiln::wrap(col.row(1)), kiln::Error);
  CHECK(kiln::wrap(col.col(2)).to_vector<double>() == std::vector<double>{2, 12, 22});
  // Changing the matrix is seen by expressions evaluated afterwards.
  col(0, 0) = -1;
  CHECK(kiln::wrap(col).to_vector<double>()[0] == -1);
}

TEST_CASE("bad pointers are refused before anything reads them") {
  CHECK_THROWS_AS(kiln::wrap(nullptr, DType::Float32, {3}), kiln::Error);
  alignas(8) unsigned char bytes[64] = {};
  CHECK_THROWS_AS(kiln::wrap(bytes + 1, DType::Float32, {2}), kiln::Error);
  CHECK_NOTHROW(kiln::wrap(bytes + 4, DType::Float32, {2}));
  CHECK_THROWS_AS(kiln::wrap(bytes, DType::Float32, {2, -1}), kiln::ShapeError);
}

NO_GPU_TEST_CASE("without a GPU, wrapping memory as a cuda array is a DeviceError") {
  alignas(8) unsigned char bytes[64] = {};
  CHECK_THROWS_AS(kiln::wrap(bytes, DType::Float32, {2}, kiln::Device{kiln::Device::Kind::Cuda}),
                  kiln::DeviceError);
}

GPU_TEST_CASE("device pointers in and out: the program's cudaMalloc memory, no copies") {
  kiln::Device gpu = kiln::cuda();
  const int n = 1000;
  std::vector<float> host(n);
  std::iota(host.begin(), host.end(), 0.f);
  void* d_in = nullptr;
  REQUIRE(cudaMalloc(&d_in, n * sizeof(float)) == cudaSuccess);
  REQUIRE(cudaMemcpy(d_in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
  {
    Array x = kiln::wrap(d_in, DType::Float32, {n}, gpu);
    CHECK(x.device() == gpu);
    CHECK(x.data() == d_in);
    Array y = x * 2 + 1;
    const void* d_out = y.data();  // a device pointer, the kernel finished
    std::vector<float> back(n);
    REQUIRE(cudaMemcpy(back.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost) ==
            cudaSuccess);
    for (int i = 0; i < n; i += 97) CHECK(back[i] == 2.f * i + 1);
    CHECK(kiln::sum(x).item<double>() == doctest::Approx(n * (n - 1) / 2.0));
    // The memory kind is checked: device memory is not host memory, nor the reverse.
    CHECK_THROWS_AS(kiln::wrap(d_in, DType::Float32, {n}), kiln::DeviceError);
    CHECK_THROWS_AS(kiln::wrap(host.data(), DType::Float32, {n}, gpu), kiln::DeviceError);
    kiln::synchronize(gpu);  // nothing may still read d_in when it is freed
  }
  cudaFree(d_in);
}
