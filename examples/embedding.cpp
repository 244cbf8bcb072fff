// kiln inside an existing C++ program: data from a std::vector and from Eigen matrices goes in,
// kiln computes (on the GPU when there is one), results come back as plain C++ values, and kiln's
// exceptions are handled like any other. tests/install builds a program like this one against
// an installed kiln (find_package(kiln CONFIG REQUIRED), target_link_libraries(... kiln::kiln)).
#include <kiln/kiln.hpp>

#include <Eigen/Dense>
#include <cstdio>
#include <iostream>
#include <vector>

namespace {

using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// asarray copies the caller's memory into a kiln buffer, so the caller may free or change it
// right after. A row-major matrix is already in kiln's (NumPy's C) order.
kiln::Array from_eigen(const RowMajor& m, kiln::Device d) {
  return kiln::asarray(m.data(), kiln::DType::Float64, {m.rows(), m.cols()}, d);
}

// Eigen's default is column-major: its memory is the C-order transpose, so read it with the
// shape reversed and take the transpose view (free: it folds into the kernel that reads it).
kiln::Array from_eigen(const Eigen::MatrixXd& m, kiln::Device d) {
  return kiln::asarray(m.data(), kiln::DType::Float64, {m.cols(), m.rows()}, d).T();
}

void vector_statistics(kiln::Device d) {
  std::vector<float> samples(1000);
  for (size_t i = 0; i < samples.size(); ++i) samples[i] = static_cast<float>(i % 17) * 0.5f;
  kiln::Array x = kiln::asarray(samples, d);
  kiln::Array centred = x - kiln::mean(x);  // mean is a 0-d array: it broadcasts, no host trip
  double spread = kiln::sqrt(kiln::mean(centred * centred)).item<double>();
  std::printf("std::vector<float>(1000): mean %.4f, std %.4f, max %.1f\n",
              kiln::mean(x).item<double>(), spread, kiln::max(x).item<double>());
}

void eigen_round_trip(kiln::Device d) {
  RowMajor a(2, 3);
  a << 1, 2, 3, 4, 5, 6;
  Eigen::MatrixXd b = Eigen::MatrixXd::Constant(2, 3, 0.5);
  // Row sums of a * b + 1, back into an Eigen vector.
  kiln::Array rows = kiln::sum(from_eigen(a, d) * from_eigen(b, d) + 1, {1});
  std::vector<double> values = rows.to_vector<double>();
  Eigen::VectorXd result = Eigen::Map<Eigen::VectorXd>(values.data(), values.size());
  std::cout << "row sums of a * b + 1 from Eigen: " << result.transpose() << "\n";
}

// Every kiln exception derives from kiln::Error; each message says what to do.
void handle_errors(kiln::Device d) {
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
}

}  // namespace

int main() {
  kiln::Device d = kiln::cuda_available() ? kiln::cuda() : kiln::host();
  std::cout << "computing on " << d.str() << "\n";
  try {
    vector_statistics(d);
    eigen_round_trip(d);
    handle_errors(d);
  } catch (const kiln::Error& e) {  // anything else kiln reports ends the program cleanly
    std::cerr << "kiln error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
