// The outside project of tests/install: computes with kiln, catches a kiln exception and prints
// one line that run.cmake checks.
#include <iostream>

#include <kiln/kiln.hpp>

int main() {
  kiln::Array x = kiln::arange(0, 10, 1, kiln::DType::Float64);
  double total = kiln::sum(x * 2 + 1).item<double>();  // 1 + 3 + ... + 19 = 100
  bool caught = false;
  try {
    kiln::Array bad = kiln::zeros({2, 3}) + kiln::zeros({4});
  } catch (const kiln::ShapeError&) {
    caught = true;
  }
  std::cout << "kiln consumer: sum " << total << ", ShapeError " << (caught ? "caught" : "missed")
            << "\n";
  return total == 100 && caught ? 0 : 1;
}
