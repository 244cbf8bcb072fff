// A reduction broadcast back along the axes it reduced (softmax, layernorm, centring, dividing
// by a norm) runs in one kernel with its consumers (issue 11, item 2): the plans, checked
// against the rules in src/plan/planner.cpp, and the values, against NumPy
// (tests/data/row_fused.txt, written by make_row_fused_fixtures.py) on the host and a GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <kiln/kiln.hpp>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/kernel_source.hpp"
#include "plan/planner.hpp"
#include "plan/row_passes.hpp"
#include "support/gpu.hpp"

namespace {

using kiln::Array;
using kiln::DType;
using kiln::Shape;

struct Case {
  std::string program;
  DType dtype;
  Shape shape;
  int naxes;
  std::vector<std::pair<int64_t, double>> samples;  // flat index, NumPy's value
};

std::vector<Case> read_cases() {
  std::ifstream in(std::string(KILN_TEST_DATA) + "/row_fused.txt");
  REQUIRE_MESSAGE(in.good(), "missing tests/data/row_fused.txt; run make_row_fused_fixtures.py");
  std::vector<Case> cases;
  std::string line, last_head;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    Case c;
    std::string dtype;
    int ndim;
    ls >> c.program >> dtype >> ndim;
    c.dtype = dtype == "float32" ? DType::Float32 : DType::Float64;
    c.shape.resize(ndim);
    for (auto& d : c.shape) ls >> d;
    int64_t index;
    double value;
    ls >> c.naxes >> index >> value;
    std::string head = line.substr(0, line.rfind(' ', line.rfind(' ') - 1));
    if (head != last_head) cases.push_back(c);
    last_head = head;
    cases.back().samples.push_back({index, value});
  }
  REQUIRE(cases.size() > 100);
  return cases;
}

// The fixture's input: x[i] = ((i * 7919) % 13 - 6) * 0.25 + (i % 7) * 0.01 in float64.
Array input(const Shape& shape, DType t) {
  std::vector<double> v(static_cast<size_t>(kiln::shape_size(shape)));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = double(int64_t(i * 7919 % 13) - 6) * 0.25 + double(i % 7) * 0.01;
  return kiln::asarray(v, shape).astype(t).eval();
}

// The last naxes axes, or the first -naxes when naxes < 0 (the fixture's convention).
std::vector<int> trailing(const Array& x, int naxes) {
  std::vector<int> axes;
  for (int a = naxes > 0 ? x.ndim() - naxes : 0; a < (naxes > 0 ? x.ndim() : -naxes); ++a)
    axes.push_back(a);
  return axes;
}

Array softmax(const Array& x, const std::vector<int>& ax) {
  Array e = kiln::exp(x - kiln::max(x, ax, true));
  return e / kiln::sum(e, ax, true);
}
Array layernorm(const Array& x, const std::vector<int>& ax) {
  Array d = x - kiln::mean(x, ax, true);
  return d / kiln::sqrt(kiln::mean(d * d, ax, true) + 1e-5);
}

// The fixture's programs, as a user writes them (make_row_fused_fixtures.py, programs()).
Array program(const std::string& name, const Array& x, int naxes) {
  auto ax = trailing(x, naxes);
  if (name == "softmax") return softmax(x, ax);
  if (name == "layernorm") return layernorm(x, ax);
  if (name == "centre") return x - kiln::mean(x, ax, true);
  if (name == "share") return x / kiln::sum(x * x, ax, true);
  if (name == "unit") return x / kiln::sqrt(kiln::sum(x * x, ax, true));
  REQUIRE(name == "range");
  Array lo = kiln::min(x, ax, true);
  return (x - lo) / (kiln::max(x, ax, true) - lo + 1e-5);
}

// Every case against NumPy at its sampled elements, with x on `device`. Sums run in another
// order than NumPy's pairwise ones, so float32 agrees to a few units in the last place.
void check_against_numpy(const kiln::Device& device) {
  for (const Case& c : read_cases()) {
    Array x = kiln::asarray(input(c.shape, c.dtype), device);
    std::vector<double> got =
        program(c.program, x, c.naxes).astype(DType::Float64).to_vector<double>();
    double rtol = c.dtype == DType::Float32 ? 2e-5 : 1e-12, atol = rtol / 10;
    for (auto [index, want] : c.samples) {
      INFO(c.program << " " << std::string(kiln::dtype_name(c.dtype)) << kiln::shape_str(c.shape)
                     << " over " << c.naxes << " axes, element " << index);
      CHECK(std::abs(got[index] - want) <= atol + rtol * std::abs(want));
    }
  }
}

