// kiln::Mesh and sharded arrays (kiln/mesh.hpp). The same programs run on meshes of 1 to 4 host
// ranks and on plain kiln over the whole array, which is the reference (plus hand-derived
// values); GPU cases run them on NCCL communicators and compare with the host. Also: the
// array_split pieces, dtype rules of reductions over the split axis, NaN, empty pieces, that a
// sharded chain is one fused group per rank, the errors, NCCL's loading, and the deadline of a
// collective (with a fake collective in flight).
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <complex>
#include <filesystem>
#include <kiln/explain.hpp>
#include <kiln/kiln.hpp>
#include <kiln/mesh.hpp>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "graph/node.hpp"
#include "mesh/collective_wait.hpp"
#include "mesh/communicator.hpp"
#include "mesh/nccl_api.hpp"
#include "mesh/split.hpp"
#include "support/gpu.hpp"
#include "support/stream_gate.hpp"

namespace {

using kiln::Array;
using kiln::DType;
using kiln::Mesh;
using kiln::ShardedArray;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The chain of the targets, for Arrays and ShardedArrays alike.
template <class A>
A chain(const A& x) {
  return sin(x) * 2 + cos(x) / 3;
}

// (7, 5) float64 values of both signs, none repeated.
Array matrix() { return kiln::arange(35).reshape({7, 5}).astype(DType::Float64) / 7 - 2; }

// How far a float result may be from one device's: partial sums add in another order, and a
// 16-bit float also rounds where the chain's fused kernels end (they round once, at their end:
// README's dtypes row), which the collectives move.
double tolerance(DType t) { return t == DType::Float16 || t == DType::BFloat16 ? 1e-2 : 1e-12; }

// The sharded result, gathered, has the reference's shape, dtype and values (floats within
// rounding).
void check_same(const ShardedArray& got, const Array& want) {
  Array g = got.get();
  CHECK(got.shape() == want.shape());
  CHECK(g.shape() == want.shape());
  CHECK(got.dtype() == want.dtype());
  if (kiln::is_floating(want.dtype()) || kiln::is_complex(want.dtype()))
    CHECK(kiln::allclose(g, want, tolerance(want.dtype()), tolerance(want.dtype()), true));
  else
    CHECK(kiln::array_equal(g, want));
}

bool nccl_loadable() {
  void* h = dlopen(kiln::nccl::kSoname, RTLD_NOW | RTLD_LOCAL);
  if (h) dlclose(h);
  return h != nullptr;
}

// The programs of the differential cases, on a sharded x and on the whole array.
void check_programs(const Array& x, const Mesh& mesh, int axis) {
  const ShardedArray s = kiln::shard(x, mesh, axis);
  const ShardedArray nonzero = s.astype(DType::Bool), large = kiln::shard(x > 2.0, mesh, axis);
  check_same(chain(s), chain(x));
  check_same(s * 3 - s / 2, x * 3 - x / 2);
  check_same(-kiln::abs(s), -kiln::abs(x));
  for (const kiln::AxesArg& axes : {kiln::AxesArg(), kiln::AxesArg(0), kiln::AxesArg(1),
                                    kiln::AxesArg({0, 1}), kiln::AxesArg(kiln::Axes{})}) {
    for (bool keep : {false, true}) {
      CAPTURE(keep);
      check_same(kiln::sum(chain(s), axes, keep), kiln::sum(chain(x), axes, keep));
      check_same(kiln::mean(s, axes, keep), kiln::mean(x, axes, keep));
      check_same(kiln::max(s, axes, keep), kiln::max(x, axes, keep));
      check_same(kiln::min(s, axes, keep), kiln::min(x, axes, keep));
      check_same(kiln::prod(s, axes, keep), kiln::prod(x, axes, keep));
      check_same(kiln::all(nonzero, axes, keep), kiln::all(x.astype(DType::Bool), axes, keep));
      check_same(kiln::any(large, axes, keep), kiln::any(x > 2.0, axes, keep));
      check_same(kiln::var(s, axes, 0, keep), kiln::var(x, axes, 0, keep));
      check_same(kiln::std(chain(s), axes, 1, keep), kiln::std(chain(x), axes, 1, keep));
    }
  }
  for (std::optional<int> a : {std::optional<int>(), std::optional<int>(0), std::optional<int>(1),
                               std::optional<int>(-1)}) {
    for (bool keep : {false, true}) {
      CAPTURE(keep);
      check_same(kiln::argmax(s, a, keep), kiln::argmax(x, a, keep));
      check_same(kiln::argmin(chain(s), a, keep), kiln::argmin(chain(x), a, keep));
    }
  }
}

}  // namespace

TEST_CASE("an axis splits as numpy.array_split: 7 over 3 ranks is 3, 2 and 2") {
  using kiln::mesh::piece_of;
  CHECK(piece_of(7, 3, 0).start == 0);
  CHECK(piece_of(7, 3, 0).stop == 3);
  CHECK(piece_of(7, 3, 1).start == 3);
  CHECK(piece_of(7, 3, 1).stop == 5);
  CHECK(piece_of(7, 3, 2).start == 5);
  CHECK(piece_of(7, 3, 2).stop == 7);
  CHECK(piece_of(2, 3, 2).length() == 0);  // fewer elements than ranks: the last piece is empty
  CHECK(piece_of(6, 3, 1).length() == 2);

  const Mesh mesh = Mesh::host(3);
  const ShardedArray s = kiln::shard(kiln::arange(7), mesh, 0);
  CHECK(s.shard(0).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 2});
  CHECK(s.shard(1).to_vector<int64_t>() == std::vector<int64_t>{3, 4});
  CHECK(s.shard(2).to_vector<int64_t>() == std::vector<int64_t>{5, 6});
  CHECK(s.layout() == "sharded along axis 0 over Mesh(host x 3): (3,), (2,), (2,)");
  CHECK(kiln::replicate(kiln::arange(7), mesh).layout() == "replicated over Mesh(host x 3): (7,)");
  CHECK(s.shape() == kiln::Shape{7});
  CHECK(s.ndim() == 1);
  CHECK(s.size() == 7);
  CHECK(s.dtype() == DType::Int64);
  CHECK(*s.axis() == 0);
  CHECK(kiln::shard(matrix(), mesh, -1).axis() == 1);  // negative axes count from the end
}

TEST_CASE("hand-derived: 0..6 over 3 host ranks") {
  const ShardedArray s = kiln::shard(kiln::arange(7), Mesh::host(3), 0);
  CHECK(kiln::sum(s).get().item<int64_t>() == 21);
  CHECK(kiln::sum(s * 2 + 1).get().item<int64_t>() == 49);
  CHECK(kiln::mean(s).get().item<double>() == 3.0);
  CHECK(kiln::max(s).get().item<int64_t>() == 6);
  CHECK(kiln::min(s - 10).get().item<int64_t>() == -10);
  const ShardedArray total = kiln::sum(s);
  CHECK(total.replicated());
  for (const Array& r : total.shards()) CHECK(r.item<int64_t>() == 21);  // every rank holds it
}

