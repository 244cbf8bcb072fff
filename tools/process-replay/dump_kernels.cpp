// kiln-dump-kernels OUTDIR: "process replay" for kiln (the idea is tinygrad's). Plans a fixed,
// deterministic set of programs and writes, for each kernel step, the generated CUDA source
// with its schedule and launch shape (one file per kernel, named by program and step index),
// plus programs.txt: every program's steps and a checksum of its host-evaluated outputs, lazy
// and eager. scripts/process-replay builds this at two commits and diffs the directories, so a
// refactor of graph/plan/codegen shows every kernel it changed. No GPU is needed.
//
// This file is compiled against older commits too (scripts/process-replay builds it in a
// worktree of the base), so it uses only the public API and the few internal entry points
// gathered in "The engine's internals" below: keep those stable, or adapt them in one place.
#include <kiln/kiln.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "codegen/kernel_source.hpp"
#include "plan/planner.hpp"
// Every Math row of the op table is replayed too, so an op added as a row is covered without
// editing this list. A base from before the table compiles without them.
#if __has_include("graph/op_table.hpp")
#include "graph/op_table.hpp"
#define KILN_DUMP_HAS_OP_TABLE 1
#endif

namespace {

using kiln::Array;
using kiln::DType;
using kiln::Shape;
using kiln::Slice;
namespace fs = std::filesystem;

struct Program {
  std::string name;
  std::function<std::vector<Array>()> build;  // builds inputs and outputs, lazily
  bool evaluate = true;  // false: too big to run on the host; its kernels are still dumped
};

// ---- The engine's internals: the only non-public API the dumper touches ------------------

constexpr int kSms = 132;  // an H200's SM count, for the launch shapes

std::string launch_text(const kiln::codegen::KernelSource& k) {
  auto l = kiln::codegen::launch_for(k, kSms);
  std::ostringstream o;
  o << "// name: " << k.name << "\n// summary: " << k.summary << "\n// dtypes: " << k.dtypes
    << "\n// schedule: " << kiln::codegen::describe_schedule(k) << "\n// form " << int(k.form)
    << ", vec " << k.vec << ", index64 " << k.index64 << ", kept " << k.kept << ", row " << k.row
    << ", tile_axis " << k.tile_axis << ", partial_bytes " << k.partial_bytes << ", row_threads "
    << k.row_threads << "\n// args:";
  for (const auto& a : k.args) o << " " << int(a.kind) << ":" << a.index;
  o << "\n// access kinds:";
  for (auto a : k.access_kinds) o << " " << int(a);
  o << "\n// staged itemsizes:";
  for (int s : k.staged_itemsizes) o << " " << s;
  o << "\n// launch on " << kSms << " SMs: grid " << l.grid_x << " x " << l.grid_y << ", block "
    << l.block_x << " x " << l.block_y << ", partials " << l.partials << ", counters " << l.counters
    << ", count " << l.count << ", rows_per_block " << l.rows_per_block << ", shared_bytes "
    << l.shared_bytes << "\n";
  return o.str();
}

std::string join(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

// One line per step, and one file per kernel step: OUT/<program>.step<NN>.cu.
std::string dump_plan(const std::vector<Array>& outputs, const std::string& name,
                      const fs::path& out) {
  std::vector<kiln::graph::NodeRef> nodes;
  for (const auto& a : outputs) nodes.push_back(a.node());
  auto plan = kiln::plan::make_plan(nodes);
  std::ostringstream steps;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    char idx[24];
    std::snprintf(idx, sizeof idx, "%02zu", i);
    steps << "  step " << idx << ": ";
    if (auto* k = std::get_if<kiln::plan::KernelStep>(&plan.steps[i])) {
      auto src = kiln::codegen::generate(k->group);
      steps << "kernel " << src.name << "\n";
      std::ofstream(out / (name + ".step" + idx + ".cu")) << launch_text(src) << "\n" << src.source;
    } else if (auto* f = std::get_if<kiln::plan::FftStep>(&plan.steps[i])) {
      steps << "fft " << f->in << " -> " << f->out << " kind " << int(f->kind) << " axes "
            << join(f->axes) << " inverse " << f->inverse << " scale " << f->scale << "\n";
    } else if (auto* r = std::get_if<kiln::plan::RandomStep>(&plan.steps[i])) {
      steps << "random -> " << r->out << " dist " << int(r->dist) << " seed " << r->seed
            << " offset " << r->offset << "\n";
    } else if (auto* c = std::get_if<kiln::plan::CopyStep>(&plan.steps[i])) {
      steps << "copy " << c->src << " -> " << c->dst << "\n";
    } else if (auto* u = std::get_if<kiln::plan::ScanStep>(&plan.steps[i])) {
      steps << kiln::graph::op_name(u->op) << " " << u->in << " -> " << u->out << "\n";
    } else if (auto* o = std::get_if<kiln::plan::SortStep>(&plan.steps[i])) {
      steps << kiln::graph::op_name(o->op) << " " << o->in << " -> " << o->out << " " << o->rows
            << "x" << o->n << "\n";
    } else if (auto* m = std::get_if<kiln::plan::MatmulStep>(&plan.steps[i])) {
      steps << kiln::plan::describe(*m, plan) << " " << m->a.buffer << "+" << m->a.offset << " "
            << m->b.buffer << "+" << m->b.offset << " -> " << m->out << "\n";
    } else if (auto* t = std::get_if<kiln::plan::ScatterStep>(&plan.steps[i])) {
      steps << "scatter " << kiln::graph::op_name(t->op) << " " << t->x << " " << t->positions
            << " " << t->values << " -> " << t->out << "\n";
    } else {
      steps << "free " << std::get<kiln::plan::FreeStep>(plan.steps[i]).buffer << "\n";
    }
  }
  return steps.str();
}

// ---- results ------------------------------------------------------------------------------

uint64_t fnv1a(const void* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i)
    h = (h ^ static_cast<const unsigned char*>(p)[i]) * 1099511628211ull;
  return h;
}

