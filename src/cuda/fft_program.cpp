#include "cuda/fft_program.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace kiln::gpu::fft {
namespace {

using graph::FftKind;

// What a dimension of the joint layout is to the transform. Done: transformed by an earlier
// pass (the R2C pass), so later passes batch over it.
enum class Role : uint8_t { Batch, Axis, Real, Done };

// The two sides of a real transform, dimension by dimension: `w` the array the transform
// reads after cropping / padding (for C2R the complex half-spectrum), `o` the output. They
// differ only on the real axis; for C2C they are equal.
struct Layout {
  std::vector<int64_t> w, o;
  std::vector<Role> role;
  int real = -1;  // index of the real axis, -1 when there is none (C2C, or length 1)
};

struct Span {
  int first, count;
};

// The input with each transformed axis at its length (for C2R the last one at n / 2 + 1),
// exactly as the host executor builds it.
Shape work_shape(const plan::FftStep& s, Shape shape) {
  for (size_t i = 0; i < s.axes.size(); ++i) {
    bool halved = s.kind == FftKind::C2R && i + 1 == s.axes.size();
    shape[s.axes[i]] = halved ? s.lengths[i] / 2 + 1 : s.lengths[i];
  }
  return shape;
}

std::vector<Role> roles(const plan::FftStep& s, const Shape& work) {
  std::vector<Role> r(work.size(), Role::Batch);
  for (int a : s.axes) r[a] = Role::Axis;
  if (s.kind == FftKind::R2C || s.kind == FftKind::C2R) r[s.axes.back()] = Role::Real;
  if (s.kind == FftKind::R2CFull)  // see the header: the innermost axis of length > 1
    for (size_t d = work.size(); d-- > 0;)
      if (r[d] == Role::Axis && work[d] > 1) {
        r[d] = Role::Real;
        break;
      }
  return r;
}

// Drops dimensions of extent 1 on both sides (a length-1 DFT is the identity) and merges
// neighbouring batch dimensions, so runs of transformed axes become as long as possible and
// batches as few.
Layout normalize(const Shape& w, const Shape& o, const std::vector<Role>& role) {
  Layout l;
  for (size_t d = 0; d < w.size(); ++d) {
    if (w[d] == 1 && o[d] == 1) continue;
    if (role[d] == Role::Batch && !l.role.empty() && l.role.back() == Role::Batch) {
      l.w.back() *= w[d];
      l.o.back() *= o[d];
      continue;
    }
    if (role[d] == Role::Real) l.real = static_cast<int>(l.w.size());
    l.w.push_back(w[d]);
    l.o.push_back(o[d]);
    l.role.push_back(role[d]);
  }
  return l;
}

int64_t product(const std::vector<int64_t>& v, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= v[i];
  return p;
}

// Runs of consecutive Axis dimensions, cut into chunks of at most three from the inner end,
// so the innermost (contiguous, fastest) chunk is as large as possible.
std::vector<Span> c2c_spans(const Layout& l) {
  std::vector<Span> spans;
  int d = static_cast<int>(l.role.size()) - 1;
  while (d >= 0) {
    if (l.role[d] != Role::Axis) {
      --d;
      continue;
    }
    int last = d;
    while (d >= 0 && l.role[d] == Role::Axis && last - d < 3) --d;
    spans.push_back({d + 1, last - d});
  }
  return spans;
}

// The R2C pass: the real axis and up to two Axis dimensions right before it, which one
// multi-dimensional R2C plan transforms together (it halves its last dimension).
Span real_span(Layout& l) {
  int first = l.real;
  while (first > 0 && l.real - first < 2 && l.role[first - 1] == Role::Axis) --first;
  for (int d = first; d <= l.real; ++d) l.role[d] = Role::Done;
  return {first, l.real - first + 1};
}

struct Sides {
  const std::vector<int64_t>& in;
  const std::vector<int64_t>& out;
};

// The plan and calls for one pass over span `sp` of dense row-major arrays with extents
// `ext.in` / `ext.out` (equal outside the span). See the header for the batching choice.
ExecOp make_exec(Sides ext, Span sp, Transform t, Precision p, BufferId in, BufferId out,
                 bool inverse) {
  bool real = t != Transform::C2C;
  size_t first = sp.first, end = sp.first + sp.count;
  int64_t outer = product(ext.in, 0, first), inner = product(ext.in, end, ext.in.size());
  int64_t in_len = product(ext.in, first, end), out_len = product(ext.out, first, end);
  PlanSpec s{t, p, sp.count, {}, {}, {}, inner, 0, inner, 0, 0, std::nullopt};
  for (int i = 0; i < sp.count; ++i) {
    s.inembed[i] = ext.in[first + i];
    s.onembed[i] = ext.out[first + i];
    s.n[i] = t == Transform::C2R ? s.onembed[i] : s.inembed[i];  // the real (logical) length
  }
  ExecOp op{s, in, out, inverse, 1, 0, 0};
  // Real passes never step by single elements (see the header's note on alignment).
  bool batch_inner = inner > 1 && (outer == 1 || outer <= inner || real);
  if (batch_inner) {  // transforms start 1 apart; one call per outer slab
    op.plan.batch = inner;
    op.plan.idist = op.plan.odist = 1;
    op.loops = outer;
    op.in_step = in_len * inner;
    op.out_step = out_len * inner;
  } else {  // transforms start a slab apart; one call per inner position
    op.plan.batch = outer;
    op.plan.idist = in_len * inner;
    op.plan.odist = out_len * inner;
    op.loops = inner;
    op.in_step = op.out_step = 1;
  }
  return op;
}

void add_c2c_passes(Program& p, const Layout& l, Sides ext, BufferId& src, BufferId dst,
                    bool inverse) {
  for (Span sp : c2c_spans(l)) {
    p.ops.push_back(make_exec(ext, sp, Transform::C2C, p.precision, src, dst, inverse));
    src = dst;
  }
}

// cuFFT wants the real pointers of R2C / C2R aligned like complex ones. When the calls of a
// real pass start an odd number of reals apart, that side goes through staging with one spare
// real per slab (real passes loop over whole slabs only; see make_exec).
void stage_real_input(Program& p, ExecOp& e) {
  if (e.loops == 1 || e.in_step % 2 == 0) return;
  int64_t slab = e.in_step;
  p.staging = {false, e.loops * (slab + 1)};
  p.ops.push_back(PadOp{e.in, BufferId::Staging, {e.loops, slab}, {e.loops, slab + 1}});
  e.in = BufferId::Staging;
  e.in_step = slab + 1;
}

// Adds the pass itself, and the packing copy after it when its output was staged.
void stage_real_output(Program& p, ExecOp e) {
  if (e.loops == 1 || e.out_step % 2 == 0) {
    p.ops.push_back(e);
    return;
  }
  int64_t slab = e.out_step;
  p.staging = {false, e.loops * (slab + 1)};
  BufferId out = std::exchange(e.out, BufferId::Staging);
  e.out_step = slab + 1;
  p.ops.push_back(e);
  p.ops.push_back(PadOp{BufferId::Staging, out, {e.loops, slab + 1}, {e.loops, slab}});
}

void c2c_program(Program& p, const plan::FftStep& s, const Shape& in, const Shape& work) {
  BufferId src = BufferId::In;
  if (work != in) {  // padded into the output, then transformed there in place
    p.ops.push_back(PadOp{BufferId::In, BufferId::Out, in, work});
    src = BufferId::Out;
  }
  Layout l = normalize(work, work, roles(s, work));
  add_c2c_passes(p, l, {l.w, l.w}, src, BufferId::Out, s.inverse);
  if (src == BufferId::In)  // every transformed axis has length 1: the DFT is a copy
    p.ops.push_back(PadOp{BufferId::In, BufferId::Out, in, work});
}

// The real input at the transform's lengths: In itself, or a cropped / zero-padded copy.
BufferId real_input(Program& p, const Shape& in, const Shape& work) {
  if (work == in) return BufferId::In;
  p.scratch = {false, shape_size(work)};
  p.ops.push_back(PadOp{BufferId::In, BufferId::Scratch, in, work});
  return BufferId::Scratch;
}

void r2c_program(Program& p, const plan::FftStep& s, const Shape& in, const Shape& work,
                 const Shape& out) {
  p.in.complex = false;
  Layout l = normalize(work, out, roles(s, work));
  if (l.real < 0) {
    // Real axis of length 1: its one output entry is the input value itself (work == out).
    p.ops.push_back(PadOp{BufferId::In, BufferId::Out, in, out});
  } else {
    BufferId src = real_input(p, in, work);
    Span sp = real_span(l);
    ExecOp e = make_exec({l.w, l.o}, sp, Transform::R2C, p.precision, src, BufferId::Out, false);
    stage_real_input(p, e);
    p.ops.push_back(e);
  }
  BufferId src = BufferId::Out;
  add_c2c_passes(p, l, {l.o, l.o}, src, BufferId::Out, false);
}

void c2r_program(Program& p, const plan::FftStep& s, const Shape& in, const Shape& work,
                 const Shape& out) {
  p.out.complex = false;
  p.scratch = {true, shape_size(work)};
  p.ops.push_back(PadOp{BufferId::In, BufferId::Scratch, in, work});  // C2R destroys its input
  Layout l = normalize(work, out, roles(s, work));
  BufferId src = BufferId::Scratch;
  add_c2c_passes(p, l, {l.w, l.w}, src, BufferId::Scratch, true);
  if (l.real < 0) {  // real axis of length 1: the output is the real part (work == out)
    p.ops.push_back(PadOp{BufferId::Scratch, BufferId::Out, work, out});
    return;
  }
  size_t r = static_cast<size_t>(l.real);
  int64_t n = l.o[r];
  p.ops.push_back(ZeroImagOp{BufferId::Scratch, product(l.w, 0, r), l.w[r],
                             product(l.w, r + 1, l.w.size()), 0, n % 2 == 0 ? n / 2 : -1});
  ExecOp e = make_exec({l.w, l.o}, {l.real, 1}, Transform::C2R, p.precision, BufferId::Scratch,
                       BufferId::Out, true);
  stage_real_output(p, e);
}

// See the header. Returns whether the norm scale was applied (by the expansion).
bool r2c_full_program(Program& p, const plan::FftStep& s, const Shape& in, const Shape& work) {
  p.in.complex = false;
  Layout l = normalize(work, work, roles(s, work));
  if (l.real < 0) {  // every length is 1: the spectrum is the input, as complex
    p.ops.push_back(PadOp{BufferId::In, BufferId::Out, in, work});
    return false;
  }
  size_t r = static_cast<size_t>(l.real);
  int64_t n = l.o[r];
  HermitianOp x{BufferId::Out, BufferId::Out, {}, {}, n, n, product(l.o, r + 1, l.o.size()),
                s.scale};
  for (size_t d = 0; d < r; ++d) {
    x.outer.push_back(l.o[d]);
    x.mirror.push_back(l.role[d] != Role::Batch);
  }
  for (size_t d = r + 1; d < l.role.size(); ++d)  // the roles' choice of the halved axis
    if (l.role[d] != Role::Batch) throw std::logic_error("R2CFull: a transformed axis is inner");

  BufferId src = real_input(p, in, work);
  Span sp = real_span(l);
  bool one_pass = std::find(l.role.begin(), l.role.end(), Role::Axis) == l.role.end();
  std::vector<int64_t> half = l.o;
  half[r] = n / 2 + 1;
  if (one_pass && kR2CHalfInOutput) {  // the half into the output: l.o is the R2C's onembed
    ExecOp e = make_exec({l.w, l.o}, sp, Transform::R2C, p.precision, src, BufferId::Out, false);
    stage_real_input(p, e);
    p.ops.push_back(e);
    if (half[r] == n && x.factor == 1.0) return true;  // n = 2 halves nothing
  } else {
    p.half = {true, product(half, 0, half.size())};
    ExecOp e = make_exec({l.w, half}, sp, Transform::R2C, p.precision, src, BufferId::Half, false);
    stage_real_input(p, e);
    p.ops.push_back(e);
    BufferId h = BufferId::Half;
    add_c2c_passes(p, l, {half, half}, h, BufferId::Half, false);
    x.src = BufferId::Half;
    x.src_extent = half[r];
  }
  p.ops.push_back(std::move(x));
  return true;
}

}  // namespace

