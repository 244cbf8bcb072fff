#include "fuzz/generate.hpp"

#include <algorithm>
#include <numeric>

#include "fuzz/facts.hpp"
#include "fuzz/random.hpp"

namespace kiln::fuzz {
namespace {

// Values in creation order: inputs may be added at any time, and are numbered first only
// when the program is finished.
struct Node {
  bool is_input = false;
  InputSpec input;
  Op op;
};

class Generator {
 public:
  Generator(uint64_t seed, const Limits& limits)
      : rng_(seed), limits_(limits), budget_(limits.max_elems) {}
  Program run();

 private:
  // ---- random helpers
  int64_t uniform(int64_t lo, int64_t hi) { return rng_.uniform(lo, hi); }
  uint8_t binary_fn();
  bool chance(double p) { return rng_.chance(p); }
  int weighted(const std::vector<int>& weights) { return rng_.weighted(weights); }
  int count() const { return static_cast<int>(nodes_.size()); }
  const Shape& shape_of(int v) const { return values_.at(static_cast<size_t>(v)).shape(); }
  int ndim_of(int v) const { return static_cast<int>(shape_of(v).size()); }

  // ---- shapes, inputs, scalars
  int64_t random_dim();
  Shape base_shape();
  Shape shape_like(const Shape& s);
  Shape fit(Shape s) const;
  DType random_dtype();
  DataKind kind_for(DType t);
  int add_input(Shape s, DType t);
  Scalar random_scalar();

  // ---- operands
  int pick_value();
  Operand partner_for(int a);
  std::vector<int> broadcast_partners(int a) const;

  // ---- one op of each kind
  Op propose();
  Op unary_op();
  Op binary_op();
  Op where_op();
  Op clip_op();
  Op astype_op();
  Op transpose_op();
  Op index_op();
  Op reshape_op();
  Op broadcast_op();
  Op reduce_op();
  Op fft_op();
  Op scan_op();
  Op sort_op();
  Op matmul_op();
  Op scatter_op();
  Op mask_op();
  Op take_op();
  std::vector<int> random_axes(int ndim, int min_count, int max_count);
  Shape random_shape_of_size(int64_t n);

  bool try_add(const Op& op);
  void add_rejected_op();
  Program finish();

  // ---- the patterns of kiln issue 11 (several ops at once)
  bool try_pattern();
  int pattern_source();
  Shape pattern_shape(int rank);
  int64_t odd_extent();
  int pattern_axis(int v);
  int add(const Op& op);
  Op make(OpKind kind, uint8_t fn, std::vector<Operand> args);
  Op reduction(ReduceFn fn, int v, std::vector<int> axes, bool keepdims);
  int softmax(int x);
  int layernorm(int x);
  int normalise(int x);
  int reduce_broadcast(int x);
  int constant_steps(int x);
  int dense(int x);
  int permute(int x);
  int strided_transpose(int x);
  int consume(int x);