// "float32(33, 65) 8c1f..." per output: the dtype, the shape and the value's bytes.
std::string checksums(const std::vector<Array>& outputs) {
  kiln::eval(outputs);
  std::string s;
  for (const auto& a : outputs) {
    char h[20];
    std::snprintf(h, sizeof h, "%016llx",
                  static_cast<unsigned long long>(fnv1a(a.data(), size_t(a.nbytes()))));
    s += std::string(s.empty() ? "" : " ") + kiln::dtype_name(a.dtype()) +
         kiln::shape_str(a.shape()) + ":" + h;
  }
  return s;
}

// Runs f; an exception becomes its message, so a program kiln rejects is a result too.
std::string attempt(const std::function<std::string()>& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    std::string what = e.what();
    return "error: " + what.substr(0, what.find('\n'));
  }
}

std::string run_program(const Program& p, const fs::path& out) {
  std::string text = p.name + "\n";
  std::vector<Array> outputs;
  std::string built = attempt([&] {
    outputs = p.build();
    return std::string();
  });
  if (!built.empty()) return text + "  build " + built + "\n";
  text += attempt([&] { return dump_plan(outputs, p.name, out); });
  if (!p.evaluate) return text + "  (not evaluated)\n";
  std::string lazy = attempt([&] { return checksums(outputs); });
  outputs.clear();
  std::string eager = attempt([&] {
    kiln::EagerScope scope;
    return checksums(p.build());
  });
  text += "  lazy:  " + lazy + "\n";
  text += "  eager: " + (eager == lazy ? std::string("same") : eager) + "\n";
  return text;
}

// ---- inputs -------------------------------------------------------------------------------

// Small integers (-6 .. 6, or 1 .. 13 when positive) in memory: sums of them are exact in any
// order, and a constant would be read as a broadcast scalar, another layout.
Array data(const Shape& s, DType t, int salt = 0, bool positive = false) {
  std::vector<double> v(static_cast<size_t>(kiln::shape_size(s)));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = double((i * 7919 + size_t(salt) * 104729) % 13) + (positive ? 1 : -6);
  return kiln::asarray(v, s).astype(t).eval();
}

std::string shape_name(const Shape& s) {
  std::string n;
  for (auto d : s) n += (n.empty() ? "" : "x") + std::to_string(d);
  return n.empty() ? "scalar" : n;
}

const char* dt(DType t) { return kiln::dtype_name(t); }

// ---- the programs -------------------------------------------------------------------------