std::vector<int64_t> PlanSpec::key() const {
  std::vector<int64_t> k{static_cast<int64_t>(transform), static_cast<int64_t>(precision), rank};
  for (const auto* a : {&n, &inembed, &onembed}) k.insert(k.end(), a->begin(), a->end());
  k.insert(k.end(), {istride, idist, ostride, odist, batch});
  k.push_back(load_from ? 1 + static_cast<int64_t>(*load_from) : 0);
  return k;
}

const BufferInfo& Program::info(BufferId b) const {
  switch (b) {
    case BufferId::In:
      return in;
    case BufferId::Out:
      return out;
    case BufferId::Scratch:
      return scratch;
    case BufferId::Half:
      return half;
    case BufferId::Converted:
      return converted;
    default:
      return staging;
  }
}

size_t Program::element_bytes(BufferId b) const {
  if (b == BufferId::In) return itemsize(in_dtype);
  size_t real = precision == Precision::Single ? 4 : 8;
  return info(b).complex ? 2 * real : real;
}

namespace {

BufferId* reads(Op& op) {
  if (auto* pad = std::get_if<PadOp>(&op)) return &pad->src;
  if (auto* exec = std::get_if<ExecOp>(&op)) return &exec->in;
  return nullptr;
}

// See "Integer input" in the header: convert on load when only R2C passes read the input,
// else cast it into Converted first. cuFFT checks the input pointer's alignment as if it held
// reals, so calls that advance it (loops > 1) need integers of the reals' size.
void read_integers(Program& p, bool load_callbacks) {
  bool any = false, on_load = load_callbacks;
  bool real_sized = itemsize(p.in_dtype) == (p.precision == Precision::Single ? 4 : 8);
  for (Op& op : p.ops) {
    BufferId* src = reads(op);
    if (!src || *src != BufferId::In) continue;
    auto* exec = std::get_if<ExecOp>(&op);
    any = true;
    on_load = on_load && exec && exec->plan.transform == Transform::R2C &&
              (exec->loops == 1 || real_sized);
  }
  if (any && on_load) {
    for (Op& op : p.ops)
      if (auto* exec = std::get_if<ExecOp>(&op); exec && exec->in == BufferId::In)
        exec->plan.load_from = p.in_dtype;
    return;
  }
  for (Op& op : p.ops)
    if (BufferId* src = reads(op); src && *src == BufferId::In) *src = BufferId::Converted;
  p.converted = {false, p.in.elements};
  p.ops.insert(p.ops.begin(), ConvertOp{p.in_dtype});
}

}  // namespace

