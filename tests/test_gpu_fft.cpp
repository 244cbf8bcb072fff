// FFT on the GPU (cuFFT) against the host (FFTW).
//
// Without a GPU two things still run: the helper kernels compile with NVRTC, and every pass
// program the cuFFT executor would run is interpreted here by an emulator of cuFFT's advanced
// data layout (naive DFTs), whose results must equal the host's. That checks the pass scheme,
// strides, distances, embeds, loop offsets and C2R clean-up on any machine. With a GPU, every
// case also runs through cuFFT; the GPU cases say "no GPU found: skipped" otherwise.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstring>
#include <functional>
#include <kiln/cache.hpp>
#include <kiln/kiln.hpp>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

#include "cuda/fft_helpers_aot.hpp"
#include "cuda/fft_kernels.hpp"
#include "cuda/fft_program.hpp"
#include "cuda/runtime.hpp"
#include "plan/planner.hpp"
#include "support/child_case.hpp"
#include "support/gpu.hpp"
#include "support/temp_cache.hpp"

namespace {

using cd = std::complex<double>;
using kiln::Array;
using kiln::DType;
using kiln::Shape;
namespace gf = kiln::gpu::fft;
namespace kf = kiln::fft;
using Fn = std::function<Array(const Array&)>;

// Values with negatives, zeros and fractions (complex ones not Hermitian), in dtype t.
Array sample(const Shape& s, DType t, double shift = 0.0) {
  int64_t n = kiln::shape_size(s);
  std::vector<double> re(n), im(n);
  for (int64_t i = 0; i < n; ++i) {
    re[i] = 3.0 * std::sin(0.7 * i + shift);
    im[i] = std::cos(0.3 * i - shift);
  }
  if (kiln::is_integer(t)) return kiln::floor(kiln::asarray(re, s) * 10).astype(t).eval();
  Array a = kiln::asarray(re, s);
  if (kiln::is_complex(t)) a = a + kiln::asarray(im, s) * std::complex<double>(0, 1);
  return a.astype(t).eval();
}

// ---- the cases: every function, axes in any order, subsets, s / n, each norm ----------------
// Full: fft / fftn cases meant for real input (R2CFull: a real transform, then the expansion).
enum class Family { C2C, R2C, C2R, Full };
struct Case {
  std::string name;
  Shape shape;
  Family family;
  Fn f;
};

using L = std::vector<int64_t>;
using X = std::vector<int>;

std::vector<Case> c2c_cases() {
  using namespace kiln::fft;
  return {
      {"fft (16)", {16}, Family::C2C, [](const Array& a) { return fft(a); }},
      {"fft (15) n=20 pad", {15}, Family::C2C, [](const Array& a) { return fft(a, 20); }},
      {"fft (15) n=7 crop ortho",
       {15},
       Family::C2C,
       [](const Array& a) { return fft(a, 7, -1, "ortho"); }},
      {"fft (6,10) axis 0", {6, 10}, Family::C2C, [](const Array& a) { return fft(a, {}, 0); }},
      {"fft (4,5,6) axis 1 (batch inner, loop outer)",
       {4, 5, 6},
       Family::C2C,
       [](const Array& a) { return fft(a, {}, 1); }},
      {"fft (6,5,4) axis -2 n=9 (batch outer, loop inner)",
       {6, 5, 4},
       Family::C2C,
       [](const Array& a) { return fft(a, 9, -2); }},
      {"fft (4,1,3) axis 1 (length 1: a copy)",
       {4, 1, 3},
       Family::C2C,
       [](const Array& a) { return fft(a, {}, 1); }},
      {"ifft (4,5,6) axis 0 ortho",
       {4, 5, 6},
       Family::C2C,
       [](const Array& a) { return ifft(a, {}, 0, "ortho"); }},
      {"ifft (7) forward",
       {7},
       Family::C2C,
       [](const Array& a) { return ifft(a, {}, -1, "forward"); }},
      {"fft2 (8,12)", {8, 12}, Family::C2C, [](const Array& a) { return fft2(a); }},
      {"fft2 (3,8,12) axes (0,2)",
       {3, 8, 12},
       Family::C2C,
       [](const Array& a) {
         return fft2(a, {}, X{0, 2});
       }},
      {"fft2 (5,6,7) axes (-1,0) s (4,9)",
       {5, 6, 7},
       Family::C2C,
       [](const Array& a) {
         return fft2(a, L{4, 9}, X{-1, 0});
       }},
      {"ifft2 (6,10) s (8,8) ortho",
       {6, 10},
       Family::C2C,
       [](const Array& a) {
         return ifft2(a, L{8, 8}, X{-2, -1}, "ortho");
       }},
      {"ifft2 (2,3,4,5) axes (1,2) forward",
       {2, 3, 4, 5},
       Family::C2C,
       [](const Array& a) {
         return ifft2(a, {}, X{1, 2}, "forward");
       }},
      {"fftn (4,6,10)", {4, 6, 10}, Family::C2C, [](const Array& a) { return fftn(a); }},
      {"fftn (3,4,5,6,2) (3-D + 2-D plans)",
       {3, 4, 5, 6, 2},
       Family::C2C,
       [](const Array& a) { return fftn(a); }},
      {"fftn (2,3,4,5) axes (0,2)",
       {2, 3, 4, 5},
       Family::C2C,
       [](const Array& a) {
         return fftn(a, {}, X{0, 2});
       }},
      {"fftn (2,3,4,5) axes (3,1,0)",
       {2, 3, 4, 5},
       Family::C2C,
       [](const Array& a) {
         return fftn(a, {}, X{3, 1, 0});
       }},
      {"fftn (5,1,6) axes (0,2) across an extent-1 axis",
       {5, 1, 6},
       Family::C2C,
       [](const Array& a) {
         return fftn(a, {}, X{0, 2});
       }},
      {"fftn (3,4,7) s (6,5) alone",
       {3, 4, 7},
       Family::C2C,
       [](const Array& a) {
         return fftn(a, L{6, 5});
       }},
      {"fftn (6,8) axes () (identity)",
       {6, 8},
       Family::C2C,
       [](const Array& a) { return fftn(a, {}, X{}); }},
      {"ifftn (4,6,10) ortho",
       {4, 6, 10},
       Family::C2C,
       [](const Array& a) { return ifftn(a, {}, {}, "ortho"); }},
      {"ifftn (3,5,4) s (2,7,4) axes (2,0,1) forward",
       {3, 5, 4},
       Family::C2C,
       [](const Array& a) {
         return ifftn(a, L{2, 7, 4}, X{2, 0, 1}, "forward");
       }},
  };
}

std::vector<Case> r2c_cases() {
  using namespace kiln::fft;
  return {
      {"rfft (16)", {16}, Family::R2C, [](const Array& a) { return rfft(a); }},
      {"rfft (15) n=20 pad", {15}, Family::R2C, [](const Array& a) { return rfft(a, 20); }},
      {"rfft (15) n=6 crop forward",
       {15},
       Family::R2C,
       [](const Array& a) { return rfft(a, 6, -1, "forward"); }},
      {"rfft (6,9) axis 0", {6, 9}, Family::R2C, [](const Array& a) { return rfft(a, {}, 0); }},
      {"rfft (4,7,6) axis 1 ortho",
       {4, 7, 6},
       Family::R2C,
       [](const Array& a) { return rfft(a, {}, 1, "ortho"); }},
      {"rfft (5,4) n=1", {5, 4}, Family::R2C, [](const Array& a) { return rfft(a, 1); }},
      {"rfft (2,5,3) axis 1 (odd slabs: staged input)",
       {2, 5, 3},
       Family::R2C,
       [](const Array& a) { return rfft(a, {}, 1); }},
      {"rfft (2,4,3) axis 1 n=5 (padded, odd slabs)",
       {2, 4, 3},
       Family::R2C,
       [](const Array& a) { return rfft(a, 5, 1); }},
      {"rfftn (6,8)", {6, 8}, Family::R2C, [](const Array& a) { return rfftn(a); }},
      {"rfftn (4,6,10) (3-D R2C)",
       {4, 6, 10},
       Family::R2C,
       [](const Array& a) { return rfftn(a); }},
      {"rfftn (3,4,5,6) (3-D R2C then C2C)",
       {3, 4, 5, 6},
       Family::R2C,
       [](const Array& a) { return rfftn(a); }},
      {"rfftn (4,6,10) axes (2,0) (real axis 0)",
       {4, 6, 10},
       Family::R2C,
       [](const Array& a) {
         return rfftn(a, {}, X{2, 0});
       }},
      {"rfftn (4,6,10) axes (0,1) s (5,8) ortho",
       {4, 6, 10},
       Family::R2C,
       [](const Array& a) {
         return rfftn(a, L{5, 8}, X{0, 1}, "ortho");
       }},
      {"rfftn (3,5,7) axes (1) forward",
       {3, 5, 7},
       Family::R2C,
       [](const Array& a) { return rfftn(a, {}, X{1}, "forward"); }},
      {"rfftn (2,3,4,5,6)", {2, 3, 4, 5, 6}, Family::R2C, [](const Array& a) { return rfftn(a); }},
  };
}

std::vector<Case> c2r_cases() {
  using namespace kiln::fft;
  return {
      {"irfft (9)", {9}, Family::C2R, [](const Array& a) { return irfft(a); }},
      {"irfft (9) n=17", {9}, Family::C2R, [](const Array& a) { return irfft(a, 17); }},
      {"irfft (9) n=5 crop ortho",
       {9},
       Family::C2R,
       [](const Array& a) { return irfft(a, 5, -1, "ortho"); }},
      {"irfft (6,5) axis 0", {6, 5}, Family::C2R, [](const Array& a) { return irfft(a, {}, 0); }},
      {"irfft (4,7,6) axis 1 n=12 forward",
       {4, 7, 6},
       Family::C2R,
       [](const Array& a) { return irfft(a, 12, 1, "forward"); }},
      {"irfft (5,3) n=1", {5, 3}, Family::C2R, [](const Array& a) { return irfft(a, 1); }},
      {"irfft (3,4,5) axis 1 n=7 (odd slabs: staged output)",
       {3, 4, 5},
       Family::C2R,
       [](const Array& a) { return irfft(a, 7, 1); }},
      {"irfftn (4,6,5)", {4, 6, 5}, Family::C2R, [](const Array& a) { return irfftn(a); }},
      {"irfftn (4,6,5) axes (2,0)",
       {4, 6, 5},
       Family::C2R,
       [](const Array& a) {
         return irfftn(a, {}, X{2, 0});
       }},
      {"irfftn (3,4,5) s (5,7)",
       {3, 4, 5},
       Family::C2R,
       [](const Array& a) {
         return irfftn(a, L{5, 7});
       }},
      {"irfftn (3,4,5) s (2,3,9) axes (-1,0,1) ortho",
       {3, 4, 5},
       Family::C2R,
       [](const Array& a) {
         return irfftn(a, L{2, 3, 9}, X{-1, 0, 1}, "ortho");
       }},
      {"irfftn (2,3,4,5,3) forward",
       {2, 3, 4, 5, 3},
       Family::C2R,
       [](const Array& a) { return irfftn(a, {}, {}, "forward"); }},
  };
}

// Every c2c case runs on real input too; these add the layouts particular to R2CFull.
std::vector<Case> full_cases() {
  using namespace kiln::fft;
  return {
      {"fftn (6,8) (2-D R2C into the output, expanded in place)",
       {6, 8},
       Family::Full,
       [](const Array& a) { return fftn(a); }},
      {"fftn (5,7,9) ortho (3-D R2C, in place, scaled)",
       {5, 7, 9},
       Family::Full,
       [](const Array& a) { return fftn(a, {}, {}, "ortho"); }},
      {"fft (7,6) axis 0 (halved axis with batch inside)",
       {7, 6},
       Family::Full,
       [](const Array& a) { return fft(a, {}, 0); }},
      {"fft (3,8,5) axis 1 n=11 forward (padded, batch both sides)",
       {3, 8, 5},
       Family::Full,
       [](const Array& a) { return fft(a, 11, 1, "forward"); }},
      {"fft (9) n=2 (nothing to fill)",
       {9},
       Family::Full,
       [](const Array& a) { return fft(a, 2); }},
      {"fft (9) n=1", {9}, Family::Full, [](const Array& a) { return fft(a, 1); }},
      {"fftn (5,4) s (1,1) (every length 1)",
       {5, 4},
       Family::Full,
       [](const Array& a) {
         return fftn(a, L{1, 1});
       }},
      {"fftn (4,6,5) axes (2,1,0) s (1,8,3) (length 1 innermost: axis 1 halved)",
       {4, 6, 5},
       Family::Full,
       [](const Array& a) {
         return fftn(a, L{1, 8, 3}, X{2, 1, 0});
       }},
      {"fftn (3,4,5,6) (3-D R2C, C2C on the compact half, expansion out of place)",
       {3, 4, 5, 6},
       Family::Full,
       [](const Array& a) { return fftn(a); }},
      {"fftn (4,6,10) axes (0,2) ortho (not consecutive: two passes)",
       {4, 6, 10},
       Family::Full,
       [](const Array& a) {
         return fftn(a, {}, X{0, 2}, "ortho");
       }},
      {"fftn (2,5,3,3) axes (2,0) s (5,3) (padded, staged odd slabs, compact half)",
       {2, 5, 3, 3},
       Family::Full,
       [](const Array& a) {
         return fftn(a, L{5, 3}, X{2, 0});
       }},
      {"fft2 (3,1,4,6) axes (0,1) (an extent-1 axis beside)",
       {3, 1, 4, 6},
       Family::Full,
       [](const Array& a) {
         return fft2(a, {}, X{0, 1});
       }},
      {"fftn (2,3,4,5,3) forward (five axes)",
       {2, 3, 4, 5, 3},
       Family::Full,
       [](const Array& a) { return fftn(a, {}, {}, "forward"); }},
  };
}

std::vector<Case> all_cases() {
  std::vector<Case> all = c2c_cases();
  for (auto* more : {r2c_cases, c2r_cases, full_cases})
    for (auto& c : more()) all.push_back(std::move(c));
  return all;
}

// The input dtypes each family is tested with (rfft* refuse complex input).
std::vector<DType> input_dtypes(Family f) {
  if (f == Family::R2C || f == Family::Full)
    return {DType::Float32, DType::Float64, DType::Int64, DType::Int32};
  return {DType::Float32, DType::Float64, DType::Complex64, DType::Complex128, DType::Int64};
}

bool single(DType t) { return kiln::real_dtype(t) == DType::Float32; }

double max_abs(const Array& a) {
  return a.size() == 0 ? 0.0 : kiln::max(kiln::abs(a)).item<double>();
}

// Close relative to the result's largest magnitude: FFT rounding grows with it, not with each
// entry, so tiny entries of a large spectrum need that absolute slack.
bool close_to(const Array& got, const Array& want) {
  double tol = single(want.dtype()) ? 2e-5 : 1e-11;
  return kiln::allclose(got, want, 10 * tol, tol * std::max(1.0, max_abs(want)));
}

// ---- an emulator of cuFFT's advanced layout, running a Program on the host ------------------
int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// Row-major position of the i-th multi-index of `shape` inside an array of extents `embed`.
int64_t embedded(int64_t i, const std::vector<int64_t>& shape,
                 const std::array<int64_t, 3>& embed) {
  int64_t at = 0, mul = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    at += (i % shape[d]) * mul;
    i /= shape[d];
    mul *= embed[d];
  }
  return at;
}