std::vector<const kiln::plan::FusedGroup*> kernel_groups(const kiln::plan::Plan& p) {
  std::vector<const kiln::plan::FusedGroup*> out;
  for (const auto& s : p.steps)
    if (auto* k = std::get_if<kiln::plan::KernelStep>(&s)) out.push_back(&k->group);
  return out;
}
// The groups point into the plan: a temporary plan would leave them dangling.
std::vector<const kiln::plan::FusedGroup*> kernel_groups(const kiln::plan::Plan&& p) = delete;

kiln::plan::Plan plan_of(const Array& y) { return kiln::plan::make_plan({y.node()}); }

}  // namespace

TEST_CASE("row fusion: NumPy's values on the host") { check_against_numpy(kiln::host()); }

GPU_TEST_CASE("row fusion: NumPy's values on a GPU") { check_against_numpy(kiln::cuda()); }

TEST_CASE("row fusion: softmax and layernorm plan as one kernel that writes only the result") {
  for (Shape s : {Shape{64, 4096}, Shape{1000, 33}, Shape{3, 7, 1}, Shape{4, 5, 6}})
    for (DType t : {DType::Float32, DType::Float64})
      for (int naxes : {1, 2}) {
        if (naxes == 2 && s.size() < 3) continue;
        Array x = input(s, t);
        INFO(kiln::shape_str(s) << " " << std::string(kiln::dtype_name(t)) << " over " << naxes
                                << " axes");
        for (const Array& y : {softmax(x, trailing(x, naxes)), layernorm(x, trailing(x, naxes))}) {
          auto plan = plan_of(y);
          auto groups = kernel_groups(plan);
          REQUIRE(groups.size() == 1);
          CHECK(groups[0]->outputs.size() == 1);
          CHECK(groups[0]->row_axes == trailing(x, naxes));
          std::string text = kiln::explain({y});
          CHECK(text.find("reductions and their broadcast in one kernel") != std::string::npos);
          CHECK(text.find("step 2") == std::string::npos);
        }
      }
}

TEST_CASE("row fusion: short rows whose lanes' shares fit in 32 bytes stay in registers") {
  struct Want {
    Shape shape;
    DType dtype;
    int lanes, vectors;  // per row, and 16-byte vectors per lane (0: not in registers)
  };
  // 2048 float32: a block of 256, 2048 / (256 * 4) = 2 vectors (32 bytes); 33 float32: 8
  // lanes, 2 vectors; 4096 float32: 4 vectors (64 bytes), too many; 1000 float64: a warp, 16
  // vectors of 2; 7 float32: shorter than 32 values.
  for (const Want& w :
       {Want{{64, 2048}, DType::Float32, 256, 2}, Want{{1000, 33}, DType::Float32, 8, 2},
        Want{{64, 4096}, DType::Float32, 256, 0}, Want{{64, 1000}, DType::Float64, 32, 0},
        Want{{64, 7}, DType::Float32, 4, 0}}) {
    INFO(kiln::shape_str(w.shape) << " " << std::string(kiln::dtype_name(w.dtype)));
    auto plan = plan_of(layernorm(input(w.shape, w.dtype), {1}));
    auto groups = kernel_groups(plan);
    REQUIRE(groups.size() == 1);
    auto k = kiln::codegen::generate(*groups[0]);
    CHECK(k.row_threads == w.lanes);
    CHECK(k.row_registers == w.vectors);
    auto l = kiln::codegen::launch_for(k, 132);
    if (w.vectors) {  // the rows of all its lanes at once, no shared memory
      CHECK(l.rows_per_block == 256 / w.lanes);
      CHECK(l.shared_bytes == 0);
    }
    CHECK((kiln::codegen::describe_schedule(k).find("registers") != std::string::npos) ==
          (w.vectors > 0));
  }
}

