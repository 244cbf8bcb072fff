#include "graph/attrs.hpp"

#include <bit>

#include "graph/hash.hpp"

namespace kiln::graph {
namespace {

uint64_t bits(double v) { return std::bit_cast<uint64_t>(v); }

// One overload per alternative: a new alternative without one fails to compile in hash_attrs.
struct Mixer {
  size_t h;
  size_t operator()(std::monostate) const { return h; }
  size_t operator()(const ScalarAttrs& s) const { return hash_mix(h, s.value.hash()); }
  size_t operator()(const ImmediateAttrs& m) const {
    return hash_mix(hash_mix(h, m.value.hash(static_cast<uint64_t>(m.dtype))), m.left);
  }
  size_t operator()(const AffineAttrs& a) const {
    size_t r = h;
    for (const AffineStep& s : a.steps)
      r = hash_mix(Mixer{r}(s.constant), static_cast<uint64_t>(s.op));
    return r;
  }
  size_t operator()(const PermuteAttrs& p) const { return ints(h, p.perm); }
  size_t operator()(const SliceAttrs& s) const {
    size_t r = h;
    for (const auto& ax : s.axes) r = hash_mix(hash_mix(r, ax.start), ax.step);
    return r;
  }
  size_t operator()(const ReduceAttrs& r) const { return hash_mix(ints(h, r.axes), r.keepdims); }
  size_t operator()(const FftAttrs& f) const {
    size_t r = hash_mix(ints(ints(h, f.axes), f.lengths), f.inverse);
    return hash_mix(r, bits(f.scale));
  }
  size_t operator()(const RandomAttrs& r) const {
    size_t v = hash_mix(hash_mix(h, r.seed), r.offset);
    return hash_mix(hash_mix(v, r.a.hash()), r.b.hash());
  }
  size_t operator()(const UserAttrs& u) const { return hash_mix(h, u.code); }
  size_t operator()(const ScanAttrs& s) const { return hash_mix(h, s.axis); }
  size_t operator()(const MatmulAttrs& m) const { return hash_mix(h, m.tf32); }
  size_t operator()(const ScatterAttrs& s) const { return hash_mix(h, s.indices); }
  // The runner is left out: a value, bound per evaluation (CollectiveAttrs).
  size_t operator()(const CollectiveAttrs& c) const {
    size_t r =
        hash_mix(hash_mix(h, static_cast<uint64_t>(c.kind)), static_cast<uint64_t>(c.reduction));
    return ints(hash_mix(hash_mix(r, c.size), c.rank), c.ranks);
  }
  size_t operator()(const RemapAttrs& m) const {
    size_t r = hash_mix(h, m.axes.size());
    for (const auto& ax : m.axes)
      r = hash_mix(
          hash_mix(hash_mix(hash_mix(r, static_cast<uint64_t>(ax.mode)), ax.origin), ax.step),
          ax.indexed);
    return r;
  }

  // The length first, so that [1, 2] + [] and [1] + [2] differ.
  template <class Int>
  static size_t ints(size_t h, const std::vector<Int>& v) {
    h = hash_mix(h, v.size());
    for (Int x : v) h = hash_mix(h, static_cast<uint64_t>(x));
    return h;
  }
};

}  // namespace

bool FftAttrs::operator==(const FftAttrs& o) const {
  return axes == o.axes && lengths == o.lengths && inverse == o.inverse &&
         bits(scale) == bits(o.scale);
}

bool RandomAttrs::operator==(const RandomAttrs& o) const {
  return seed == o.seed && offset == o.offset && a.same_as(o.a) && b.same_as(o.b);
}

const char* mode_name(IndexMode m) {
  switch (m) {
    case IndexMode::Offset:
      return "offset";
    case IndexMode::Clamp:
      return "clamp";
    case IndexMode::Wrap:
      return "wrap";
    case IndexMode::Reflect:
      return "reflect";
    case IndexMode::Symmetric:
      return "symmetric";
    case IndexMode::Raise:
      return "raise";
  }
  return "?";
}

size_t hash_attrs(size_t seed, const Attrs& a) {
  if (a.index() == 0) return seed;  // most nodes: nothing to mix
  return std::visit(Mixer{hash_mix(seed, a.index())}, a);
}

}  // namespace kiln::graph