// Unnormalised DFT of a dense array along every dimension.
void dft(std::vector<cd>& x, const std::vector<int64_t>& shape, bool inverse) {
  double sign = inverse ? 1 : -1;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t n = shape[d], inner = 1;
    for (size_t e = d + 1; e < shape.size(); ++e) inner *= shape[e];
    int64_t outer = product(shape) / (n * inner);
    std::vector<cd> y(x.size());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        for (int64_t k = 0; k < n; ++k) {
          cd acc{};
          for (int64_t j = 0; j < n; ++j)
            acc += x[(o * n + j) * inner + i] *
                   std::polar(1.0, sign * 2 * M_PI * static_cast<double>(j * k % n) / n);
          y[(o * n + k) * inner + i] = acc;
        }
    x = std::move(y);
  }
}

class Emulator {
 public:
  Emulator(const gf::Program& p, std::vector<cd> in)
      : p_(p),
        in_(std::move(in)),
        out_(p.out.elements),
        scratch_(p.scratch.elements),
        staging_(p.staging.elements),
        half_(p.half.elements),
        converted_(p.converted.elements) {}

  std::vector<cd> run() {
    for (const auto& op : p_.ops) std::visit([this](const auto& o) { apply(o); }, op);
    CHECK(in_bounds_);
    CHECK_FALSE(wrote_input_);
    CHECK(c2r_input_clean_);  // C2R saw real DC and Nyquist terms, as NumPy's c2r assumes
    CHECK(aligned_);          // real pointers of R2C / C2R calls sit at even offsets
    return out_;
  }

 private:
  std::vector<cd>& buf(gf::BufferId b) {
    switch (b) {
      case gf::BufferId::In:
        return in_;
      case gf::BufferId::Out:
        return out_;
      case gf::BufferId::Scratch:
        return scratch_;
      case gf::BufferId::Half:
        return half_;
      case gf::BufferId::Converted:
        return converted_;
      default:
        return staging_;
    }
  }
  cd& at(std::vector<cd>& v, int64_t i) {
    static cd dummy;
    if (i < 0 || i >= static_cast<int64_t>(v.size())) {
      in_bounds_ = false;
      return dummy;
    }
    return v[i];
  }

  // The emulator holds every value as a complex double, so integers need no conversion; the
  // op only has to come first and fill all of Converted from all of In.
  void apply(const gf::ConvertOp&) {
    REQUIRE(converted_.size() == in_.size());
    for (size_t i = 0; i < in_.size(); ++i) converted_[i] = cd(in_[i].real(), 0);
  }