TEST_CASE("row fusion: long rows take a block of 1024 threads each, staged up to 96 KB") {
  // 512 rows of 12300 float32 (48.05 KB) and of 57344 (224 KB, the longest folded row)
  for (Shape s : {Shape{512, 12300}, Shape{512, 57344}}) {
    Array y = softmax(input(s, DType::Float32), {1});
    auto plan = plan_of(y);
    auto groups = kernel_groups(plan);
    REQUIRE(groups.size() == 1);
    auto k = kiln::codegen::generate(*groups[0]);
    CHECK(k.long_rows);
    CHECK(k.block == 1024);
    CHECK(k.staged_itemsizes == std::vector<int>{4});
    // The launch stages what the device's shared memory holds, up to 96 KB so two blocks
    // share an SM, in whole 16-byte steps (with 16 values more, for the shift to a 16-byte
    // boundary before the row): all of the 12300-value rows, 24560 values of the others.
    auto l = kiln::codegen::launch_for(k, 132, 227 * 1024);
    CHECK(l.block_x == 1024);
    CHECK(l.rows_per_block == 1);
    const int64_t most = (96 * 1024 / 4 - 16) / 16 * 16;
    CHECK(l.staged_length == std::min(s[1], most));
    CHECK(l.shared_bytes == ((l.staged_length + 16) * 4 + 15) / 16 * 16);
    l = kiln::codegen::launch_for(k, 132, 20 * 1024);
    CHECK(l.staged_length == (20 * 1024 / 4 - 16) / 16 * 16);
    CHECK(l.shared_bytes == (l.staged_length + 16) * 4);
    l = kiln::codegen::launch_for(k, 132, 16);  // no room at all: nothing staged
    CHECK(l.staged_length == 0);
    CHECK(l.shared_bytes == 0);
    CHECK(kiln::explain({y}).find("a block of 1024 threads per row") != std::string::npos);
  }
}

// Two inputs of 40000-value rows (313 KB together) stage part of each row; the rest is read in
// place. The values are the host executor's, which stages nothing.
GPU_TEST_CASE("row fusion: long rows staged in part give the host's values") {
  Array hx = input({600, 40000}, DType::Float32), hy = input({600, 40000}, DType::Float32) * 0.5;
  auto program = [](const Array& x, const Array& y) { return x / kiln::sum(x * x, {1}, true) + y; };
  Array want = program(hx, hy);
  {
    auto plan = plan_of(want);
    auto groups = kernel_groups(plan);
    REQUIRE(groups.size() == 1);
    CHECK(kiln::codegen::generate(*groups[0]).staged_itemsizes.size() == 2);
  }
  Array got = program(kiln::asarray(hx, kiln::cuda()), kiln::asarray(hy.eval(), kiln::cuda()));
  auto w = want.to_vector<float>(), g = got.to_vector<float>();
  REQUIRE(w.size() == g.size());
  size_t bad = 0;
  for (size_t i = 0; i < w.size(); ++i) bad += std::abs(w[i] - g[i]) > 1e-5f * std::abs(w[i]);
  CHECK(bad == 0);
}

TEST_CASE("column fusion: centring and batch statistics over leading axes plan as one kernel") {
  // A column of up to 16 KB stays on chip: 4096 float32 or 2048 float64 rows.
  for (auto [s, t] : {std::pair{Shape{256, 100}, DType::Float32},
                      {Shape{128, 4097}, DType::Float64},
                      {Shape{4096, 40}, DType::Float32},
                      {Shape{2048, 3}, DType::Float64},
                      {Shape{7, 1}, DType::Float32},
                      {Shape{4, 5, 6}, DType::Float64}})
    for (int naxes : {-1, -2}) {
      if (naxes == -2 && s.size() < 3) continue;
      Array x = input(s, t);
      INFO(kiln::shape_str(s) << " " << std::string(kiln::dtype_name(t)) << " over " << -naxes
                              << " leading axes");
      auto ax = trailing(x, naxes);
      for (const Array& y : {x - kiln::mean(x, ax, true), layernorm(x, ax), softmax(x, ax)}) {
        auto plan = plan_of(y);
        auto groups = kernel_groups(plan);
        REQUIRE(groups.size() == 1);
        CHECK(groups[0]->outputs.size() == 1);
        CHECK(groups[0]->row_axes == ax);
        auto k = kiln::codegen::generate(*groups[0]);
        CHECK(k.form == kiln::codegen::Form::ColumnFused);
        CHECK(k.staged_itemsizes.size() == 1);
        std::string text = kiln::explain({y});
        CHECK(text.find("reductions down columns and their broadcast in one kernel") !=
              std::string::npos);
        CHECK(text.find("step 2") == std::string::npos);
      }
      // On the host the fused group cuts each column as the reduction alone does: the same bits.
      Array fused = x - kiln::mean(x, ax, true);
      CHECK(kiln::array_equal(fused.eval(), (x - kiln::mean(x, ax, true).eval()).eval()));
    }
}