void examples(std::vector<Program>& ps) {
  // README: randint, a fused elementwise chain, fftn and a full max.
  ps.push_back({"readme", [] {
                  kiln::random::Generator g(0);
                  auto a = g.randint(0, 255, {2000, 2000});
                  auto y = kiln::sin(a) * 2 + kiln::cos(a) / 3;
                  return std::vector<Array>{y, kiln::fft::fftn(a), kiln::max(y)};
                }});
  // examples/fusion_graph.cpp
  ps.push_back({"fusion_graph", [] {
                  auto x = kiln::arange(0, 4096, 1, DType::Float32).reshape({64, 64}).eval();
                  auto y = kiln::full({64}, 0.5f, DType::Float32).eval();
                  auto t = kiln::sin(x * 2 + 1) * kiln::cos(y);
                  auto chain = kiln::exp(-(t * t + y / 3)) - x;
                  auto norm = (x - kiln::mean(x, {1}, true)) / kiln::max(kiln::abs(x));
                  return std::vector<Array>{chain, norm};
                }});
  // examples/eager_vs_fused.cpp's four expressions, at the host table's size.
  auto inputs = [] {
    kiln::random::Generator g(0);
    int64_t n = int64_t{1} << 16;
    auto x = g.uniform(0, 1, {n}, DType::Float32).eval();
    auto y = g.uniform(0, 1, {n}, DType::Float32).eval();
    return std::pair{x, y};
  };
  ps.push_back({"eager_vs_fused.chain", [=] {
                  auto [x, y] = inputs();
                  auto t = x * 2 + 1;
                  t = kiln::sin(t) * kiln::cos(y);
                  t = t * t + y / 3;
                  return std::vector<Array>{kiln::exp(-t) - x};
                }});
  ps.push_back({"eager_vs_fused.rownorm", [=] {
                  auto m = inputs().first.reshape({64, 1024});
                  return std::vector<Array>{(m - kiln::mean(m, {1}, true)) /
                                            (kiln::max(m, {1}, true) + 1e-6f)};
                }});
  ps.push_back({"eager_vs_fused.sum_exp", [=] {
                  auto [x, y] = inputs();
                  return std::vector<Array>{kiln::sum(kiln::exp(-x * x) * y)};
                }});
  ps.push_back({"eager_vs_fused.where", [=] {
                  auto [x, y] = inputs();
                  return std::vector<Array>{kiln::where(x > y, x - y, 0)};
                }});
  // examples/embedding.cpp: statistics of a vector, a row sum of two matrices, softplus.
  ps.push_back({"embedding.statistics", [] {
                  std::vector<float> s(1000);
                  for (size_t i = 0; i < s.size(); ++i) s[i] = float(i % 17) * 0.5f;
                  auto x = kiln::asarray(s);
                  auto centred = x - kiln::mean(x);
                  return std::vector<Array>{kiln::sqrt(kiln::mean(centred * centred)),
                                            kiln::mean(x), kiln::max(x), kiln::sum(x)};
                }});
  ps.push_back({"embedding.rows", [] {
                  auto a = data({3, 4}, DType::Float64), b = data({4, 3}, DType::Float64, 1).T();
                  return std::vector<Array>{kiln::sum(a * b + 1, {1})};
                }});
  auto softplus_x = [] {
    int64_t half = 1 << 9;
    return kiln::arange(-half, half, 1, DType::Float32) * (4.0 / half);
  };
  ps.push_back({"embedding.softplus_user", [=] {
                  auto x = softplus_x();
                  auto sp = kiln::elementwise("x > 20.f ? x : log1pf(expf(x))", {{"x", x * 2}},
                                              DType::Float32);
                  return std::vector<Array>{kiln::sum(sp * kiln::cos(x) + 1)};
                }});
  ps.push_back({"embedding.softplus_builtin", [=] {
                  auto x = softplus_x();
                  return std::vector<Array>{
                      kiln::sum(kiln::log(kiln::exp(x * 2) + 1) * kiln::cos(x) + 1)};
                }});
  // examples/seed_tour.cpp: randint on the host, its fftn and max.
  ps.push_back({"seed_tour", [] {
                  kiln::random::Generator g(1);
                  auto a = g.randint(0, 255, {400, 400}).eval();
                  return std::vector<Array>{kiln::fft::fftn(a), kiln::max(a), kiln::sum(a + a)};
                }});
}