TEST_CASE("the same programs on 1 to 4 host ranks give plain kiln's results") {
  for (int ranks = 1; ranks <= 4; ++ranks) {
    for (int axis : {0, 1}) {
      CAPTURE(ranks);
      CAPTURE(axis);
      const Mesh mesh = Mesh::host(ranks);
      check_programs(matrix(), mesh, axis);
      // Integers exactly: the sums widen to int64 as kiln::sum's do.
      check_programs((kiln::arange(35).reshape({7, 5}) * 3 - 40).astype(DType::Int32), mesh, axis);
    }
  }
}

TEST_CASE("reductions over axes other than the split one stay split, renumbered") {
  const Mesh mesh = Mesh::host(3);
  const Array x = kiln::arange(28).reshape({4, 7});
  const ShardedArray s = kiln::shard(x, mesh, 1);
  const ShardedArray down = kiln::sum(s, 0);
  CHECK(down.axis() == 0);
  CHECK(down.shard(0).shape() == kiln::Shape{3});
  CHECK(down.shard(2).shape() == kiln::Shape{2});
  check_same(down, kiln::sum(x, 0));
  const ShardedArray kept = kiln::sum(s, 0, true);
  CHECK(kept.axis() == 1);
  check_same(kept, kiln::sum(x, 0, true));
  CHECK(kiln::sum(s, 1).replicated());

  const Array cube = kiln::arange(42).reshape({2, 7, 3}).astype(DType::Float32);
  const ShardedArray c = kiln::shard(cube, mesh, 1);
  CHECK(kiln::max(c, {0, 2}).axis() == 0);
  check_same(kiln::max(c, {0, 2}), kiln::max(cube, {0, 2}));
  check_same(kiln::mean(c, {0, 1}), kiln::mean(cube, {0, 1}));
}

TEST_CASE("a replicated operand combines with a split one: each rank takes its part") {
  const Mesh mesh = Mesh::host(3);
  const Array x = matrix();
  const ShardedArray rows = kiln::shard(x, mesh, 0);
  const ShardedArray centred = rows - kiln::mean(rows, 0);  // the mean is replicated, (5,)
  CHECK(centred.axis() == 0);
  check_same(centred, x - kiln::mean(x, 0));

  const Array column = kiln::arange(7).reshape({7, 1}).astype(DType::Float64);
  check_same(rows * kiln::replicate(column, mesh), x * column);  // sliced along the split axis
  check_same(kiln::replicate(x, mesh) / rows, x / x);

  const ShardedArray cols = kiln::shard(x, mesh, 1);
  const Array row = kiln::arange(5).astype(DType::Float64);
  check_same(cols + kiln::replicate(row, mesh), x + row);
  // A split 1-d array broadcast against a replicated matrix: the split axis becomes axis 1.
  const ShardedArray split_row = kiln::shard(row, mesh, 0);
  const ShardedArray sum = split_row + kiln::replicate(x, mesh);
  CHECK(sum.axis() == 1);
  check_same(sum, row + x);
  check_same(kiln::replicate(x, mesh) * 2, x * 2);
  CHECK((kiln::replicate(x, mesh) * 2).replicated());
}

TEST_CASE("reductions over the split axis keep kiln::sum's dtype rules") {
  const Mesh mesh = Mesh::host(3);
  auto both = [&](const Array& x) {
    CAPTURE(kiln::dtype_name(x.dtype()));
    const ShardedArray s = kiln::shard(x, mesh, 0);
    check_same(kiln::sum(s), kiln::sum(x));
    check_same(kiln::mean(s, 0), kiln::mean(x, 0));
    check_same(kiln::max(s, 0), kiln::max(x, 0));
    check_same(kiln::min(s), kiln::min(x));
    check_same(kiln::prod(s, 0), kiln::prod(x, 0));
    check_same(kiln::any(s, 0), kiln::any(x, 0));
    check_same(kiln::all(s), kiln::all(x));
    check_same(kiln::var(s, 0), kiln::var(x, 0));
    check_same(kiln::std(s, {}, 1), kiln::std(x, {}, 1));
  };
  const Array ints = kiln::arange(-20, 15).reshape({7, 5});
  for (DType t : {DType::Int32, DType::Int64, DType::Int8, DType::Int16, DType::UInt8,
                  DType::UInt16, DType::UInt32, DType::UInt64, DType::Float32, DType::Float64})
    both((t == DType::UInt8 || t == DType::UInt16 || t == DType::UInt32 || t == DType::UInt64)
             ? (ints + 20).astype(t)
             : ints.astype(t));
  both(ints > 0);  // bool: the sum counts, max is any
  both((ints / 4).astype(DType::Float16));
  both((ints / 4).astype(DType::BFloat16));
  // complex: sums carry real and imaginary parts; max and min (NumPy's order: real part, then
  // imaginary) gather the partials and compare them on each rank.
  both(ints.astype(DType::Complex128) * std::complex<double>(1, -2) + 3);
  both(ints.astype(DType::Complex64) * std::complex<float>(0.5f, 1));
  CHECK(kiln::sum(kiln::shard(ints.astype(DType::Int32), mesh, 0)).dtype() == DType::Int64);
  CHECK(kiln::mean(kiln::shard(ints, mesh, 0)).dtype() == DType::Float64);
  CHECK(kiln::prod(kiln::shard(ints.astype(DType::UInt8), mesh, 0)).dtype() == DType::UInt64);
  CHECK(kiln::all(kiln::shard(ints, mesh, 0), 0).dtype() == DType::Bool);
  // Products that wrap: 3^41 does not fit in int64, and its wrapped value is the same whichever
  // way the partial products group (multiplication modulo 2^64).
  const Array threes = kiln::full({41}, int64_t{3});
  check_same(kiln::prod(kiln::shard(threes, mesh, 0)), kiln::prod(threes));
}

TEST_CASE("max and min over the split axis propagate NaN, which NCCL's fmax would drop") {
  const Mesh mesh = Mesh::host(3);
  const Array v = kiln::asarray(std::vector<double>{1, 2, 3, kNaN, 5, 6, 7});
  const ShardedArray s = kiln::shard(v, mesh, 0);
  CHECK(std::isnan(kiln::max(s).get().item<double>()));
  CHECK(std::isnan(kiln::min(s).get().item<double>()));
  CHECK(std::isnan(kiln::prod(s).get().item<double>()));
  const Array m = matrix().at(4, 2).set(kNaN);  // row 4: rank 1's piece of 7 rows
  check_same(kiln::max(kiln::shard(m, mesh, 0), 0), kiln::max(m, 0));
  check_same(kiln::min(kiln::shard(m.astype(DType::Float32), mesh, 0), 0),
             kiln::min(m.astype(DType::Float32), 0));

  // The host communicator reduces as NCCL does (fmax: a number wins over NaN), which is why the
  // reduction above asks a second all-reduce where NaN was seen.
  std::vector<Array> parts = {kiln::asarray(std::vector<double>{kNaN, 1}),
                              kiln::asarray(std::vector<double>{2, kNaN}),
                              kiln::asarray(std::vector<double>{0, 0})};
  auto out = mesh.communicator().all_reduce(parts, kiln::mesh::Reduction::Max);
  REQUIRE(out.size() == 3);
  for (const Array& o : out) CHECK(o.to_vector<double>() == std::vector<double>{2, 1});
}