// The three programs of a middle-axis case written out element by element, in float64: the
// kept coordinates of each element (its reduced ones zeroed) name its column.
std::vector<double> direct(const std::string& name, const Array& x, const std::vector<int>& ax) {
  const std::vector<double> v = x.astype(DType::Float64).to_vector<double>();
  const Shape& s = x.shape();
  std::vector<int64_t> column(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t rest = static_cast<int64_t>(i), key = 0, scale = 1;
    for (int a = static_cast<int>(s.size()) - 1; a >= 0; --a) {
      const int64_t c = rest % s[a];
      rest /= s[a];
      if (std::find(ax.begin(), ax.end(), a) == ax.end()) key += c * scale;
      scale *= s[a];
    }
    column[i] = key;
  }
  std::map<int64_t, double> top, sum, count, squares;
  for (size_t i = 0; i < v.size(); ++i) {
    auto [it, fresh] = top.emplace(column[i], v[i]);
    if (!fresh) it->second = std::max(it->second, v[i]);
    sum[column[i]] += v[i];
    count[column[i]] += 1;
  }
  std::map<int64_t, double> exps;
  for (size_t i = 0; i < v.size(); ++i) {
    const double mean = sum[column[i]] / count[column[i]];
    exps[column[i]] += std::exp(v[i] - top[column[i]]);
    squares[column[i]] += (v[i] - mean) * (v[i] - mean);
  }
  std::vector<double> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t k = column[i];
    const double mean = sum[k] / count[k];
    out[i] = name == "centre"    ? v[i] - mean
             : name == "softmax" ? std::exp(v[i] - top[k]) / exps[k]
                                 : (v[i] - mean) / std::sqrt(squares[k] / count[k] + 1e-5);
  }
  return out;
}

TEST_CASE("column fusion: reductions over middle axes broadcast back plan as one kernel") {
  // The last axis is kept, so neighbouring threads take neighbouring columns as for leading
  // axes; the kept axes before the reduced ones are one more index of the column.
  struct Middle {
    Shape shape;
    std::vector<int> axes;
    DType t;
  };
  for (const Middle& m :
       {Middle{{3, 33, 40}, {1}, DType::Float64}, Middle{{4, 5, 6, 7}, {1, 2}, DType::Float32},
        Middle{{2, 3, 4, 5}, {0, 2}, DType::Float64}, Middle{{5, 7, 3}, {1}, DType::Float32}}) {
    Array x = input(m.shape, m.t);
    INFO(kiln::shape_str(m.shape) << " " << std::string(kiln::dtype_name(m.t)) << " over "
                                  << m.axes.size() << " axes from axis " << m.axes[0]);
    for (const std::string name : {"centre", "softmax", "layernorm"}) {
      Array y = name == "centre"    ? x - kiln::mean(x, m.axes, true)
                : name == "softmax" ? softmax(x, m.axes)
                                    : layernorm(x, m.axes);
      auto plan = plan_of(y);
      auto groups = kernel_groups(plan);
      REQUIRE(groups.size() == 1);
      CHECK(groups[0]->row_axes == m.axes);
      CHECK(kiln::codegen::generate(*groups[0]).form == kiln::codegen::Form::ColumnFused);
      std::string text = kiln::explain({y});
      CHECK(text.find("step 2") == std::string::npos);
      CHECK(text.find("reductions down columns and their broadcast in one kernel") !=
            std::string::npos);
      std::vector<double> got = y.astype(DType::Float64).to_vector<double>();
      std::vector<double> want = direct(name, x, m.axes);
      const double tol = m.t == DType::Float32 ? 2e-5 : 1e-12;
      size_t bad = 0;
      for (size_t i = 0; i < got.size(); ++i)
        bad += std::abs(got[i] - want[i]) > tol * (1 + std::abs(want[i]));
      CHECK_MESSAGE(bad == 0, name);
    }
    // On the host the fused group folds each column as the reduction alone does: the same bits.
    CHECK(kiln::array_equal((x - kiln::mean(x, m.axes, true)).eval(),
                            (x - kiln::mean(x, m.axes, true).eval()).eval()));
  }
}

