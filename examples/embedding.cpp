// kiln inside an existing C++ program: the program's std::vector and Eigen matrices are wrapped
// without a copy, its own device buffers go in and come out as plain device pointers, a
// user-defined elementwise function (a CUDA expression, like CuPy's ElementwiseKernel) fuses
// with kiln's built-in operations into one kernel, and kiln's exceptions are handled like any
// other; arrays cross to and from other libraries (PyTorch, CuPy, JAX, NumPy) through DLPack
// without a copy. It runs with or without a GPU; without one it shows the plan of the GPU-only
// parts. tests/install builds a program like this one against an installed kiln (find_package(kiln
// CONFIG REQUIRED), target_link_libraries(... kiln::kiln)).
#include <cuda_runtime_api.h>  // only for the program's own device buffers (cudaMalloc)
#include <dlpack/dlpack.h>     // the DLPack structs (Debian: libdlpack-dev)
#include <kiln/kiln.hpp>

#include <Eigen/Dense>
#include <cstdio>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

namespace {

using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void section(const char* title) { std::printf("\n== %s\n", title); }

// kiln::wrap reads the vector's own memory: nothing is copied until an operation needs the
// data on another device (here, to a GPU, an explicit asarray).
void vector_statistics(kiln::Device d) {
  section("a std::vector, wrapped");
  std::vector<float> samples(1000);
  for (size_t i = 0; i < samples.size(); ++i) samples[i] = static_cast<float>(i % 17) * 0.5f;
  kiln::Array x = kiln::wrap(samples);
  std::printf("wrapped without a copy: x.data() == samples.data(): %s\n",
              x.data() == samples.data() ? "true" : "false");
  kiln::Array xd = kiln::asarray(x, d);       // x itself on the host; one planned copy to a GPU
  kiln::Array centred = xd - kiln::mean(xd);  // mean is a 0-d array: it broadcasts in place
  double spread = kiln::sqrt(kiln::mean(centred * centred)).item<double>();
  std::printf("std::vector<float>(1000) on %s: mean %.4f, std %.4f, max %.1f\n", d.str().c_str(),
              kiln::mean(xd).item<double>(), spread, kiln::max(xd).item<double>());

  // kiln reads wrapped memory when it evaluates; results already evaluated are cached.
  kiln::Array total = kiln::sum(x).eval();
  samples[0] = 1000;
  std::printf("after samples[0] = 1000: the evaluated sum stays %.1f, a new sum(x) is %.1f\n",
              total.item<double>(), kiln::sum(x).item<double>());
}

// Eigen's default is column-major: its memory is the C-order transpose, so wrap reads it with
// the shape reversed and returns the transpose view (free: it folds into the kernel reading it).
void eigen_round_trip(kiln::Device d) {
  section("Eigen matrices, wrapped");
  RowMajor a(2, 3);
  a << 1, 2, 3, 4, 5, 6;
  Eigen::MatrixXd b = Eigen::MatrixXd::Constant(2, 3, 0.5);
  b(1, 2) = 2;
  kiln::Array ka = kiln::wrap(a), kb = kiln::wrap(b);
  std::printf("row-major 2x3 wrapped as shape %s (its memory: %s)\n",
              kiln::shape_str(ka.shape()).c_str(), ka.data() == a.data() ? "shared" : "copied");
  std::printf("column-major 2x3 wrapped as shape %s, the .T() view of its memory: no copy\n",
              kiln::shape_str(kb.shape()).c_str());
  // Row sums of a * b + 1, back into an Eigen vector.
  kiln::Array rows = kiln::sum(kiln::asarray(ka, d) * kiln::asarray(kb, d) + 1, {1});
  std::vector<double> values = rows.to_vector<double>();
  Eigen::VectorXd result = Eigen::Map<Eigen::VectorXd>(values.data(), values.size());
  std::cout << "row sums of a * b + 1 from Eigen: " << result.transpose() << "\n";
}

// The program's own device memory (cudaMalloc) in, kiln's result out as a device pointer the
// program copies from with its own CUDA calls.
void device_pointers() {
  section("device pointers in and out");
  if (!kiln::cuda_available()) {
    std::printf(
        "no GPU: skipped. With one, kiln::wrap(d_ptr, dtype, shape, kiln::cuda()) reads the\n"
        "program's device buffer and Array::data() hands back a device pointer.\n");
    return;
  }
  const int n = 1 << 20;
  std::vector<float> host(n);
  std::iota(host.begin(), host.end(), 0.f);
  void* d_in = nullptr;
  if (cudaMalloc(&d_in, n * sizeof(float)) != cudaSuccess) {
    std::printf("cudaMalloc failed: skipped\n");
    return;
  }
  cudaMemcpy(d_in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);  // synchronous
  {
    kiln::Array x = kiln::wrap(d_in, kiln::DType::Float32, {n}, kiln::cuda());
    kiln::Array y = kiln::sqrt(x) * 2 + 1;
    const void* d_out = y.data();  // kiln's work is done when data() returns
    std::vector<float> back(n);
    cudaMemcpy(back.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost);
    std::printf(
        "wrapped the program's cudaMalloc buffer (x.data() == d_in: %s); y = sqrt(x) * 2 "
        "+ 1 came back through y.data(): y[4] = %.1f, y[%d] = %.1f\n",
        x.data() == d_in ? "true" : "false", back[4], n - 1, back[n - 1]);
    kiln::synchronize(kiln::cuda());  // nothing of kiln's may still read d_in when it is freed
  }
  cudaFree(d_in);
}

// How many kernel steps explain() lists.
int kernels_in(const std::string& plan) {
  int n = 0;
  for (size_t at = plan.find(": kernel "); at != std::string::npos;
       at = plan.find(": kernel ", at + 1))
    ++n;
  return n;
}

// A user-defined elementwise function: softplus, written in CUDA C++. kiln fuses it with the
// built-in operations around it, so the whole line below is one kernel.
void user_function() {
  section("a user-defined elementwise function (kiln::elementwise), fused");
  bool gpu = kiln::cuda_available();
  kiln::Device d = gpu ? kiln::cuda() : kiln::host();
  const int64_t half = 1 << 19;  // x: 2^20 float32 values from -4 to 4
  kiln::Array x = kiln::arange(-half, half, 1, kiln::DType::Float32, d) * (4.0 / half);
  kiln::Array w = kiln::cos(x);
  kiln::Array softplus =
      kiln::elementwise("x > 20.f ? x : log1pf(expf(x))", {{"x", x * 2}}, kiln::DType::Float32);
  kiln::Array y = kiln::sum(softplus * w + 1);
  std::string plan = kiln::explain({y});
  std::cout << "kiln::explain(sum(softplus(x * 2) * cos(x) + 1)):\n" << plan;
  std::printf("kernels in the plan: %d (the user expression fused with mul, cos, add and sum)\n",
              kernels_in(plan));
  if (!gpu) {
    std::printf("user CUDA expressions need a GPU to run; evaluating on the host says:\n");
    try {
      y.eval();
    } catch (const kiln::DeviceError& e) {
      std::printf("kiln::DeviceError: %s\n", e.what());
    }
    return;
  }
  // The same function from kiln's built-in operations, for comparison.
  kiln::Array built_in = kiln::sum(kiln::log(kiln::exp(x * 2) + 1) * w + 1);
  std::printf("sum = %.3f; matches kiln's built-in ops: %s\n", y.item<double>(),
              kiln::allclose(y.get(), built_in.get(), 1e-4) ? "True" : "False");
}

// Every kiln exception derives from kiln::Error; each message says what to do.
void handle_errors(kiln::Device d) {
  section("kiln's exceptions");
  try {
    kiln::Array bad =
        kiln::ones({2, 3}, kiln::DType::Float64, d) + kiln::ones({4}, kiln::DType::Float64, d);
  } catch (const kiln::ShapeError& e) {
    std::cout << "kiln::ShapeError: " << e.what() << "\n";
  }
  try {
    kiln::Array gpu = kiln::zeros({3}, kiln::DType::Float64, kiln::cuda());
    kiln::sum(gpu + kiln::zeros({3})).eval();  // host + device without an explicit copy
  } catch (const kiln::DeviceError& e) {
    std::cout << "kiln::DeviceError: " << e.what() << "\n";
  }
  try {
    kiln::elementwise("2 * x", {{"2x", kiln::zeros({3})}}, kiln::DType::Float64);
  } catch (const kiln::Error& e) {
    std::cout << "kiln::Error: " << e.what() << "\n";
  }
  if (kiln::cuda_available()) {
    try {  // compiled at the first evaluation: NVRTC's log names the mistake
      kiln::elementwise("sinf(x) +", {{"x", kiln::zeros({3}, kiln::DType::Float32, d)}},
                        kiln::DType::Float32)
          .eval();
    } catch (const kiln::CompileError& e) {
      std::string what = e.what();
      std::cout << "kiln::CompileError: " << what.substr(0, what.find('\n')) << "\n";
    }
  }
}

// The program's own CUDA stream: its copy in, kiln's work and its copies out, in stream order;
// the copy in is not waited for (StreamScope orders kiln's evaluation after it by events).
void on_the_programs_stream() {
  section("kiln on the program's stream");
  if (!kiln::cuda_available()) {
    std::printf(
        "no GPU: skipped. With one, kiln::StreamScope puts kiln's work in the program's\n"
        "stream order.\n");
    return;
  }
  const int n = 1 << 20;
  std::vector<float> in(n, 0.5f), out(n);
  cudaStream_t mine = nullptr;
  void *d_in = nullptr, *d_out = nullptr;
  if (cudaStreamCreate(&mine) != cudaSuccess || cudaMalloc(&d_in, n * 4) != cudaSuccess ||
      cudaMalloc(&d_out, n * 4) != cudaSuccess)
    throw kiln::Error("cudaStreamCreate/cudaMalloc failed");
  cudaMemcpyAsync(d_in, in.data(), n * 4, cudaMemcpyHostToDevice, mine);  // no sync after it
  {
    kiln::StreamScope scope(kiln::Stream::wrap(mine, kiln::cuda()));
    kiln::Array x = kiln::wrap(d_in, kiln::DType::Float32, {n}, kiln::cuda());
    kiln::Array y = (kiln::exp(x) * 2.0f).eval();  // after the copy in; returns at once
    // y.data() waits for kiln's work on y (not for the device); the program's copy of it, queued
    // on its stream after the scope's evaluations, then runs in order.
    cudaMemcpyAsync(d_out, y.data(), n * 4, cudaMemcpyDeviceToDevice, mine);
  }
  cudaMemcpyAsync(out.data(), d_out, n * 4, cudaMemcpyDeviceToHost, mine);
  cudaStreamSynchronize(mine);
  std::printf("exp(0.5) * 2 through the program's stream: out[0] = %.4f, out[n-1] = %.4f\n", out[0],
              out[n - 1]);
  cudaFree(d_in);
  cudaFree(d_out);
  cudaStreamDestroy(mine);
}

// DLPack: kiln's array handed to another library (here the program reads the DLTensor itself,
// as a consumer would), and another library's column-major matrix read by kiln in place.
void dlpack_hand_off(kiln::Device d) {
  section("DLPack, both ways");
  kiln::Array a = kiln::arange(0, 12, 1, kiln::DType::Float32, d).reshape({3, 4}) * 2;
  DLManagedTensor* t = kiln::to_dlpack(a);
  const DLTensor& dl = t->dl_tensor;
  std::printf("to_dlpack: %s tensor, shape (%lld, %lld), strides (%lld, %lld), %d-bit floats\n",
              dl.device.device_type == kDLCUDA ? "kDLCUDA" : "kDLCPU",
              static_cast<long long>(dl.shape[0]), static_cast<long long>(dl.shape[1]),
              static_cast<long long>(dl.strides[0]), static_cast<long long>(dl.strides[1]),
              dl.dtype.bits);
  kiln::Array back = kiln::from_dlpack(t);  // kiln owns t now and calls its deleter
  std::printf("from_dlpack(to_dlpack(a)) reads a's memory: %s\n",
              back.data() == a.data() ? "true" : "false");

  // A producer's 2x3 matrix [[1, 2, 3], [4, 5, 6]] in column-major order: strides (1, 2).
  static std::vector<double> columns = {1, 4, 2, 5, 3, 6};
  static int64_t shape[] = {2, 3}, strides[] = {1, 2};
  static DLManagedTensor producer{};
  producer.dl_tensor = {columns.data(), {kDLCPU, 0}, 2, {kDLFloat, 64, 1}, shape, strides, 0};
  producer.deleter = [](DLManagedTensor*) { std::printf("the producer's deleter ran\n"); };
  {
    kiln::Array m = kiln::from_dlpack(&producer);
    std::vector<double> rows = kiln::sum(m, 1).to_vector<double>();
    std::printf("a column-major matrix from DLPack, shape (2, 3): row sums %.0f %.0f\n", rows[0],
                rows[1]);
  }
}

}  // namespace

int main() {
  kiln::Device d = kiln::cuda_available() ? kiln::cuda() : kiln::host();
  std::cout << "computing on " << d.str() << "\n";
  try {
    vector_statistics(d);
    eigen_round_trip(d);
    device_pointers();
    user_function();
    handle_errors(d);
    on_the_programs_stream();
    dlpack_hand_off(d);
  } catch (const kiln::Error& e) {  // anything else kiln reports ends the program cleanly
    std::cerr << "kiln error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