TEST_CASE("argmax and argmin across ranks: the first of equal values, NaN first, empty pieces") {
  for (int ranks : {2, 3, 5}) {
    CAPTURE(ranks);
    const Mesh mesh = Mesh::host(ranks);
    // Ties across ranks: the lowest index wins, whichever rank holds it.
    const Array ties = kiln::asarray(std::vector<int64_t>{1, 9, 3, 9, 9, 0, 9});
    const ShardedArray t = kiln::shard(ties, mesh, 0);
    CHECK(kiln::argmax(t).get().item<int64_t>() == 1);
    CHECK(kiln::argmin(t).get().item<int64_t>() == 5);
    // NaN wins over every number, and the first NaN over a later one.
    const Array nan = kiln::asarray(std::vector<double>{1, 2, 7, 3, kNaN, 4, kNaN});
    CHECK(kiln::argmax(kiln::shard(nan, mesh, 0)).get().item<int64_t>() == 4);
    CHECK(kiln::argmin(kiln::shard(nan, mesh, 0)).get().item<int64_t>() == 4);
    // Split along axis 1: the raveled index interleaves the ranks' pieces.
    const Array m = matrix().at(3, 4).set(10.0).at(6, 0).set(10.0);
    check_same(kiln::argmax(kiln::shard(m, mesh, 1)), kiln::argmax(m));
    check_same(kiln::argmax(kiln::shard(m, mesh, 1), 1), kiln::argmax(m, 1));
    check_same(kiln::argmin(kiln::shard(m.astype(DType::Float32), mesh, 1), 0, true),
               kiln::argmin(m.astype(DType::Float32), 0, true));
    // More ranks than rows: the last ranks' pieces are empty and offer no candidate.
    const Array two = kiln::asarray(std::vector<double>{-1, -1});
    CHECK(kiln::argmax(kiln::shard(two, mesh, 0)).get().item<int64_t>() == 0);
    check_same(kiln::argmin(kiln::shard(kiln::asarray({int64_t{5}, int64_t{-3}}), mesh, 0)),
               kiln::argmin(kiln::asarray({int64_t{5}, int64_t{-3}})));
  }
  // Complex numbers in NumPy's order (real part, then imaginary), and bools.
  const Mesh mesh = Mesh::host(3);
  const Array z =
      kiln::arange(-20, 15).reshape({7, 5}).astype(DType::Complex128) * std::complex<double>(1, -2);
  check_same(kiln::argmax(kiln::shard(z, mesh, 0), 0), kiln::argmax(z, 0));
  const Array b = matrix() > 1.0;
  check_same(kiln::argmax(kiln::shard(b, mesh, 0)), kiln::argmax(b));
  CHECK_THROWS_AS(kiln::argmax(kiln::shard(kiln::zeros({0, 3}), mesh, 0), 0), kiln::ShapeError);
  // Nothing to compare along the other axis, but the split one has length: an empty result.
  check_same(kiln::argmax(kiln::shard(kiln::zeros({3, 0}), mesh, 0), 0),
             kiln::argmax(kiln::zeros({3, 0}), 0));
  CHECK_THROWS_AS(kiln::argmax(kiln::shard(matrix(), mesh, 0), 2), kiln::ShapeError);
}

TEST_CASE("reshard: replicated to split, split to replicated, one split axis to another") {
  for (int ranks : {1, 2, 3, 4, 5}) {
    CAPTURE(ranks);
    const Mesh mesh = Mesh::host(ranks);
    const Array x = matrix();  // (7, 5): pieces of unequal length along both axes
    const ShardedArray rows = kiln::shard(x, mesh, 0);
    for (std::optional<int> to : {std::optional<int>(), std::optional<int>(0),
                                  std::optional<int>(1), std::optional<int>(-2)}) {
      const ShardedArray moved = kiln::reshard(rows, to);
      const std::optional<int> want = to && *to < 0 ? *to + 2 : to;
      CHECK(moved.axis() == want);
      check_same(moved, x);
      // Each rank holds exactly its part: array_split's piece of the new axis, or all of x.
      for (int r = 0; r < ranks; ++r) {
        const Array expected = want
                                   ? kiln::mesh::slice_along(
                                         x, *want, kiln::mesh::piece_of(x.shape()[*want], ranks, r))
                                   : x;
        CHECK(kiln::array_equal(moved.shard(r).get(), expected));
      }
      check_same(kiln::reshard(kiln::replicate(x, mesh), to), x);
    }
    // Elementwise work after a reshard combines the pieces as any split operands.
    check_same(kiln::reshard(rows, 1) * 2 + kiln::shard(x, mesh, 1), x * 3);
  }
  const Mesh mesh = Mesh::host(3);
  for (DType t : {DType::Int8, DType::UInt16, DType::Float16, DType::Complex128, DType::Bool}) {
    CAPTURE(kiln::dtype_name(t));
    const Array x = (kiln::arange(-10, 25).reshape({5, 7}) / 3).astype(t);
    check_same(kiln::reshard(kiln::shard(x, mesh, 1), 0), x);
  }
  check_same(kiln::reshard(kiln::shard(kiln::zeros({2, 0}), mesh, 0), 1), kiln::zeros({2, 0}));
  CHECK_THROWS_AS(kiln::reshard(kiln::shard(matrix(), mesh, 0), 2), kiln::ShapeError);
}

