// The CuPy tutorial kiln grew from, step by step, in C++ (shared/seed/cupy-tutorial.txt).
// On a machine without a GPU it walks every host step and says where the GPU steps would be.
#include <kiln/kiln.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>

namespace {

// Best wall time of `repeats` calls, in ms; `first` gets the very first call's time.
double best_ms(const std::function<void()>& f, int repeats, double* first = nullptr) {
  double best = 1e300;
  for (int i = 0; i < repeats; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (i == 0 && first) *first = ms;
    best = std::min(best, ms);
  }
  return best;
}

void step(const char* title) { std::printf("\n== %s\n", title); }

}  // namespace

int main() {
  bool gpu = kiln::cuda_available();
  std::printf("kiln seed tour: the CuPy tutorial in C++. GPU: %s\n",
              gpu ? "found" : "none found (host steps only)");

  step("arr_cpu = randint(0, 255, size=(2000, 2000))");
  auto arr_cpu = kiln::random::randint(0, 255, {2000, 2000});
  std::cout << arr_cpu << "\n";
  std::printf("arr_cpu.nbytes / 1e6 = %.1f MB\n", arr_cpu.nbytes() / 1e6);

  step("x = array([100, 12, 32])");
  auto x = kiln::asarray<int64_t>({100, 12, 32});
  std::printf("x.nbytes = %lld bytes (3 int64 elements of 8 bytes)\n",
              static_cast<long long>(x.nbytes()));

  step("arr_gpu = asarray(arr_cpu, cuda())");
  if (gpu) {
    double ms = best_ms([&] { kiln::asarray(arr_cpu, kiln::cuda()).eval(); }, 5);
    std::printf("host -> device copy of %.0f MB: best of 5: %.3f ms\n", arr_cpu.nbytes() / 1e6, ms);
  } else {
    try {
      kiln::asarray(arr_cpu, kiln::cuda());
    } catch (const kiln::DeviceError& e) {
      std::printf("DeviceError: %s\n", e.what());
    }
  }

  step("fftn on the host (4000 x 4000 int64, FFTW)");
  auto big = kiln::random::randint(0, 255, {4000, 4000}).eval();
  double first = 0;
  double warm = best_ms([&] { kiln::fft::fftn(big).eval(); }, 3, &first);
  std::printf("first call: %.1f ms (FFTW plan creation), warm: best of 3: %.1f ms\n", first, warm);
  auto f_cpu = kiln::fft::fftn(big).eval();
  std::printf("result: dtype %s, shape %s, f[0,0] = %.0f (the sum of all elements)\n",
              kiln::dtype_name(f_cpu.dtype()), kiln::shape_str(f_cpu.shape()).c_str(),
              kiln::real(f_cpu(0, 0)).item<double>());

  step("max(arr_cpu)");
  auto m = kiln::max(arr_cpu);
  std::printf("max is a lazy 0-d Array (ndim %d) on %s; its value: %lld\n", m.ndim(),
              m.device().str().c_str(), static_cast<long long>(m.item<int64_t>()));

  if (!gpu) {
    step("GPU steps");
    std::printf(
        "No GPU on this machine: the device fftn, allclose(f_cpu, f_gpu.get()), max on the\n"
        "device and randint on the device run where kiln::cuda_available() is true.\n");
  }
  return 0;
}