void row_programs(std::vector<Program>& ps) {
  // Rows folded into one kernel (short and long rows, odd extents) and rows past 32 KB.
  for (Shape s : {Shape{4, 7}, Shape{33, 65}, Shape{128, 1000}, Shape{3, 5000}, Shape{8, 10000}})
    for (DType t : {DType::Float32, DType::Float64}) {
      std::string suffix = "." + shape_name(s) + "." + dt(t);
      ps.push_back({"softmax" + suffix, [=] {
                      auto x = data(s, t);
                      auto e = kiln::exp(x - kiln::max(x, {-1}, true));
                      return std::vector<Array>{e / kiln::sum(e, {-1}, true)};
                    }});
      ps.push_back({"layernorm" + suffix, [=] {
                      auto x = data(s, t);
                      auto d = x - kiln::mean(x, {-1}, true);
                      return std::vector<Array>{d /
                                                kiln::sqrt(kiln::mean(d * d, {-1}, true) + 1e-5)};
                    }});
      ps.push_back({"centre_rows" + suffix, [=] {
                      auto x = data(s, t);
                      return std::vector<Array>{x - kiln::mean(x, {-1}, true)};
                    }});
      ps.push_back({"centre_cols" + suffix, [=] {
                      auto x = data(s, t);
                      return std::vector<Array>{x - kiln::mean(x, {0}, true)};
                    }});
      ps.push_back({"l2norm_rows" + suffix, [=] {
                      auto x = data(s, t);
                      return std::vector<Array>{x / kiln::sqrt(kiln::sum(x * x, {-1}, true))};
                    }});
    }
  ps.push_back({"mean_and_meansq.33x65.float32", [] {
                  auto x = data({33, 65}, DType::Float32);
                  auto m = kiln::mean(x, {1}, true);
                  return std::vector<Array>{(x - m) / kiln::mean(x * x, {1}, true)};
                }});
}

using Reducer = std::function<Array(const Array&, std::vector<int>)>;

// An empty list here is a full reduction: no axes given to kiln (an empty kiln::Axes would
// reduce none).
template <class F>
Array all_or(F f, const Array& a, const std::vector<int>& ax) {
  return ax.empty() ? f(a, {}, false) : f(a, ax, false);
}

void reductions(std::vector<Program>& ps) {
  std::vector<std::pair<std::string, Reducer>> ops = {
      {"sum", [](const Array& a, std::vector<int> ax) { return all_or(kiln::sum, a, ax); }},
      {"prod", [](const Array& a, std::vector<int> ax) { return all_or(kiln::prod, a, ax); }},
      {"max", [](const Array& a, std::vector<int> ax) { return all_or(kiln::max, a, ax); }},
      {"min", [](const Array& a, std::vector<int> ax) { return all_or(kiln::min, a, ax); }},
      {"mean", [](const Array& a, std::vector<int> ax) { return all_or(kiln::mean, a, ax); }},
      {"any", [](const Array& a, std::vector<int> ax) { return all_or(kiln::any, a, ax); }},
      {"all", [](const Array& a, std::vector<int> ax) { return all_or(kiln::all, a, ax); }},
      {"argmax",
       [](const Array& a, std::vector<int> ax) {
         return ax.empty() ? kiln::argmax(a) : kiln::argmax(a, ax[0]);
       }},
      {"argmin",
       [](const Array& a, std::vector<int> ax) {
         return ax.empty() ? kiln::argmin(a) : kiln::argmin(a, ax[0]);
       }},
  };
  // Odd extents, warp-sized rows, rows shorter than a warp, few long rows (split over blocks),
  // few columns over many rows (split over blocks).
  std::vector<Shape> shapes = {{5, 33}, {64, 1024}, {1000, 3}, {4, 65537}, {65536, 16}};
  std::vector<std::pair<std::string, std::vector<int>>> axes = {
      {"full", {}}, {"rows", {1}}, {"cols", {0}}};
  for (DType t : kiln::kAllDTypes)
    for (const auto& [op, f] : ops)
      for (const auto& s : shapes)
        for (const auto& [an, ax] : axes)
          ps.push_back({"reduce." + op + "." + an + "." + shape_name(s) + "." + dt(t),
                        [=, f = f, ax = ax] { return std::vector<Array>{f(data(s, t), ax)}; }});
  // Rank 3: a middle axis (columns), the two last merged (one row), keepdims, a prologue.
  for (DType t : {DType::Float64, DType::Int32})
    for (auto ax : std::vector<std::vector<int>>{{1}, {1, 2}, {0, 2}, {0}}) {
      ps.push_back({"reduce.sum.rank3_" + join(ax) + "." + dt(t), [=] {
                      return std::vector<Array>{kiln::sum(data({8, 16, 64}, t), ax, true)};
                    }});
    }
  ps.push_back({"reduce.sum.prologue_transpose", [] {
                  auto x = data({256, 256}, DType::Float32);
                  return std::vector<Array>{kiln::sum(x + x.T(), {1}), kiln::sum(x.T(), {0})};
                }});
  ps.push_back({"reduce.sum.exp_prologue", [] {
                  auto x = data({1 << 16}, DType::Float32);
                  return std::vector<Array>{kiln::sum(kiln::exp(-x * x))};
                }});
  ps.push_back({"reduce.empty_rows", [] {
                  return std::vector<Array>{kiln::sum(data({0, 5}, DType::Float32), {1})};
                }});
}