  void apply(const gf::PadOp& o) {
    wrote_input_ |= o.dst == gf::BufferId::In;
    auto& src = buf(o.src);
    auto& dst = buf(o.dst);
    bool to_real = !p_.info(o.dst).complex;
    int64_t n = kiln::shape_size(o.dst_shape);
    for (int64_t i = 0; i < n; ++i) {
      int64_t rest = i, from = 0, mul = 1;
      bool inside = true;
      for (size_t d = o.dst_shape.size(); d-- > 0;) {
        int64_t c = rest % o.dst_shape[d];
        rest /= o.dst_shape[d];
        inside = inside && c < o.src_shape[d];
        from += c * mul;
        mul *= o.src_shape[d];
      }
      cd v = inside ? at(src, from) : cd{};
      at(dst, i) = to_real ? cd(v.real(), 0) : v;
    }
  }

  void apply(const gf::ExecOp& e) {
    wrote_input_ |= e.out == gf::BufferId::In;
    const auto& s = e.plan;
    std::vector<int64_t> n(s.n.begin(), s.n.begin() + s.rank), out_n = n;
    int64_t half = n.back() / 2 + 1;  // complex entries of the halved dimension
    if (s.transform == gf::Transform::R2C) out_n.back() = half;
    // The executor never asks cuFFT for a multi-axis C2R (see fft_program.hpp).
    if (s.transform == gf::Transform::C2R) REQUIRE(s.rank == 1);
    for (int64_t l = 0; l < e.loops; ++l) {
      if (s.transform == gf::Transform::R2C) aligned_ &= l * e.in_step % 2 == 0;
      if (s.transform == gf::Transform::C2R) aligned_ &= l * e.out_step % 2 == 0;
      for (int64_t b = 0; b < s.batch; ++b)
        transform(e, n, half, out_n, l * e.in_step + b * s.idist, l * e.out_step + b * s.odist);
    }
  }

  void transform(const gf::ExecOp& e, const std::vector<int64_t>& n, int64_t half,
                 const std::vector<int64_t>& out_n, int64_t in_base, int64_t out_base) {
    const auto& s = e.plan;
    auto& src = buf(e.in);
    auto& dst = buf(e.out);
    std::vector<cd> x(product(n));
    if (s.transform == gf::Transform::C2R) {
      int64_t len = n[0];
      std::vector<cd> h(half);
      for (int64_t k = 0; k < half; ++k) h[k] = at(src, in_base + k * s.istride);
      c2r_input_clean_ &= h[0].imag() == 0 && (len % 2 || h[len / 2].imag() == 0);
      for (int64_t k = 0; k < len; ++k) x[k] = k < half ? h[k] : std::conj(h[len - k]);
    } else {
      for (int64_t i = 0; i < product(n); ++i)  // C2C and R2C read all n
        x[i] = at(src, in_base + embedded(i, n, s.inembed) * s.istride);
    }
    dft(x, n, e.inverse);
    bool real_out = s.transform == gf::Transform::C2R;
    std::array<int64_t, 3> dense{n[0], n.size() > 1 ? n[1] : 1, n.size() > 2 ? n[2] : 1};
    for (int64_t i = 0; i < product(out_n); ++i) {
      cd v = x[embedded(i, out_n, dense)];
      at(dst, out_base + embedded(i, out_n, s.onembed) * s.ostride) =
          real_out ? cd(v.real(), 0) : v;
    }
  }

  void apply(const gf::ZeroImagOp& z) {
    wrote_input_ |= z.buf == gf::BufferId::In;
    auto& v = buf(z.buf);
    for (int64_t k : {z.first, z.second})
      if (k >= 0)
        for (int64_t o = 0; o < z.outer; ++o)
          for (int64_t i = 0; i < z.inner; ++i) {
            cd& c = at(v, (o * z.extent + k) * z.inner + i);
            c = cd(c.real(), 0);
          }
  }

  // Straight from the definition, destination by destination, into a copy: so it checks the
  // formula and the layout, not the kernel's in-place order (which needs none; see the op).
  void apply(const gf::HermitianOp& h) {
    wrote_input_ |= h.dst == gf::BufferId::In;
    auto& src = buf(h.src);
    std::vector<cd> dst = buf(h.dst);
    int64_t rows = product(h.outer), half = h.n / 2 + 1;
    for (int64_t row = 0; row < rows; ++row) {
      int64_t rest = row, mrow = 0, mul = 1;
      for (size_t d = h.outer.size(); d-- > 0;) {
        int64_t c = rest % h.outer[d];
        rest /= h.outer[d];
        mrow += (h.mirror[d] ? (h.outer[d] - c) % h.outer[d] : c) * mul;
        mul *= h.outer[d];
      }
      for (int64_t k = 0; k < h.n; ++k)
        for (int64_t i = 0; i < h.inner; ++i) {
          cd v = k < half ? at(src, (row * h.src_extent + k) * h.inner + i)
                          : std::conj(at(src, (mrow * h.src_extent + h.n - k) * h.inner + i));
          at(dst, (row * h.n + k) * h.inner + i) = v * h.factor;
        }
    }
    buf(h.dst) = std::move(dst);
  }

  void apply(const gf::ScaleOp& s) {
    wrote_input_ |= s.buf == gf::BufferId::In;
    for (cd& c : buf(s.buf)) c *= s.factor;
  }

  const gf::Program& p_;
  std::vector<cd> in_, out_, scratch_, staging_, half_, converted_;
  bool in_bounds_ = true, wrote_input_ = false, c2r_input_clean_ = true, aligned_ = true;
};

// The step of f(x)'s plan (f must add exactly one FFT node), null when it has none.
const kiln::plan::FftStep* fft_step_of(const kiln::plan::Plan& p) {
  for (const auto& s : p.steps)
    if (auto* f = std::get_if<kiln::plan::FftStep>(&s)) return f;
  return nullptr;
}

// How many steps of each kind a plan has, and how many kernels run before its first FFT.
struct StepCounts {
  int kernels = 0, kernels_before = 0, ffts = 0;
};
StepCounts count_steps(const kiln::plan::Plan& plan) {
  StepCounts n;
  for (const auto& s : plan.steps) {
    if (std::holds_alternative<kiln::plan::KernelStep>(s)) {
      ++n.kernels;
      if (n.ffts == 0) ++n.kernels_before;
    }
    if (std::holds_alternative<kiln::plan::FftStep>(s)) ++n.ffts;
  }
  return n;
}

// An integer input is read only by R2C plans that convert it on load, or only by the
// ConvertOp that opens the program.
void check_integer_input(const gf::Program& p, DType t) {
  CHECK(p.element_bytes(gf::BufferId::In) == kiln::itemsize(t));
  bool converted = !p.ops.empty() && std::holds_alternative<gf::ConvertOp>(p.ops[0]);
  int on_load = 0;
  for (const auto& op : p.ops) {
    if (const auto* pad = std::get_if<gf::PadOp>(&op)) CHECK(pad->src != gf::BufferId::In);
    if (const auto* e = std::get_if<gf::ExecOp>(&op)) {
      if (e->in == gf::BufferId::In) {
        ++on_load;
        CHECK(e->plan.transform == gf::Transform::R2C);
        CHECK(e->plan.load_from == t);
        if (kiln::itemsize(t) != 8) CHECK(e->loops == 1);  // pointers stay aligned for reals
      } else {
        CHECK_FALSE(e->plan.load_from.has_value());
      }
    }
  }
  CHECK(converted != (on_load > 0));
  if (converted) CHECK(p.converted.elements == p.in.elements);
}

void emulate_case(const Case& c, DType t) {
  INFO(c.name << " " << kiln::dtype_name(t));
  Array x = sample(c.shape, t);
  Array f = c.f(x);
  auto plan = kiln::plan::make_plan({f.node()});
  const auto* step = fft_step_of(plan);
  if (!step) {
    // Only fftn over no axes plans no transform, and its result is the input unchanged.
    CHECK_MESSAGE(c.name.find("axes () (identity)") != std::string::npos,
                  "no FFT step in the plan of " << c.name);
    CHECK(kiln::array_equal(f.eval().astype(DType::Complex128), x.astype(DType::Complex128)));
    return;
  }
  const auto& in = plan.buffers[step->in];
  const auto& out = plan.buffers[step->out];
  gf::Program program = gf::make_program(*step, in, out);
  auto input = x.astype(in.dtype).astype(DType::Complex128).to_vector<cd>();
  Array host = f.eval();
  auto check = [&](const gf::Program& p) {
    Array emulated = kiln::asarray(Emulator(p, input).run(), out.shape);
    if (!kiln::is_complex(host.dtype())) emulated = kiln::real(emulated);
    CHECK(close_to(emulated.astype(host.dtype()), host));
  };
  check(program);
  // On a GPU the planner hands a real transform of integers the integers themselves.
  bool real_input =
      step->kind == kiln::graph::FftKind::R2C || step->kind == kiln::graph::FftKind::R2CFull;
  if (real_input && (t == DType::Int64 || t == DType::Int32)) {
    kiln::plan::PlanBuffer integers = in;
    integers.dtype = t;
    gf::Program p = gf::make_program(*step, integers, out);
    check_integer_input(p, t);
    check(p);
  }
}

