// Reduction schedules by layout (codegen::generate picks the form, codegen::launch_for the
// launch): which form each layout gets and how it is split, derived by hand from the rules in
// src/codegen/launch.cpp; and, on a GPU, every form at the extents where its edges are (1, 7,
// 32, 33, 100, 1000, 4097, 50257, 10^6 elements) against the host executor, exactly.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <kiln/kiln.hpp>
#include <string>
#include <vector>

#include "codegen/kernel_source.hpp"
#include "plan/planner.hpp"
#include "support/gpu.hpp"

namespace {

using kiln::Array;
using kiln::DType;
using kiln::Shape;
using kiln::codegen::Form;

constexpr int kSms = 132;  // an H200's SM count, for the launch shapes

// The kernel codegen writes for r's last kernel step (the one that computes r).
kiln::codegen::KernelSource kernel_of(const Array& r) {
  auto plan = kiln::plan::make_plan({r.node()});
  std::vector<kiln::codegen::KernelSource> kernels;
  for (const auto& s : plan.steps)
    if (auto* k = std::get_if<kiln::plan::KernelStep>(&s))
      kernels.push_back(kiln::codegen::generate(k->group));
  REQUIRE(!kernels.empty());
  return kernels.back();
}

// Small integers as floats: every sum of them below 2^24 is exact in any order, so host and GPU
// must agree bit for bit whatever the schedule, and a lost or doubled element shows.
Array small_integers(const Shape& s, DType t) {
  std::vector<double> v(static_cast<size_t>(kiln::shape_size(s)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = double(i * 7919 % 13) - 6;  // -6 .. 6
  return kiln::asarray(v, s).astype(t).eval();
}

// In memory (a constant would be read as a broadcast scalar, another layout).
Array matrix(int64_t rows, int64_t cols, DType t = DType::Float32) {
  return small_integers({rows, cols}, t);
}

}  // namespace

TEST_CASE("schedules: each layout gets its reduction form") {
  auto x = matrix(64, 4096);
  CHECK(kernel_of(kiln::sum(x)).form == Form::ReduceFull);
  CHECK(kernel_of(kiln::sum(x, {1})).form == Form::ReduceRows);
  CHECK(kernel_of(kiln::sum(x, {0})).form == Form::ReduceColumns);
  // Rows shorter than a warp: a thread per output.
  CHECK(kernel_of(kiln::sum(matrix(4096, 7), {1})).form == Form::ReducePerThread);
  // A middle axis of rank 3 is strided: columns; the last two axes merge into one long row.
  auto y = small_integers({8, 16, 64}, DType::Float64);
  CHECK(kernel_of(kiln::sum(y, {1})).form == Form::ReduceColumns);
  CHECK(kernel_of(kiln::sum(y, {1, 2})).form == Form::ReduceRows);
  // The transpose's rows are the matrix's columns.
  CHECK(kernel_of(kiln::sum(x.T(), {1})).form == Form::ReduceColumns);
  CHECK(kernel_of(kiln::sum(x.T(), {0})).form == Form::ReduceRows);
  // A value broadcast along the row does not make rows strided: softmax's and layernorm's
  // second reductions stay row reductions.
  CHECK(kernel_of(kiln::sum(kiln::exp(x - kiln::max(x, {1}, true)), {1})).form == Form::ReduceRows);
  auto d = x - kiln::mean(x, {1}, true);
  CHECK(kernel_of(kiln::mean(d * d, {1}, true)).form == Form::ReduceRows);
  CHECK(kernel_of(kiln::sum(x - kiln::mean(x, {0}, true), {0})).form == Form::ReduceColumns);
  // A prologue reading the matrix and its transpose has no contiguous rows.
  auto sq = matrix(256, 256);
  CHECK(kernel_of(kiln::sum(sq + sq.T(), {1})).form == Form::ReduceColumns);
}

TEST_CASE("schedules: column reductions split the rows over blocks only when outputs are few") {
  // float32 columns, rows 16-byte aligned: 4 outputs per thread, 128 per warp. 4096 outputs:
  // 32 column tiles want 132 * 8 / 32 = 33 blocks down each column (one wave); 16384 rows allow
  // 16384 / (8 * 16) = 128, so 33.
  auto k = kernel_of(kiln::sum(matrix(16384, 4096), {0}));
  CHECK(k.vec == 4);
  auto l = kiln::codegen::launch_for(k, kSms);
  CHECK(l.block_x == 32);
  CHECK(l.block_y == 8);
  CHECK(l.grid_x == 32);
  CHECK(l.grid_y == 33);
  CHECK(l.partials == 33 * 4096);
  CHECK(l.counters == 32);
  CHECK(l.count == 4096);
  // 16384 outputs: 128 tiles; 132 * 8 / 128 = 8.25 rounds down to 8 blocks each, one wave.
  l = kiln::codegen::launch_for(kernel_of(kiln::sum(matrix(4096, 16384), {0})), kSms);
  CHECK(l.grid_x == 128);
  CHECK(l.grid_y == 8);
  // Many outputs of 7 rows, too few for 16 a thread: a row of 256 threads (1024 outputs) walks
  // all 7, no merge; no split, no scratch; 10^6 / 1024 tiles, rounded up.
  l = kiln::codegen::launch_for(kernel_of(kiln::sum(matrix(7, 1000000), {0})), kSms);
  CHECK(l.block_x == 256);
  CHECK(l.block_y == 1);
  CHECK(l.grid_x == 977);
  CHECK(l.grid_y == 1);
  CHECK(l.partials == 0);
  CHECK(l.counters == 0);
  // 64 rows: 4 rows at once, 64 threads across.
  l = kiln::codegen::launch_for(kernel_of(kiln::sum(matrix(64, 1000000), {0})), kSms);
  CHECK(l.block_x == 64);
  CHECK(l.block_y == 4);
  // Seven columns of a million rows, every other column of a wider matrix (not one stream): rows
  // 56 bytes apart cannot all start 16-byte aligned, so one output per thread; 7 threads across
  // and 256 / 7 = 36 rows at once, so a block reads 252 rows' values; one column tile, as many
  // blocks down it as fill the GPU.
  auto every_other = [](const Array& a) {
    return a.index({kiln::Slice(), kiln::Slice(0, a.shape()[1], 2)});
  };
  k = kernel_of(kiln::sum(every_other(matrix(1000000, 14)), {0}));
  CHECK(k.form == Form::ReduceColumns);
  CHECK(k.vec == 1);
  l = kiln::codegen::launch_for(k, kSms);
  CHECK(l.block_x == 7);
  CHECK(l.block_y == 36);
  CHECK(l.grid_x == 1);
  CHECK(l.grid_y == 1056);
  CHECK(l.partials == 1056 * 7);
  // 33 outputs: two tiles as even as can be (17 and 16 threads), 256 / 17 = 15 rows at once.
  l = kiln::codegen::launch_for(kernel_of(kiln::sum(every_other(matrix(100000, 66)), {0})), kSms);
  CHECK(l.block_x == 17);
  CHECK(l.block_y == 15);
  CHECK(l.grid_x == 2);
  // Too few rows to be worth splitting: 100 rows give 100 / 128 -> 1 block per column.
  l = kiln::codegen::launch_for(kernel_of(kiln::sum(matrix(100, 128), {0})), kSms);
  CHECK(l.grid_y == 1);
  // float64: 2 per 16-byte load; complex128 and an input read across its rows: 1.
  CHECK(kernel_of(kiln::sum(matrix(64, 64, DType::Float64), {0})).vec == 2);
  CHECK(kernel_of(kiln::sum(matrix(64, 64, DType::Complex128), {0})).vec == 1);
  Array sq = matrix(64, 64);
  CHECK(kernel_of(kiln::sum(sq + sq.T(), {0})).vec == 1);
  // bool in memory: 4 per thread at most (the merge's shared memory bounds V).
  CHECK(kernel_of(kiln::any((sq > 0).eval(), {0})).vec == 4);
}

TEST_CASE("schedules: few columns of a row-major matrix stream through every lane") {
  // colsum 1000000x7: the 7e6 values as one stream of 4-lane steps; 252 threads (36 x 7) make
  // 1008 lanes, 144 whole rows, so each lane keeps one column; 7e6 / (1008 x 16 steps) = 435
  // blocks (fewer than 8 per SM), merged by the last: 435 x 7 partials, one counter.
  auto k = kernel_of(kiln::sum(matrix(1000000, 7), {0}));
  CHECK(k.form == Form::ReduceNarrowColumns);
  CHECK(k.vec == 4);
  auto l = kiln::codegen::launch_for(k, kSms);
  CHECK(l.block_x == 252);
  CHECK(l.block_y == 1);
  CHECK(l.grid_x == 1);
  CHECK(l.grid_y == 435);
  CHECK(l.partials == 435 * 7);
  CHECK(l.counters == 1);
  CHECK(kiln::codegen::describe_schedule(k).find("narrow columns: ") == 0);
  // 64 float64 columns: 2 lanes, 256 threads (512 lanes, 8 rows); 6.4e6 / (512 x 16) = 782.
  k = kernel_of(kiln::sum(matrix(100000, 64, DType::Float64), {0}));
  CHECK(k.vec == 2);
  l = kiln::codegen::launch_for(k, kSms);
  CHECK(l.block_x == 256);
  CHECK(l.grid_y == 782);
  // 33 columns: 33 x 7 = 231 threads; elementwise producers and a transposed view whose memory is
  // row-major stream too; argmax keeps its row index.
  CHECK(kiln::codegen::launch_for(kernel_of(kiln::sum(matrix(1000, 33) * 2 + 1, {0})), kSms)
            .block_x == 231);
  CHECK(kernel_of(kiln::argmax(matrix(7, 1000).T(), 1)).form == Form::ReduceColumns);
  CHECK(kernel_of(kiln::argmax(matrix(1000, 7).T(), 1)).form == Form::ReduceNarrowColumns);
  // Not one stream: more than 64 columns, a column slice, a per-column weight (stride 0 rows).
  CHECK(kernel_of(kiln::sum(matrix(1000, 65), {0})).form == Form::ReduceColumns);
  Array x = matrix(1000, 8);
  CHECK(kernel_of(kiln::sum(x.index({kiln::Slice(), kiln::Slice(0, 7)}), {0})).form ==
        Form::ReduceColumns);
  CHECK(kernel_of(kiln::sum(x * matrix(1, 8), {0})).form == Form::ReduceColumns);
}

TEST_CASE("schedules: rows of a few values with a broadcast input are written as one stream") {
  // outer 100000x33: a[:, None] * b[None, :] reads both inputs broadcast; 33 x 7 = 231 threads
  // make 924 lanes, 28 whole rows, so each lane keeps one column; 3.3e6 / 924 steps = 3572
  // blocks (under 64 per SM).
  Array a = small_integers({100000}, DType::Float32), b = small_integers({33}, DType::Float32);
  auto k = kernel_of(a.reshape({100000, 1}) * b.reshape({1, 33}));
  CHECK(k.form == Form::NarrowRows);
  CHECK(k.vec == 4);
  auto l = kiln::codegen::launch_for(k, kSms);
  CHECK(l.block_x == 231);
  CHECK(l.grid_x == 3572);
  CHECK(l.count == 3300000);
  CHECK(kiln::codegen::describe_schedule(k).find("narrow rows: ") == 0);
  // A column slice of a wider matrix, float64: 2 lanes, 33 x 7 threads again.
  Array w = matrix(1000, 70, DType::Float64);
  k = kernel_of(w.index({kiln::Slice(), kiln::Slice(0, 33)}) + 1.0);
  CHECK(k.form == Form::NarrowRows);
  CHECK(kiln::codegen::launch_for(k, kSms).block_x == 231);
  // Not narrow: rows of 65, a dense chain (no strided input), a transpose (tiled).
  CHECK(kernel_of(matrix(100, 65) * small_integers({100, 1}, DType::Float32)).form ==
        Form::Elementwise);
  CHECK(kernel_of(matrix(1000, 33) * 2 + 1).form == Form::Elementwise);
  CHECK(kernel_of(matrix(33, 1000).T() * 2).form == Form::Tiled);
  // The values, on the host (and through NVRTC with KILN_JIT_ARCH): against a direct loop.
  for (int64_t cols : {2, 3, 7, 33, 64}) {
    Array x = small_integers({57, cols + 5}, DType::Float32);
    Array y = small_integers({57, 1}, DType::Int32);
    Array z = (x.index({kiln::Slice(), kiln::Slice(0, cols)}) * y + 0.5).eval();
    auto xv = x.to_vector<float>();
    auto yv = y.to_vector<int32_t>();
    auto zv = z.to_vector<double>();
    INFO(cols);
    for (int64_t r = 0; r < 57; ++r)
      for (int64_t c = 0; c < cols; ++c)
        CHECK(zv[r * cols + c] == double(xv[r * (cols + 5) + c]) * yv[r] + 0.5);
  }
}

TEST_CASE("schedules: narrow column reductions on the host, every dtype and reduction") {
  // The host executor runs the plan (and with KILN_JIT_ARCH set, NVRTC compiles the narrow
  // kernel for each dtype and reduction); values against a direct loop.
  for (DType t : {DType::Bool, DType::UInt8, DType::Int32, DType::Int64, DType::Float16,
                  DType::Float32, DType::Float64, DType::Complex64}) {
    for (int64_t cols : {1, 3, 7, 64}) {
      Array x = small_integers({301, cols}, t);
      INFO(kiln::dtype_name(t) << " x " << cols);
      auto v = kiln::real(x.astype(DType::Complex128)).to_vector<double>();
      auto sums = kiln::real(kiln::sum(x, {0}).astype(DType::Complex128)).to_vector<double>();
      auto best = kiln::argmax(x, 0).to_vector<int64_t>();
      for (int64_t c = 0; c < cols; ++c) {
        double total = 0;
        int64_t arg = 0;
        for (int64_t r = 0; r < 301; ++r) {
          total += v[r * cols + c];
          if (v[r * cols + c] > v[arg * cols + c]) arg = r;
        }
        CHECK(sums[c] == total);
        CHECK(best[c] == arg);
      }
      kiln::min(x, {0}).eval();
      kiln::mean(x.astype(DType::Float64), {0}).eval();
    }
  }
}

TEST_CASE("schedules: column reductions of every dtype, rows aligned for 16-byte loads") {
  // On the host this checks the values; with KILN_JIT_ARCH set (as CI does) each kernel is
  // also compiled by NVRTC, which is where a bool column kernel with V = 16 once failed.
  for (DType t : {DType::Bool, DType::Int32, DType::Int64, DType::Float32, DType::Float64,
                  DType::Complex64, DType::Complex128}) {
    Array x = small_integers({24, 128}, t);
    INFO(std::string(kiln::dtype_name(t)));
    auto v = kiln::real(x.astype(DType::Complex128)).to_vector<double>();
    auto sums = kiln::real(kiln::sum(x, {0}).astype(DType::Complex128)).to_vector<double>();
    auto maxes = kiln::argmax(x, 0).to_vector<int64_t>();
    for (int64_t c = 0; c < 128; ++c) {
      double total = 0;
      int64_t best = 0;
      for (int64_t r = 0; r < 24; ++r) {
        total += v[r * 128 + c];
        if (v[r * 128 + c] > v[best * 128 + c]) best = r;
      }
      CHECK(sums[c] == total);
      CHECK(maxes[c] == best);
    }
    CHECK(kiln::any(x, {0}).astype(DType::Int32).to_vector<int32_t>() ==
          (kiln::sum(x != 0, {0}) > 0).astype(DType::Int32).to_vector<int32_t>());
  }
}

TEST_CASE(
    "schedules: row reductions take a block per long row, a warp per row below, and split rows "
    "when rows are few") {
  // 16384 rows of 4096: a block per row, 16384 blocks; no split.
  auto k = kernel_of(kiln::sum(matrix(16384, 4096), {1}));
  CHECK(k.vec == 4);  // float32: 16-byte loads
  CHECK(k.row_threads == 256);
  auto l = kiln::codegen::launch_for(k, kSms);
  CHECK(l.block_x == 256);
  CHECK(l.grid_x == 16384);
  CHECK(l.grid_y == 1);
  CHECK(l.count == 16384);
  // 4095 values: a warp per row, 8 rows per block.
  k = kernel_of(kiln::sum(matrix(16384, 4095), {1}));
  CHECK(k.row_threads == 32);
  CHECK(kiln::codegen::launch_for(k, kSms).grid_x == 2048);
  // 7 rows of a million: a block each; filling the GPU wants 132 * 8 = 1056 blocks, so each
  // row splits over 1056 / 7 = 150 of them (each keeping far more than 1024 values).
  l = kiln::codegen::launch_for(kernel_of(kiln::sum(matrix(7, 1000000), {1})), kSms);
  CHECK(l.grid_x == 7);
  CHECK(l.grid_y == 150);
  CHECK(l.partials == l.grid_y * 7);
  CHECK(l.counters == 7);
  // A warp per row splits too: 100 rows of 3000, 13 blocks of 8 warps, 1056 / 13 = 81 wanted,
  // but each warp keeps at least 1024 values, so 3000 / 1024 = 2.
  l = kiln::codegen::launch_for(kernel_of(kiln::sum(matrix(100, 3000), {1})), kSms);
  CHECK(l.grid_x == 13);
  CHECK(l.grid_y == 2);
  // Short rows share a warp: about 8 values per lane, 4 to 32 lanes per row. 33 values: 8
  // lanes, 4 rows per warp, 32 per block; 10^6 rows take 31250 blocks.
  k = kernel_of(kiln::sum(matrix(1000000, 33), {1}));
  CHECK(k.form == Form::ReduceRows);
  CHECK(k.row_threads == 8);
  l = kiln::codegen::launch_for(k, kSms);
  CHECK(l.grid_x == 31250);
  CHECK(l.grid_y == 1);
  CHECK(kernel_of(kiln::sum(matrix(100, 32), {1})).row_threads == 4);
  CHECK(kernel_of(kiln::sum(matrix(100, 64), {1})).row_threads == 8);
  CHECK(kernel_of(kiln::sum(matrix(100, 255), {1})).row_threads == 32);
  CHECK(kernel_of(kiln::sum(matrix(100, 4095), {1})).row_threads == 32);
  CHECK(kernel_of(kiln::sum(matrix(100, 4096), {1})).row_threads == 256);
  // float64 and complex128 rows: 2 and 1 lanes per 16-byte load.
  CHECK(kernel_of(kiln::sum(matrix(64, 64, DType::Float64), {1})).vec == 2);
  CHECK(kernel_of(kiln::sum(matrix(64, 64, DType::Complex128), {1})).vec == 1);
}

namespace {

void same_on_gpu(const std::string& what, const Array& host_in,
                 const std::function<Array(const Array&)>& f) {
  INFO(what);
  Array host = f(host_in).eval();
  Array gpu = f(kiln::asarray(host_in, kiln::cuda())).eval();
  REQUIRE(gpu.device() == kiln::cuda());
  Array back = gpu.get();
  REQUIRE(back.dtype() == host.dtype());
  REQUIRE(back.shape() == host.shape());
  CHECK(kiln::array_equal(back, host));
  // The split merges in a fixed order: a second evaluation gives the same bits.
  CHECK(kiln::array_equal(f(kiln::asarray(host_in, kiln::cuda())).get(), back));
}

}  // namespace

GPU_TEST_CASE("schedules: rows and columns at the extents where forms change, every reduction") {
  const std::vector<int64_t> extents = {1, 7, 32, 33, 100, 1000, 4097};
  for (int64_t rows : extents)
    for (int64_t cols : extents)
      for (DType t : {DType::Float32, DType::Int32}) {
        Array x = small_integers({rows, cols}, t);
        std::string shape = std::to_string(rows) + "x" + std::to_string(cols);
        for (int axis : {0, 1}) {
          std::string at = shape + " axis " + std::to_string(axis);
          same_on_gpu("sum " + at, x, [&](const Array& a) { return kiln::sum(a, {axis}); });
          same_on_gpu("max " + at, x, [&](const Array& a) { return kiln::max(a, {axis}); });
          same_on_gpu("argmin " + at, x, [&](const Array& a) { return kiln::argmin(a, axis); });
          same_on_gpu("mean keepdims " + at, x,
                      [&](const Array& a) { return kiln::mean(a, {axis}, true); });
          same_on_gpu("any " + at, x, [&](const Array& a) { return kiln::any(a > 5, {axis}); });
        }
      }
}

GPU_TEST_CASE(
    "schedules: column sums in 16-byte loads, and where they cannot be (tails, offsets)") {
  // 64 columns, rows 16-byte aligned: views that end mid-vector (the last outputs go one at a
  // time), start off alignment (the whole launch goes one at a time) or both.
  for (DType t : {DType::Bool, DType::Float32, DType::Float64, DType::Int32, DType::Int64})
    for (int64_t rows : {1, 9, 1000, 16384}) {
      Array x = small_integers({rows, 64}, t);
      std::string at = std::to_string(rows) + "x64 " + kiln::dtype_name(t);
      for (auto [lo, hi] : {std::pair{0, 64}, {0, 33}, {1, 64}, {2, 34}, {4, 61}}) {
        std::string cols = at + " columns " + std::to_string(lo) + ":" + std::to_string(hi);
        auto view = [lo, hi](const Array& a) {
          return a.index({kiln::Slice(), kiln::Slice(lo, hi)});
        };
        same_on_gpu("sum " + cols, x, [&](const Array& a) { return kiln::sum(view(a), {0}); });
        same_on_gpu("argmax " + cols, x, [&](const Array& a) { return kiln::argmax(view(a), 0); });
        same_on_gpu("max * 2 " + cols, x,
                    [&](const Array& a) { return kiln::max(view(a) * 2, {0}); });
      }
    }
}

GPU_TEST_CASE("schedules: long rows and columns, split over blocks, every dtype") {
  const std::vector<Shape> shapes = {{7, 1000000}, {1000000, 7}, {3, 50257},
                                     {50257, 3},   {64, 16384},  {16384, 64}};
  for (const Shape& s : shapes)
    for (DType t : {DType::Float32, DType::Float64, DType::Int64, DType::Complex64}) {
      Array x = small_integers(s, t);
      std::string shape =
          std::to_string(s[0]) + "x" + std::to_string(s[1]) + " " + kiln::dtype_name(t);
      for (int axis : {0, 1}) {
        std::string at = shape + " axis " + std::to_string(axis);
        same_on_gpu("sum " + at, x, [&](const Array& a) { return kiln::sum(a * 2 + 1, {axis}); });
        same_on_gpu("argmax " + at, x, [&](const Array& a) { return kiln::argmax(a, axis); });
        if (!kiln::is_complex(t))
          same_on_gpu("min " + at, x, [&](const Array& a) { return kiln::min(a, {axis}); });
      }
    }
}

GPU_TEST_CASE("schedules: narrow rows and narrow columns on the GPU, every edge") {
  // Rows of 2..64 values, the stream's last step partial, vectors misaligned by an offset view.
  for (int64_t cols : {2, 3, 7, 31, 32, 33, 63, 64})
    for (int64_t rows : {1, 5, 1000, 100001})
      for (DType t : {DType::Bool, DType::Float16, DType::Float32, DType::Float64, DType::Int64,
                      DType::Complex64}) {
        Array x = small_integers({rows, cols + 3}, t);
        Array col = small_integers({rows, 1}, t), row = small_integers({1, cols}, t);
        std::string at =
            std::to_string(rows) + "x" + std::to_string(cols) + " " + kiln::dtype_name(t);
        auto part = [&](const Array& a) {
          return a.index({kiln::Slice(), kiln::Slice(1, cols + 1)});
        };
        same_on_gpu("slice + 1 " + at, x, [&](const Array& a) { return part(a) + 1; });
        same_on_gpu("outer " + at, col,
                    [&](const Array& a) { return a * kiln::asarray(row, a.device()); });
        Array dense = small_integers({rows, cols}, t);
        same_on_gpu("column sums " + at, dense, [&](const Array& a) { return kiln::sum(a, {0}); });
        same_on_gpu("column argmax " + at, dense,
                    [&](const Array& a) { return kiln::argmax(a * 2, 0); });
      }
}

GPU_TEST_CASE("schedules: rank 3 and 4 over every axis subset, views as inputs") {
  Array x4 = small_integers({5, 6, 7, 33}, DType::Float32);
  for (int mask = 1; mask < 16; ++mask) {
    kiln::Axes axes;
    for (int a = 0; a < 4; ++a)
      if (mask & (1 << a)) axes.push_back(a);
    std::string at = "mask " + std::to_string(mask);
    same_on_gpu("sum rank 4 " + at, x4, [&](const Array& a) { return kiln::sum(a, axes); });
    same_on_gpu("max of a permutation " + at, x4, [&](const Array& a) {
      return kiln::max(a.transpose({2, 0, 3, 1}), axes);
    });
    same_on_gpu("sum of a strided slice " + at, x4, [&](const Array& a) {
      return kiln::sum(
          a.index({kiln::Slice(), kiln::Slice(1, 6, 2), kiln::Slice(), kiln::Slice(0, 33, 3)}),
          axes, true);
    });
  }
  Array x3 = small_integers({33, 4097, 3}, DType::Int32);
  for (int mask = 1; mask < 8; ++mask) {
    kiln::Axes axes;
    for (int a = 0; a < 3; ++a)
      if (mask & (1 << a)) axes.push_back(a);
    same_on_gpu("sum rank 3 mask " + std::to_string(mask), x3,
                [&](const Array& a) { return kiln::sum(a, axes); });
  }
}

TEST_CASE("schedules: an empty output launches nothing; an empty row still writes its outputs") {
  auto empty_rows = kiln::zeros({0, 5}, DType::Float32).eval();
  for (int axis : {0, 1}) {
    auto l = kiln::codegen::launch_for(kernel_of(kiln::sum(empty_rows + 1, {axis})), kSms);
    CHECK(l.grid_x == (axis == 0 ? 1 : 0));  // axis 0 leaves 5 outputs, each a sum of nothing
  }
  auto l = kiln::codegen::launch_for(kernel_of(kiln::sum(empty_rows + 1)), kSms);
  CHECK(l.grid_x == 1);  // the sum of nothing is 0, and someone must write it
}

GPU_TEST_CASE("schedules: reductions of empty extents give NumPy's identities") {
  Array e = kiln::asarray(kiln::zeros({0, 5}, DType::Float32), kiln::cuda());
  CHECK(kiln::sum(e * 2, {0}).get().to_vector<float>() == std::vector<float>(5, 0.f));
  CHECK(kiln::sum(e * 2, {1}).get().size() == 0);
  CHECK(kiln::prod(e * 2, {0}).get().to_vector<float>() == std::vector<float>(5, 1.f));
  CHECK(kiln::sum(e * 2).item<float>() == 0.f);
  CHECK(kiln::all(e > 1, {0}).get().to_vector<bool>() == std::vector<bool>(5, true));
}

TEST_CASE("schedules: an input contiguous along another axis than the output is tiled") {
  auto x = matrix(8192, 8192);
  auto k = kernel_of(x.T() * 2 + 1);
  CHECK(k.form == Form::Tiled);
  CHECK(k.tile_axis == 0);
  auto l = kiln::codegen::launch_for(k, kSms);
  CHECK(l.block_x == 32);
  CHECK(l.block_y == 8);
  CHECK(k.tile == 64);  // float32: 64 x 64 tiles
  CHECK(l.grid_x == 128 * 128);
  CHECK(l.grid_y == 1);
  // Beside a dense input; a permutation of rank 3 (axes 0 and 2 swapped keep axis 1 between).
  auto sq = matrix(300, 300);
  CHECK(kernel_of(sq + sq.T()).form == Form::Tiled);
  auto y = small_integers({10, 20, 30}, DType::Float64);
  auto k3 = kernel_of(y.transpose({2, 1, 0}) * 3);
  CHECK(k3.form == Form::Tiled);
  CHECK(k3.tile_axis == 0);  // the output's axis 0 is y's last, contiguous axis
  l = kiln::codegen::launch_for(k3, kSms);
  CHECK(k3.tile == 32);      // float64: 32 x 32 tiles
  CHECK(l.grid_x == 1 * 1);  // 10 x 30 plane: one tile
  CHECK(l.grid_y == 20);     // one per coordinate of the middle axis
  // What is not transposed stays elementwise: broadcasts, reversed-stride-free slices.
  CHECK(kernel_of(x * 2).form == Form::Elementwise);
  CHECK(kernel_of(x.index({kiln::Slice(0, 8192, 2)}) + 1).form == Form::Elementwise);
  CHECK(kernel_of(x + small_integers({8192, 1}, DType::Float32)).form == Form::Elementwise);
}

GPU_TEST_CASE("schedules: transposes and permutations at odd extents, against the host") {
  for (int64_t rows : {1, 7, 33, 1000, 4097})
    for (int64_t cols : {1, 32, 33, 1000}) {
      Array x = small_integers({rows, cols}, DType::Float32);
      std::string at = std::to_string(rows) + "x" + std::to_string(cols);
      same_on_gpu("x.T * 2 + 1 " + at, x, [](const Array& a) { return a.T() * 2 + 1; });
    }
  Array sq = small_integers({513, 513}, DType::Int64);
  same_on_gpu("x + x.T int64", sq, [](const Array& a) { return a + a.T(); });
  Array c = small_integers({65, 97}, DType::Complex128);
  same_on_gpu("conj(x.T) complex128", c, [](const Array& a) { return kiln::conj(a.T()) * 2; });
  Array s = small_integers({200, 300}, DType::Float64);
  same_on_gpu("a strided slice, transposed", s, [](const Array& a) {
    return a.index({kiln::Slice(1, 200, 3), kiln::Slice(0, 300, 2)}).T() - 1;
  });
  Array y = small_integers({9, 17, 33, 5}, DType::Float32);
  std::vector<int> perm = {0, 1, 2, 3};
  do {
    std::string at = "permutation " + std::to_string(perm[0]) + std::to_string(perm[1]) +
                     std::to_string(perm[2]) + std::to_string(perm[3]);
    same_on_gpu(at, y, [&](const Array& a) { return a.transpose(perm) * 3 - 2; });
  } while (std::next_permutation(perm.begin(), perm.end()));
}

TEST_CASE("explain says which schedule each kernel runs") {
  auto x = matrix(512, 256);
  CHECK(kiln::explain({kiln::sum(x, {0})}).find("schedule: columns") != std::string::npos);
  CHECK(kiln::explain({kiln::sum(x, {1})}).find("schedule: rows") != std::string::npos);
  CHECK(kiln::explain({x.T() * 2}).find("schedule: tiled") != std::string::npos);
  CHECK(kiln::explain({x * 2}).find("schedule: elementwise") != std::string::npos);
}

GPU_TEST_CASE("schedules: softmax and layernorm over rows and columns at odd extents") {
  auto softmax = [](const Array& x, int axis) {
    Array e = kiln::exp(x - kiln::max(x, {axis}, true));
    return e / kiln::sum(e, {axis}, true);
  };
  auto layernorm = [](const Array& x, int axis) {
    Array d = x - kiln::mean(x, {axis}, true);
    return d / kiln::sqrt(kiln::mean(d * d, {axis}, true) + 1e-5);
  };
  const std::vector<Shape> shapes = {{1, 7}, {33, 4097}, {1000, 33}, {7, 50257}, {4097, 1}};
  for (const Shape& s : shapes)
    for (DType t : {DType::Float32, DType::Float64})
      for (int axis : {0, 1}) {
        Array x = small_integers(s, t) * 0.25;
        x.eval();
        Array xd = kiln::asarray(x, kiln::cuda());
        INFO(s[0] << "x" << s[1] << " " << kiln::dtype_name(t) << " axis " << axis);
        double rtol = t == DType::Float32 ? 1e-5 : 1e-12;
        CHECK(kiln::allclose(softmax(xd, axis).get(), softmax(x, axis), rtol, rtol));
        CHECK(kiln::allclose(layernorm(xd, axis).get(), layernorm(x, axis), rtol, 10 * rtol));
      }
}

TEST_CASE("schedules: an empty column reduction is described and launches nothing") {
  // No outputs (the fuzzer's coverage met one): the block shape rule has no columns to divide.
  kiln::codegen::KernelSource k;
  k.form = Form::ReduceColumns;
  k.kept = 0;
  k.row = 5;
  CHECK(kiln::codegen::launch_for(k, kSms).grid_x == 0);
  CHECK(kiln::codegen::describe_schedule(k).find("columns: ") == 0);
}