TEST_CASE(
    "FFTs of sharded arrays: local along other axes, the slab decomposition along the split one") {
  const Array x = matrix() * std::complex<double>(1, 0.5);  // (7, 5) complex128
  const Array cube = kiln::arange(60).reshape({3, 4, 5}).astype(DType::Float32) / 9;
  for (int ranks : {1, 2, 3, 4}) {
    CAPTURE(ranks);
    const Mesh mesh = Mesh::host(ranks);
    for (int split : {0, 1}) {
      CAPTURE(split);
      const ShardedArray s = kiln::shard(x, mesh, split);
      check_same(kiln::fft::fftn(s), kiln::fft::fftn(x));
      check_same(kiln::fft::ifftn(s, std::nullopt, std::nullopt, "ortho"),
                 kiln::fft::ifftn(x, std::nullopt, std::nullopt, "ortho"));
      for (int axis : {0, 1, -1}) {
        CAPTURE(axis);
        const ShardedArray f = kiln::fft::fft(s, std::nullopt, axis);
        CHECK(f.axis() == std::optional<int>(split));  // the result keeps x's layout
        check_same(f, kiln::fft::fft(x, std::nullopt, axis));
        check_same(kiln::fft::ifft(s, std::nullopt, axis, "forward"),
                   kiln::fft::ifft(x, std::nullopt, axis, "forward"));
      }
      // A round trip gives x back.
      check_same(kiln::fft::ifftn(kiln::fft::fftn(s)), x);
    }
    // Three axes, float32 in (complex64 out), split along the middle one, two of them transformed.
    const ShardedArray c = kiln::shard(cube, mesh, 1);
    const ShardedArray fc = kiln::fft::fftn(c, std::nullopt, std::vector<int>{1, 2});
    CHECK(fc.dtype() == DType::Complex64);
    CHECK(kiln::allclose(fc.get(), kiln::fft::fftn(cube, std::nullopt, std::vector<int>{1, 2}),
                         1e-5, 1e-5));
    // 1-d: through replicated.
    const Array v = kiln::arange(11).astype(DType::Float64);
    check_same(kiln::fft::fft(kiln::shard(v, mesh, 0)), kiln::fft::fft(v));
  }
  CHECK_THROWS_AS(kiln::fft::fft(kiln::shard(x, Mesh::host(2), 0), std::nullopt, 2),
                  kiln::ShapeError);
}

TEST_CASE("FFTs of sharded arrays: lengths, and the real transforms with their halved axis") {
  const Array real = kiln::arange(105).reshape({3, 7, 5}).astype(DType::Float64) / 11 - 4;
  const Array spectrum = kiln::fft::rfftn(real);  // (3, 7, 3) complex128
  const std::vector<std::vector<int>> axes_cases = {{0, 1, 2}, {2, 0}, {1}, {0, 2, 1}, {-1, 1}};
  for (int ranks : {1, 2, 3, 5}) {
    CAPTURE(ranks);
    const Mesh mesh = Mesh::host(ranks);
    for (int split : {0, 1, 2}) {
      CAPTURE(split);
      const ShardedArray r = kiln::shard(real, mesh, split);
      const ShardedArray c = kiln::shard(spectrum, mesh, split);
      // Lengths that pad and crop, the split axis's among them.
      const kiln::fft::Lengths s = std::vector<int64_t>{4, 6, 8};
      check_same(kiln::fft::fftn(r, s), kiln::fft::fftn(real, s));
      check_same(kiln::fft::ifftn(c, s, std::nullopt, "ortho"),
                 kiln::fft::ifftn(spectrum, s, std::nullopt, "ortho"));
      check_same(kiln::fft::fft(r, 9, split), kiln::fft::fft(real, 9, split));
      check_same(kiln::fft::ifft(c, 2, split, "forward"),
                 kiln::fft::ifft(spectrum, 2, split, "forward"));
      for (const auto& axes : axes_cases) {
        CAPTURE(axes);
        const ShardedArray f = kiln::fft::rfftn(r, std::nullopt, axes);
        CHECK(f.axis() == std::optional<int>(split));
        check_same(f, kiln::fft::rfftn(real, std::nullopt, axes));
        check_same(kiln::fft::irfftn(c, std::nullopt, axes),
                   kiln::fft::irfftn(spectrum, std::nullopt, axes));
        // Odd real lengths given back, and a round trip.
        std::vector<int64_t> lengths;
        for (int a : axes) lengths.push_back(real.shape()[static_cast<size_t>((a + 3) % 3)]);
        check_same(kiln::fft::irfftn(kiln::fft::rfftn(r, std::nullopt, axes), lengths, axes), real);
      }
      check_same(kiln::fft::rfft(r, 6, split, "ortho"), kiln::fft::rfft(real, 6, split, "ortho"));
      check_same(kiln::fft::irfft(c, 7, split), kiln::fft::irfft(spectrum, 7, split));
    }
    // 1-d: the halved axis is the split one (through replicated).
    const Array v = kiln::arange(13).astype(DType::Float32) / 3;
    check_same(kiln::fft::rfft(kiln::shard(v, mesh, 0)), kiln::fft::rfft(v));
    check_same(kiln::fft::irfft(kiln::fft::rfft(kiln::shard(v, mesh, 0)), 13),
               kiln::fft::irfft(kiln::fft::rfft(v), 13));
  }
  // Refused as the plain functions refuse, before any data moves.
  const ShardedArray r = kiln::shard(real, Mesh::host(2), 2);
  CHECK_THROWS_AS(kiln::fft::rfftn(kiln::shard(spectrum, Mesh::host(2), 2)), kiln::DTypeError);
  CHECK_THROWS_AS(kiln::fft::rfftn(r, std::nullopt, std::vector<int>{}), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::fft::irfftn(r, std::nullopt, std::vector<int>{}), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::fft::fftn(r, std::vector<int64_t>{4, 0}, std::vector<int>{0, 2}),
                  kiln::ShapeError);
  CHECK_THROWS_AS(kiln::fft::fftn(r, std::nullopt, std::vector<int>{1, 1}), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::fft::irfftn(r, std::nullopt, std::nullopt, "sideways"), kiln::Error);
}

TEST_CASE("host collectives: integer sums wrap as on a GPU, gathers stack in rank order") {
  const Mesh mesh = Mesh::host(2);
  auto& comm = mesh.communicator();
  const int32_t big = std::numeric_limits<int32_t>::max();
  auto sums = comm.all_reduce(
      {kiln::asarray(std::vector<int32_t>{big, -3}), kiln::asarray(std::vector<int32_t>{1, 5})},
      kiln::mesh::Reduction::Sum);
  CHECK(sums[1].to_vector<int32_t>() ==
        std::vector<int32_t>{std::numeric_limits<int32_t>::min(), 2});
  auto products = comm.all_reduce(
      {kiln::asarray(std::vector<int32_t>{big, -3}), kiln::asarray(std::vector<int32_t>{2, 5})},
      kiln::mesh::Reduction::Prod);
  CHECK(products[0].to_vector<int32_t>() == std::vector<int32_t>{-2, -15});  // 2^32 - 2 wraps
  // All-to-all: rank r receives block r of every rank's part, in rank order.
  auto exchanged = comm.all_to_all(
      {kiln::asarray(std::vector<int64_t>{10, 11}), kiln::asarray(std::vector<int64_t>{20, 21})});
  CHECK(exchanged[0].to_vector<int64_t>() == std::vector<int64_t>{10, 20});
  CHECK(exchanged[1].to_vector<int64_t>() == std::vector<int64_t>{11, 21});
  CHECK_THROWS_AS(comm.all_to_all({kiln::asarray(std::vector<int64_t>{1, 2, 3}),
                                   kiln::asarray(std::vector<int64_t>{4, 5, 6})}),
                  kiln::Error);
  auto stacked = comm.all_gather(
      {kiln::asarray(std::vector<int64_t>{1, 2}), kiln::asarray(std::vector<int64_t>{3, 4})});
  CHECK(stacked[0].shape() == kiln::Shape{2, 2});
  CHECK(stacked[1].to_vector<int64_t>() == std::vector<int64_t>{1, 2, 3, 4});
  CHECK_THROWS_AS(comm.all_reduce({kiln::asarray({std::complex<double>(1, 2)}),
                                   kiln::asarray({std::complex<double>(3, 4)})},
                                  kiln::mesh::Reduction::Max),
                  kiln::DTypeError);
}