TEST_CASE(
    "row fusion: softmax folds max then sum; layernorm's mean and mean of squares share a pass") {
  Array x = input({8, 16}, DType::Float32);
  auto passes_of = [](const Array& y) {
    auto plan = plan_of(y);
    auto groups = kernel_groups(plan);
    REQUIRE(groups.size() == 1);
    return kiln::plan::row_passes(*groups[0]);
  };
  CHECK(passes_of(softmax(x, {1})).reducing == 2);    // the sum reads exp(x - max)
  CHECK(passes_of(layernorm(x, {1})).reducing == 2);  // the variance reads x - mean
  Array m = kiln::mean(x, {1}, true);
  Array var_by_moments = kiln::mean(x * x, {1}, true) - m * m;
  auto one_pass = passes_of((x - m) / kiln::sqrt(var_by_moments + 1e-5));
  CHECK(one_pass.reducing == 1);
  CHECK(one_pass.folds(0).size() == 2);
}

TEST_CASE("row fusion: where a row cannot stay on chip or the reduction is needed elsewhere") {
  SUBCASE("long rows too few to fill a GPU, or too long to stage, keep their own kernels") {
    // 32 KB + 4 bytes a row, 3 rows: fewer than the 512 long rows worth a block each
    for (Shape s : {Shape{3, 8193}, Shape{512, 57345}}) {  // 224 KB + 4 bytes a row
      Array x = input(s, DType::Float32);
      auto plan = plan_of(softmax(x, {1}));  // the groups point into it
      auto groups = kernel_groups(plan);
      CHECK(groups.size() == 3);
      for (auto* g : groups) CHECK(g->row_axes.empty());
    }
  }
  SUBCASE("a reduction along the last axis and another one not beside it is not folded") {
    Array x = input({3, 33, 40}, DType::Float64);
    auto plan = plan_of(softmax(x, {0, 2}));
    auto groups = kernel_groups(plan);
    CHECK(groups.size() == 3);
    for (auto* g : groups) CHECK(g->row_axes.empty());
  }
  SUBCASE("columns longer than 16 KB keep their own kernels") {
    for (auto [rows, t] : {std::pair{4097, DType::Float32}, {2049, DType::Float64}}) {
      Array x = input({rows, 40}, t);
      auto plan = plan_of(x - kiln::mean(x, {0}, true));
      auto groups = kernel_groups(plan);
      CHECK(groups.size() == 2);
      for (auto* g : groups) CHECK(g->row_axes.empty());
    }
  }
  SUBCASE("a reduction also requested is written, once") {
    Array x = input({33, 40}, DType::Float64);
    Array m = kiln::max(x, {1}, true);
    Array y = x - m;
    auto plan = kiln::plan::make_plan({y.node(), m.node()});
    auto groups = kernel_groups(plan);
    REQUIRE(groups.size() == 2);
    CHECK(groups[0]->reduction.has_value());
    CHECK(groups[1]->row_axes.empty());
  }
  SUBCASE("read along another axis than it reduced: written, then read back (kiln retries)") {
    // m[j] is the max of row j; x - m broadcasts it along columns, so position (i, j) reads
    // row j's value, not row i's: no row holds what it needs.
    Array x = input({40, 40}, DType::Float64);
    Array m = kiln::max(x, {1});
    Array y = x - m;
    auto plan = plan_of(y);
    auto groups = kernel_groups(plan);
    CHECK(groups.size() == 2);
    auto xs = x.to_vector<double>(), ys = y.to_vector<double>();
    for (int64_t i = 0; i < 40; ++i)
      for (int64_t j = 0; j < 40; ++j) {
        double row_max = xs[j * 40];
        for (int64_t k = 1; k < 40; ++k) row_max = std::max(row_max, xs[j * 40 + k]);
        CHECK(ys[i * 40 + j] == xs[i * 40 + j] - row_max);
      }
  }
}