template <class Op>
const Op& op_at(const gf::Program& p, size_t i) {
  REQUIRE(i < p.ops.size());
  REQUIRE(std::holds_alternative<Op>(p.ops[i]));
  return std::get<Op>(p.ops[i]);
}

gf::Program program_of(const Array& f) {
  auto plan = kiln::plan::make_plan({f.node()});
  const auto* step = fft_step_of(plan);
  REQUIRE(step != nullptr);
  return gf::make_program(*step, plan.buffers[step->in], plan.buffers[step->out]);
}

// How an ExecOp covers the lines it transforms: cuFFT's batch and input layout within one
// call, and the calls (loops) with the input's step between them.
struct Batching {
  int64_t batch, istride, idist, loops, in_step;
};
void check_batching(const gf::ExecOp& e, const Batching& want) {
  CHECK(e.plan.batch == want.batch);
  CHECK(e.plan.istride == want.istride);
  CHECK(e.plan.idist == want.idist);
  CHECK(e.loops == want.loops);
  CHECK(e.in_step == want.in_step);
}

// ---- GPU helpers ----------------------------------------------------------------------------
void gpu_case(const Case& c, DType t) {
  INFO(c.name << " " << kiln::dtype_name(t));
  Array x = sample(c.shape, t);
  Array host = c.f(x).eval();
  Array dev = c.f(kiln::asarray(x, kiln::cuda())).eval();
  REQUIRE(dev.device() == kiln::cuda());
  Array back = dev.get();
  REQUIRE(back.dtype() == host.dtype());
  REQUIRE(back.shape() == host.shape());
  CHECK(close_to(back, host));
}

// f of x on the device, brought back, is close to f of x on the host.
bool gpu_matches_host(const Fn& f, const Array& x) {
  Array got = f(kiln::asarray(x, kiln::cuda())).get();  // first, as the plan cache counts it
  return close_to(got, f(x).eval());
}

struct LimitsGuard {  // restores the plan cache's limits when a test changes them
  kf::PlanCacheInfo saved = kf::plan_cache();
  ~LimitsGuard() { kf::set_plan_cache_limits(saved.max_plans, saved.max_work_bytes); }
};

// ---- the helper kernels, called one by one: built into kiln, or NVRTC's ------------------
struct BuiltInHelpers {  // the helpers' path, `on` or NVRTC's, until the scope ends
  bool saved = gf::built_in_helpers_enabled();
  explicit BuiltInHelpers(bool on) { gf::enable_built_in_helpers(on); }
  ~BuiltInHelpers() { gf::enable_built_in_helpers(saved); }
};

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// What a helper leaves in its output buffer on the GPU: `in` goes to one device buffer, `out`
// (its first contents: helpers working in place read them) to another, run(in, out) launches
// the helper, and the output comes back.
template <class In, class Out>
std::vector<Out> on_gpu(bool built_in, const std::vector<In>& in, std::vector<Out> out,
                        const std::function<void(const void*, void*)>& run) {
  BuiltInHelpers path(built_in);
  auto in_dev = kiln::gpu::allocate(0, std::max<size_t>(1, in.size() * sizeof(In)));
  auto out_dev = kiln::gpu::allocate(0, std::max<size_t>(1, out.size() * sizeof(Out)));
  kiln::gpu::copy_to_device(0, in_dev->data(), in.data(), in.size() * sizeof(In), false);
  kiln::gpu::copy_to_device(0, out_dev->data(), out.data(), out.size() * sizeof(Out), false);
  run(in_dev->data(), out_dev->data());
  kiln::gpu::copy_to_host(0, out.data(), out_dev->data(), out.size() * sizeof(Out), false);
  return out;
}

// The helper gives `want` bit for bit, built into kiln and compiled by NVRTC alike.
template <class In, class Out>
void check_both_paths(const std::vector<In>& in, const std::vector<Out>& first,
                      const std::vector<Out>& want,
                      const std::function<void(const void*, void*)>& run) {
  CHECK(same_bits(on_gpu(true, in, first, run), want));
  CHECK(same_bits(on_gpu(false, in, first, run), want));
}

// Values of T with both signs, both extremes and everything between (a multiplicative hash).
template <class T>
std::vector<T> spread(int64_t n) {
  std::vector<T> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = static_cast<T>(static_cast<uint64_t>(i + 1) * 0x9E3779B97F4A7C15ull);
  return v;
}

template <class T>
std::vector<T> reals(int64_t n) {
  std::vector<T> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(3.25 * std::sin(0.7 * i) + 0.5);
  return v;
}
template <class T>
std::vector<std::complex<T>> complexes(int64_t n) {
  std::vector<std::complex<T>> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = {static_cast<T>(3.25 * std::sin(0.7 * i)), static_cast<T>(std::cos(0.3 * i) - 0.5)};
  return v;
}

// convert_input from the integer (or bool) dtype t, stored as T: the exact doubles.
template <class T>
void check_convert(DType t) {
  INFO(kiln::dtype_name(t));
  const int64_t n = 1000;
  std::vector<T> in = spread<T>(n);
  if (t == DType::Bool)
    for (T& v : in) v = v & 1;  // bool's bytes are 0 or 1
  std::vector<double> want(n);
  for (int64_t i = 0; i < n; ++i) want[i] = static_cast<double>(in[i]);
  check_both_paths<T, double>(in, std::vector<double>(n, -1.0), want,
                              [&](const void* src, void* dst) {
                                gf::convert_input(0, src, t, dst, gf::Precision::Double, n);
                              });
}

template <class T>
constexpr bool is_std_complex = false;
template <class T>
constexpr bool is_std_complex<std::complex<T>> = true;

// pad_copy's element conversion: real -> complex adds a zero imaginary part, complex -> real
// keeps the real part.
template <class D, class S>
D element_from(S x) {
  if constexpr (std::is_same_v<S, D>)
    return x;
  else if constexpr (is_std_complex<S>)
    return x.real();
  else
    return D(x, 0);
}

// pad_copy from S (src_shape) to D (dst_shape): src where its index exists, zeros elsewhere.
template <class S, class D>
void check_pad(gf::Precision p, const Shape& src_shape, const Shape& dst_shape) {
  const gf::Elements src_kind{is_std_complex<S>, p}, dst_kind{is_std_complex<D>, p};
  INFO("pad " << src_kind.complex << " -> " << dst_kind.complex << " single "
              << (p == gf::Precision::Single));
  std::vector<S> in;
  if constexpr (is_std_complex<S>)
    in = complexes<typename S::value_type>(kiln::shape_size(src_shape));
  else
    in = reals<S>(kiln::shape_size(src_shape));
  std::vector<D> want(kiln::shape_size(dst_shape));
  for (int64_t i = 0; i < static_cast<int64_t>(want.size()); ++i) {
    int64_t rest = i, at = 0, step = 1;
    bool inside = true;
    for (size_t d = dst_shape.size(); d-- > 0;) {
      int64_t c = rest % dst_shape[d];
      rest /= dst_shape[d];
      inside = inside && c < src_shape[d];
      at += c * step;
      step *= src_shape[d];
    }
    want[i] = inside ? element_from<D>(in[at]) : D{};
  }
  check_both_paths<S, D>(in, std::vector<D>(want.size(), D{7}), want,
                         [&](const void* src, void* dst) {
                           gf::pad_copy(0, src, src_kind, src_shape, dst, dst_kind, dst_shape);
                         });
}

template <class R>
void check_pads(gf::Precision p) {
  using C = std::complex<R>;
  for (auto [from, to] : {std::pair<Shape, Shape>{{5, 7}, {6, 4}}, {{3, 4, 5}, {3, 4, 8}}}) {
    check_pad<R, R>(p, from, to);
    check_pad<C, C>(p, from, to);
    check_pad<R, C>(p, from, to);
    check_pad<C, R>(p, from, to);
  }
}

// zero_imag on [outer, extent, inner]: the imaginary parts of entries first and second gone.
template <class R>
void check_zero_imag(gf::Precision p, int64_t second) {
  INFO("zero_imag, second " << second);
  const gf::ZeroImagOp op{gf::BufferId::Out, 3, 8, 2, 0, second};
  std::vector<std::complex<R>> data = complexes<R>(op.outer * op.extent * op.inner), want = data;
  for (int64_t i = 0; i < static_cast<int64_t>(want.size()); ++i) {
    int64_t k = i / op.inner % op.extent;
    if (k == op.first || k == op.second) want[i].imag(0);
  }
  check_both_paths<char, std::complex<R>>(
      {}, data, want, [&](const void*, void* buf) { gf::zero_imag(0, buf, p, op); });
}

// scale: every real times the factor, rounded once in R.
template <class R>
void check_scale(gf::Precision p) {
  const int64_t n = 999;
  const double factor = 1.0 / 3.0;
  std::vector<R> data = reals<R>(n), want(n);
  for (int64_t i = 0; i < n; ++i) want[i] = data[i] * static_cast<R>(factor);
  check_both_paths<char, R>({}, data, want,
                            [&](const void*, void* buf) { gf::scale(0, buf, p, n, factor); });
}

