// Threads: kiln's graph and evaluation may be used from many threads at once. Eight threads
// build and evaluate arrays together: the same input arrays, shared unevaluated subexpressions
// (which one thread may evaluate while others build on them), equal expressions built
// concurrently (hash-consing must give one node), one plan structure evaluated with different
// scalars (the plan cache), eager and lazy threads side by side, views, reductions, FFTs,
// random draws, explain() and graphs deep enough to be evaluated while they are built.
// Results must equal a single-threaded run. `make tsan` runs this under ThreadSanitizer.
#include <doctest/doctest.h>

#include <barrier>
#include <cmath>
#include <complex>
#include <cstdint>
#include <exception>
#include <kiln/cache.hpp>
#include <kiln/kiln.hpp>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "graph/node.hpp"

namespace {

using kiln::Array;
using kiln::DType;
using kiln::Shape;
using kiln::Slice;

constexpr int kThreads = 8;

// Failures seen by worker threads, checked on the main thread afterwards.
class Failures {
 public:
  void add(int thread, const std::string& what) {
    std::lock_guard lock(mu_);
    list_.push_back("thread " + std::to_string(thread) + ": " + what);
  }
  void check() {
    for (const auto& f : list_) FAIL_CHECK(f);
    CHECK(list_.empty());
  }

 private:
  std::mutex mu_;
  std::vector<std::string> list_;
};

bool near(double a, double b, double tol = 1e-10) {
  return std::abs(a - b) <= tol * std::max({1.0, std::abs(a), std::abs(b)});
}

bool same(const std::vector<double>& a, const std::vector<double>& b, double tol = 1e-10) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!near(a[i], b[i], tol)) return false;
  return true;
}

// Runs body(t) on kThreads threads and records what they throw.
template <class F>
void run_threads(Failures& failures, F body) {
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        body(t);
      } catch (const std::exception& e) {
        failures.add(t, std::string("threw: ") + e.what());
      }
    });
  for (auto& th : threads) th.join();
}

const char* const kNothingToDo = "nothing to do: every array is already evaluated\n";

// What explain may say about a chain of elementwise links over 256 elements while other threads
// evaluate it: its plan before the evaluation (one fused kernel over the 256 elements), or
// nothing to do after. Anything else (another step, another shape, no text) is a graph seen
// half-evaluated.
bool whole_chain_plan(const std::string& e) {
  if (e == kNothingToDo) return true;
  return e.rfind("step 1: kernel ", 0) == 0 && e.find("step 2") == std::string::npos &&
         e.find(" over (256,), moves ") != std::string::npos;
}

}  // namespace

TEST_CASE("equal expressions built on 8 threads at once are one node") {
  Array a = kiln::arange(0, 1000, 1, DType::Float64);  // lazy, shared by every thread
  Array b = kiln::random::Generator(3).uniform(0, 1, {1000});
  for (int round = 0; round < 20; ++round) {
    std::vector<const kiln::graph::Node*> nodes(kThreads);
    std::vector<Array> keep(kThreads);
    std::barrier sync(kThreads);
    Failures failures;
    run_threads(failures, [&](int t) {
      sync.arrive_and_wait();  // start together, so the builds race
      keep[t] = kiln::exp(a * 0.001) * b + kiln::sin(a + round);
      nodes[t] = keep[t].node().get();
    });
    failures.check();
    for (int t = 1; t < kThreads; ++t) CHECK(nodes[t] == nodes[0]);
  }
}

// A dropped chain leaves the hash-cons table in batches under one lock (graph/node.cpp), while
// other threads find its nodes again: each thread builds the same chain over and over and drops
// it, so a lookup races a release of the very node it finds, and the turning of a thread's own
// product into an Affine node (graph::fuse_constant_step) races the others' lookups of that
// product. Every chain must be whole and right, and nothing must stay in the table.
TEST_CASE("8 threads build and drop equal chains at once") {
  const Array x = kiln::arange(0, 16, 1, DType::Float64).eval();
  const size_t live0 = kiln::graph::live_node_count();
  std::vector<double> expected(16);
  for (int k = 0; k < 16; ++k) {
    double e = k;
    for (int i = 0; i < 150; ++i) e = e * 0.5 + (i % 7);
    expected[k] = e;
  }
  std::barrier sync(kThreads);
  Failures failures;
  run_threads(failures, [&](int t) {
    sync.arrive_and_wait();
    for (int round = 0; round < 40; ++round) {
      Array s = x;
      for (int i = 0; i < 150; ++i) s = s * 0.5 + double(i % 7);  // 150 Affine nodes
      if ((round + t) % 8 == 0) {
        const std::vector<double> got = s.to_vector<double>();
        if (got != expected)
          failures.add(t, "round " + std::to_string(round) + ": wrong chain, last " +
                              std::to_string(got.back()) + " not " +
                              std::to_string(expected.back()));
      }
    }
  });
  failures.check();
  CHECK(kiln::graph::live_node_count() == live0);
}