namespace {
size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}
kiln::codegen::KernelSource kernel_of(const Array& y) {
  auto plan = plan_of(y);
  auto groups = kernel_groups(plan);
  REQUIRE(groups.size() == 1);
  return kiln::codegen::generate(*groups[0]);
}
}  // namespace

TEST_CASE("row fusion: a staged row keeps softmax's exp(x - max) for its last pass") {
  // Rows staged in shared memory (not registers): the sum's pass stores exp(x - max) over the
  // staged x, which no later pass reads, and the last pass divides what it loads. Each pass
  // has a 16-byte branch and a one-by-one branch, so exp appears twice, not four times.
  for (DType t : {DType::Float32, DType::Float64}) {
    INFO(std::string(kiln::dtype_name(t)));
    Array x = input({64, 4096}, t);
    auto k = kernel_of(softmax(x, {1}));
    REQUIRE(k.form == kiln::codegen::Form::RowFused);
    REQUIRE(k.row_registers == 0);
    CHECK(count_of(k.source, t == DType::Float32 ? "= expf(" : "= exp(") == 2);
    CHECK(count_of(k.source, "kiln::store<" + std::to_string(k.vec) + ">(sm0") == 1);
    CHECK(k.row_kept);
    CHECK(kiln::explain({softmax(x, {1})}).find("kept there for the next") != std::string::npos);
    // x is read again by the last pass: nothing is free to hold exp, so it is recomputed.
    auto again = kernel_of(softmax(x, {1}) + x);
    CHECK(count_of(again.source, t == DType::Float32 ? "= expf(" : "= exp(") == 4);
    CHECK(count_of(again.source, "kiln::store<" + std::to_string(k.vec) + ">(sm0") == 0);
    CHECK(!again.row_kept);
  }
  // Rows whose length is not a multiple of the vector width take the one-by-one branch at run
  // time, which keeps the value too.
  auto odd = kernel_of(softmax(input({64, 4095}, DType::Float32), {1}));
  REQUIRE(odd.row_registers == 0);
  CHECK(count_of(odd.source, "sm0[q * r + j] = t") == 1);
}

// Columns on a GPU against the host executor, at the extents where tiles and rows of threads
// run out (1, 7, 8, 9 and 256 rows; 1, 31, 32, 33 and 1000 columns), through a transposed view
// (its columns are contiguous in memory), with two inputs staged and with per-column weights
// read in place.
namespace {

// Column groups staging two or three inputs, from GPU fuzz seeds 5695, 7146 and 7651: 48 KB of
// tiles and the merges' static arrays passed the 48 KB a block may have, and the launch failed.
std::vector<Array> many_staged_columns(kiln::Device d) {
  Array a = kiln::asarray(input({32, 3, 2, 1}, DType::Float32), d);
  Array b = kiln::exp(kiln::asarray(input({8, 8, 1, 1}, DType::Float64), d));
  Array c = kiln::asarray(input({3, 32, 32}, DType::Float64), d);
  Array w = kiln::asarray(input({32}, DType::Float64), d);
  Array centred = b - kiln::mean(b, {1}, false);
  return {a <= kiln::min(a, {-2, 0, 1}, false),
          centred / (kiln::mean(centred * centred, {1}, false) + 0.25),
          w * (c - kiln::mean(c, {0, 1}, false))};
}

}  // namespace

TEST_CASE("column fusion: staged tiles leave room for the merges in 48 KB of shared memory") {
  for (const Array& y : many_staged_columns(kiln::host())) {
    const auto plan = plan_of(y);
    for (const auto* g : kernel_groups(plan)) {
      auto k = kiln::codegen::generate(*g);
      if (k.form != kiln::codegen::Form::ColumnFused) continue;
      CHECK(kiln::codegen::launch_for(k, 132).shared_bytes <= 32 * 1024);
    }
  }
}

