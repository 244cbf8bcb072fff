// FFT steps on the host through FFTW's guru64 interface: one plan covers any set of axes with
// their strides, batched over the remaining axes, so no transposes are needed.
//
// Plans are cached, since even FFTW_ESTIMATE planning costs more than a small transform.
// FFTW's planner (and plan destruction) is not thread-safe, so every call into it holds one
// mutex; executing a plan with the new-array functions is thread-safe and runs unlocked.
//
// R2CFull (the full spectrum of real input) is an r2c plan whose output strides are those of
// the full output, so FFTW writes the half spectrum straight into its final places, followed
// by a pass that fills the other half from Hermitian symmetry. No temporary, and the pass
// touches only the missing half.
#include "host/fft.hpp"

#include <fftw3.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <thread>

#include "common/parallel.hpp"
#include "graph/host_buffer.hpp"
#include "graph/shape.hpp"
#include "kiln/errors.hpp"

namespace kiln::cpu {

namespace {

using graph::FftKind;
using graph::Strides;
using plan::FftStep;
using IoDim = fftw_iodim64;  // one struct shared by every precision

// ---- FFTW's API per precision, so the rest is written once -----------------------------
template <class R>
struct Fftw;

template <>
struct Fftw<double> {
  using Plan = fftw_plan;
  static fftw_complex* c(void* p) { return static_cast<fftw_complex*>(p); }
  static double* r(void* p) { return static_cast<double*>(p); }
  static Plan make(FftKind k, int sign, const std::vector<IoDim>& t, const std::vector<IoDim>& b,
                   void* in, void* out) {
    int nt = static_cast<int>(t.size()), nb = static_cast<int>(b.size());
    if (k == FftKind::R2C)
      return fftw_plan_guru64_dft_r2c(nt, t.data(), nb, b.data(), r(in), c(out), FFTW_ESTIMATE);
    if (k == FftKind::C2R)
      return fftw_plan_guru64_dft_c2r(nt, t.data(), nb, b.data(), c(in), r(out), FFTW_ESTIMATE);
    return fftw_plan_guru64_dft(nt, t.data(), nb, b.data(), c(in), c(out), sign, FFTW_ESTIMATE);
  }
  static void execute(Plan p, FftKind k, void* in, void* out) {
    if (k == FftKind::R2C)
      fftw_execute_dft_r2c(p, r(in), c(out));
    else if (k == FftKind::C2R)
      fftw_execute_dft_c2r(p, c(in), r(out));
    else
      fftw_execute_dft(p, c(in), c(out));
  }
  static int alignment(void* p) { return fftw_alignment_of(r(p)); }
  static void set_threads(int n) { fftw_plan_with_nthreads(n); }
};

template <>
struct Fftw<float> {
  using Plan = fftwf_plan;
  static fftwf_complex* c(void* p) { return static_cast<fftwf_complex*>(p); }
  static float* r(void* p) { return static_cast<float*>(p); }
  static Plan make(FftKind k, int sign, const std::vector<IoDim>& t, const std::vector<IoDim>& b,
                   void* in, void* out) {
    int nt = static_cast<int>(t.size()), nb = static_cast<int>(b.size());
    if (k == FftKind::R2C)
      return fftwf_plan_guru64_dft_r2c(nt, t.data(), nb, b.data(), r(in), c(out), FFTW_ESTIMATE);
    if (k == FftKind::C2R)
      return fftwf_plan_guru64_dft_c2r(nt, t.data(), nb, b.data(), c(in), r(out), FFTW_ESTIMATE);
    return fftwf_plan_guru64_dft(nt, t.data(), nb, b.data(), c(in), c(out), sign, FFTW_ESTIMATE);
  }
  static void execute(Plan p, FftKind k, void* in, void* out) {
    if (k == FftKind::R2C)
      fftwf_execute_dft_r2c(p, r(in), c(out));
    else if (k == FftKind::C2R)
      fftwf_execute_dft_c2r(p, c(in), r(out));
    else
      fftwf_execute_dft(p, c(in), c(out));
  }
  static int alignment(void* p) { return fftwf_alignment_of(r(p)); }
  static void set_threads(int n) { fftwf_plan_with_nthreads(n); }
};

// ---- the plan cache -------------------------------------------------------------------------
// Leaked on purpose: plans may still be destroyed from other static destructors at exit, and
// a destroyed mutex then would be undefined behaviour.
std::mutex& planner_mutex() {
  static auto* m = new std::mutex;
  return *m;
}

// Owns one plan of either precision; destroying it takes the planner lock, so it must never
// happen while that lock is held (the cache releases evicted plans after unlocking).
struct OwnedPlan {
  fftw_plan d = nullptr;
  fftwf_plan f = nullptr;
  OwnedPlan() = default;
  OwnedPlan(const OwnedPlan&) = delete;
  OwnedPlan& operator=(const OwnedPlan&) = delete;
  ~OwnedPlan() {
    std::lock_guard lock(planner_mutex());
    if (d) fftw_destroy_plan(d);
    if (f) fftwf_destroy_plan(f);
  }
  void set(fftw_plan p) { d = p; }
  void set(fftwf_plan p) { f = p; }
  fftw_plan get(double) const { return d; }
  fftwf_plan get(float) const { return f; }
};
using PlanRef = std::shared_ptr<const OwnedPlan>;
using PlanKey = std::vector<int64_t>;

// Called with the planner lock held. Small transforms run faster on one thread than on a
// pool that must be woken, so only large ones are planned threaded.
void configure_threads(int64_t elements) {
  static const bool threads_ok = fftw_init_threads() != 0 && fftwf_init_threads() != 0;
  if (!threads_ok) return;
  int n = elements < (int64_t{1} << 16)
              ? 1
              : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  Fftw<double>::set_threads(n);
  Fftw<float>::set_threads(n);
}

class PlanCache {
 public:
  template <class Make>
  PlanRef get(const PlanKey& key, int64_t elements, Make make) {
    // Declared before the lock, so plans dropped here are destroyed after unlocking.
    std::vector<PlanRef> evicted;
    std::shared_ptr<OwnedPlan> plan;
    std::lock_guard lock(planner_mutex());
    if (auto it = index_.find(key); it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);  // most recently used first
      return it->second->second;
    }
    configure_threads(elements);
    plan = std::make_shared<OwnedPlan>();
    plan->set(make());
    if (!plan->d && !plan->f)
      throw Error("FFTW could not plan this transform; please report the shapes and axes used");
    lru_.emplace_front(key, plan);
    index_[key] = lru_.begin();
    while (lru_.size() > kCapacity) {
      evicted.push_back(std::move(lru_.back().second));
      index_.erase(lru_.back().first);
      lru_.pop_back();
    }
    return plan;
  }