// A collective's node takes every held rank's part as an input: with ten ranks, more inputs
// than a pooled node keeps, which storing its result lets go of as one list
// (graph::set_realized).
TEST_CASE("an evaluated collective lets go of every rank's part") {
  const Mesh mesh = Mesh::host(10);
  std::vector<Array> parts;
  for (int r = 0; r < 10; ++r) parts.push_back(kiln::asarray(std::vector<double>{double(r), 1}));
  for (auto& p : parts) p.eval();
  const long refs = parts[4].node().use_count();
  auto sums = mesh.communicator().all_reduce(parts, kiln::mesh::Reduction::Sum);
  REQUIRE(sums[3].node()->inputs.size() == 10);
  sums[3].eval();
  CHECK(sums[3].node()->is_leaf());
  CHECK(sums[3].node()->inputs.empty());
  CHECK(sums[3].to_vector<double>() == std::vector<double>{45, 10});
  CHECK(parts[4].node().use_count() == refs + 9);  // the nine sums not evaluated
  sums.clear();
  CHECK(parts[4].node().use_count() == refs);
}

TEST_CASE("empty pieces: fewer elements than ranks, and an empty split axis") {
  const Mesh mesh = Mesh::host(3);
  for (DType t : {DType::Float64, DType::Int64, DType::UInt64, DType::Bool, DType::Complex128}) {
    CAPTURE(kiln::dtype_name(t));
    const Array x = (kiln::arange(2) * 5 + 3).astype(t);  // rank 2's piece is empty
    const ShardedArray s = kiln::shard(x, mesh, 0);
    CHECK(s.shard(2).size() == 0);
    check_same(kiln::max(s), kiln::max(x));
    check_same(kiln::min(s), kiln::min(x));
    check_same(kiln::sum(s), kiln::sum(x));
    check_same(kiln::prod(s), kiln::prod(x));  // the empty piece's partial: 1
    check_same(kiln::any(s), kiln::any(x));    // false
    check_same(kiln::all(s), kiln::all(x));    // true
  }
  const Array largest = kiln::full({2}, int64_t{-1}).astype(DType::UInt64);  // 2^64 - 1
  CHECK(kiln::min(kiln::shard(largest, mesh, 0)).get().item<uint64_t>() ==
        std::numeric_limits<uint64_t>::max());

  const ShardedArray none = kiln::shard(kiln::zeros({0, 3}), mesh, 0);
  CHECK_THROWS_AS(kiln::max(none, 0), kiln::ShapeError);  // as kiln::max: no identity
  check_same(kiln::sum(none, 0), kiln::sum(kiln::zeros({0, 3}), 0));
  check_same(kiln::prod(none, 0), kiln::prod(kiln::zeros({0, 3}), 0));
  check_same(kiln::any(none, 0), kiln::any(kiln::zeros({0, 3}), 0));
  check_same(kiln::all(none, 0), kiln::all(kiln::zeros({0, 3}), 0));
  CHECK(std::isnan(kiln::mean(none).get().item<double>()));
}

TEST_CASE("a sharded chain stays lazy and evaluates as one fused group per rank") {
  const Array x = matrix();
  x.eval();
  const ShardedArray s = kiln::shard(x, Mesh::host(3), 0);
  kiln::reset_engine_stats();
  const ShardedArray y = chain(s);
  CHECK(kiln::engine_stats().plans == 0);  // nothing ran while the chain was built
  y.eval();
  CHECK(kiln::engine_stats().plans == 1);  // every rank's piece in one evaluation
  // sin, cos, *, /, + and the slice: one group per rank, but ranks 1 and 2 hold pieces of one
  // shape (2 of the 7 rows) on one device (the host), so their groups are one kernel.
  CHECK(kiln::engine_stats().kernels == 2);
  check_same(y, chain(x));
}

// Collectives are plan steps (graph/collective.hpp): nothing runs while a program is built, one
// evaluation runs each collective once for every rank, and explain() shows it with its bytes.
TEST_CASE("collectives are lazy plan steps, run once per evaluation and shown by explain()") {
  const Array x = matrix();
  x.eval();
  const Mesh mesh = Mesh::host(3);
  const ShardedArray s = kiln::shard(x, mesh, 0);
  kiln::reset_engine_stats();
  const ShardedArray centred = s - kiln::mean(s, 0);  // an all-reduce of 5 float64 partials
  CHECK(kiln::engine_stats().plans == 0);
  CHECK(kiln::engine_stats().library_calls == 0);
  // Rank 0's plan: its partial sum, the all-reduce (every rank's part: this process holds all),
  // then the kernel that reads the result. A ring all-reduce sends 2 (N - 1) / N of a part:
  // 2 * 2 * 40 / 3 bytes.
  const std::string plan = kiln::explain({centred.shard(0)});
  CAPTURE(plan);
  CHECK(plan.find("all-reduce (sum) over 3 ranks of float64(5,) parts, 53 bytes sent per rank") !=
        std::string::npos);
  for (int r = 0; r < 3; ++r)
    CHECK(plan.find("rank " + std::to_string(r) + ": float64(5,) on host -> float64(5,) on host") !=
          std::string::npos);
  CHECK(plan.find("all-reduce") < plan.rfind("kernel"));  // the reading kernel comes after it
  CHECK(kiln::to_dot({centred.shard(0)}).find("all-reduce (sum)") != std::string::npos);
  CHECK(kiln::engine_stats().plans == 0);  // explaining runs nothing either
  centred.eval();
  CHECK(kiln::engine_stats().plans == 1);
  CHECK(kiln::engine_stats().library_calls == 1);  // one all-reduce for the three ranks
  check_same(centred, x - kiln::mean(x, 0));

  // A reshard between split axes is an all-to-all: each rank sends the 2 of its 3 blocks it does
  // not keep. Rank pieces of (7, 5) split along 0 are cut into blocks of the longest piece along
  // 1 (2 columns) and padded: (3, 3, 2) float64 blocks, 144 bytes a part, 96 sent.
  const ShardedArray columns = kiln::reshard(s, 1);
  const std::string moved = kiln::explain({columns.shard(1)});
  CAPTURE(moved);
  CHECK(moved.find("all-to-all over 3 ranks of float64(3, 3, 2) parts, 96 bytes sent per rank") !=
        std::string::npos);
  check_same(columns, x);
  // To replicated: an all-gather of the pieces padded to the longest, (3, 5): 120 bytes sent to
  // each of the 2 other ranks.
  const std::string gathered = kiln::explain({kiln::reshard(s, std::nullopt).shard(2)});
  CAPTURE(gathered);
  CHECK(gathered.find("all-gather over 3 ranks of float64(3, 5) parts, 240 bytes sent per rank") !=
        std::string::npos);
  // One rank holds the whole array in every layout: a reshard there moves nothing.
  const ShardedArray alone = kiln::shard(x, Mesh::host(1), 0);
  for (std::optional<int> to : {std::optional<int>(1), std::optional<int>()}) {
    const ShardedArray moved_alone = kiln::reshard(alone, to);
    CHECK(moved_alone.axis() == to);
    CHECK(moved_alone.shard(0).node() == alone.shard(0).node());
    check_same(moved_alone, x);
  }
}