// HermitianOp's formula (src/cuda/fft_program.hpp) on the host: dst starts as `first`.
template <class R>
std::vector<std::complex<R>> expanded(const std::vector<std::complex<R>>& src,
                                      std::vector<std::complex<R>> dst, const gf::HermitianOp& op,
                                      bool in_place) {
  const int64_t half = op.n / 2 + 1, rows = product(op.outer);
  for (int64_t row = 0; row < rows; ++row) {
    int64_t rest = row, mrow = 0, mul = 1;
    for (size_t d = op.outer.size(); d-- > 0;) {
      int64_t c = rest % op.outer[d];
      rest /= op.outer[d];
      if (op.mirror[d] && c) c = op.outer[d] - c;
      mrow += c * mul;
      mul *= op.outer[d];
    }
    for (int64_t k = 0; k < half; ++k)
      for (int64_t i = 0; i < op.inner; ++i) {
        std::complex<R> v = src[(row * op.src_extent + k) * op.inner + i];
        v = {v.real() * static_cast<R>(op.factor), v.imag() * static_cast<R>(op.factor)};
        if (!in_place || op.factor != 1.0) dst[(row * op.n + k) * op.inner + i] = v;
        if (k >= 1 && k < op.n - op.n / 2)
          dst[(mrow * op.n + op.n - k) * op.inner + i] = std::conj(v);
      }
  }
  return dst;
}

// expand_hermitian out of place (a compact half) and in place (lines of n), with and without
// a factor.
template <class R>
void check_hermitian(gf::Precision p) {
  using C = std::complex<R>;
  for (auto [n, inner, in_place, factor] :
       {std::tuple{6L, 2L, false, 0.25}, {7L, 1L, true, 1.0}, {6L, 3L, true, 0.5}}) {
    INFO("hermitian n " << n << " inner " << inner << " in place " << in_place << " factor "
                        << factor);
    gf::HermitianOp op{gf::BufferId::Half,
                       gf::BufferId::Out,
                       {3, 4},
                       {true, false},
                       n,
                       in_place ? n : n / 2 + 1,
                       inner,
                       factor};
    const int64_t rows = product(op.outer);
    std::vector<C> src = complexes<R>(rows * op.src_extent * inner);
    std::vector<C> first = in_place ? src : std::vector<C>(rows * n * inner, C(9, 9));
    std::vector<C> want = expanded(src, first, op, in_place);
    check_both_paths<C, C>(src, first, want, [&](const void* half, void* out) {
      gf::expand_hermitian(0, in_place ? out : half, out, p, op);
    });
  }
}

// An FFT on the device with the helpers' path `built_in` or NVRTC's, brought back. make()
// gives the same values as a new leaf each time, so the transform is a new node and runs again.
Array on_gpu_with(bool built_in, const Fn& f, const std::function<Array()>& make) {
  BuiltInHelpers path(built_in);
  return f(kiln::asarray(make(), kiln::cuda())).get();
}

// Built-in helpers and NVRTC's give the host's result, and each other's.
void check_paths_agree(const Fn& f, const std::function<Array()>& make) {
  Array host = f(make()).eval();
  Array built_in = on_gpu_with(true, f, make), jit = on_gpu_with(false, f, make);
  CHECK(close_to(built_in, host));
  CHECK(close_to(jit, host));
  CHECK(close_to(jit, built_in));
}

}  // namespace

// ---- no GPU needed ----------------------------------------------------------------------------
TEST_CASE("the FFT helper kernels compile with NVRTC") {
  auto names = gf::compile_helpers("sm_90");
  CHECK(names.size() == 26);  // 23 helpers (every one built into kiln too), 3 load callbacks
  CHECK(std::find(names.begin(), names.end(), "kiln_fft_convert_u16_f64") != names.end());
  CHECK(std::find(names.begin(), names.end(), "kiln_fft_convert_i32_f64") != names.end());
  CHECK(std::find(names.begin(), names.end(), "kiln_fft_load_i64_f64") != names.end());
  CHECK(std::find(names.begin(), names.end(), "kiln_fft_load_b_f64") != names.end());
  CHECK(std::find(names.begin(), names.end(), "kiln_fft_pad_f64_c128") != names.end());
  CHECK(std::find(names.begin(), names.end(), "kiln_fft_zero_imag_c64") != names.end());
  CHECK(std::find(names.begin(), names.end(), "kiln_fft_hermitian_c128") != names.end());
  CHECK(std::find(names.begin(), names.end(), "kiln_fft_hermitian_c64") != names.end());
}

TEST_CASE("every FFT helper is also built into kiln, under its NVRTC twin's name") {
  auto jit = gf::helper_names(), built_in = gf::aot::names();
  std::sort(jit.begin(), jit.end());
  std::sort(built_in.begin(), built_in.end());
  CHECK(jit.size() == 23);  // 4 pads, zero_imag, hermitian, scale per precision; 9 converts
  CHECK(built_in == jit);
  std::set<const void*> kernels;
  for (const auto& name : jit) kernels.insert(gf::aot::kernel(name));
  CHECK(kernels.size() == jit.size());  // a kernel each
  CHECK(kernels.count(nullptr) == 0);
  CHECK(gf::aot::kernel("kiln_fft_convert_i64_f32") == nullptr);  // integers go to float64
  CHECK(gf::aot::kernel("kiln_fft_load_i64_f64") == nullptr);     // load callbacks are LTO-IR
}

TEST_CASE("every pass program, run by a cuFFT layout emulator, gives the host's result") {
  for (const auto& c : all_cases())
    for (DType t : input_dtypes(c.family)) emulate_case(c, t);
}

TEST_CASE("pass programs: one plan for trailing axes, batching by fewer calls otherwise") {
  using gf::ExecOp;
  SUBCASE("fftn of 4000x4000 is one 2-D plan, one call, out of place") {
    auto p = program_of(kf::fftn(kiln::zeros({4000, 4000}, DType::Complex128)));
    REQUIRE(p.ops.size() == 1);
    const auto& e = op_at<ExecOp>(p, 0);
    CHECK(e.plan.rank == 2);
    CHECK(e.plan.n[0] == 4000);
    CHECK(e.plan.n[1] == 4000);
    CHECK(e.plan.batch == 1);
    CHECK(e.loops == 1);
    CHECK(e.in == gf::BufferId::In);
    CHECK(e.out == gf::BufferId::Out);
  }
  SUBCASE("fft2 over the last two axes batches over the first") {
    auto p = program_of(kf::fft2(kiln::zeros({8, 16, 32}, DType::Complex64)));
    REQUIRE(p.ops.size() == 1);
    const auto& e = op_at<ExecOp>(p, 0);
    CHECK(e.plan.rank == 2);
    CHECK(e.plan.batch == 8);
    CHECK(e.plan.idist == 16 * 32);
    CHECK(e.loops == 1);
  }
  SUBCASE("a middle axis: batch over the larger side, loop over the smaller") {
    auto p = program_of(kf::fft(kiln::zeros({4, 5, 6}, DType::Complex64), {}, 1));
    check_batching(op_at<ExecOp>(p, 0),
                   {.batch = 6, .istride = 6, .idist = 1, .loops = 4, .in_step = 30});
    auto q = program_of(kf::fft(kiln::zeros({6, 5, 4}, DType::Complex64), {}, 1));
    check_batching(op_at<ExecOp>(q, 0),
                   {.batch = 6, .istride = 4, .idist = 20, .loops = 4, .in_step = 1});
  }
  SUBCASE("five axes: a 3-D plan, then a 2-D one in place") {
    auto p = program_of(kf::fftn(kiln::zeros({3, 4, 5, 6, 2}, DType::Complex128)));
    REQUIRE(p.ops.size() == 2);
    CHECK(op_at<ExecOp>(p, 0).plan.rank == 3);
    CHECK(op_at<ExecOp>(p, 0).plan.batch == 12);
    CHECK(op_at<ExecOp>(p, 1).plan.rank == 2);
    CHECK(op_at<ExecOp>(p, 1).plan.batch == 60);
    CHECK(op_at<ExecOp>(p, 1).in == gf::BufferId::Out);
  }
  SUBCASE("rfftn: a 3-D R2C, then C2C over the leading axis") {
    auto p = program_of(kf::rfftn(kiln::zeros({3, 4, 5, 6}, DType::Float64)));
    REQUIRE(p.ops.size() == 2);
    const auto& r = op_at<ExecOp>(p, 0);
    CHECK(r.plan.transform == gf::Transform::R2C);
    CHECK(r.plan.rank == 3);
    CHECK(r.plan.onembed[2] == 4);
    CHECK(r.plan.idist == 120);
    CHECK(r.plan.odist == 80);
    CHECK(op_at<ExecOp>(p, 1).plan.batch == 80);
  }
  SUBCASE("irfftn: copy, C2C, DC / Nyquist clean-up, 1-D C2R, scale") {
    auto p = program_of(kf::irfftn(kiln::zeros({4, 6, 5}, DType::Complex128)));
    REQUIRE(p.ops.size() == 5);
    CHECK(op_at<gf::PadOp>(p, 0).dst == gf::BufferId::Scratch);
    CHECK(op_at<ExecOp>(p, 1).plan.rank == 2);
    const auto& z = op_at<gf::ZeroImagOp>(p, 2);
    CHECK(z.first == 0);
    CHECK(z.second == 4);
    const auto& c = op_at<ExecOp>(p, 3);
    CHECK(c.plan.transform == gf::Transform::C2R);
    CHECK(c.plan.rank == 1);
    CHECK(c.plan.n[0] == 8);
    CHECK(c.plan.batch == 24);
    CHECK(op_at<gf::ScaleOp>(p, 4).factor == doctest::Approx(1.0 / (4 * 6 * 8)));
  }
  SUBCASE("real passes over odd slabs go through staging, one spare real per slab") {
    auto p = program_of(kf::rfft(kiln::zeros({2, 5, 3}, DType::Float32), {}, 1));
    REQUIRE(p.ops.size() == 2);
    CHECK(op_at<gf::PadOp>(p, 0).dst == gf::BufferId::Staging);
    CHECK(op_at<ExecOp>(p, 1).in == gf::BufferId::Staging);
    CHECK(op_at<ExecOp>(p, 1).in_step == 16);
    CHECK(p.staging.elements == 32);
    auto q = program_of(kf::irfft(kiln::zeros({3, 4, 5}, DType::Complex64), 7, 1));
    REQUIRE(q.ops.size() == 5);
    CHECK(op_at<ExecOp>(q, 2).out == gf::BufferId::Staging);
    CHECK(op_at<ExecOp>(q, 2).out_step == 36);
    CHECK(op_at<gf::PadOp>(q, 3).dst == gf::BufferId::Out);
  }
}