void views(std::vector<Program>& ps) {
  for (Shape s : {Shape{33, 65}, Shape{256, 256}, Shape{1, 7}})
    for (DType t : {DType::Float32, DType::Float64, DType::Int32, DType::Complex128, DType::Bool})
      ps.push_back({"transpose." + shape_name(s) + "." + dt(t), [=] {
                      auto x = data(s, t);
                      return std::vector<Array>{x.T(), kiln::abs(x.T())};
                    }});
  std::vector<std::vector<int>> perms3 = {{0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (const auto& p : perms3)
    ps.push_back({"permute3." + join(p), [=] {
                    auto x = data({4, 5, 6}, DType::Float32);
                    return std::vector<Array>{x.transpose(p) * 2};
                  }});
  std::vector<std::vector<int>> perms4 = {
      {3, 2, 1, 0}, {0, 1, 3, 2}, {0, 2, 1, 3}, {2, 3, 0, 1}, {1, 3, 0, 2}};
  for (const auto& p : perms4)
    ps.push_back({"permute4." + join(p), [=] {
                    auto x = data({3, 4, 33, 40}, DType::Float64);
                    return std::vector<Array>{x.transpose(p) + 1};
                  }});
  ps.push_back({"slice.step2_3", [] {
                  auto x = data({33, 65}, DType::Float32);
                  return std::vector<Array>{
                      x(Slice(1, std::nullopt, 2), Slice(std::nullopt, std::nullopt, 3)) * 2};
                }});
  ps.push_back({"slice.reversed", [] {
                  auto x = data({33, 65}, DType::Int64);
                  return std::vector<Array>{
                      x(Slice(std::nullopt, std::nullopt, -1), Slice(3, 40, -2)) + 1};
                }});
  ps.push_back({"slice.index_and_transpose", [] {
                  auto x = data({6, 33, 65}, DType::Float32);
                  return std::vector<Array>{x(int64_t{2}).T() - 1,
                                            x(Slice(1, 5), Slice(std::nullopt, std::nullopt, 4))};
                }});
  ps.push_back({"slice.transposed_slice", [] {
                  auto x = data({256, 200}, DType::Float32);
                  return std::vector<Array>{x(Slice(5, 250), Slice(3, 197, 2)).T() * 3};
                }});
  ps.push_back({"reshape.chain", [] {
                  auto x = data({12, 10}, DType::Int32);
                  return std::vector<Array>{(x.reshape({3, 4, 10}) * 2).reshape({-1, 5})};
                }});
  ps.push_back({"broadcast.row_col_scalar", [] {
                  auto x = data({33, 65}, DType::Float32);
                  auto row = data({65}, DType::Float32, 1), col = data({33, 1}, DType::Float32, 2);
                  auto s = data({}, DType::Float32, 3);
                  return std::vector<Array>{x + row, x * col - s, row.broadcast_to({7, 65})};
                }});
  ps.push_back({"broadcast.mixed_dtypes", [] {
                  auto a = data({33, 1}, DType::Int32), b = data({65}, DType::Float64, 1);
                  return std::vector<Array>{a + b, a < b};
                }});
  for (DType t : {DType::Float32, DType::Int64, DType::Complex64})
    ps.push_back({std::string("outer.") + dt(t), [=] {
                    auto a = data({129}, t), b = data({67}, t, 1);
                    return std::vector<Array>{a.reshape({-1, 1}) * b.reshape({1, -1})};
                  }});
  // Gathers by an index array (take, take_along_axis): an index map read in the consumer.
  ps.push_back({"take.flat_f32", [] {
                  auto x = data({4097}, DType::Float32);
                  auto i = kiln::asarray(std::vector<int64_t>{5, -1, 4096, 0, 77, 5, 3000});
                  return std::vector<Array>{kiln::take(x, i), kiln::take(x * 2, i) + 1};
                }});
  // The modes' index maps: Clip clamps, Wrap takes a remainder (Raise above: a range check).
  ps.push_back({"take.clip_f32", [] {
                  auto x = data({4097}, DType::Float32);
                  auto i = kiln::asarray(std::vector<int64_t>{5, -1, 4096, 0, 77, 5, 3000});
                  return std::vector<Array>{kiln::take(x, i, 0, kiln::TakeMode::Clip)};
                }});
  ps.push_back({"take.wrap_f32", [] {
                  auto x = data({4097}, DType::Float32);
                  auto i = kiln::asarray(std::vector<int64_t>{5, -1, 4096, 0, 77, 5, 3000});
                  return std::vector<Array>{kiln::take(x, i, 0, kiln::TakeMode::Wrap)};
                }});
  ps.push_back({"take.axis1_f64", [] {
                  auto x = data({33, 65}, DType::Float64);
                  auto i = kiln::asarray(std::vector<int32_t>{64, 0, -3, 7});
                  return std::vector<Array>{kiln::take(x, i, 1)};
                }});
  // Index widths: more than 2^31 elements, planned but not run on the host.
  ps.push_back({"huge.broadcast_add",
                [] {
                  auto x = data({1, 65536}, DType::Float32);
                  return std::vector<Array>{x.broadcast_to({65536, 65536}) + 1};
                },
                false});
  ps.push_back({"huge.sum_rows",
                [] {
                  auto x = data({65536}, DType::Float32);
                  return std::vector<Array>{kiln::sum(x.broadcast_to({65536, 65536}), {1})};
                },
                false});
}

void elementwise(std::vector<Program>& ps) {
  using U = std::function<Array(const Array&)>;
  std::vector<std::pair<std::string, U>> unary = {
      {"abs", kiln::abs},     {"sqrt", kiln::sqrt}, {"exp", kiln::exp},   {"log", kiln::log},
      {"sin", kiln::sin},     {"cos", kiln::cos},   {"tan", kiln::tan},   {"tanh", kiln::tanh},
      {"floor", kiln::floor}, {"ceil", kiln::ceil}, {"real", kiln::real}, {"imag", kiln::imag},
      {"conj", kiln::conj},
  };
  // Custom rows with an argument of their own (the loop below adds Math rows only).
  unary.push_back({"gelu", [](const Array& a) { return kiln::gelu(a); }});
  unary.push_back(
      {"gelu_tanh", [](const Array& a) { return kiln::gelu(a, kiln::GeluApproximate::Tanh); }});
  using B = std::function<Array(const Array&, const Array&)>;
  std::vector<std::pair<std::string, B>> binary = {
      {"add", [](const Array& a, const Array& b) { return a + b; }},
      {"sub", [](const Array& a, const Array& b) { return a - b; }},
      {"mul", [](const Array& a, const Array& b) { return a * b; }},
      {"div", [](const Array& a, const Array& b) { return a / b; }},
      {"eq", [](const Array& a, const Array& b) { return a == b; }},
      {"ne", [](const Array& a, const Array& b) { return a != b; }},
      {"lt", [](const Array& a, const Array& b) { return a < b; }},
      {"le", [](const Array& a, const Array& b) { return a <= b; }},
      {"gt", [](const Array& a, const Array& b) { return a > b; }},
      {"ge", [](const Array& a, const Array& b) { return a >= b; }},
      {"and", [](const Array& a, const Array& b) { return a & b; }},
      {"or", [](const Array& a, const Array& b) { return a | b; }},
      {"xor", [](const Array& a, const Array& b) { return a ^ b; }},
      {"pow", [](const Array& a, const Array& b) { return kiln::pow(a, b); }},
      {"minimum", [](const Array& a, const Array& b) { return kiln::minimum(a, b); }},
      {"maximum", [](const Array& a, const Array& b) { return kiln::maximum(a, b); }},
      {"add_scalar", [](const Array& a, const Array&) { return a + 3; }},
      {"rsub_scalar", [](const Array& a, const Array&) { return 2.5 - a; }},
      {"pow_scalar", [](const Array& a, const Array&) { return kiln::pow(a, 2); }},
      {"clip", [](const Array& a, const Array& b) { return kiln::clip(a, b, 4); }},
  };
#ifdef KILN_DUMP_HAS_OP_TABLE
  std::set<std::string> listed;
  for (const auto& [name, f] : unary) listed.insert(name);
  auto add_unary = [&](const char* name, U f) {
    if (listed.insert(name).second) unary.push_back({name, f});
  };
  auto add_binary = [&](const char* name, B f) {
    if (listed.insert(name).second) binary.push_back({name, f});
  };
#define KILN_DUMP_UNARY_Custom(name)
#define KILN_DUMP_UNARY_Math(name) add_unary(#name, kiln::name);
#define KILN_DUMP_UNARY(Enum, name, cfn, form, complex, heavy) KILN_DUMP_UNARY_##form(name)
  KILN_UNARY_OPS(KILN_DUMP_UNARY)
#define KILN_DUMP_BINARY_Arith(name)
#define KILN_DUMP_BINARY_Compare(name)
#define KILN_DUMP_BINARY_Bitwise(name)
#define KILN_DUMP_BINARY_Math(name) \
  add_binary(#name, [](const Array& a, const Array& b) { return kiln::name(a, b); });
#define KILN_DUMP_BINARY(Enum, name, cfn, form, complex, heavy) KILN_DUMP_BINARY_##form(name)
  KILN_BINARY_OPS(KILN_DUMP_BINARY)
#endif
  Shape s = {33, 65};
  for (DType t : kiln::kAllDTypes) {
    for (const auto& [name, f] : unary)
      ps.push_back({"unary." + name + "." + dt(t),
                    [=, f = f] { return std::vector<Array>{f(data(s, t, 0, true))}; }});
    ps.push_back(
        {std::string("unary.neg.") + dt(t), [=] { return std::vector<Array>{-data(s, t)}; }});
    ps.push_back(
        {std::string("unary.invert.") + dt(t), [=] { return std::vector<Array>{~data(s, t)}; }});
    for (const auto& [name, f] : binary)
      ps.push_back({"binary." + name + "." + dt(t),
                    [=, f = f] { return std::vector<Array>{f(data(s, t), data(s, t, 1, true))}; }});
    ps.push_back({std::string("where.") + dt(t), [=] {
                    auto x = data(s, t), y = data(s, t, 1);
                    return std::vector<Array>{kiln::where(data(s, DType::Bool, 2), x, y),
                                              kiln::where(x == y, 1, y)};
                  }});
    for (DType u : kiln::kAllDTypes)
      ps.push_back({std::string("cast.") + dt(t) + "_to_" + dt(u),
                    [=] { return std::vector<Array>{(data(s, t) * 3).astype(u)}; }});
  }
  std::vector<std::pair<DType, DType>> promotions = {
      {DType::Int32, DType::Float32}, {DType::Int64, DType::Float32},
      {DType::Bool, DType::Int32},    {DType::Float32, DType::Complex128},
      {DType::Int32, DType::Int32},   {DType::Float64, DType::Complex64}};
  for (auto [a, b] : promotions)
    ps.push_back({std::string("promote.") + dt(a) + "_" + dt(b), [=] {
                    auto x = data(s, a), y = data(s, b, 1, true);
                    return std::vector<Array>{x + y, x / y, kiln::pow(x, y)};
                  }});
  ps.push_back({"scalars.zero_d", [] {
                  auto x = data({}, DType::Float64);
                  return std::vector<Array>{x * 2 + 1, kiln::sum(x)};
                }});
  ps.push_back({"iota.arange_linspace", [] {
                  return std::vector<Array>{kiln::arange(0, 1000, 3) * 2,
                                            kiln::linspace(0, 1, 101) + 1,
                                            kiln::arange(5, 50, 1, DType::Float32).reshape({5, 9})};
                }});
  ps.push_back({"creation.zeros_ones_full", [] {
                  auto x = data({33, 65}, DType::Float32);
                  return std::vector<Array>{x + kiln::zeros({33, 65}, DType::Float32),
                                            x * kiln::ones({65}, DType::Float32),
                                            kiln::full({4, 4}, 7, DType::Int32) + 1};
                }});
  ps.push_back({"multi_output.shared", [] {
                  auto x = data({1024}, DType::Float32);
                  auto y = kiln::sin(x) * 2;
                  return std::vector<Array>{y + 1, y - kiln::max(y), kiln::sum(y)};
                }});
}

// Scans (cumsum, cumprod): of arrays in memory (a scan step), and of elementwise producers,
// which a scan computes as it loads them (one kernel) unless something else needs them too.
void scans(std::vector<Program>& ps) {
  ps.push_back({"scan.cumsum_leaf",
                [] { return std::vector<Array>{kiln::cumsum(data({4097}, DType::Float32))}; }});
  ps.push_back({"scan.cumsum_affine_f32", [] {
                  return std::vector<Array>{kiln::cumsum(data({4097}, DType::Float32) * 2 + 1)};
                }});
  ps.push_back({"scan.cumsum_mask_count", [] {
                  auto x = data({33, 65}, DType::Float64);
                  return std::vector<Array>{kiln::cumsum(x > 0.5, 1)};
                }});
  ps.push_back({"scan.cumprod_int_columns", [] {
                  auto k = data({33, 65}, DType::Int32);
                  return std::vector<Array>{kiln::cumprod(k - 2, 0)};
                }});
  ps.push_back(
      {"scan.cumsum_exp_raveled", [] {
         return std::vector<Array>{kiln::cumsum(kiln::exp(data({33, 65}, DType::Float32)))};
       }});
  ps.push_back({"scan.cumsum_transposed_f16", [] {
                  auto h = data({65, 33}, DType::Float16);
                  return std::vector<Array>{kiln::cumsum(h.T() * 0.5, 1)};
                }});
  ps.push_back({"scan.cumsum_producer_shared", [] {
                  auto x = data({33, 65}, DType::Float32);
                  return std::vector<Array>{kiln::cumsum(x * 2 + 1, 0), kiln::sum(x * 2 + 1)};
                }});
}

void user_and_library(std::vector<Program>& ps) {
  ps.push_back({"user.two_inputs", [] {
                  auto a = data({33, 65}, DType::Float32), b = data({33, 65}, DType::Float32, 1);
                  return std::vector<Array>{
                      kiln::elementwise("x * y + sinf(x)", {{"x", a}, {"y", b}}, DType::Float32) +
                      1};
                }});
  ps.push_back({"user.scalar_and_broadcast", [] {
                  auto a = data({33, 65}, DType::Float64), b = data({65}, DType::Int32, 1);
                  return std::vector<Array>{
                      kiln::sum(kiln::elementwise("k * x + (double)y",
                                                  {{"x", a}, {"y", b}, {"k", 2.5}}, DType::Float64),
                                {1})};
                }});
  // FFT-adjacent: the cast into an FFT's input, and kernels after it.
  ps.push_back({"fft.int_input", [] {
                  return std::vector<Array>{kiln::fft::fft(data({64, 100}, DType::Int64))};
                }});
  ps.push_back({"fft.cast_prologue_epilogue", [] {
                  auto x = data({48, 64}, DType::Int32);
                  return std::vector<Array>{kiln::abs(kiln::fft::fftn(x * 2 + 1)) / 3};
                }});
  ps.push_back({"fft.rfft_irfft", [] {
                  auto x = data({8, 90}, DType::Float32);
                  auto r = kiln::fft::rfft(x * 0.5f);
                  return std::vector<Array>{r, kiln::fft::irfft(r * 2, 90)};
                }});
  ps.push_back({"fft.ifft2_real", [] {
                  auto x = data({16, 20}, DType::Complex64);
                  return std::vector<Array>{
                      kiln::real(kiln::fft::ifft2(x, std::nullopt, {-2, -1}, "ortho"))};
                }});
  ps.push_back({"random.uniform_normal_randint", [] {
                  kiln::random::Generator g(7);
                  auto u = g.uniform(-1, 1, {1000, 33}, DType::Float32);
                  auto n = g.normal(2, 3, {4097}, DType::Float64);
                  auto r = g.randint(-5, 17, {333}, DType::Int32);
                  return std::vector<Array>{u * 2 + 1, kiln::sum(n), r, kiln::max(u, {1})};
                }});
  scans(ps);
  for (int steps : {1, 200, 300})
    ps.push_back({"chain.x_0999_0001." + std::to_string(steps), [=] {
                    auto s = data({1 << 16}, DType::Float32);
                    for (int i = 0; i < steps; ++i) s = s * 0.999f + 0.001f;
                    return std::vector<Array>{s};
                  }});
}

std::vector<Program> programs() {
  std::vector<Program> ps;
  examples(ps);
  row_programs(ps);
  reductions(ps);
  views(ps);
  elementwise(ps);
  user_and_library(ps);
  return ps;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: kiln-dump-kernels OUTDIR\n"
                 "Writes OUTDIR/<program>.stepNN.cu for every kernel of a fixed set of programs,\n"
                 "and OUTDIR/programs.txt (steps, result checksums). OUTDIR must not exist or be\n"
                 "empty.\n";
    return 2;
  }
  // Host evaluation only: no NVRTC compile of each group (KILN_JIT_ARCH) and no kernel cache.
  unsetenv("KILN_JIT_ARCH");
  setenv("KILN_CACHE", "off", 1);
  fs::path out = argv[1];
  fs::create_directories(out);
  if (!fs::is_empty(out)) {
    std::cerr << "kiln-dump-kernels: " << out << " is not empty\n";
    return 2;
  }
  auto ps = programs();
  std::set<std::string> names;
  for (const auto& p : ps)
    if (!names.insert(p.name).second) {
      std::cerr << "kiln-dump-kernels: two programs are named " << p.name << "\n";
      return 2;
    }
  std::ofstream summary(out / "programs.txt");
  for (const auto& p : ps) summary << run_program(p, out);
  std::cout << "kiln-dump-kernels: " << ps.size() << " programs written to " << out << "\n";
  return summary ? 0 : 1;
}