bool uses_load_callbacks(const Program& p) {
  for (const Op& op : p.ops)
    if (const auto* exec = std::get_if<ExecOp>(&op); exec && exec->plan.load_from) return true;
  return false;
}

Program make_program(const plan::FftStep& step, const plan::PlanBuffer& in,
                     const plan::PlanBuffer& out, bool load_callbacks) {
  DType t = out.dtype;
  bool single = t == DType::Float32 || t == DType::Complex64;
  Program p{single ? Precision::Single : Precision::Double,
            {true, shape_size(in.shape)},
            {true, shape_size(out.shape)},
            {true, 0},
            {false, 0},
            {true, 0},
            {},
            in.dtype};
  Shape work = work_shape(step, in.shape);
  bool scaled = false;
  if (step.kind == FftKind::C2C)
    c2c_program(p, step, in.shape, work);
  else if (step.kind == FftKind::R2C)
    r2c_program(p, step, in.shape, work, out.shape);
  else if (step.kind == FftKind::R2CFull)
    scaled = r2c_full_program(p, step, in.shape, work);
  else
    c2r_program(p, step, in.shape, work, out.shape);
  if (step.scale != 1.0 && !scaled) p.ops.push_back(ScaleOp{BufferId::Out, step.scale});
  if (is_integer_or_bool(in.dtype)) {
    if (step.kind != FftKind::R2C && step.kind != FftKind::R2CFull)
      throw std::logic_error("GPU FFT: integer input to a complex transform (kiln bug)");
    read_integers(p, load_callbacks);
  }
  return p;
}

}  // namespace kiln::gpu::fft
