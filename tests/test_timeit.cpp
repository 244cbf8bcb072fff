// kiln::timeit against IPython's %timeit rules. Timing logic runs on a fake clock that the
// timed function advances, so nothing here depends on the speed of the machine.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

namespace {

// A clock that only moves when the timed function says so.
struct FakeClock {
  double now = 0;
  std::function<double()> fn() {
    return [this] { return now; };
  }
};

kiln::TimeitOptions quiet(FakeClock& clock) {
  kiln::TimeitOptions o;
  o.print = false;
  o.clock = clock.fn();
  o.device = kiln::host();
  return o;
}

}  // namespace

TEST_CASE("format_time picks units and digits as IPython's _format_time") {
  // Expected strings from IPython's _format_time run under Python (ASCII "us" units).
  const std::pair<double, const char*> cases[] = {{0, "0 ns"},
                                                  {1e-12, "0.001 ns"},
                                                  {1e-9, "1 ns"},
                                                  {5.4321e-9, "5.43 ns"},
                                                  {999e-9, "999 ns"},
                                                  {1e-6, "1 us"},
                                                  {1.5e-6, "1.5 us"},
                                                  {999.4e-6, "999 us"},
                                                  {999.6e-6, "1e+03 us"},
                                                  {1e-3, "1 ms"},
                                                  {7.54e-3, "7.54 ms"},
                                                  {0.2, "200 ms"},
                                                  {0.99949, "999 ms"},
                                                  {1.0, "1 s"},
                                                  {12.345, "12.3 s"},
                                                  {59.9, "59.9 s"},
                                                  {60.0, "1min"},
                                                  {61.5, "1min 1s"},
                                                  {3600, "1h"},
                                                  {3725.2, "1h 2min 5s"},
                                                  {90061, "1d 1h 1min 1s"}};
  for (auto [seconds, text] : cases) {
    CAPTURE(seconds);
    CHECK(kiln::format_time(seconds) == text);
  }
  CHECK(kiln::format_time(7.54321e-3, 5) == "7.5432 ms");
  // NaN takes IPython's path (not > 0, so ns); infinity and absurd spans, where IPython raises,
  // are printed in seconds rather than overflowing the day count.
  CHECK(kiln::format_time(std::nan("")) == "nan ns");
  CHECK(kiln::format_time(INFINITY) == "inf s");
  CHECK(kiln::format_time(1e20) == "1e+20 s");
}

TEST_CASE("timeit grows the loop count 1, 2, 5, 10, ... until a repeat takes 0.2 s") {
  FakeClock clock;
  std::vector<int64_t> calls_per_repeat;
  int64_t calls = 0;
  auto f = [&] {
    clock.now += 0.03;  // 30 ms a call: 5 loops take 0.15 s, 10 take 0.3 s
    ++calls;
  };
  kiln::TimeitResult r = kiln::timeit(f, quiet(clock));
  CHECK(r.loops == 10);
  CHECK(r.repeats == 5);
  CHECK(calls == 1 + 2 + 5 + 10 + 5 * 10);  // the search's runs, then the five repeats
  REQUIRE(r.per_loop.size() == 5);
  for (double t : r.per_loop) CHECK(t == doctest::Approx(0.03));
  CHECK(r.best == doctest::Approx(0.03));
  CHECK(r.str() == "10 loops, best of 5: 30 ms per loop");
  CHECK(r.warning().empty());
}

TEST_CASE("timeit's loop search stops at 1 for a slow function, and obeys explicit counts") {
  FakeClock clock;
  auto slow = [&] { clock.now += 0.5; };
  kiln::TimeitResult r = kiln::timeit(slow, quiet(clock));
  CHECK(r.loops == 1);
  CHECK(r.str() == "1 loop, best of 5: 500 ms per loop");  // singular, as IPython

  kiln::TimeitOptions o = quiet(clock);
  o.loops = 100;
  o.repeats = 3;
  int64_t calls = 0;
  r = kiln::timeit(
      [&] {
        clock.now += 75.4e-6;
        ++calls;
      },
      o);
  CHECK(calls == 300);
  CHECK(r.str() == "100 loops, best of 3: 75.4 us per loop");
}

TEST_CASE("timeit warns when the slowest repeat took over 4x the fastest") {
  FakeClock clock;
  int64_t call = 0;
  kiln::TimeitOptions o = quiet(clock);
  o.loops = 10;
  o.print = true;
  std::ostringstream out;
  o.out = &out;
  // The first repeat's first call is slow, as when a kernel is compiled or a result cached.
  auto f = [&] { clock.now += call++ == 0 ? 0.5 : 0.01; };
  kiln::TimeitResult r = kiln::timeit(f, o);
  CHECK(r.per_loop[0] == doctest::Approx(0.059));
  CHECK(r.best == doctest::Approx(0.01));
  CHECK(r.worst == doctest::Approx(0.059));
  const std::string warning =
      "The slowest run took 5.90 times longer than the fastest. This could mean that an "
      "intermediate result is being cached.";
  CHECK(r.warning() == warning);
  CHECK(out.str() == warning + "\n10 loops, best of 5: 10 ms per loop\n");
}

TEST_CASE("timeit stays quiet below IPython's thresholds") {
  FakeClock clock;
  kiln::TimeitOptions o = quiet(clock);
  o.loops = 1;
  o.repeats = 2;
  int call = 0;
  // Exactly 4x: IPython warns only above 4.
  kiln::TimeitResult r = kiln::timeit([&] { clock.now += call++ == 0 ? 0.04 : 0.01; }, o);
  CHECK(r.worst / r.best == doctest::Approx(4.0));
  CHECK(r.warning().empty());
  // A 100x ratio under a microsecond is noise, not caching.
  call = 0;
  r = kiln::timeit([&] { clock.now += call++ == 0 ? 1e-7 : 1e-9; }, o);
  CHECK(r.warning().empty());
}

TEST_CASE("timeit runs real kiln work with the real clock and checks its options") {
  kiln::TimeitOptions o;
  o.loops = 2;
  o.repeats = 2;
  std::ostringstream out;
  o.out = &out;
  kiln::Array x = kiln::arange(0, 1000, 1, kiln::DType::Float32);
  kiln::TimeitResult r = kiln::timeit([&] { kiln::sum(kiln::sin(x) * 2).eval(); }, o);
  CHECK(r.per_loop.size() == 2);
  CHECK(r.best > 0);
  CHECK(r.best <= r.worst);
  CHECK(out.str().find("2 loops, best of 2: ") != std::string::npos);

  o.repeats = 0;
  CHECK_THROWS_AS(kiln::timeit([] {}, o), kiln::Error);
  o.repeats = 1;
  o.loops = -1;
  CHECK_THROWS_AS(kiln::timeit([] {}, o), kiln::Error);
  CHECK_THROWS_AS(kiln::timeit(std::function<void()>{}), kiln::Error);
}