// A cached plan is bound to the graph's own communicator: the second mesh's evaluation (a
// plan-cache hit) must post its parts in its own directory, not in the first mesh's.
TEST_CASE("a cached plan with a collective runs on the mesh of the graph it evaluates") {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("kiln_test_rebind_" + std::to_string(getpid()));
  std::filesystem::remove_all(root);
  const Mesh a = Mesh::host_processes((root / "a").string(), 0, 1);
  const Mesh b = Mesh::host_processes((root / "b").string(), 0, 1);
  check_same(kiln::sum(kiln::shard(matrix(), a, 0), 0), kiln::sum(matrix(), 0));
  CHECK(std::filesystem::exists(root / "a" / "c0.r0"));  // the first collective's part, rank 0
  check_same(kiln::sum(kiln::shard(matrix(), b, 0), 0), kiln::sum(matrix(), 0));
  CHECK(std::filesystem::exists(root / "b" / "c0.r0"));
  CHECK_FALSE(std::filesystem::exists(root / "a" / "c1.r0"));  // mesh a ran one collective only
  std::filesystem::remove_all(root);
}

TEST_CASE("printing a sharded array prints the whole array as NumPy does") {
  const Array x = matrix();
  std::ostringstream sharded, plain;
  sharded << kiln::shard(x, Mesh::host(3), 1);
  plain << x;
  CHECK(sharded.str() == plain.str());
  CHECK(sharded.str().rfind("array([[", 0) == 0);
}

TEST_CASE("elementwise operands whose pieces do not line up are resharded, the smaller moving") {
  const Array big = matrix();                                                    // (7, 5)
  const Array col = kiln::arange(7).reshape({7, 1}).astype(DType::Float64) / 3;  // (7, 1)
  const Array row = kiln::arange(5).astype(DType::Float64) - 2;                  // (5,)
  for (int ranks : {1, 2, 3, 4}) {
    CAPTURE(ranks);
    const Mesh mesh = Mesh::host(ranks);
    // Split along different axes: the larger operand keeps its layout.
    const ShardedArray by_rows = kiln::shard(big, mesh, 0), by_cols = kiln::shard(big, mesh, 1);
    const ShardedArray sum = by_rows + by_cols * 2.0;
    CHECK(sum.axis() == std::optional<int>(0));  // equal sizes: the left operand's
    check_same(sum, big + big * 2.0);
    // (7, 5) split along its axis 1 (the result's 2) against (2, 7, 5) split along 1: the
    // smaller one moves to its axis 0 (an all-to-all).
    const Array pair = kiln::stack({big, big * 3.0});
    const ShardedArray mixed = by_cols + kiln::shard(pair, mesh, 1);
    CHECK(mixed.axis() == std::optional<int>(1));
    check_same(mixed, big + pair);
    // (7, 5) split along axis 0 against (5,) split along its own axis 0 (the result's axis 1):
    // the smaller one moves (an all-gather: it has no axis 0 of the result to split along).
    const ShardedArray prod = by_rows * kiln::shard(row, mesh, 0);
    CHECK(prod.axis() == std::optional<int>(0));
    check_same(prod, big * row);
    // Split along an axis that broadcasts (length 1) or that the operand lacks: replicated first.
    const ShardedArray c = kiln::shard(col, mesh, 0), r = kiln::shard(row, mesh, 0);
    const ShardedArray outer = c - r;  // (7, 5): c spans axis 0, r (along axis 1) is gathered
    CHECK(outer.axis() == std::optional<int>(0));
    check_same(outer, col - row);
    const ShardedArray across = kiln::shard(kiln::ones({1, 5}), mesh, 0) + by_cols;
    CHECK(across.axis() == std::optional<int>(1));
    check_same(across, kiln::ones({1, 5}) + big);
    // Neither spans the result along its split axis: both replicated, and so is the result.
    const ShardedArray both = kiln::shard(kiln::ones({1, 5}), mesh, 0) + kiln::shard(col, mesh, 1);
    CHECK(both.replicated());
    check_same(both, kiln::ones({1, 5}) + col);
  }
}

TEST_CASE("errors say what is wrong and what to do") {
  const Mesh mesh = Mesh::host(3);
  const Array x = matrix();
  const ShardedArray rows = kiln::shard(x, mesh, 0);
  CHECK_THROWS_WITH_AS(rows + kiln::shard(x, Mesh::host(3), 0),
                       doctest::Contains("different meshes"), kiln::DeviceError);
  CHECK_THROWS_WITH_AS(kiln::shard(x, mesh, 2), doctest::Contains("kiln::shard: axis 2"),
                       kiln::ShapeError);
  CHECK_THROWS_AS(kiln::shard(kiln::asarray({1.0}).reshape({}), mesh, 0), kiln::ShapeError);
  CHECK_THROWS_AS(kiln::sum(rows, 2), kiln::ShapeError);
  CHECK_THROWS_AS(rows + kiln::shard(kiln::ones({6, 5}), mesh, 0), kiln::ShapeError);
  CHECK_THROWS_AS(Mesh::host(0), kiln::Error);
  CHECK_THROWS_WITH_AS(mesh.device(3), doctest::Contains("ranks are 0 to 2"), kiln::Error);
  CHECK_THROWS_AS(rows.shard(3), kiln::Error);
  CHECK_THROWS_AS(ShardedArray(mesh, 0, {7, 5}, {x, x, x}), kiln::ShapeError);
  CHECK_THROWS_WITH_AS(Mesh::gpus({}), doctest::Contains("empty"), kiln::DeviceError);
  CHECK_THROWS_WITH_AS(Mesh::gpus({0, 0}), doctest::Contains("twice"), kiln::DeviceError);
  if (kiln::cuda_device_count() == 0)
    CHECK_THROWS_WITH_AS(Mesh::all_gpus(), doctest::Contains("sees no GPU"), kiln::DeviceError);
  CHECK(!(mesh == Mesh::host(3)));
  CHECK(mesh == rows.mesh());
}