TEST_CASE("pass programs for real input: R2C and the Hermitian expansion") {
  using gf::ExecOp;
  using gf::HermitianOp;
  // These expectations are for the half spectrum written into the output's own lines; with the
  // compact layout (a timing switch) they would all be wrong, so that is a failure, not a skip.
  REQUIRE_MESSAGE(gf::kR2CHalfInOutput,
                  "kR2CHalfInOutput is off: write the compact layout's expectations here");
  SUBCASE("fftn of 4000x4000: one 2-D R2C into the output's own lines, expanded in place") {
    auto p = program_of(kf::fftn(kiln::zeros({4000, 4000}, DType::Float64)));
    CHECK_FALSE(p.in.complex);
    CHECK(p.scratch.elements == 0);
    CHECK(p.half.elements == 0);
    REQUIRE(p.ops.size() == 2);
    const auto& e = op_at<ExecOp>(p, 0);
    CHECK(e.plan.transform == gf::Transform::R2C);
    CHECK(e.plan.precision == gf::Precision::Double);
    CHECK(e.plan.rank == 2);
    CHECK(e.plan.n[1] == 4000);
    CHECK(e.plan.inembed[1] == 4000);
    CHECK(e.plan.onembed[1] == 4000);  // lines keep their full length: 2001 written
    CHECK(e.plan.batch == 1);
    CHECK(e.loops == 1);
    CHECK(e.in == gf::BufferId::In);
    CHECK(e.out == gf::BufferId::Out);
    const auto& h = op_at<HermitianOp>(p, 1);
    CHECK(h.src == gf::BufferId::Out);
    CHECK(h.dst == gf::BufferId::Out);
    CHECK(h.outer == std::vector<int64_t>{4000});
    CHECK(h.mirror == std::vector<bool>{true});
    CHECK(h.n == 4000);
    CHECK(h.src_extent == 4000);
    CHECK(h.inner == 1);
    CHECK(h.factor == 1.0);
  }
  SUBCASE("fft along the last axis: a batched 1-D R2C, batch rows not mirrored") {
    auto p = program_of(kf::fft(kiln::zeros({6, 9}, DType::Float32), {}, -1, "ortho"));
    REQUIRE(p.ops.size() == 2);
    const auto& e = op_at<ExecOp>(p, 0);
    CHECK(e.plan.precision == gf::Precision::Single);
    CHECK(e.plan.rank == 1);
    CHECK(e.plan.batch == 6);
    CHECK(e.plan.idist == 9);
    CHECK(e.plan.odist == 9);
    const auto& h = op_at<HermitianOp>(p, 1);
    CHECK(h.mirror == std::vector<bool>{false});
    CHECK(h.factor == doctest::Approx(1 / std::sqrt(9.0)));  // no separate ScaleOp
  }
  SUBCASE("n = 2 halves nothing: the R2C alone") {
    auto p = program_of(kf::fft(kiln::zeros({6, 2}, DType::Float64)));
    REQUIRE(p.ops.size() == 1);
    CHECK(op_at<ExecOp>(p, 0).plan.transform == gf::Transform::R2C);
  }
  SUBCASE("the axes' order does not matter: the innermost axis is halved") {
    auto p = program_of(kf::fftn(kiln::zeros({5, 8}, DType::Float64), {}, X{1, 0}));
    REQUIRE(p.ops.size() == 2);
    CHECK(op_at<ExecOp>(p, 0).plan.rank == 2);
    CHECK(op_at<HermitianOp>(p, 1).n == 8);
    auto q = program_of(kf::fft(kiln::zeros({7, 6}, DType::Float64), {}, 0));
    const auto& h = op_at<HermitianOp>(q, 1);
    CHECK(h.outer.empty());
    CHECK(h.n == 7);
    CHECK(h.inner == 6);
  }
  SUBCASE("more passes: R2C into a compact half, C2C there, expansion out of place") {
    auto p = program_of(kf::fftn(kiln::zeros({3, 4, 5, 6}, DType::Float64), {}, {}, "forward"));
    CHECK(p.half.elements == 3 * 4 * 5 * 4);
    REQUIRE(p.ops.size() == 3);
    const auto& r = op_at<ExecOp>(p, 0);
    CHECK(r.plan.transform == gf::Transform::R2C);
    CHECK(r.plan.rank == 3);
    CHECK(r.plan.onembed[2] == 4);
    CHECK(r.out == gf::BufferId::Half);
    const auto& c = op_at<ExecOp>(p, 1);
    CHECK(c.plan.transform == gf::Transform::C2C);
    CHECK(c.in == gf::BufferId::Half);
    CHECK(c.out == gf::BufferId::Half);
    const auto& h = op_at<HermitianOp>(p, 2);
    CHECK(h.src == gf::BufferId::Half);
    CHECK(h.dst == gf::BufferId::Out);
    CHECK(h.src_extent == 4);
    CHECK(h.mirror == std::vector<bool>{true, true, true});
    CHECK(h.factor == doctest::Approx(1.0 / 360));
  }
  SUBCASE("inverse transforms of real input stay complex") {
    auto plan = kiln::plan::make_plan({kf::ifft(kiln::zeros({4, 6}, DType::Float64)).node()});
    const auto* step = fft_step_of(plan);
    REQUIRE(step != nullptr);
    CHECK(step->kind == kiln::graph::FftKind::C2C);
    CHECK(plan.buffers[step->in].dtype == DType::Complex128);
  }
}

TEST_CASE("plans: fftn of int64 casts it to float64 in one kernel, then one FFT step") {
  // Host arrays: the planner is the same for every device.
  for (auto [t, in, out] : {std::tuple{DType::Int64, DType::Float64, DType::Complex128},
                            {DType::Bool, DType::Float64, DType::Complex128},
                            {DType::Float32, DType::Float32, DType::Complex64},
                            {DType::Float64, DType::Float64, DType::Complex128}}) {
    INFO(kiln::dtype_name(t));
    Array a = sample({64, 48}, t);
    auto plan = kiln::plan::make_plan({kf::fftn(a).node()});
    auto [kernels, kernels_before, ffts] = count_steps(plan);
    const auto* step = fft_step_of(plan);
    REQUIRE(step != nullptr);
    CHECK(ffts == 1);
    CHECK(step->kind == kiln::graph::FftKind::R2CFull);
    CHECK(plan.buffers[step->in].dtype == in);
    CHECK(plan.buffers[step->out].dtype == out);
    int casts = t == in ? 0 : 1;  // float input is read where it is
    CHECK(kernels_before == casts);
    CHECK(kernels == casts);
  }
  // Cast explicitly, the old path: one kernel to complex, then C2C.
  Array a = sample({64, 48}, DType::Int64);
  auto plan = kiln::plan::make_plan({kf::fftn(a.astype(DType::Complex128)).node()});
  const auto* step = fft_step_of(plan);
  REQUIRE(step != nullptr);
  CHECK(step->kind == kiln::graph::FftKind::C2C);
  CHECK(plan.buffers[step->in].dtype == DType::Complex128);
}