TEST_CASE("column fusion: tall tiles take a cluster of blocks, each staging a slice of rows") {
  using kiln::codegen::launch_for;
  auto column_kernel = [](const Array& y) {
    const auto plan = plan_of(y);
    auto groups = kernel_groups(plan);
    REQUIRE(groups.size() == 1);
    auto k = kiln::codegen::generate(*groups[0]);
    REQUIRE(k.form == kiln::codegen::Form::ColumnFused);
    return k;
  };
  const int64_t optin = 227 * 1024 - 8 * 1024;  // an H200's opt-in, less static arrays
  // A tile of 32 KB or less: one block, the whole column staged, no cluster.
  auto small = launch_for(column_kernel(layernorm(input({256, 100}, DType::Float32), {0})), 132,
                          optin, true);
  CHECK(small.cluster == 1);
  CHECK(small.staged_length == 256);
  CHECK(small.shared_bytes == 256 * 32 * 4);
  CHECK(small.grid_x == 4);  // 100 columns: 4 tiles
  // 4096 float32 rows: 512 KB a tile, 8 blocks of 512 rows (64 KB) each, 8 blocks per tile.
  auto tall = column_kernel(layernorm(input({4096, 100}, DType::Float32), {0}));
  auto c = launch_for(tall, 132, optin, true);
  CHECK(c.cluster == 8);
  CHECK(c.staged_length == 512);
  CHECK(c.shared_bytes == 64 * 1024);
  CHECK(c.grid_x == 4 * 8);
  // Without clusters a block stages what fits in 32 KB (256 rows) and reads the rest in place.
  auto alone = launch_for(tall, 132, optin, false);
  CHECK(alone.cluster == 1);
  CHECK(alone.staged_length == 256);
  CHECK(alone.grid_x == 4);
  // 600 rows: 75 KB, two blocks of 300 rows.
  auto two =
      launch_for(column_kernel(softmax(input({600, 33}, DType::Float32), {0})), 132, optin, true);
  CHECK(two.cluster == 2);
  CHECK(two.staged_length == 300);
  // Two float64 inputs of 1024 rows: 512 KB a tile, all a cluster holds: 8 blocks of 128 rows.
  Array x = input({1024, 40}, DType::Float64), y = (x * 0.5 + 1).eval();
  auto both = column_kernel(x / kiln::sum(x * y, {0}, true) - y);
  REQUIRE(both.staged_itemsizes.size() == 2);
  auto b = launch_for(both, 132, optin, true);
  CHECK(b.cluster == 8);
  CHECK(b.staged_length == 128);
  CHECK(b.shared_bytes == 2 * 128 * 32 * 8);
  // At 2048 rows only the first fits the cluster: y is read in place.
  Array x2 = input({2048, 40}, DType::Float64), y2 = (x2 * 0.5 + 1).eval();
  CHECK(column_kernel(x2 / kiln::sum(x2 * y2, {0}, true) - y2).staged_itemsizes.size() == 1);
  // A device with less shared memory stages part of each slice (32 KB: 64 of 128 rows).
  auto less = launch_for(both, 132, 32 * 1024, true);
  CHECK(less.staged_length == 64);
}

GPU_TEST_CASE("column fusion: groups staging several inputs launch and give the host's values") {
  std::vector<Array> host = many_staged_columns(kiln::host()),
                     gpu = many_staged_columns(kiln::cuda());
  for (size_t i = 0; i < host.size(); ++i) CHECK(kiln::allclose(gpu[i].get(), host[i], 1e-5, 1e-6));
}