TEST_CASE("8 threads build and evaluate at once, sharing inputs and subexpressions") {
  const int64_t n = 64;
  // Shared inputs: an evaluated buffer, a lazy constant, and lazy subexpressions over both.
  Array b = kiln::random::Generator(5).uniform(-1, 1, {n, n}).eval();
  Array a = kiln::arange(0, n * n, 1, DType::Float64).reshape({n, n});
  Array shared = kiln::sin(a) * b;                // every thread reads it, some evaluate it
  Array shared_sum = kiln::sum(shared * shared);  // evaluated by all threads at once

  // References, single-threaded, from copies of the input values (new nodes).
  std::vector<double> a_values = a.to_vector<double>();
  std::vector<double> b_values = b.to_vector<double>();
  Array a_ref = kiln::asarray(a_values, {n, n});
  Array b_ref = kiln::asarray(b_values, {n, n});
  Array s_ref = (kiln::sin(a_ref) * b_ref).eval();
  std::vector<double> shared_values = s_ref.to_vector<double>();
  const double sum_sq = kiln::sum(s_ref * s_ref).item<double>();
  std::vector<std::vector<double>> row_max(kThreads), col_view(kThreads), fft_abs(kThreads),
      rand(kThreads);
  std::vector<std::vector<int64_t>> argmaxes(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    row_max[t] = kiln::max(s_ref + t, {1}).to_vector<double>();
    col_view[t] =
        s_ref.T()(Slice(t, n, kThreads), Slice(std::nullopt, std::nullopt, -1)).to_vector<double>();
    fft_abs[t] = kiln::abs(kiln::fft::rfft(s_ref(t) * (t + 1))).to_vector<double>();
    rand[t] = kiln::random::Generator(100 + t).normal(t, 1, {257}).to_vector<double>();
    argmaxes[t] = kiln::argmax(s_ref * (t % 2 ? -1 : 1), 0).to_vector<int64_t>();
  }

  constexpr int kIterations = 12;
  std::barrier sync(kThreads);
  Failures failures;
  run_threads(failures, [&](int t) {
    auto expect = [&](bool ok, const std::string& what) {
      if (!ok) failures.add(t, what);
    };
    sync.arrive_and_wait();
    for (int k = 0; k < kIterations; ++k) {
      // Odd threads run eagerly (the mode is per thread), even ones fuse.
      std::optional<kiln::EagerScope> eager;
      if (t % 2) eager.emplace();

      // A shared lazy reduction, evaluated by every thread in the first iteration at once.
      expect(near(shared_sum.item<double>(), sum_sq), "sum(shared^2)");

      // Building on the shared subexpression; the plan structure is the same for every
      // thread and iteration, only the scalars differ.
      Array y = shared * (t + 1) + k;
      std::vector<double> got = y.to_vector<double>(), want(shared_values.size());
      for (size_t i = 0; i < want.size(); ++i) want[i] = shared_values[i] * (t + 1) + k;
      expect(same(got, want), "shared * (t + 1) + k");

      // Two outputs of one plan, one a reduction, both reading the shared inputs.
      Array m = kiln::max(shared + t, {1});
      Array z = kiln::sum(kiln::sin(a) * b - shared, {0});  // zero: shared is sin(a) * b
      kiln::eval({m, z});
      expect(same(m.to_vector<double>(), row_max[t]), "max(shared + t, axis 1)");
      expect(kiln::max(kiln::abs(z)).item<double>() < 1e-9, "sum(sin(a) * b - shared)");

      // Views of the shared array: a transposed, strided, reversed window.
      Array v = shared.T()(Slice(t, n, kThreads), Slice(std::nullopt, std::nullopt, -1));
      expect(same(v.to_vector<double>(), col_view[t]), "view");
      expect(kiln::argmax(shared * (t % 2 ? -1 : 1), 0).to_vector<int64_t>() == argmaxes[t],
             "argmax");

      // FFTW plans are made under a lock and run concurrently.
      Array f = kiln::abs(kiln::fft::rfft(shared(t) * (t + 1)));
      expect(same(f.to_vector<double>(), fft_abs[t], 1e-9), "rfft");

      // Random draws: a private generator reproduces the reference; the default one hands
      // every thread its own words.
      Array r = kiln::random::Generator(100 + t).normal(t, 1, {257});
      expect(r.to_vector<double>() == rand[t], "Generator::normal");
      Array u = kiln::random::uniform(0, 1, {100}, DType::Float32);
      double umin = kiln::min(u).item<double>(), umax = kiln::max(u).item<double>();
      expect(umin >= 0 && umax < 1, "default generator range");

      // A chain deeper than the growth limit is evaluated while it is being built.
      Array chain = kiln::zeros({n}) + a(t);
      for (int i = 0; i < 300; ++i) chain = chain * 1.0 + 1.0;
      std::vector<double> cv = chain.to_vector<double>();
      expect(cv.size() == static_cast<size_t>(n) && cv[0] == t * n + 300.0 &&
                 cv[n - 1] == t * n + n - 1 + 300.0,
             "deep chain");

      // Describing a plan reads the graph while other threads evaluate theirs.
      Array d = kiln::exp(shared * 0.5) + t;
      std::string plan = kiln::explain({d, kiln::sum(d)});
      // (In eager threads d is evaluated already, and its plan is empty.)
      expect(t % 2 == 1 || plan.find("kernel") != std::string::npos, "explain");
      std::string dot = kiln::to_dot({d});
      expect(dot.find("digraph") != std::string::npos, "to_dot");

      // Now and then a thread evaluates the shared subexpression itself, turning it into a
      // leaf while the others are planning graphs that contain it.
      if (k == t) shared.eval();

      // Process-wide state read and changed while others evaluate: counters, the kernel
      // cache (which KILN_JIT_ARCH fills as groups run), the FFT plan cache, the default
      // generators' seed, printing.
      (void)kiln::engine_stats();
      (void)kiln::cache::stats();
      (void)kiln::fft::plan_cache();
      if (k == 5 && t == 0) kiln::random::seed(42);
      std::string text = kiln::repr(v(0));
      expect(text.rfind("array([", 0) == 0, "repr");
    }
  });
  failures.check();
  CHECK(same(shared.to_vector<double>(), shared_values));
}