  Random rng_;
  Limits limits_;
  int64_t budget_ = 0;  // elements of any value: limits_.max_elems, more with a long axis
  Shape base_;
  bool zero_dims_ = false;
  std::vector<Node> nodes_;
  std::vector<Array> values_;  // lazy host arrays: only their dtypes and shapes are used
  std::vector<Facts> facts_;
  size_t rollback_ = 0;    // nodes before the op being tried (its new inputs follow)
  bool finished_ = false;  // no op may follow the last one added
};

// ---- shapes, inputs, scalars ------------------------------------------------------------

int64_t Generator::random_dim() {
  if (zero_dims_ && chance(0.04)) return 0;
  if (chance(0.3)) return 1;
  return chance(0.85) ? uniform(2, 5) : uniform(6, 9);
}

// Shrinks the largest dimensions until the shape fits the element budget.
Shape Generator::fit(Shape s) const {
  while (shape_size(s) > budget_) {
    auto it = std::max_element(s.begin(), s.end());
    *it = (*it + 1) / 2;
  }
  return s;
}

Shape Generator::base_shape() {
  static const std::vector<int> rank_weights = {2, 5, 6, 5, 3, 2, 1, 1, 1};
  int rank = std::min(weighted(rank_weights), limits_.max_rank);
  Shape s;
  for (int i = 0; i < rank; ++i) s.push_back(random_dim());
  return fit(s);
}

// A shape that broadcasts against s: some leading axes dropped, some extents set to 1.
Shape Generator::shape_like(const Shape& s) {
  size_t drop = chance(0.6) ? 0 : static_cast<size_t>(uniform(0, static_cast<int64_t>(s.size())));
  Shape out(s.begin() + static_cast<std::ptrdiff_t>(drop), s.end());
  for (auto& d : out)
    if (chance(0.25)) d = 1;
  if (static_cast<int>(out.size()) < limits_.max_rank && chance(0.05)) out.insert(out.begin(), 1);
  return out;
}

DType Generator::random_dtype() {
  // In kAllDTypes' order: bool int32 int64 float32 float64 complex64 complex128, then int8
  // int16 uint8 uint16 uint32 uint64, then float16 bfloat16.
  static const std::vector<int> weights = {2, 2, 2, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1};
  static_assert(std::size(kAllDTypes) == 15, "a weight for every dtype");
  return kAllDTypes[weighted(weights)];
}

DataKind Generator::kind_for(DType t) {
  using K = DataKind;
  if (t == DType::Bool) return K::Small;
  if (is_integer(t)) {
    static const K ints[] = {K::Small, K::Wide, K::Random, K::Arange, K::Full};
    return ints[weighted({10, 3, 3, 3, 1})];
  }
  if (is_floating(t)) {
    static const K reals[] = {K::Small,  K::Quarters, K::Tiny,  K::General,  K::Specials,
                              K::Random, K::Arange,   K::Steps, K::Linspace, K::Full};
    return reals[weighted({4, 5, 1, 4, 3, 1, 1, 1, 1, 1})];
  }
  static const K complexes[] = {K::Small, K::Quarters, K::Tiny, K::General, K::Specials, K::Full};
  return complexes[weighted({4, 5, 3, 4, 3, 1})];
}

int Generator::add_input(Shape s, DType t) {
  Node n;
  n.is_input = true;
  n.input = {t, fit(std::move(s)), kind_for(t), rng_.next()};
  values_.push_back(make_input(n.input, host()));
  facts_.push_back(input_facts(n.input));
  nodes_.push_back(n);
  return count() - 1;
}

Scalar Generator::random_scalar() {
  switch (weighted({1, 4, 1, 4, 1, 1})) {
    case 0:
      return chance(0.5);
    case 1:
      return uniform(-3, 4);
    case 2:  // beyond int32: kiln must reject it for int32 arrays
      return chance(0.5) ? int64_t{1} << 33 : -(int64_t{1} << 31) - 1;
    case 3:
      return chance(0.7) ? static_cast<double>(uniform(-16, 16)) / 4 : 1.0 / 3;
    case 4: {
      const double specials[] = {NAN, INFINITY, -INFINITY, -0.0};
      return specials[uniform(0, 3)];
    }
    default:
      return std::complex<double>(static_cast<double>(uniform(-8, 8)) / 4,
                                  static_cast<double>(uniform(-8, 8)) / 4);
  }
}

// ---- operands -------------------------------------------------------------------------------

// Mostly the newest value (chains), often a recent or older one (shared subexpressions),
// sometimes a fresh input.
int Generator::pick_value() {
  int n = count();
  switch (weighted({10, 5, 4, 2})) {
    case 0:
      return n - 1;
    case 1:
      return static_cast<int>(uniform(std::max(0, n - 4), n - 1));
    case 2:
      return static_cast<int>(uniform(0, n - 1));
    default:
      return add_input(chance(0.7) ? shape_like(base_) : base_shape(), random_dtype());
  }
}

std::vector<int> Generator::broadcast_partners(int a) const {
  std::vector<int> out;
  for (int v = 0; v < count(); ++v) {
    const Shape &x = shape_of(a), &y = shape_of(v);
    size_t n = std::max(x.size(), y.size());
    Shape both(n);
    bool ok = true;
    for (size_t i = 0; i < n && ok; ++i) {
      int64_t dx = i < n - x.size() ? 1 : x[i - (n - x.size())];
      int64_t dy = i < n - y.size() ? 1 : y[i - (n - y.size())];
      ok = dx == dy || dx == 1 || dy == 1;
      both[i] = dx == 1 ? dy : dx;
    }
    if (ok && shape_size(both) <= budget_) out.push_back(v);
  }
  return out;
}

Operand Generator::partner_for(int a) {
  Operand o;
  int how = weighted({3, 4, 3});
  if (how == 0) {
    o.scalar = random_scalar();
    return o;
  }
  std::vector<int> partners = broadcast_partners(a);
  if (how == 1 && !partners.empty())
    o.value = partners[static_cast<size_t>(uniform(0, static_cast<int64_t>(partners.size()) - 1))];
  else
    o.value = add_input(shape_like(shape_of(a)), random_dtype());
  return o;
}

// ---- ops -------------------------------------------------------------------------------------

Op Generator::unary_op() {
  Op op;
  op.kind = OpKind::Unary;
  op.fn = static_cast<uint8_t>(uniform(0, kUnaryCount - 1));
  op.args = {{pick_value(), {}}};
  return op;
}

// A binary row of graph/op_table.hpp that the fuzzer has a reference and error bounds for.
uint8_t Generator::binary_fn() {
  for (;;) {
    auto fn = static_cast<uint8_t>(uniform(0, kBinaryCount - 1));
    if (fuzzed(static_cast<BinaryFn>(fn))) return fn;
  }
}

Op Generator::binary_op() {
  Op op;
  op.kind = OpKind::Binary;
  op.fn = binary_fn();
  int a = pick_value();
  op.args = {{a, {}}, partner_for(a)};
  if (chance(0.3)) std::swap(op.args[0], op.args[1]);
  return op;
}

Op Generator::where_op() {
  Op op;
  op.kind = OpKind::Where;
  std::vector<int> bools;
  for (int v = 0; v < count(); ++v)
    if (values_[static_cast<size_t>(v)].dtype() == DType::Bool) bools.push_back(v);
  int c = !bools.empty() && chance(0.7)
              ? bools[static_cast<size_t>(uniform(0, static_cast<int64_t>(bools.size()) - 1))]
              : pick_value();
  op.args = {{c, {}}, partner_for(c), partner_for(c)};
  return op;
}

Op Generator::clip_op() {
  Op op;
  op.kind = OpKind::Clip;
  int a = pick_value();
  op.args = {{a, {}}, partner_for(a), partner_for(a)};
  return op;
}

Op Generator::astype_op() {
  Op op;
  op.kind = OpKind::AsType;
  op.args = {{pick_value(), {}}};
  op.dtype = random_dtype();
  return op;
}

// Distinct axes of an ndim array in random order, some written as negative numbers.
std::vector<int> Generator::random_axes(int ndim, int min_count, int max_count) {
  std::vector<int> all(static_cast<size_t>(ndim));
  std::iota(all.begin(), all.end(), 0);
  rng_.shuffle(all.begin(), all.end());
  int k = static_cast<int>(uniform(std::min(min_count, ndim), std::min(max_count, ndim)));
  all.resize(static_cast<size_t>(k));
  for (int& a : all)
    if (chance(0.3)) a -= ndim;
  return all;
}

Op Generator::transpose_op() {
  Op op;
  op.kind = OpKind::Transpose;
  int a = pick_value();
  op.args = {{a, {}}};
  op.has_axes = chance(0.75);
  if (op.has_axes) op.axes = random_axes(ndim_of(a), ndim_of(a), ndim_of(a));
  return op;
}

Op Generator::index_op() {
  Op op;
  op.kind = OpKind::Index;
  int a = pick_value();
  op.args = {{a, {}}};
  const Shape& s = shape_of(a);
  int k = static_cast<int>(uniform(0, static_cast<int64_t>(s.size())));
  for (int i = 0; i < k; ++i) {
    int64_t d = s[static_cast<size_t>(i)];
    if (d > 0 && chance(0.2)) {
      op.index.emplace_back(uniform(-d, d - 1));
      continue;
    }
    auto bound = [&]() -> std::optional<int64_t> {
      if (chance(0.4)) return std::nullopt;
      return uniform(-d - 2, d + 2);
    };
    static const int64_t steps[] = {1, 1, 2, 3, -1, -1, -2, -3};
    auto start = bound();
    auto stop = bound();
    op.index.emplace_back(Slice(start, stop, steps[uniform(0, 7)]));
  }
  return op;
}

// A random shape with n elements, up to rank 8 (n = 0: some extent 0).
Shape Generator::random_shape_of_size(int64_t n) {
  int rank = static_cast<int>(uniform(n > 1 ? 1 : 0, limits_.max_rank));
  Shape s(static_cast<size_t>(rank), 1);
  if (n == 0) {
    for (auto& d : s) d = uniform(0, 3);
    if (!s.empty()) s[static_cast<size_t>(uniform(0, rank - 1))] = 0;
    return s;
  }
  for (int64_t m = n, p = 2; m > 1;) {  // scatter the prime factors over the axes
    while (m % p != 0) ++p;
    m /= p;
    s[static_cast<size_t>(uniform(0, rank - 1))] *= p;
  }
  if (chance(0.3) && rank > 0) s[static_cast<size_t>(uniform(0, rank - 1))] = -1;
  return s;
}

Op Generator::reshape_op() {
  Op op;
  op.kind = OpKind::Reshape;
  int a = pick_value();
  op.args = {{a, {}}};
  op.shape = random_shape_of_size(shape_size(shape_of(a)));
  return op;
}

Op Generator::broadcast_op() {
  Op op;
  op.kind = OpKind::BroadcastTo;
  int a = pick_value();
  op.args = {{a, {}}};
  Shape s = shape_of(a);
  for (auto& d : s)
    if (d == 1 && chance(0.5)) d = uniform(0, 4);
  for (int lead = static_cast<int>(uniform(0, 2)); lead > 0; --lead)
    if (static_cast<int>(s.size()) < limits_.max_rank) s.insert(s.begin(), uniform(1, 3));
  op.shape = s;
  return op;
}

Op Generator::reduce_op() {
  Op op;
  op.kind = OpKind::Reduce;
  op.fn = static_cast<uint8_t>(uniform(0, kReduceCount - 1));
  int a = pick_value();
  op.args = {{a, {}}};
  int nd = ndim_of(a);
  auto fn = static_cast<ReduceFn>(op.fn);
  if (fn == ReduceFn::ArgMax || fn == ReduceFn::ArgMin)
    op.axes = chance(0.3) ? std::vector<int>{} : random_axes(nd, 1, 1);
  else
    op.axes = chance(0.25) ? std::vector<int>{} : random_axes(nd, 1, nd);
  op.keepdims = chance(0.5);
  return op;
}

Op Generator::fft_op() {
  Op op;
  op.kind = OpKind::Fft;
  op.fn = static_cast<uint8_t>(uniform(0, kFftCount - 1));
  int a = pick_value();
  op.args = {{a, {}}};
  op.norm = static_cast<uint8_t>(uniform(0, 2));
  int nd = ndim_of(a);
  auto fn = static_cast<FftFn>(op.fn);
  bool single = fn == FftFn::Fft || fn == FftFn::Ifft || fn == FftFn::Rfft || fn == FftFn::Irfft;
  bool two = fn == FftFn::Fft2 || fn == FftFn::Ifft2;
  op.has_axes = chance(single ? 0.7 : 0.5);
  if (op.has_axes)
    op.axes = single ? random_axes(nd, 1, 1) : random_axes(nd, two ? 2 : 1, two ? 2 : 3);
  op.has_lengths = chance(0.3);
  if (op.has_lengths) {
    size_t k = single        ? 1
               : op.has_axes ? op.axes.size()
               : two         ? 2
                             : static_cast<size_t>(uniform(1, 3));
    for (size_t i = 0; i < k; ++i) op.shape.push_back(uniform(1, 8));
  }
  return op;
}

Op Generator::scan_op() {
  Op op;
  op.kind = OpKind::Scan;
  op.fn = static_cast<uint8_t>(uniform(0, 1));
  int a = pick_value();
  op.args = {{a, {}}};
  int nd = ndim_of(a);
  if (nd > 0 && chance(0.75)) op.axes = random_axes(nd, 1, 1);
  return op;
}

// sort or argsort along one axis (negative ones too), or of the raveled value.
Op Generator::sort_op() {
  Op op;
  op.kind = OpKind::Sort;
  op.fn = static_cast<uint8_t>(uniform(0, 1));
  int a = pick_value();
  op.args = {{a, {}}};
  int nd = ndim_of(a);
  if (nd > 0 && chance(0.75)) op.axes = {static_cast<int>(uniform(-nd, nd - 1))};
  return op;
}

// matmul(a, swapaxes(b, -1, -2)): b a value of a's shape, or of its last two axes (a batch
// broadcast), or a itself; 1-d values give the inner product. Results past the size budget
// (a long column times itself) draw a unary op instead.
Op Generator::matmul_op() {
  const int a = pick_value();
  const Shape& x = shape_of(a);
  int64_t result = 1;  // x's shape with its last axis replaced by its second to last
  for (size_t i = 0; i + 1 < x.size(); ++i) result *= x[i];
  if (x.size() >= 2) result *= x[x.size() - 2];
  if (x.empty() || result > budget_) return unary_op();
  std::vector<int> partners;
  for (int v = 0; v < count(); ++v) {
    const Shape& y = shape_of(v);
    if (y == x || (x.size() > 2 && y.size() == 2 && y[0] == x[x.size() - 2] && y[1] == x.back()))
      partners.push_back(v);
  }
  Op op;
  op.kind = OpKind::Matmul;
  op.args = {
      {a, {}},
      {partners[static_cast<size_t>(uniform(0, static_cast<int64_t>(partners.size()) - 1))], {}}};
  return op;
}

// x.at(positions).set / add / min / max(v): up to 6 positions along the first axis, repeated and
// negative ones too, of a scalar or of a value of x's shape without that axis.
Op Generator::scatter_op() {
  Op op;
  op.kind = OpKind::Scatter;
  op.fn = static_cast<uint8_t>(uniform(0, kScatterCount - 1));
  int x = pick_value();
  op.args = {{x, {}}, {}};
  const Shape& s = shape_of(x);
  if (s.empty() || s[0] == 0) return op;  // refused by kiln; the generator draws again
  const int64_t rows = s[0];
  for (int64_t k = uniform(1, 6); k > 0; --k) op.positions.push_back(uniform(-rows, rows - 1));
  if (chance(0.5)) {
    op.args[1].scalar = random_scalar();
    return op;
  }
  Shape row(s.begin() + 1, s.end());
  std::vector<int> same;
  for (int v = 0; v < count(); ++v)
    if (shape_of(v) == row) same.push_back(v);
  DType t = values_.at(static_cast<size_t>(x)).dtype();
  op.args[1].value =
      !same.empty() && chance(0.6)
          ? same[static_cast<size_t>(uniform(0, static_cast<int64_t>(same.size()) - 1))]
          : add_input(row, chance(0.7) ? t : random_dtype());
  return op;
}

// take(x, indices, axis, mode): up to 6 indices, repeated and negative ones too, along one axis
// or of the raveled x; in range for Raise (kiln's error at evaluation otherwise), up to three
// lengths out for Wrap and Clip.
Op Generator::take_op() {
  Op op;
  op.kind = OpKind::Take;
  op.fn = static_cast<uint8_t>(uniform(0, 2));  // kiln::TakeMode: Raise, Wrap, Clip
  const int x = pick_value();
  op.args = {{x, {}}};
  const Shape& s = shape_of(x);
  const int nd = static_cast<int>(s.size());
  int64_t len = shape_size(s), rest = 1;
  if (nd > 0 && chance(0.7)) {
    const int axis = static_cast<int>(uniform(0, nd - 1));
    len = s[static_cast<size_t>(axis)];
    rest = len ? shape_size(s) / len : 0;
    op.axes = {chance(0.3) ? axis - nd : axis};
  }
  const int64_t k = len ? uniform(0, 6) : 0;
  if (rest * k > budget_) return unary_op();
  for (int64_t i = 0; i < k; ++i)
    op.positions.push_back(op.fn == 0 ? uniform(-len, len - 1) : uniform(-3 * len, 3 * len));
  return op;
}

// x[mask] with a mask over x's first 1..ndim axes selecting every period-th flat position
// from phase on (period 1: all of them; a phase past the end: none). phase < period.
Op Generator::mask_op() {
  Op op;
  op.kind = OpKind::Mask;
  int x = pick_value();
  op.args = {{x, {}}};
  const int nd = ndim_of(x);
  op.mask_rank = nd > 0 ? static_cast<int>(uniform(1, nd)) : 1;
  op.period = chance(0.1) ? uniform(6, 40) : uniform(1, 5);  // a long period: often none
  op.phase = uniform(0, op.period - 1);
  return op;
}

Op Generator::propose() {
  std::vector<int> weights = {18, 24, 5, 3, 7, 5, 7, 6, 3, 13, limits_.fft ? 5 : 0,
                              3,  3,  3, 3, 3, 3, 2};
  switch (weighted(weights)) {
    case 0:
      return unary_op();
    case 1:
      return binary_op();
    case 2:
      return where_op();
    case 3:
      return clip_op();
    case 4:
      return astype_op();
    case 5:
      return transpose_op();
    case 6:
      return index_op();
    case 7:
      return reshape_op();
    case 8:
      return broadcast_op();
    case 9:
      return reduce_op();
    case 10:
      return fft_op();
    case 11:
      return scan_op();
    case 12:
      return scatter_op();
    case 13:
      return mask_op();
    case 14:
      return sort_op();
    case 15:
      return matmul_op();
    case 16:
      return take_op();
    default: {
      Op op;
      op.kind = OpKind::Eval;
      op.args = {{pick_value(), {}}};
      return op;
    }
  }
}

// ---- the patterns of kiln issue 11 ----------------------------------------------------------
//
// Each adds several ops through try_add (so the oracle, the facts and the reference judge them
// as any other op); a step the facts refuse ends the pattern, keeping the steps before it.

// The extents the schedules must handle: a row of 1, odd ones, a warp, a warp plus one.
int64_t Generator::odd_extent() {
  static const int64_t extents[] = {1, 7, 32, 33, 2, 3, 5};
  return extents[weighted({3, 4, 3, 3, 2, 2, 2})];
}

// Rank `rank` with odd extents; now and then one axis of a few thousand and the rest tiny, at
// times exactly 4096 (where row sums take a block per row) or just past it.
Shape Generator::pattern_shape(int rank) {
  Shape s;
  for (int i = 0; i < rank; ++i) s.push_back(odd_extent());
  if (chance(0.12)) {
    budget_ = std::max(budget_, limits_.max_long_elems);
    for (auto& d : s) d = uniform(1, 2);
    static const int64_t edges[] = {4096, 4097, 4100};
    s[static_cast<size_t>(uniform(0, rank - 1))] =
        chance(0.3) ? edges[uniform(0, 2)] : uniform(1000, 4097);
    while (shape_size(s) > budget_) *std::max_element(s.begin(), s.end()) -= 1;
    return s;
  }
  return fit(s);
}

// A real float value to pattern: a fresh input of odd extents, or an earlier value.
int Generator::pattern_source() {
  if (count() > 0 && chance(0.3)) {
    int v = pick_value();
    DType t = values_[static_cast<size_t>(v)].dtype();
    if (is_floating(t) && ndim_of(v) >= 1) return v;
  }
  int rank = static_cast<int>(uniform(1, std::min(4, limits_.max_rank)));
  DType t = chance(0.5) ? DType::Float32 : DType::Float64;
  return add_input(pattern_shape(rank), t);
}

// An axis to reduce, negative now and then; -100 when v has none.
int Generator::pattern_axis(int v) {
  int nd = ndim_of(v);
  if (nd == 0) return -100;
  int a = static_cast<int>(uniform(0, nd - 1));
  return chance(0.3) ? a - nd : a;
}

Op Generator::make(OpKind kind, uint8_t fn, std::vector<Operand> args) {
  Op op;
  op.kind = kind;
  op.fn = fn;
  op.args = std::move(args);
  return op;
}

Op Generator::reduction(ReduceFn fn, int v, std::vector<int> axes, bool keepdims) {
  Op op = make(OpKind::Reduce, static_cast<uint8_t>(fn), {{v, {}}});
  op.axes = std::move(axes);
  op.keepdims = keepdims;
  return op;
}

// Adds op; its value, or -1 when it was refused (the pattern then stops).
int Generator::add(const Op& op) {
  if (finished_) return -1;
  rollback_ = nodes_.size();
  return try_add(op) ? count() - 1 : -1;
}

Operand val(int v) { return {v, {}}; }
uint8_t fn_of(UnaryFn f) { return static_cast<uint8_t>(f); }
uint8_t fn_of(BinaryFn f) { return static_cast<uint8_t>(f); }

// The reduced axes of a pattern: one axis, sometimes two (a rank 3-4 row of several axes).
std::vector<int> pattern_axes(Random& rng, int first, int nd) {
  std::vector<int> axes = {first};
  int other = (first + nd + 1) % nd;
  if (nd >= 3 && rng.chance(0.25)) axes.push_back(other);
  return axes;
}

// exp(x - max(x, axes, keepdims)) / sum(that, axes, keepdims).
int Generator::softmax(int x) {
  int a = pattern_axis(x);
  if (a == -100) return -1;
  auto axes = pattern_axes(rng_, a, ndim_of(x));
  int m = add(reduction(ReduceFn::Max, x, axes, true));
  if (m < 0) return -1;
  int d = add(make(OpKind::Binary, fn_of(BinaryFn::Sub), {val(x), val(m)}));
  if (d < 0) return -1;
  int e = add(make(OpKind::Unary, fn_of(UnaryFn::Exp), {val(d)}));
  if (e < 0) return -1;
  int s = add(reduction(ReduceFn::Sum, e, axes, true));
  if (s < 0) return e;
  int y = add(make(OpKind::Binary, fn_of(BinaryFn::Div), {val(e), val(s)}));
  return y < 0 ? s : y;
}

// d = x - mean(x, axes, keepdims); d / sqrt(mean(d * d, axes, keepdims) + eps).
int Generator::layernorm(int x) {
  int a = pattern_axis(x);
  if (a == -100) return -1;
  auto axes = pattern_axes(rng_, a, ndim_of(x));
  int mu = add(reduction(ReduceFn::Mean, x, axes, true));
  if (mu < 0) return -1;
  int d = add(make(OpKind::Binary, fn_of(BinaryFn::Sub), {val(x), val(mu)}));
  if (d < 0) return -1;
  int sq = add(make(OpKind::Binary, fn_of(BinaryFn::Mul), {val(d), val(d)}));
  if (sq < 0) return d;
  int var = add(reduction(ReduceFn::Mean, sq, axes, true));
  if (var < 0) return sq;
  Operand eps;
  eps.scalar = chance(0.5) ? 1.0 : 0.25;
  int ve = add(make(OpKind::Binary, fn_of(BinaryFn::Add), {val(var), eps}));
  if (ve < 0) return var;
  int sd = add(make(OpKind::Unary, fn_of(UnaryFn::Sqrt), {val(ve)}));
  if (sd < 0) return ve;
  int y = add(make(OpKind::Binary, fn_of(BinaryFn::Div), {val(d), val(sd)}));
  return y < 0 ? sd : y;
}

// x / sum(x, axes, keepdims), x made positive by exp half of the time.
int Generator::normalise(int x) {
  if (chance(0.5)) {
    int e = add(make(OpKind::Unary, fn_of(UnaryFn::Exp), {val(x)}));
    if (e >= 0) x = e;
  }
  int a = pattern_axis(x);
  if (a == -100) return -1;
  int s = add(reduction(ReduceFn::Sum, x, pattern_axes(rng_, a, ndim_of(x)), true));
  if (s < 0) return -1;
  int y = add(make(OpKind::Binary, fn_of(BinaryFn::Div), {val(x), val(s)}));
  return y < 0 ? s : y;
}

// Any reduction with keepdims, broadcast back into an elementwise op with its own input.
int Generator::reduce_broadcast(int x) {
  auto fn = static_cast<ReduceFn>(uniform(0, kReduceCount - 1));
  std::vector<int> axes;
  bool arg = fn == ReduceFn::ArgMax || fn == ReduceFn::ArgMin;
  if (ndim_of(x) > 0) axes = random_axes(ndim_of(x), 1, arg ? 1 : ndim_of(x));
  int r = add(reduction(fn, x, axes, true));
  if (r < 0) return -1;
  Op op = make(OpKind::Binary, binary_fn(), {val(x), val(r)});
  if (chance(0.3)) std::swap(op.args[0], op.args[1]);
  int y = add(op);
  return y < 0 ? r : y;
}

// Two to five operations + - * / with constants on either side, each reading the one before
// and nothing else reading it (x * 0.5 + 1 - 2): temporaries, handed on by their last use
// (apply_op), which kiln joins two at a time into one node (graph::fuse_constant_step).
int Generator::constant_steps(int x) {
  static const BinaryFn fns[] = {BinaryFn::Add, BinaryFn::Sub, BinaryFn::Mul, BinaryFn::Div};
  int v = x;
  for (int k = 0, steps = uniform(2, 5); k < steps; ++k) {
    Operand c;
    c.scalar = random_scalar();
    Op op = make(OpKind::Binary, fn_of(fns[uniform(0, 3)]), {val(v), c});
    if (chance(0.3)) std::swap(op.args[0], op.args[1]);
    int next = add(op);
    if (next < 0) break;
    v = next;
  }
  return v == x ? -1 : v;
}

// A dense layer: maximum(x @ swapaxes(w, -1, -2) + bias, 0), the bias one value per column of
// the product ((n,) or (1, n), either operand order), which kiln computes in the matmul's step
// (plan::Epilogue); now and then without the relu, or with max(., 0.5), which is none.
int Generator::dense(int x) {
  if (ndim_of(x) < 2) return -1;
  const Shape& s = shape_of(x);
  const int64_t n = s[s.size() - 2];  // matmul_op's product: (..., m, k) @ (k, m)
  const DType t = values_[static_cast<size_t>(x)].dtype();
  int w = add_input({n, s.back()}, t);
  int p = add(make(OpKind::Matmul, 0, {val(x), val(w)}));
  if (p < 0) return -1;
  int b = add_input(chance(0.5) ? Shape{n} : Shape{1, n}, t);
  Op sum = make(OpKind::Binary, fn_of(BinaryFn::Add), {val(p), val(b)});
  if (chance(0.3)) std::swap(sum.args[0], sum.args[1]);
  int y = chance(0.8) ? add(sum) : p;
  if (y < 0 || chance(0.2)) return y < 0 ? p : y;
  Operand zero;
  zero.scalar = chance(0.85) ? 0.0 : 0.5;
  Op relu = make(OpKind::Binary, fn_of(BinaryFn::Maximum), {val(y), zero});
  if (chance(0.3)) std::swap(relu.args[0], relu.args[1]);
  int r = add(relu);
  return r < 0 ? y : r;
}

// x transposed by a permutation of its axes (rank 3-4 ones from pattern_source).
int Generator::permute(int x) {
  Op op = make(OpKind::Transpose, 0, {val(x)});
  op.has_axes = ndim_of(x) >= 2 || chance(0.5);
  if (op.has_axes) op.axes = random_axes(ndim_of(x), ndim_of(x), ndim_of(x));
  return add(op);
}

// A slice with steps other than 1 on every axis, then a transpose.
int Generator::strided_transpose(int x) {
  Op ix = make(OpKind::Index, 0, {val(x)});
  static const int64_t steps[] = {2, 3, -1, -2, 1};
  for (int64_t d : shape_of(x)) {
    std::optional<int64_t> start;
    if (chance(0.4)) start = uniform(0, std::max<int64_t>(d - 1, 0));
    ix.index.emplace_back(Slice(start, std::nullopt, steps[uniform(0, 4)]));
  }
  int v = add(ix);
  return v < 0 ? -1 : permute(v);
}

// An elementwise op or a reduction reading a permuted or sliced value.
int Generator::consume(int x) {
  switch (weighted({3, 3, 3, 4})) {
    case 0:
      return add(make(OpKind::Unary, static_cast<uint8_t>(uniform(0, kUnaryCount - 1)), {val(x)}));
    case 1: {
      size_t mark = nodes_.size();  // partner_for may add an input: gone if the op is refused
      Op op = make(OpKind::Binary, binary_fn(), {val(x), partner_for(x)});
      int v = add(op);
      if (v < 0) nodes_.resize(mark), values_.resize(mark), facts_.resize(mark);
      return v;
    }
    case 2: {
      auto fn = static_cast<ReduceFn>(uniform(0, kReduceCount - 1));
      bool arg = fn == ReduceFn::ArgMax || fn == ReduceFn::ArgMin;
      std::vector<int> axes;
      if (ndim_of(x) > 0) axes = random_axes(ndim_of(x), 1, arg ? 1 : ndim_of(x));
      return add(reduction(fn, x, axes, chance(0.5)));
    }
    default: {  // a chain of the issue on the rearranged value
      static int (Generator::*const chains[])(int) = {&Generator::softmax, &Generator::layernorm,
                                                      &Generator::normalise,
                                                      &Generator::reduce_broadcast};
      return (this->*chains[uniform(0, 3)])(x);
    }
  }
}

// One pattern; false when not one of its ops was kept.
bool Generator::try_pattern() {
  size_t before = nodes_.size();
  int kind = weighted({4, 3, 2, 3, 4, 3, 3, 3});
  int x = pattern_source();
  if (kind == 7) {
    int v = constant_steps(x);
    if (v >= 0 && chance(0.5)) consume(v);
  } else if (kind == 6) {
    dense(x);
  } else if (kind == 4 || kind == 5) {  // rank 3-4 arrays rearranged
    if (ndim_of(x) < 3 && nodes_[static_cast<size_t>(x)].is_input && x == count() - 1) {
      values_.pop_back(), facts_.pop_back(), nodes_.pop_back();
      x = add_input(pattern_shape(static_cast<int>(uniform(3, std::min(4, limits_.max_rank)))),
                    chance(0.5) ? DType::Float32 : DType::Float64);
    }
    int v = kind == 4 ? permute(x) : strided_transpose(x);
    if (v >= 0) consume(v);
  } else {
    static int (Generator::*const chains[])(int) = {&Generator::softmax, &Generator::layernorm,
                                                    &Generator::normalise,
                                                    &Generator::reduce_broadcast};
    (this->*chains[kind])(x);
  }
  // Only the source input added: drop it.
  bool kept = false;
  for (size_t i = before; i < nodes_.size(); ++i) kept |= !nodes_[i].is_input;
  if (!kept) {
    nodes_.resize(before), values_.resize(before), facts_.resize(before);
  }
  return kept;
}

// Builds op lazily on the host (nothing runs) and keeps it when kiln accepts it, its result
// fits the budget and its paths are comparable. Otherwise the inputs made for it go too.
bool Generator::try_add(const Op& op) {
  auto undo = [this] {
    nodes_.resize(rollback_);
    values_.resize(rollback_);
    facts_.resize(rollback_);
    return false;
  };
  Array result;
  try {
    // Eval would evaluate now; generating needs only the value's dtype and shape.
    result = op.kind == OpKind::Eval ? values_.at(static_cast<size_t>(op.args[0].value))
                                     : apply_op(op, values_);
  } catch (const Error&) {
    return undo();
  }
  if (result.size() > budget_) return undo();
  auto f = infer(op, facts_);
  if (!f && !expect(op, typed(facts_)).result) {
    // kiln accepts what NumPy refuses: kept as the last op, for check() to report.
    Facts accepted;
    accepted.dtype = result.dtype(), accepted.shape = result.shape();
    f = accepted;
    finished_ = true;
  }
  if (!f) return undo();
  nodes_.push_back({false, {}, op});
  values_.push_back(result);
  facts_.push_back(*f);
  return true;
}

// Ends the program with an op that kiln rejects, when one turns up.
void Generator::add_rejected_op() {
  for (int tries = 0; tries < 50; ++tries) {
    rollback_ = nodes_.size();
    Op op = propose();
    if (op.kind == OpKind::Eval) continue;
    try {
      apply_op(op, values_);
    } catch (const Error&) {
      nodes_.push_back({false, {}, op});
      return;
    }
    nodes_.resize(rollback_);
    values_.resize(rollback_);
    facts_.resize(rollback_);
  }
}

// Numbers inputs first, as Program wants, and picks the outputs.
Program Generator::finish() {
  Program p;
  std::vector<int> number(nodes_.size());
  int next = 0;
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].is_input) number[i] = next++, p.inputs.push_back(nodes_[i].input);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].is_input) continue;
    number[i] = next++;
    Op op = nodes_[i].op;
    for (auto& a : op.args)
      if (!a.is_scalar()) a.value = number[static_cast<size_t>(a.value)];
    p.ops.push_back(op);
  }
  // The last value and the other ops that nothing reads (so that every op is evaluated by
  // the lazy paths too), and now and then an intermediate: one plan with several results.
  std::vector<bool> read(nodes_.size(), false);
  for (const auto& n : nodes_)
    for (const auto& a : n.op.args)
      if (!n.is_input && !a.is_scalar()) read[static_cast<size_t>(a.value)] = true;
  p.outputs = {number.back()};
  for (size_t i = nodes_.size(); i-- > 0 && p.outputs.size() < 4;)
    if (!nodes_[i].is_input && !read[i] && number[i] != p.outputs[0])
      p.outputs.push_back(number[i]);
  int v = number[static_cast<size_t>(uniform(0, count() - 1))];
  if (chance(0.15) && std::find(p.outputs.begin(), p.outputs.end(), v) == p.outputs.end())
    p.outputs.push_back(v);
  return p;
}

Program Generator::run() {
  zero_dims_ = chance(0.15);
  base_ = base_shape();
  for (int i = static_cast<int>(uniform(1, 3)); i > 0; --i)
    add_input(i == 1 ? base_ : shape_like(base_), random_dtype());
  int ops = static_cast<int>(uniform(1, limits_.max_ops));
  for (int i = 0; i < ops && !finished_; ++i) {
    if (chance(limits_.patterns) && try_pattern()) continue;
    for (int tries = 0; tries < 30; ++tries) {
      rollback_ = nodes_.size();
      if (try_add(propose())) break;
    }
  }
  if (chance(0.03) && !finished_) add_rejected_op();
  return finish();
}

}  // namespace

Program generate(uint64_t seed, const Limits& limits) { return Generator(seed, limits).run(); }

}  // namespace kiln::fuzz