TEST_CASE("pass programs for integer input: converted on load, or first by a ConvertOp") {
  // The programs a GPU runs when the planner hands the FFT int64 itself.
  Array a = sample({64, 48}, DType::Int64);
  auto integer_program = [](const Array& f, bool load_callbacks) {
    auto plan = kiln::plan::make_plan({f.node()});
    const auto* step = fft_step_of(plan);
    REQUIRE(step != nullptr);
    auto in = plan.buffers[step->in];
    in.dtype = DType::Int64;
    return gf::make_program(*step, in, plan.buffers[step->out], load_callbacks);
  };
  for (const Array& f : {kf::fftn(a), kf::rfftn(a), kf::fft(a, std::nullopt, 0)}) {
    gf::Program p = integer_program(f, true);
    CHECK(gf::uses_load_callbacks(p));
    CHECK_FALSE(std::holds_alternative<gf::ConvertOp>(p.ops[0]));
    const auto& first = op_at<gf::ExecOp>(p, 0);
    CHECK(first.in == gf::BufferId::In);
    CHECK(first.plan.load_from == DType::Int64);
    CHECK(p.element_bytes(gf::BufferId::In) == 8);
  }
  // Without load callbacks (KILN_FFT_LOAD_CALLBACKS=0, or after cuFFT failed to link one) the
  // same transform converts first.
  gf::Program off = integer_program(kf::fftn(a), false);
  CHECK_FALSE(gf::uses_load_callbacks(off));
  CHECK(op_at<gf::ConvertOp>(off, 0).from == DType::Int64);
  CHECK(op_at<gf::ExecOp>(off, 1).in == gf::BufferId::Converted);
  // Padding along the first axis reads the input through a pad: convert it first.
  gf::Program padded = integer_program(kf::fftn(a, std::vector<int64_t>{80, 48}), true);
  CHECK_FALSE(gf::uses_load_callbacks(padded));
  CHECK(op_at<gf::ConvertOp>(padded, 0).from == DType::Int64);
  CHECK(padded.converted.elements == 64 * 48);
  CHECK(op_at<gf::PadOp>(padded, 1).src == gf::BufferId::Converted);
  // A transform of complex input never gets integers.
  auto plan = kiln::plan::make_plan({kf::ifftn(a).node()});
  const auto* step = fft_step_of(plan);
  REQUIRE(step != nullptr);
  auto in = plan.buffers[step->in];
  in.dtype = DType::Int64;
  CHECK_THROWS_AS(gf::make_program(*step, in, plan.buffers[step->out]), std::logic_error);
}

TEST_CASE("the plan cache API: host transforms make no cuFFT plans; limits read back") {
  LimitsGuard guard;
  auto defaults = kf::plan_cache();
  CHECK(defaults.max_plans == 64);  // the documented defaults (include/kiln/fft.hpp)
  CHECK(defaults.max_work_bytes == size_t(1) << 30);
  kf::clear_plan_cache();
  auto before = kf::plan_cache();
  CHECK(before.plans == 0);
  CHECK(before.work_bytes == 0);
  Array host = kf::fft2(sample({24, 40}, DType::Complex64)).eval();  // FFTW, not cuFFT
  CHECK(host.device() == kiln::host());
  auto after = kf::plan_cache();
  CHECK(after.plans == 0);
  CHECK(after.hits == before.hits);
  CHECK(after.misses == before.misses);
  kf::set_plan_cache_limits(3, 12345);
  CHECK(kf::plan_cache().max_plans == 3);
  CHECK(kf::plan_cache().max_work_bytes == 12345);
}

// ---- on the GPU ---------------------------------------------------------------------------------
GPU_TEST_CASE("gpu fft: every function, axes, s / n and norm matches the host") {
  for (const auto& c : all_cases())
    for (DType t : input_dtypes(c.family)) gpu_case(c, t);
}

GPU_TEST_CASE("gpu fft: the tutorial's 4000x4000 int64 fftn matches the host") {
  Array a_cpu = kiln::random::randint(0, 255, {4000, 4000});
  Array a_gpu = kiln::asarray(a_cpu, kiln::cuda());
  Array f_cpu = kf::fftn(a_cpu);
  Array f_gpu = kf::fftn(a_gpu);
  CHECK(f_gpu.dtype() == DType::Complex128);
  CHECK(kiln::allclose(f_cpu, f_gpu.get()));
}

GPU_TEST_CASE("gpu fft: inputs are left unchanged") {
  for (const auto& c : all_cases()) {
    std::vector<DType> types{DType::Float64};  // real input: R2C / R2CFull read it in place
    if (c.family == Family::C2C || c.family == Family::C2R) types.push_back(DType::Complex128);
    for (DType t : types) {
      INFO(c.name << " " << kiln::dtype_name(t));
      Array x = sample(c.shape, t);
      Array dev = kiln::asarray(x, kiln::cuda());
      c.f(dev).eval();
      CHECK(kiln::array_equal(dev.get(), x));
    }
  }
}

GPU_TEST_CASE("gpu fft: empty batches and zero-length inputs padded by n") {
  for (const Case& c : std::vector<Case>{
           {"fft (0,5)", {0, 5}, Family::C2C, [](const Array& a) { return kf::fft(a); }},
           {"fft (3,0) n=4", {3, 0}, Family::C2C, [](const Array& a) { return kf::fft(a, 4); }},
           {"rfft (3,0) n=4", {3, 0}, Family::R2C, [](const Array& a) { return kf::rfft(a, 4); }},
           {"irfft (2,0) n=3", {2, 0}, Family::C2R, [](const Array& a) {
              return kf::irfft(a, 3);
            }}})
    gpu_case(c, c.family == Family::R2C ? DType::Float64 : DType::Complex128);
}

GPU_TEST_CASE("gpu fft: a device transform caches a plan with its work area; clear drops it") {
  kf::clear_plan_cache();
  auto before = kf::plan_cache();
  CHECK(before.plans == 0);
  CHECK(before.work_bytes == 0);
  Array x = sample({24, 40}, DType::Complex64);
  CHECK(gpu_matches_host([](const Array& a) { return kf::fft2(a); }, x));
  auto after = kf::plan_cache();
  CHECK(after.plans == 1);  // fft2 over the trailing axes: one 2-D plan
  CHECK(after.misses == before.misses + 1);
  kf::clear_plan_cache();
  CHECK(kf::plan_cache().plans == 0);
  CHECK(kf::plan_cache().work_bytes == 0);
  CHECK(kf::plan_cache().misses == after.misses);  // the counters keep counting
}

GPU_TEST_CASE("gpu fft: a second call with the same layout reuses the cached plan") {
  kf::clear_plan_cache();
  Array x1 = kiln::asarray(sample({24, 40}, DType::Complex64), kiln::cuda());
  Array x2 = kiln::asarray(sample({24, 40}, DType::Complex64, 1.0), kiln::cuda());
  auto before = kf::plan_cache();
  kf::fft2(x1).eval();
  auto first = kf::plan_cache();
  CHECK(first.misses == before.misses + 1);
  CHECK(first.plans == 1);
  kf::fft2(x2).eval();  // a different array, so a new node: it runs again
  auto second = kf::plan_cache();
  CHECK(second.hits == first.hits + 1);
  CHECK(second.misses == first.misses);
  CHECK(second.plans == 1);
}

GPU_TEST_CASE("gpu fft: the cache evicts down to its limits and results stay right") {
  LimitsGuard guard;
  Fn fft = [](const Array& a) { return kf::fft(a); };
  kf::set_plan_cache_limits(2, guard.saved.max_work_bytes);
  auto before = kf::plan_cache();
  for (int64_t n : {10, 11, 12, 13, 14}) {
    Array x = sample({3, n}, DType::Complex128);
    CHECK(gpu_matches_host(fft, x));
    CHECK(kf::plan_cache().plans <= 2);
  }
  CHECK(kf::plan_cache().misses == before.misses + 5);

  // No room for work areas: every plan that has one is dropped after its call.
  kf::set_plan_cache_limits(64, 0);
  Array x = sample({4099}, DType::Complex128);  // a prime length: cuFFT needs a work area
  CHECK(gpu_matches_host(fft, x));
  CHECK(kf::plan_cache().work_bytes == 0);

  kf::set_plan_cache_limits(0, guard.saved.max_work_bytes);
  CHECK(kf::plan_cache().plans == 0);
  CHECK(gpu_matches_host(fft, x));
  CHECK(kf::plan_cache().plans == 0);
}

GPU_TEST_CASE("gpu fft: the R2C path and the explicit complex path agree on the device") {
  Array a = kiln::asarray(kiln::random::randint(0, 255, {4000, 4000}), kiln::cuda());
  for (std::string norm : {"backward", "ortho"}) {  // in place without and with the scale
    INFO(norm);
    Array full = kf::fftn(a, {}, {}, norm).get();
    Array c2c = kf::fftn(a.astype(DType::Complex128), {}, {}, norm).get();
    CHECK(close_to(full, c2c));
  }
  Array b = kiln::asarray(sample({3, 4, 5, 6}, DType::Float32), kiln::cuda());
  CHECK(close_to(kf::fftn(b).get(), kf::fftn(b.astype(DType::Complex64)).get()));
}