TEST_CASE("NCCL: a missing library is a DeviceError naming it; a present one loads") {
  CHECK_THROWS_WITH_AS(kiln::nccl::load_library("libnccl-kiln-test-absent.so.2"),
                       doctest::Contains("libnccl-kiln-test-absent.so.2 could not be loaded"),
                       kiln::DeviceError);
  CHECK_THROWS_WITH_AS(kiln::nccl::load_library("libnccl-kiln-test-absent.so.2"),
                       doctest::Contains("install NCCL 2"), kiln::DeviceError);
  if (!nccl_loadable()) {
    CHECK_THROWS_WITH_AS(Mesh::gpus({0}), doctest::Contains("libnccl.so.2 could not be loaded"),
                         kiln::DeviceError);
    // A process mesh says so before any rank writes or waits for an id.
    const std::string id_file = "/tmp/kiln-test-mesh-no-nccl-id";
    CHECK_THROWS_WITH_AS(Mesh::gpu_process(id_file, 1, 2, 0),
                         doctest::Contains("libnccl.so.2 could not be loaded"), kiln::DeviceError);
    CHECK_THROWS_WITH_AS(Mesh::nccl_unique_id(), doctest::Contains("libnccl.so.2"),
                         kiln::DeviceError);
    return;
  }
  // The library's own messages for kiln's result codes: the values of mesh/nccl.hpp's
  // ncclResult_t, checked against the library at run time.
  using namespace kiln::nccl;
  const NcclApi& nccl = api();
  MESSAGE("NCCL " << version_string(nccl.version) << " loaded");
  CHECK(nccl.version >= kOldestVersion);
  if (kiln::cuda_device_count() == 0) {  // NCCL without a GPU: the missing GPU is the error
    CHECK_THROWS_AS(Mesh::gpus({0}), kiln::DeviceError);
    const std::string id_file = "/tmp/kiln-test-mesh-no-gpu-id-" + std::to_string(getpid());
    CHECK_THROWS_WITH_AS(Mesh::gpu_process(id_file, 0, 1, 0), doctest::Contains("cuda"),
                         kiln::DeviceError);
    std::filesystem::remove(id_file);
    // A rank other than 0 waits for rank 0's id, up to the mesh's timeout.
    kiln::MeshOptions quick;
    quick.timeout = std::chrono::milliseconds(100);
    CHECK_THROWS_WITH_AS(
        Mesh::gpu_process(id_file, 1, 2, 0, quick),
        doctest::Contains("waited 100 ms (kiln::MeshOptions::timeout) for rank 0's"),
        kiln::DeviceError);
  }
  auto says = [&](ncclResult_t r) { return std::string(nccl.ncclGetErrorString(r)); };
  CHECK(says(ncclSuccess).find("no error") != std::string::npos);
  CHECK(says(ncclUnhandledCudaError).find("cuda") != std::string::npos);
  CHECK(says(ncclSystemError).find("system") != std::string::npos);
  CHECK(says(ncclInternalError).find("internal") != std::string::npos);
  CHECK(says(ncclInvalidArgument).find("invalid argument") != std::string::npos);
  CHECK(says(ncclInvalidUsage).find("invalid usage") != std::string::npos);
  CHECK(says(ncclRemoteError).find("remote") != std::string::npos);
  CHECK(says(ncclInProgress).find("progress") != std::string::npos);
  CHECK_THROWS_WITH_AS(check(ncclInvalidUsage, "ncclTest"),
                       doctest::Contains("ncclTest failed: NCCL error 5 (invalid usage"),
                       kiln::CudaError);
}

namespace {

// A collective in flight whose ranks finish after a given number of polls (never: -1), or
// report an error.
struct FakeCollective final : kiln::mesh::InFlight {
  std::vector<int> polls_left;
  int failing_rank = -1;
  int aborts = 0;
  int ranks() const override { return static_cast<int>(polls_left.size()); }
  bool finished(int r) override {
    if (polls_left[r] > 0) --polls_left[r];
    return polls_left[r] == 0;
  }
  std::optional<std::string> failure(int r) override {
    if (r == failing_rank) return "NCCL error 6 (remote process exited)";
    return std::nullopt;
  }
  void abort() override { ++aborts; }
};

}  // namespace

TEST_CASE("a collective is waited for with a deadline: finished, failed, or aborted") {
  using namespace std::chrono_literals;
  FakeCollective done;
  done.polls_left = {3, 1, 5};
  kiln::mesh::wait_or_abort(done, 10s, "test all-reduce");
  CHECK(done.aborts == 0);

  FakeCollective stuck;
  stuck.polls_left = {1, -1};  // rank 1 never finishes: it died, or never joined
  CHECK_THROWS_WITH_AS(kiln::mesh::wait_or_abort(stuck, 50ms, "test all-reduce"),
                       doctest::Contains("rank 1 did not finish within 50 ms"), kiln::DeviceError);
  CHECK(stuck.aborts == 1);

  FakeCollective failed;
  failed.polls_left = {-1, -1};
  failed.failing_rank = 1;
  CHECK_THROWS_WITH_AS(kiln::mesh::wait_or_abort(failed, 10s, "test all-reduce"),
                       doctest::Contains("test all-reduce failed: rank 1: NCCL error 6"),
                       kiln::DeviceError);
  CHECK(failed.aborts == 1);
}

// ---- GPUs -------------------------------------------------------------------------------------