 private:
  static constexpr size_t kCapacity = 64;
  std::list<std::pair<PlanKey, PlanRef>> lru_;
  std::map<PlanKey, std::list<std::pair<PlanKey, PlanRef>>::iterator> index_;
};

PlanCache& plan_cache() {
  static auto* c = new PlanCache;  // leaked, like the mutex
  return *c;
}

// ---- layout -------------------------------------------------------------------------------
// The array the transform reads: the input with each transformed axis cropped or
// zero-padded to its length (for C2R the last one to the n / 2 + 1 stored entries).
Shape work_shape(const FftStep& s, Shape shape) {
  for (size_t i = 0; i < s.axes.size(); ++i) {
    bool halved = s.kind == FftKind::C2R && i + 1 == s.axes.size();
    shape[s.axes[i]] = halved ? s.lengths[i] / 2 + 1 : s.lengths[i];
  }
  return shape;
}

// Copies the overlap of two dense arrays of equal rank and zero-fills the rest of dst.
void pad_copy(const char* src, const Shape& ss, const Strides& sst, char* dst, const Shape& ds,
              const Strides& dst_st, size_t item, size_t axis) {
  int64_t common = std::min(ss[axis], ds[axis]);
  size_t dst_step = static_cast<size_t>(dst_st[axis]) * item;
  if (axis + 1 == ss.size()) {
    // An empty input has no memory at all (a null src), which memcpy must not see.
    if (common > 0) std::memcpy(dst, src, static_cast<size_t>(common) * item);
  } else {
    size_t src_step = static_cast<size_t>(sst[axis]) * item;
    for (int64_t i = 0; i < common; ++i)
      pad_copy(src + i * src_step, ss, sst, dst + i * dst_step, ds, dst_st, item, axis + 1);
  }
  std::memset(dst + common * dst_step, 0, static_cast<size_t>(ds[axis] - common) * dst_step);
}

void pad_copy(const void* src, const Shape& ss, void* dst, const Shape& ds, size_t item) {
  pad_copy(static_cast<const char*>(src), ss, graph::contiguous_strides(ss),
           static_cast<char*>(dst), ds, graph::contiguous_strides(ds), item, 0);
}

// FFTW's description of the problem: the transformed axes in the step's order (FFTW halves
// the last one of a real transform, which is NumPy's rule for rfftn), every other axis a
// batch dimension. Strides count elements of each array's own type, as FFTW expects.
struct Dims {
  std::vector<IoDim> transform, batch;
};

Dims make_dims(const FftStep& s, const Shape& work, const Shape& out) {
  Strides is = graph::contiguous_strides(work), os = graph::contiguous_strides(out);
  Dims d;
  for (size_t i = 0; i < s.axes.size(); ++i)
    d.transform.push_back({s.lengths[i], is[s.axes[i]], os[s.axes[i]]});
  for (size_t ax = 0; ax < work.size(); ++ax)
    if (std::find(s.axes.begin(), s.axes.end(), static_cast<int>(ax)) == s.axes.end())
      d.batch.push_back({work[ax], is[ax], os[ax]});
  return d;
}

template <class R>
PlanKey plan_key(const FftStep& s, const Shape& work, void* in, void* out) {
  // The layout follows from the work shape, axes and lengths. New-array execution also needs
  // the same in-place-ness and SIMD alignment as the arrays the plan was made with.
  PlanKey k{static_cast<int64_t>(s.kind),
            sizeof(R),
            s.inverse,
            in == out,
            Fftw<R>::alignment(in),
            Fftw<R>::alignment(out),
            static_cast<int64_t>(work.size())};
  k.insert(k.end(), work.begin(), work.end());
  k.insert(k.end(), s.axes.begin(), s.axes.end());
  k.insert(k.end(), s.lengths.begin(), s.lengths.end());
  return k;
}

template <class R>
void scale_output(void* out, int64_t n, double scale) {
  if (scale == 1.0) return;
  R* p = static_cast<R*>(out);
  R f = static_cast<R>(scale);
  for (int64_t i = 0; i < n; ++i) p[i] *= f;
}

// R2CFull: FFTW halves the last transform dimension, and any transformed axis may be the
// halved one of a full spectrum. The innermost one of length > 1 goes last, so the expansion
// below fills contiguous runs (a length-1 axis would halve nothing).
FftStep with_halved_axis_last(FftStep s) {
  size_t pick = s.axes.size() - 1;
  for (size_t i = 0; i < s.axes.size(); ++i)
    if (s.lengths[i] > 1 && (s.lengths[pick] == 1 || s.axes[i] > s.axes[pick])) pick = i;
  std::rotate(s.axes.begin() + pick, s.axes.begin() + pick + 1, s.axes.end());
  std::rotate(s.lengths.begin() + pick, s.lengths.begin() + pick + 1, s.lengths.end());
  return s;
}

// R2CFull after FFTW: entries k <= n / 2 of the halved axis (length n, the last of s.axes)
// hold the spectrum; the rest follow from Hermitian symmetry of a real input's DFT,
// X[c, k] = conj(X[-c, n - k]), where -c negates every transformed index modulo its length.
// Writes only k > n / 2 and reads only n - k < n / 2, so lines may be filled in any order.
template <class R>
void expand_hermitian(std::complex<R>* out, const Shape& shape, const FftStep& s) {
  size_t r = static_cast<size_t>(s.axes.back());
  int64_t n = shape[r], half = n / 2 + 1;
  if (half >= n) return;  // n <= 2: nothing is missing
  Strides st = graph::contiguous_strides(shape);
  std::vector<char> mirrored(shape.size(), 0);
  for (int a : s.axes) mirrored[a] = 1;
  int64_t lines = shape_size(shape) / n;
  auto fill = [&](int64_t first, int64_t last) {
    for (int64_t line = first; line < last; ++line) {
      int64_t rest = line, at = 0, from = 0;
      for (size_t d = shape.size(); d-- > 0;) {
        if (d == r) continue;
        int64_t c = rest % shape[d];
        rest /= shape[d];
        at += c * st[d];
        from += (mirrored[d] && c != 0 ? shape[d] - c : c) * st[d];
      }
      for (int64_t k = half; k < n; ++k)
        out[at + k * st[r]] = std::conj(out[from + (n - k) * st[r]]);
    }
  };
  // Tasks of about 2^16 entries: a small spectrum is not worth waking the pool for.
  int64_t per_task = std::max<int64_t>(1, (int64_t{1} << 16) / n);
  int64_t tasks = (lines + per_task - 1) / per_task;
  parallel_for(tasks, [&](int64_t t) { fill(t * per_task, std::min(lines, (t + 1) * per_task)); });
}

template <class R>
void run(const FftStep& step, const Shape& in_shape, const void* in, const Shape& out_shape,
         void* out) {
  bool full = step.kind == FftKind::R2CFull;
  FftStep s = full ? with_halved_axis_last(step) : step;
  FftKind lib = full ? FftKind::R2C : s.kind;  // what FFTW is asked for
  Shape work = work_shape(s, in_shape);
  size_t item = lib == FftKind::R2C ? sizeof(R) : sizeof(std::complex<R>);
  // FFTW reads the input in place when it already has the transform's size. It then only
  // reads it (c2c and r2c preserve their input), hence the const_cast. Otherwise the
  // transform reads a padded copy: in the output itself for c2c (an in-place plan), else in
  // scratch memory. c2r always gets a copy, since FFTW destroys a c2r input.
  void* src = const_cast<void*>(in);
  std::shared_ptr<graph::Buffer> scratch;
  if (work != in_shape || s.kind == FftKind::C2R) {
    if (s.kind == FftKind::C2C) {
      src = out;
    } else {
      scratch = allocate(static_cast<size_t>(shape_size(work)) * item);
      src = scratch->data();
    }
    pad_copy(in, in_shape, src, work, item);
  }
  int64_t elements = std::max(shape_size(work), shape_size(out_shape));
  PlanRef plan = plan_cache().get(plan_key<R>(s, work, src, out), elements, [&] {
    Dims d = make_dims(s, work, out_shape);
    int sign = s.inverse ? FFTW_BACKWARD : FFTW_FORWARD;
    return Fftw<R>::make(lib, sign, d.transform, d.batch, src, out);
  });
  Fftw<R>::execute(plan->get(R{}), lib, src, out);
  if (full) expand_hermitian(static_cast<std::complex<R>*>(out), out_shape, s);
  bool complex_out = s.kind != FftKind::C2R;
  scale_output<R>(out, shape_size(out_shape) * (complex_out ? 2 : 1), s.scale);
}

}  // namespace

void run_fft(const plan::FftStep& step, const plan::PlanBuffer& in_desc, const void* in,
             const plan::PlanBuffer& out_desc, void* out) {
  if (shape_size(out_desc.shape) == 0) return;  // an empty batch: nothing to transform
  DType t = out_desc.dtype;
  if (t == DType::Float32 || t == DType::Complex64)
    run<float>(step, in_desc.shape, in, out_desc.shape, out);
  else
    run<double>(step, in_desc.shape, in, out_desc.shape, out);
}

}  // namespace kiln::cpu