GPU_TEST_CASE("column fusion: the GPU gives the host's values at odd extents and through views") {
  auto near = [](const Array& want, const Array& got, double rtol) {
    auto w = want.astype(DType::Float64).to_vector<double>();
    auto g = got.astype(DType::Float64).to_vector<double>();
    REQUIRE(w.size() == g.size());
    size_t bad = 0;
    for (size_t i = 0; i < w.size(); ++i)
      bad += std::abs(w[i] - g[i]) > rtol * (1 + std::abs(w[i]));
    return bad;
  };
  for (DType t : {DType::Float32, DType::Float64})
    for (int64_t rows : {1, 7, 8, 9, 128})
      for (int64_t cols : {1, 31, 32, 33, 1000}) {
        INFO(rows << "x" << cols << " " << std::string(kiln::dtype_name(t)));
        const double rtol = t == DType::Float32 ? 1e-5 : 1e-12;
        Array hx = input({rows, cols}, t), hw = input({1, cols}, t) + 2;
        Array dx = kiln::asarray(hx, kiln::cuda()), dw = kiln::asarray(hw, kiln::cuda());
        CHECK(near(layernorm(hx, {0}) * hw, layernorm(dx, {0}) * dw, rtol) == 0);
        CHECK(near(softmax(hx, {0}), softmax(dx, {0}), rtol) == 0);
        Array hy = hx * 0.5 + 1, dy = dx * 0.5 + 1;
        auto two = [](const Array& x, const Array& y) {
          return x / kiln::sum(x * y, {0}, true) - y;
        };
        CHECK(near(two(hx, hy.eval()), two(dx, dy.eval()), rtol) == 0);
        Array hxt = input({cols, rows}, t), dxt = kiln::asarray(hxt, kiln::cuda());
        CHECK(near(softmax(hxt.T(), {0}), softmax(dxt.T(), {0}), rtol) == 0);
      }
  // Tall columns: a cluster of blocks per tile (257 rows: one block opting in to 33 KB; 600: two;
  // 1000: eight uneven slices; 4095 and 4096 float32, 2048 float64: eight, the whole column on
  // chip); with two inputs, the second of 2048 float64 rows read in place.
  for (DType t : {DType::Float32, DType::Float64})
    for (int64_t rows : {257, 600, 1000, 2048, 4095, 4096})
      for (int64_t cols : {1, 33, 100}) {
        if (t == DType::Float64 && rows > 2048) continue;
        INFO(rows << "x" << cols << " " << std::string(kiln::dtype_name(t)));
        const double rtol = t == DType::Float32 ? 1e-5 : 1e-12;
        Array hx = input({rows, cols}, t), dx = kiln::asarray(hx, kiln::cuda());
        CHECK(near(layernorm(hx, {0}), layernorm(dx, {0}), rtol) == 0);
        CHECK(near(softmax(hx, {0}), softmax(dx, {0}), rtol) == 0);
        Array hy = (hx * 0.5 + 1).eval(), dy = (dx * 0.5 + 1).eval();
        CHECK(near(hx / kiln::sum(hx * hy, {0}, true) - hy, dx / kiln::sum(dx * dy, {0}, true) - dy,
                   rtol) == 0);
      }
  Array ht = input({3, 1500, 40}, DType::Float32), dt = kiln::asarray(ht, kiln::cuda());
  CHECK(near(layernorm(ht, {1}), layernorm(dt, {1}), 1e-5) == 0);
  // Rank 3 over the two leading axes (150 rows of each column).
  Array h3 = input({3, 50, 70}, DType::Float32), d3 = kiln::asarray(h3, kiln::cuda());
  CHECK(near(layernorm(h3, {0, 1}), layernorm(d3, {0, 1}), 1e-5) == 0);
  // Middle axes: columns that restart at each index of the axes before them, at odd extents
  // (tiles of 32 columns that straddle two of them).
  for (auto [s, ax] : {std::pair{Shape{3, 50, 70}, std::vector<int>{1}},
                       {Shape{7, 9, 33}, {1}},
                       {Shape{5, 4, 6, 3}, {1, 2}},
                       {Shape{2, 3, 4, 31}, {0, 2}}}) {
    INFO(kiln::shape_str(s) << " over axis " << ax[0]);
    Array hm = input(s, DType::Float32), dm = kiln::asarray(hm, kiln::cuda());
    CHECK(near(layernorm(hm, ax), layernorm(dm, ax), 1e-5) == 0);
    CHECK(near(softmax(hm, ax), softmax(dm, ax), 1e-5) == 0);
  }
}