namespace {

// The programs on a mesh of GPUs, against the same programs on a host mesh of as many ranks
// (float32: partial sums and NCCL's order of adding them round differently).
void check_gpu_mesh(const Mesh& gpus) {
  REQUIRE_MESSAGE(nccl_loadable(), "a GPU mesh needs libnccl.so.2: install NCCL 2");
  const Mesh hosts = Mesh::host(gpus.size());
  const Array big = kiln::sin(kiln::arange(33007).astype(DType::Float32) / 997);
  for (const Array& data : {big, matrix().astype(DType::Float32)}) {
    for (int axis = 0; axis < data.ndim(); ++axis) {
      CAPTURE(axis);
      const ShardedArray g = kiln::shard(data, gpus, axis), h = kiln::shard(data, hosts, axis);
      for (int r = 0; r < gpus.size(); ++r) CHECK(g.shard(r).device() == gpus.device(r));
      const ShardedArray gy = chain(g), hy = chain(h);
      CHECK(kiln::allclose(gy.get(), hy.get(), 1e-6, 1e-6));
      for (const auto& [got, want] :
           {std::pair{kiln::sum(gy, axis), kiln::sum(hy, axis)},
            std::pair{kiln::mean(gy), kiln::mean(hy)}, std::pair{kiln::max(g), kiln::max(h)},
            std::pair{kiln::min(g, axis), kiln::min(h, axis)}}) {
        CHECK(got.replicated());
        CHECK(got.shard(gpus.size() - 1).device() == gpus.device(gpus.size() - 1));
        CHECK(got.dtype() == want.dtype());
        CHECK(kiln::allclose(got.get(), want.get(), 1e-5, 1e-5));
      }
    }
  }
  // Exact integers, NaN, and complex max through the all-gather.
  const Array ints = (kiln::arange(-20, 15).reshape({7, 5}) * 7).astype(DType::Int32);
  CHECK(kiln::array_equal(kiln::sum(kiln::shard(ints, gpus, 0), 0).get(), kiln::sum(ints, 0)));
  const Array nan = matrix().at(4, 2).set(kNaN);
  CHECK(
      kiln::allclose(kiln::max(kiln::shard(nan, gpus, 0), 0).get(), kiln::max(nan, 0), 0, 0, true));
  const Array z = matrix().astype(DType::Complex64) * std::complex<float>(1, -1);
  CHECK(kiln::array_equal(kiln::max(kiln::shard(z, gpus, 0), 0).get(), kiln::max(z, 0)));
  // ncclProd, any and all as a max and a min of bools, argmax's all-gather, var's two
  // all-reduces, a reshard's all-to-all (grouped ncclSend/ncclRecv) and all-gather, the slab FFT.
  const Array m = matrix();
  const ShardedArray gm = kiln::shard(m, gpus, 0), hm = kiln::shard(m, hosts, 0);
  auto same = [](const ShardedArray& got, const ShardedArray& want) {
    CHECK(got.dtype() == want.dtype());
    if (kiln::is_floating(want.dtype()) || kiln::is_complex(want.dtype()))
      CHECK(kiln::allclose(got.get(), want.get(), 1e-12, 1e-12, true));
    else
      CHECK(kiln::array_equal(got.get(), want.get()));
  };
  same(kiln::prod(gm, 0), kiln::prod(hm, 0));
  same(kiln::any(kiln::shard(m > 1.0, gpus, 0), 0), kiln::any(kiln::shard(m > 1.0, hosts, 0), 0));
  same(kiln::all(gm.astype(DType::Bool)), kiln::all(hm.astype(DType::Bool)));
  same(kiln::argmax(gm), kiln::argmax(hm));
  same(kiln::argmin(gm, 0), kiln::argmin(hm, 0));
  same(kiln::var(gm, 0, 1), kiln::var(hm, 0, 1));
  same(kiln::reshard(gm, 1), kiln::reshard(hm, 1));
  same(kiln::reshard(gm, std::nullopt), kiln::reshard(hm, std::nullopt));
  same(kiln::fft::fftn(gm), kiln::fft::fftn(hm));
  same(gm + kiln::shard(m, gpus, 1) * 2.0, hm + kiln::shard(m, hosts, 1) * 2.0);  // a reshard
  same(kiln::fft::rfftn(gm, std::vector<int64_t>{8, 6}),
       kiln::fft::rfftn(hm, std::vector<int64_t>{8, 6}));
  same(kiln::fft::irfft(kiln::fft::rfft(gm, std::nullopt, 0), 7, 0),
       kiln::fft::irfft(kiln::fft::rfft(hm, std::nullopt, 0), 7, 0));
}

}  // namespace

GPU_TEST_CASE("a mesh of one GPU through NCCL gives the host mesh's results") {
  const Mesh mesh = Mesh::gpus({0});
  CHECK(mesh.str().find("Mesh(cuda:0; NCCL 2.") == 0);
  check_gpu_mesh(mesh);
}

GPU_TEST_CASE(
    "a process mesh of one rank through NCCL (gpu_process) gives the host mesh's results") {
  const std::string id_file =
      (std::filesystem::temp_directory_path() / ("kiln_nccl_id_" + std::to_string(getpid())))
          .string();
  const Mesh by_file = Mesh::gpu_process(id_file, 0, 1, 0);
  CHECK(std::filesystem::exists(id_file));  // rank 0 wrote the id for the others
  CHECK(by_file.str().find("Mesh(cuda:0; NCCL 2.") == 0);
  check_gpu_mesh(by_file);
  std::filesystem::remove(id_file);
  check_gpu_mesh(Mesh::gpu_process(Mesh::nccl_unique_id(), 0, 1, 0));  // the id as MPI passes it
}

// Joining is non-blocking (ncclCommInitRankConfig) and waited for with the mesh's deadline: a
// rank whose peer never starts fails instead of hanging in NCCL's bootstrap.
GPU_TEST_CASE("a process mesh whose other rank never joins fails at the mesh's timeout") {
  const std::string id_file =
      (std::filesystem::temp_directory_path() / ("kiln_nccl_alone_" + std::to_string(getpid())))
          .string();
  kiln::MeshOptions quick;
  quick.timeout = std::chrono::seconds(3);
  CHECK_THROWS_WITH_AS(
      Mesh::gpu_process(id_file, 0, 2, 0, quick),
      doctest::Contains("joining NCCL's communicator as rank 0 of 2 on cuda:0 failed: rank 0 did "
                        "not finish within 3000 ms"),
      kiln::DeviceError);
  std::filesystem::remove(id_file);
  check_gpu_mesh(Mesh::gpu_process(Mesh::nccl_unique_id(), 0, 1, 0));  // the GPU still serves
}

MULTI_GPU_TEST_CASE("a mesh of every GPU through NCCL gives a host mesh's results") {
  const Mesh mesh = Mesh::all_gpus();
  CHECK(mesh.size() == kiln::cuda_device_count());
  check_gpu_mesh(mesh);
  // Two GPUs in either order are another mesh with the same results.
  check_gpu_mesh(Mesh::gpus({1, 0}));
}

MULTI_GPU_TEST_CASE("every GPU computes its piece while another is held: no rank waits for one") {
  const Mesh mesh = Mesh::all_gpus();
  const ShardedArray x = kiln::shard(kiln::arange(1 << 20).astype(DType::Float32), mesh, 0);
  chain(x).eval();  // compiles and loads the kernel first: a module load may wait for a GPU
  for (int r = 0; r < mesh.size(); ++r) kiln::synchronize(mesh.device(r));
  kiln::test_support::Gate gate;
  gate.close_on(static_cast<cudaStream_t>(kiln::stream(mesh.device(0)).native()));
  const ShardedArray y = chain(x * 2);
  y.eval();  // queues every rank's kernel; rank 0's waits behind the gate
  for (int r = 1; r < mesh.size(); ++r)
    kiln::Event::record(kiln::stream(mesh.device(r))).synchronize();
  CHECK_FALSE(kiln::Event::record(kiln::stream(mesh.device(0))).ready());
  gate.release();
  CHECK(gate.released_by_test);  // the others finished while rank 0 was still held
  CHECK(
      kiln::allclose(y.get(), chain(kiln::arange(1 << 20).astype(DType::Float32) * 2), 1e-6, 1e-6));
}
