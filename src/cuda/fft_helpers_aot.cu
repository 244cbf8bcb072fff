// kernels/fft.cuh's helpers compiled ahead of time, so that a first FFT compiles nothing: the
// first fftn of int64 input in a process with an empty kernel cache paid two NVRTC compiles
// (its cast and its Hermitian expansion, about 30 ms of 37 on the H200; CuPy's first call
// takes 8 ms). Each kernel here is the template instance that fft_kernels.cpp's extern "C"
// wrapper of the same name calls, with the same parameters and block bound, so a launch packs
// the same arguments and gets the same bits. helper_kernels.cpp launches it where kiln's build
// has SASS for the device (CMakeLists.txt builds this file as SASS only, no PTX), else NVRTC
// compiles the wrapper as before.
//
// Instantiated: exactly what an FFT step can launch (fft_kernels.cpp's helper_names()):
//   pad (crop / zero-pad) real -> real, complex -> complex, real -> complex, complex -> real,
//   zero_imag, hermitian and scale, each in single (f32 / c64) and double precision;
//   convert from bool and each integer dtype to f64 (integer input is always transformed in
//   double precision: plan/planner.cpp casts it to float64).
// Compiling this file costs a few seconds on one core (CMakeLists.txt, kiln_fft_aot).
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cuda/fft_helpers_aot.hpp"
#include "cuda/helper_kernels.hpp"
#include "kiln/fft.cuh"

namespace kiln::gpu::fft::aot {
namespace {

using helpers::kBlock;
using kiln::complex;
using kiln::fft::HermitianLayout;
using kiln::fft::PadLayout;

// The wrappers, as fft_kernels.cpp spells them for NVRTC (convert is pad with integer input).
template <class S, class D>
__global__ void __launch_bounds__(kBlock) pad(const S* src, D* dst, PadLayout layout, long long n) {
  kiln::fft::pad_copy(src, dst, layout, n);
}

template <class T>
__global__ void __launch_bounds__(kBlock)
    zero_imag(complex<T>* data, long long outer, long long extent, long long inner, long long first,
              long long second) {
  kiln::fft::zero_imag(data, outer, extent, inner, first, second);
}

template <class T>
__global__ void __launch_bounds__(kBlock)
    hermitian(const complex<T>* src, complex<T>* dst, HermitianLayout layout, T factor) {
  kiln::fft::expand_hermitian(src, dst, layout, factor);
}

template <class T>
__global__ void __launch_bounds__(kBlock) scale(T* data, long long n, T factor) {
  kiln::fft::scale(data, n, factor);
}

// plan::dtype_short's names of the types, as the helpers' names carry them.
template <class T>
constexpr const char* tag = nullptr;
template <>
constexpr const char* tag<bool> = "b";
template <>
constexpr const char* tag<signed char> = "i8";
template <>
constexpr const char* tag<short> = "i16";
template <>
constexpr const char* tag<int> = "i32";
template <>
constexpr const char* tag<long long> = "i64";
template <>
constexpr const char* tag<unsigned char> = "u8";
template <>
constexpr const char* tag<unsigned short> = "u16";
template <>
constexpr const char* tag<unsigned int> = "u32";
template <>
constexpr const char* tag<unsigned long long> = "u64";
template <>
constexpr const char* tag<float> = "f32";
template <>
constexpr const char* tag<double> = "f64";
template <>
constexpr const char* tag<complex<float>> = "c64";
template <>
constexpr const char* tag<complex<double>> = "c128";

using Table = std::unordered_map<std::string, const void*>;

// t[kiln_fft_WHAT_TAG...] = kernel, the tags those of Types.
template <class... Types, class Kernel>
void add(Table& t, const char* what, Kernel* kernel) {
  std::string name = std::string("kiln_fft_") + what;
  ((name += std::string("_") + tag<Types>), ...);
  t.emplace(std::move(name), reinterpret_cast<const void*>(kernel));
}

// The helpers of one precision: real R, complex C.
template <class R>
void add_precision(Table& t) {
  using C = complex<R>;
  add<R, R>(t, "pad", pad<R, R>);
  add<C, C>(t, "pad", pad<C, C>);
  add<R, C>(t, "pad", pad<R, C>);
  add<C, R>(t, "pad", pad<C, R>);
  add<C>(t, "zero_imag", zero_imag<R>);
  add<C>(t, "hermitian", hermitian<R>);
  add<R>(t, "scale", scale<R>);
}

template <class... From>
void add_converts(Table& t) {
  (add<From, double>(t, "convert", pad<From, double>), ...);
}

const Table& table() {
  static const Table t = [] {
    Table t;
    add_precision<float>(t);
    add_precision<double>(t);
    add_converts<bool, signed char, short, int, long long, unsigned char, unsigned short,
                 unsigned int, unsigned long long>(t);
    return t;
  }();
  return t;
}

}  // namespace

const void* kernel(const std::string& name) {
  auto it = table().find(name);
  return it == table().end() ? nullptr : it->second;
}

std::vector<std::string> names() {
  std::vector<std::string> all;
  for (const auto& entry : table()) all.push_back(entry.first);
  return all;
}

}  // namespace kiln::gpu::fft::aot
