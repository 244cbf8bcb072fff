// Device helpers around cuFFT calls: cropping / zero-padding a transform's input (with the
// real <-> complex conversions of the length-1 real transforms), zeroing the imaginary parts
// C2R must ignore, the full spectrum of real input from its half, and the normalisation
// scale. src/cuda/fft_kernels.cpp instantiates each as an extern "C" kernel.
#pragma once
#include "kiln/complex.cuh"
#include "kiln/types.cuh"

namespace kiln {
namespace fft {

// Mirrors kiln::gpu::fft::PadLayout on the host: row-major extents, outermost first.
struct PadLayout {
  i64 rank;
  i64 src[8];
  i64 dst[8];
};

// Element conversions: same type, real -> complex (zero imaginary part), complex -> real
// (the real part). Partial ordering picks the complex overload for complex sources.
template <class D>
struct elem {
  template <class S>
  __device__ static D from(S x) {
    return x;
  }
  template <class T>
  __device__ static D from(complex<T> x) {
    return x.re;
  }
};
template <class T>
struct elem<complex<T> > {
  __device__ static complex<T> from(complex<T> x) { return x; }
  __device__ static complex<T> from(T x) { return complex<T>(x, (T)0); }
};

template <class S, class D>
__device__ void pad_copy(const S* __restrict__ src, D* __restrict__ dst, const PadLayout& l,
                         i64 n) {
  i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    i64 rest = i, at = 0, step = 1;
    bool inside = true;
    for (int d = (int)l.rank - 1; d >= 0; --d) {
      i64 c = rest % l.dst[d];
      rest /= l.dst[d];
      inside = inside && c < l.src[d];
      at += c * step;
      step *= l.src[d];
    }
    dst[i] = inside ? elem<D>::from(src[at]) : D();
  }
}

// data viewed as [outer, extent, inner]: entries `first` and `second` (if >= 0) of the middle
// dimension get a zero imaginary part.
template <class T>
__device__ void zero_imag(complex<T>* data, i64 outer, i64 extent, i64 inner, i64 first,
                          i64 second) {
  i64 per_index = outer * inner, n = second >= 0 ? 2 * per_index : per_index;
  i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    i64 k = i < per_index ? first : second, j = i % per_index;
    data[((j / inner) * extent + k) * inner + j % inner].im = 0;
  }
}

// Mirrors kiln::gpu::fft::HermitianLayout on the host; see HermitianOp in
// src/cuda/fft_program.hpp for the layout and the formula.
struct HermitianLayout {
  i64 rank;
  i64 outer[8];
  i64 mirror[8];
  i64 rows, n, half, src_extent, inner, write_half;
};

// Source-driven, so that it may run in place: each thread reads one entry k < half of src and
// writes that entry and its mirror image (k > n / 2, never read). Grid: x along a line's half,
// y over lines.
template <class T>
__device__ void expand_hermitian(const complex<T>* src, complex<T>* dst, const HermitianLayout& l,
                                 T factor) {
  i64 cols = l.half * l.inner, last = l.n - l.half;  // entries 1 .. last have a mirror image
  i64 first_col = (i64)blockIdx.x * blockDim.x + threadIdx.x,
      col_step = (i64)gridDim.x * blockDim.x;
  for (i64 row = blockIdx.y; row < l.rows; row += gridDim.y) {
    i64 rest = row, mrow = 0, mul = 1;
    for (int d = (int)l.rank - 1; d >= 0; --d) {
      i64 c = rest % l.outer[d];
      rest /= l.outer[d];
      if (l.mirror[d] && c) c = l.outer[d] - c;
      mrow += c * mul;
      mul *= l.outer[d];
    }
    const complex<T>* s = src + row * l.src_extent * l.inner;
    complex<T>* d = dst + row * l.n * l.inner;
    complex<T>* m = dst + mrow * l.n * l.inner;
    for (i64 col = first_col; col < cols; col += col_step) {
      i64 k = l.inner == 1 ? col : col / l.inner;
      bool mirrored = k >= 1 && k <= last;
      if (!mirrored && !l.write_half) continue;
      complex<T> v = s[col];
      v.re *= factor;
      v.im *= factor;
      if (l.write_half) d[col] = v;
      if (mirrored) m[(l.n - k) * l.inner + (col - k * l.inner)] = complex<T>(v.re, -v.im);
    }
  }
}

template <class T>
__device__ void scale(T* data, i64 n, T factor) {
  i64 stride = (i64)gridDim.x * blockDim.x;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) data[i] *= factor;
}

}  // namespace fft
}  // namespace kiln
