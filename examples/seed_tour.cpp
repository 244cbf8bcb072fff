// The CuPy tutorial kiln grew from, step by step, in C++ (shared/seed/cupy-tutorial.txt).
// On a machine without a GPU it walks every host step and says where the GPU steps would be.
#include <kiln/cache.hpp>
#include <kiln/kiln.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

void step(const char* title) { std::printf("\n== %s\n", title); }

void host_steps(kiln::Array& arr_cpu) {
  step("arr_cpu = randint(0, 255, size=(2000, 2000))");
  arr_cpu = kiln::random::randint(0, 255, {2000, 2000});
  std::cout << arr_cpu << "\n";
  std::printf("arr_cpu.nbytes / 1e6 = %.1f MB\n", arr_cpu.nbytes() / 1e6);

  step("x = array([100, 12, 32])");
  auto x = kiln::asarray<int64_t>({100, 12, 32});
  std::printf("x.nbytes = %lld bytes (3 int64 elements of 8 bytes)\n",
              static_cast<long long>(x.nbytes()));
}

void copy_steps(const kiln::Array& arr_cpu) {
  step("%%timeit arr_gpu = asarray(arr_cpu, cuda())   (2000 x 2000, then 4000 x 4000)");
  auto big = kiln::random::randint(0, 255, {4000, 4000}).eval();
  for (const kiln::Array* a : {&arr_cpu, static_cast<const kiln::Array*>(&big)}) {
    auto r = kiln::timeit([&] { kiln::asarray(*a, kiln::cuda()).eval(); });
    std::printf("  %s: %.0f MB at %.1f GB/s\n", kiln::shape_str(a->shape()).c_str(),
                a->nbytes() / 1e6, a->nbytes() / r.best / 1e9);
  }
  std::printf(
      "It costs what moving the bytes over PCIe costs: kiln's host arrays are pinned, so\n"
      "the copy runs at DMA speed; keep data on the device between operations.\n");
}

// fftn on one device: the first call, then the best of the warm ones; the result.
kiln::Array fft_steps(const kiln::Array& a, kiln::Device d) {
  auto before = kiln::cache::stats();
  auto t0 = Clock::now();
  auto f = kiln::fft::fftn(a).eval();
  kiln::synchronize(d);
  double first = ms_since(t0);
  auto after = kiln::cache::stats();
  kiln::TimeitOptions quiet;
  quiet.print = false;
  quiet.device = d;
  double warm = kiln::timeit([&] { kiln::fft::fftn(a).eval(); }, quiet).best * 1e3;
  std::printf("%s: first call %.1f ms, warm calls (timeit best of 5): %.3f ms (%.0fx)\n",
              d.str().c_str(), first, warm, first / warm);
  std::printf(
      "  why the first call is slow: %lld kernels compiled by NVRTC (%.1f ms), %lld found "
      "in the disk cache, %lld in memory; plus FFT plan creation\n",
      static_cast<long long>(after.compiles - before.compiles),
      after.compile_ms - before.compile_ms,
      static_cast<long long>(after.disk_hits - before.disk_hits),
      static_cast<long long>(after.memory_hits - before.memory_hits));
  return f;
}

void device_steps(const kiln::Array& arr_cpu) {
  copy_steps(arr_cpu);
  step("fftn on the host (FFTW) and on the GPU (cuFFT), 4000 x 4000 int64");
  auto a_cpu = kiln::random::randint(0, 255, {4000, 4000}).eval();
  auto a_gpu = kiln::asarray(a_cpu, kiln::cuda()).eval();
  auto f_cpu = fft_steps(a_cpu, kiln::host());
  auto f_gpu = fft_steps(a_gpu, kiln::cuda());
  std::printf("allclose(f_cpu, f_gpu.get()) = %s\n",
              kiln::allclose(f_cpu, f_gpu.get()) ? "True" : "False");

  step("max(arr_gpu)");
  auto m = kiln::max(a_gpu);
  std::printf("max on the device is a 0-d device Array (ndim %d, on %s): %lld\n", m.ndim(),
              m.device().str().c_str(), static_cast<long long>(m.get().item<int64_t>()));

  step("mixing host and device arrays");
  try {
    kiln::sum(a_cpu + a_gpu).eval();
  } catch (const kiln::DeviceError& e) {
    std::printf("DeviceError: %s\n", e.what());
  }

  step("randint directly on the device");
  auto r = kiln::random::randint(0, 255, {2000, 2000}, kiln::DType::Int64, kiln::cuda());
  std::cout << r.get() << "\n";
}

}  // namespace

int main() {
  bool gpu = kiln::cuda_available();
  std::printf("kiln seed tour: the CuPy tutorial in C++. GPU: %s\n",
              gpu ? "found" : "none found (host steps only)");
  kiln::Array arr_cpu;
  host_steps(arr_cpu);
  if (gpu) {
    device_steps(arr_cpu);
    return 0;
  }
  step("arr_gpu = asarray(arr_cpu, cuda())");
  try {
    kiln::asarray(arr_cpu, kiln::cuda());
  } catch (const kiln::DeviceError& e) {
    std::printf("DeviceError: %s\n", e.what());
  }
  step("fftn on the host (4000 x 4000 int64, FFTW)");
  auto a = kiln::random::randint(0, 255, {4000, 4000}).eval();
  auto f = fft_steps(a, kiln::host());
  std::printf("result: dtype %s, shape %s, f[0,0] = %.0f (the sum of all elements)\n",
              kiln::dtype_name(f.dtype()), kiln::shape_str(f.shape()).c_str(),
              kiln::real(f(0, 0)).item<double>());
  step("max(arr_cpu)");
  auto m = kiln::max(arr_cpu);
  std::printf("max is a lazy 0-d Array (ndim %d) on %s; its value: %lld\n", m.ndim(),
              m.device().str().c_str(), static_cast<long long>(m.item<int64_t>()));
  step("GPU steps");
  std::printf(
      "No GPU on this machine: the device copies, fftn on cuFFT, allclose(f_cpu, f_gpu.get()),\n"
      "max on the device and randint on the device run where kiln::cuda_available() is true.\n");
  return 0;
}
