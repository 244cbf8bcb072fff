// Discrete Fourier transforms with numpy.fft's names, arguments and results.
//
// Every function is lazy like the rest of kiln: it adds one FFT node, which runs through FFTW
// on the host and cuFFT on a GPU. Common rules:
//  - n / s: the transform length per axis. A shorter input is zero-padded, a longer one is
//    cropped. Default: the input's length (irfft*: 2 * (m - 1) on the last axis).
//  - axis / axes: may be negative; each axis at most once. fftn's default is every axis, or the
//    last len(s) axes when only s is given. The last of `axes` is the halved axis of rfftn /
//    irfftn.
//  - norm: "backward" (default: 1/N on the inverse), "ortho" (1/sqrt(N) both ways) or
//    "forward" (1/N on the forward transform).
//  - dtypes: float32 and complex64 inputs give complex64 (irfft*: float32); every other input
//    (bool, int, float64, complex128) gives complex128 (irfft*: float64). rfft* refuse complex
//    input instead of discarding the imaginary part as NumPy does.
// Errors: ShapeError for a bad axis or length, DTypeError for complex rfft* input, kiln::Error
// for an unknown norm.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "kiln/array.hpp"

namespace kiln::fft {

using Lengths = std::optional<std::vector<int64_t>>;
using FftAxes = std::optional<std::vector<int>>;

Array fft(const Array& a, std::optional<int64_t> n = std::nullopt, int axis = -1,
          std::string_view norm = "backward");
Array ifft(const Array& a, std::optional<int64_t> n = std::nullopt, int axis = -1,
           std::string_view norm = "backward");

Array fft2(const Array& a, Lengths s = std::nullopt, std::vector<int> axes = {-2, -1},
           std::string_view norm = "backward");
Array ifft2(const Array& a, Lengths s = std::nullopt, std::vector<int> axes = {-2, -1},
            std::string_view norm = "backward");

Array fftn(const Array& a, Lengths s = std::nullopt, FftAxes axes = std::nullopt,
           std::string_view norm = "backward");
Array ifftn(const Array& a, Lengths s = std::nullopt, FftAxes axes = std::nullopt,
            std::string_view norm = "backward");

// Real input: the output's last transformed axis has n / 2 + 1 entries (the rest follow from
// Hermitian symmetry).
Array rfft(const Array& a, std::optional<int64_t> n = std::nullopt, int axis = -1,
           std::string_view norm = "backward");
Array rfftn(const Array& a, Lengths s = std::nullopt, FftAxes axes = std::nullopt,
            std::string_view norm = "backward");

// The inverse of rfft / rfftn: n (s) is the real output length; give it for odd lengths, since
// the default 2 * (m - 1) is always even.
Array irfft(const Array& a, std::optional<int64_t> n = std::nullopt, int axis = -1,
            std::string_view norm = "backward");
Array irfftn(const Array& a, Lengths s = std::nullopt, FftAxes axes = std::nullopt,
             std::string_view norm = "backward");

// ---- frequencies and shifts ------------------------------------------------------------------
// The sample frequencies of fft(n samples spaced d apart): [0, 1, .., (n-1)/2, -(n/2), .., -1] /
// (n * d), float64; rfftfreq: [0, 1, .., n/2] / (n * d). Lazy (an arange times a scalar).
Array fftfreq(int64_t n, double d = 1.0, Device device = host());
Array rfftfreq(int64_t n, double d = 1.0, Device device = host());
// Moves the zero frequency to the centre: a roll by n / 2 along each of `axes` (default: every
// axis); ifftshift rolls by -(n / 2) and undoes it for odd n too. A roll (an index map), which
// the kernel reading the result gathers through: nothing is written for the shift itself.
Array fftshift(const Array& a, FftAxes axes = std::nullopt);
Array ifftshift(const Array& a, FftAxes axes = std::nullopt);

// ---- the GPU plan cache ----------------------------------------------------------------------
// cuFFT plans are kept in an LRU cache keyed by the transform's shape, axes, type, batch,
// strides and device, capped on the number of plans and on the bytes of their work areas
// (device memory from kiln's allocator, held while a plan stays cached). One transform may
// use several plans (one per pass; see src/cuda/fft_program.hpp). Thread-safe. The host's
// FFTW plans have a cache of their own, not counted here.
struct PlanCacheInfo {
  size_t plans, work_bytes;          // cached now, and their work areas' device bytes
  size_t max_plans, max_work_bytes;  // the limits (defaults: 64 plans, 1 GiB)
  int64_t hits, misses;              // plan lookups since the process started
};
PlanCacheInfo plan_cache();
// Evicts the least recently used plans at once when over either limit. max_plans 0 turns
// caching off: each transform then plans anew.
void set_plan_cache_limits(size_t max_plans, size_t max_work_bytes);
// Destroys every cached plan (the counters keep counting).
void clear_plan_cache();

}  // namespace kiln::fft