GPU_TEST_CASE("gpu fft: integer input in memory goes to cuFFT uncast (converted as it loads)") {
  for (DType t : {DType::Int64, DType::Int32, DType::Bool}) {
    INFO(std::string(kiln::dtype_name(t)));
    // A copy to the device not yet evaluated (a library step's output) and an evaluated array.
    Array lazy = kiln::asarray(sample({64, 48}, t), kiln::cuda());
    Array a = kiln::asarray(sample({64, 48}, t), kiln::cuda()).eval();
    auto lazy_plan = kiln::plan::make_plan({kf::fftn(lazy).node()});
    CHECK(lazy_plan.buffers[fft_step_of(lazy_plan)->in].dtype == t);
    CHECK(count_steps(lazy_plan).kernels == 0);
    CHECK(close_to(kf::fftn(lazy).get(), kf::fftn(lazy.get()).eval()));
    for (const Array& f : {kf::fftn(a), kf::rfftn(a), kf::fftn(a, std::vector<int64_t>{80, 50})}) {
      auto plan = kiln::plan::make_plan({f.node()});
      const auto* step = fft_step_of(plan);
      REQUIRE(step != nullptr);
      CHECK(plan.buffers[step->in].dtype == t);
      auto [kernels, kernels_before, ffts] = count_steps(plan);
      CHECK(ffts == 1);
      CHECK(kernels == 0);
      CHECK(kernels_before == 0);
    }
    CHECK(close_to(kf::fftn(a).get(), kf::fftn(a.get()).eval()));
    CHECK(close_to(kf::rfftn(a).get(), kf::rfftn(a.get()).eval()));
    CHECK(close_to(kf::fftn(a, std::vector<int64_t>{80, 50}).get(),
                   kf::fftn(a.get(), std::vector<int64_t>{80, 50}).eval()));
  }
  // Random integers drawn on the device: the random step's output is read directly.
  kiln::random::Generator g(7, kiln::cuda());
  Array r = g.randint(0, 255, {300, 200});
  auto random_plan = kiln::plan::make_plan({kf::fftn(r).node()});
  CHECK(count_steps(random_plan).kernels == 0);
  CHECK(random_plan.buffers[fft_step_of(random_plan)->in].dtype == DType::Int64);
  CHECK(close_to(kf::fftn(r).get(), kf::fftn(r.get()).eval()));
  // Computed integers are cast in the kernel that computes them, as before.
  Array b = kiln::asarray(sample({64, 48}, DType::Int64), kiln::cuda());
  auto plan = kiln::plan::make_plan({kf::fftn(b * 2).node()});
  const auto* step = fft_step_of(plan);
  REQUIRE(step != nullptr);
  CHECK(plan.buffers[step->in].dtype == DType::Float64);
  CHECK(count_steps(plan).kernels_before == 1);
  CHECK(close_to(kf::fftn(b * 2).get(), kf::fftn(b.get() * 2).eval()));
}

// A callback plan waits for cuFFT's JIT link (src/cuda/fft.cpp), so the first transform of an
// integer layout casts in a pass (a plain plan), the second makes the callback plan, the third
// finds it. Each call transforms new values (a new node: an evaluated one would not run again).
GPU_TEST_CASE("gpu fft: a new integer layout is cast at first, then read through its callback") {
  kf::clear_plan_cache();
  // A shape each (the plain R2C plan of int64 and int32 input is the same, float64 reals), and
  // shapes no other case transforms: kiln remembers which layouts it has cast once already.
  for (auto [t, shape] : {std::pair{DType::Int64, Shape{62, 46}}, {DType::Int32, Shape{38, 26}}}) {
    INFO(std::string(kiln::dtype_name(t)));
    auto [before, after_first, after_second, after_third] = std::array<kf::PlanCacheInfo, 4>{};
    std::vector<Array> got, want;
    for (int call = 0; call < 3; ++call) {
      Array host = sample(shape, t, call);
      want.push_back(kf::fftn(host).eval());
      Array a = kiln::asarray(host, kiln::cuda()).eval();
      (call == 0 ? before : call == 1 ? after_first : after_second) = kf::plan_cache();
      got.push_back(kf::fftn(a).eval());
    }
    after_third = kf::plan_cache();
    CHECK(after_first.plans == before.plans + 1);  // the plain R2C plan
    CHECK(after_first.misses == before.misses + 1);
    CHECK(after_second.plans == after_first.plans + 1);  // the callback plan
    CHECK(after_second.misses == after_first.misses + 1);
    CHECK(after_third.misses == after_second.misses);  // the callback plan, found
    CHECK(after_third.hits == after_second.hits + 1);
    for (int call = 0; call < 3; ++call) CHECK(close_to(got[call].get(), want[call]));
  }
}

GPU_TEST_CASE("gpu fft: threads transforming at once share the plan cache safely") {
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &wrong] {
      for (int i = 0; i < 6; ++i) {
        Array x = sample({8 + i % 3, 16 + t}, DType::Complex64, t + 0.1 * i);
        if (!gpu_matches_host([](const Array& a) { return kf::fftn(a); }, x)) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(wrong == 0);
}

// ---- the helpers built into kiln (src/cuda/fft_helpers_aot.cu) against NVRTC's ------------------
GPU_TEST_CASE("gpu fft helpers: built into kiln and compiled by NVRTC, the same bits") {
  if (!gf::built_in_helpers_run_on(0))
    MESSAGE(
        "kiln's build has no SASS for this GPU's arch (CMAKE_CUDA_ARCHITECTURES): both runs "
        "below take NVRTC's helpers");
  check_convert<uint8_t>(DType::Bool);
  check_convert<int8_t>(DType::Int8);
  check_convert<int16_t>(DType::Int16);
  check_convert<int32_t>(DType::Int32);
  check_convert<int64_t>(DType::Int64);
  check_convert<uint8_t>(DType::UInt8);
  check_convert<uint16_t>(DType::UInt16);
  check_convert<uint32_t>(DType::UInt32);
  check_convert<uint64_t>(DType::UInt64);
  check_pads<float>(gf::Precision::Single);
  check_pads<double>(gf::Precision::Double);
  for (int64_t second : {4, -1}) {
    check_zero_imag<float>(gf::Precision::Single, second);
    check_zero_imag<double>(gf::Precision::Double, second);
  }
  check_scale<float>(gf::Precision::Single);
  check_scale<double>(gf::Precision::Double);
  check_hermitian<float>(gf::Precision::Single);
  check_hermitian<double>(gf::Precision::Double);
}

GPU_TEST_CASE("gpu fft: built-in helpers and NVRTC's give the host's results") {
  for (const auto& c : all_cases())
    for (DType t : input_dtypes(c.family)) {
      INFO(c.name << " " << kiln::dtype_name(t));
      check_paths_agree(c.f, [&] { return sample(c.shape, t); });
    }
  // Every integer dtype and bool, converted in a pass of its own: a pad along the first axis.
  for (DType t : kiln::kAllDTypes)
    if (kiln::is_integer_or_bool(t)) {
      INFO(kiln::dtype_name(t));
      check_paths_agree(
          [](const Array& a) {
            return kf::fftn(a, std::vector<int64_t>{80, 50});
          },
          [&] {
            return sample({64, 48}, t);
          });
    }
  INFO("the tutorial's 4000x4000 int64 fftn");
  auto values = kiln::random::randint(0, 255, {4000, 4000}).to_vector<int64_t>();
  check_paths_agree([](const Array& a) { return kf::fftn(a); },
                    [&] {
                      return kiln::asarray(values, Shape{4000, 4000});
                    });
}

// The child half of the next test: the tutorial's first fftn in a fresh process, whose kernel
// cache (KILN_CACHE_DIR) the parent left empty; KILN_TEST_FFT_COMPILES says how many compiles
// the parent expects (support/child_case.hpp).
const char* const kFirstCallChild = "gpu fft: child process (run by the first-call test)";

GPU_TEST_CASE("gpu fft: child process (run by the first-call test)" * doctest::skip()) {
  const char* expected = std::getenv("KILN_TEST_FFT_COMPILES");
  REQUIRE(expected != nullptr);
  Array a_cpu = kiln::random::randint(0, 255, {4000, 4000});
  Array a_gpu = kiln::asarray(a_cpu, kiln::cuda()).eval();
  Array f_gpu = kf::fftn(a_gpu).eval();
  auto stats = kiln::cache::stats();  // the process's own, from its start
  CHECK(stats.compiles == std::stoll(expected));
  CHECK(stats.disk_hits == 0);
  CHECK(stats.memory_hits == 0);
  CHECK(close_to(f_gpu.get(), kf::fftn(a_cpu).eval()));
}

GPU_TEST_CASE("gpu fft: a first int64 fftn in a fresh process compiles no helper kernel") {
  REQUIRE_MESSAGE(gf::built_in_helpers_run_on(0),
                  "kiln's build has no SASS for this GPU's arch: add it to "
                  "CMAKE_CUDA_ARCHITECTURES for a first FFT without NVRTC");
  // Built in: nothing to compile. NVRTC's (KILN_FFT_AOT=0): the cast of the input and the
  // Hermitian expansion, as every first call compiled before the helpers were built in.
  for (auto [aot, compiles] : {std::pair{"1", "0"}, {"0", "2"}}) {
    INFO("KILN_FFT_AOT=" << aot);
    kiln::test_support::TempDir empty("kiln-fft-first-call");
    kiln::test_support::ScopedEnv cache("KILN_CACHE_DIR", empty.path.c_str());
    kiln::test_support::ScopedEnv path("KILN_FFT_AOT", aot);
    kiln::test_support::ScopedEnv expect("KILN_TEST_FFT_COMPILES", compiles);
    CHECK(kiln::test_support::run_case_in_child(kFirstCallChild));
  }
}