TEST_CASE("8 threads evaluate one unevaluated array at once") {
  for (int round = 0; round < 10; ++round) {
    Array x = kiln::linspace(0, 1, 10001);
    Array target = kiln::sum(kiln::exp(x * round) * kiln::cos(x));  // nobody evaluated it yet
    std::vector<double> got(kThreads);
    std::barrier sync(kThreads);
    Failures failures;
    run_threads(failures, [&](int t) {
      sync.arrive_and_wait();
      got[t] = t % 3 == 0 ? target.item<double>() : target.eval().to_vector<double>()[0];
    });
    failures.check();
    for (int t = 1; t < kThreads; ++t) CHECK(got[t] == got[0]);
    Array again = kiln::sum(kiln::exp(kiln::asarray(x.to_vector<double>()) * round) *
                            kiln::cos(kiln::asarray(x.to_vector<double>())));
    CHECK(got[0] == doctest::Approx(again.item<double>()).epsilon(1e-12));
  }
}

TEST_CASE("arrays made on one thread and dropped on another") {
  // Node lifetimes cross threads: the last reference may die on any of them, while other
  // threads hash-cons equal expressions.
  std::vector<Array> made;
  Array base = kiln::arange(0, 512, 1, DType::Int64);
  for (int i = 0; i < kThreads * 16; ++i) made.push_back(base * (i % 5) + i);
  std::barrier sync(kThreads);
  Failures failures;
  run_threads(failures, [&](int t) {
    sync.arrive_and_wait();
    for (int i = t; i < kThreads * 16; i += kThreads) {
      int64_t want = 511 * (i % 5) + i;
      Array again = base * (i % 5) + i;  // may be the node another thread is dropping
      const int64_t got = again.to_vector<int64_t>().back();
      if (got != want)
        failures.add(t, "rebuilt value " + std::to_string(i) + ": " + std::to_string(got) +
                            ", not " + std::to_string(want));
      made[(i + 1) % made.size()] = Array();  // another thread's array
      const int64_t top = kiln::max(again).item<int64_t>();
      if (top != want)
        failures.add(t, "max " + std::to_string(i) + ": " + std::to_string(top) + ", not " +
                            std::to_string(want));
    }
  });
  failures.check();
}

TEST_CASE("explain and to_dot while other threads evaluate the same graphs") {
  // Evaluating a node drops its inputs (they may be freed); a plan described at the same time
  // must see the graph before or after that, never half of it.
  for (int round = 0; round < 4; ++round) {
    Array x = kiln::arange(0, 256, 1, DType::Float64);
    std::vector<Array> chains;
    for (int c = 0; c < 16; ++c) {
      Array y = x + c;
      for (int i = 0; i < 60; ++i) y = y * 0.5 + (i % 7);  // each link its own node
      chains.push_back(y);
    }
    std::string first = kiln::explain({chains[round]});
    CHECK(first.rfind("step 1: kernel ", 0) == 0);  // not evaluated yet: the whole plan
    CHECK(whole_chain_plan(first));
    std::barrier sync(kThreads);
    Failures failures;
    run_threads(failures, [&](int t) {
      sync.arrive_and_wait();
      for (int c = 0; c < 16; ++c) {
        const Array& y = chains[(c + t) % 16];
        if (t % 2) {
          y.eval();
        } else {
          std::string plan = kiln::explain({y});
          if (!whole_chain_plan(plan)) failures.add(t, "explain said:\n" + plan);
          std::string dot = kiln::to_dot({kiln::sum(y)});
          if (dot.find("digraph") == std::string::npos) failures.add(t, "to_dot");
        }
      }
    });
    failures.check();
    for (const Array& y : chains) CHECK(kiln::explain({y}) == kNothingToDo);  // all evaluated
  }
}
