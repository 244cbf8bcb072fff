// kiln::timeit follows IPython's %timeit (loop choice, report line, caching warning) so its
// numbers read the same as the CuPy tutorial's.
#include "kiln/timeit.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "kiln/errors.hpp"

namespace kiln {
namespace {

// IPython's autorange stops growing the loop count once one repeat takes this long.
constexpr double kMinRepeatSeconds = 0.2;
// A safety net for a clock that never advances (a broken fake): the search stops here instead
// of growing forever. Real functions reach 0.2 s long before (10^10 calls of an empty lambda).
constexpr int64_t kMaxLoops = 10'000'000'000;

double steady_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// "1d 2h 3min 4s", as IPython writes spans of a minute or more.
std::string format_long(double seconds) {
  const std::pair<const char*, double> parts[] = {{"d", 86400}, {"h", 3600}, {"min", 60}, {"s", 1}};
  std::string out;
  double left = seconds;
  for (auto [suffix, length] : parts) {
    auto value = static_cast<int64_t>(left / length);
    if (value > 0) {
      left = std::fmod(left, length);
      out += (out.empty() ? "" : " ") + std::to_string(value) + suffix;
    }
    if (left < 1) break;
  }
  return out;
}

// Runs f `loops` times and returns the seconds it took, device work included. The device is
// synchronised before the clock starts too, so work queued earlier is not charged to f.
double run_repeat(const std::function<void()>& f, int64_t loops, Device device,
                  const std::function<double()>& clock) {
  synchronize(device);
  double start = clock();
  for (int64_t i = 0; i < loops; ++i) f();
  synchronize(device);
  double seconds = clock() - start;
  // A negative or NaN span would be printed as a nonsense time ("-1e+09 ns per loop").
  if (!(seconds >= 0))
    throw Error("timeit: the clock went backwards or gave NaN (a span of " +
                std::to_string(seconds) + " s); pass a clock that never decreases");
  return seconds;
}

// Python's Timer.autorange: 1, 2, 5, 10, 20, 50, ... until one repeat takes >= 0.2 s.
int64_t choose_loops(const std::function<void()>& f, Device device,
                     const std::function<double()>& clock) {
  for (int64_t scale = 1;; scale *= 10) {
    for (int64_t step : {1, 2, 5}) {
      int64_t loops = scale * step;
      if (loops >= kMaxLoops || run_repeat(f, loops, device, clock) >= kMinRepeatSeconds)
        return loops;
    }
  }
}

void check_precision(int precision, const char* what) {
  if (precision < 1 || precision > 17)
    throw Error(std::string(what) + ": precision must be 1 to 17 digits, got " +
                std::to_string(precision));
}

void check_options(const TimeitOptions& o) {
  if (o.repeats < 1)
    throw Error("timeit: repeats must be at least 1, got " + std::to_string(o.repeats));
  if (o.loops < 0)
    throw Error("timeit: loops must be >= 0 (0 picks it), got " + std::to_string(o.loops));
  check_precision(o.precision, "timeit");
}

}  // namespace

std::string format_time(double seconds, int precision) {
  check_precision(precision, "format_time");  // as timeit's: 0 or less would print 1 or 6 digits
  char text[64];
  // IPython raises on infinity; past ~30 million years the day count would overflow int64.
  if (seconds >= 1e15) {
    std::snprintf(text, sizeof text, "%.*g s", precision, seconds);
    return text;
  }
  if (seconds >= 60.0) return format_long(seconds);
  const char* units[] = {"s", "ms", "us", "ns"};
  const double scaling[] = {1, 1e3, 1e6, 1e9};
  // IPython: order = min(-(floor(log10(t)) // 3), 3) with Python's flooring division.
  int order = 3;
  if (seconds > 0.0)
    order = std::min(-static_cast<int>(std::floor(std::floor(std::log10(seconds)) / 3)), 3);
  std::snprintf(text, sizeof text, "%.*g %s", precision, seconds * scaling[order], units[order]);
  return text;
}

std::string TimeitResult::str() const {
  return std::to_string(loops) + (loops == 1 ? " loop" : " loops") + ", best of " +
         std::to_string(repeats) + ": " + format_time(best, precision) + " per loop";
}

std::string TimeitResult::warning() const {
  // IPython's test: below a microsecond, or with a zero best, the ratio means nothing.
  if (!(worst > 4 * best && best > 0 && worst > 1e-6)) return "";
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2f", worst / best);
  return std::string("The slowest run took ") + ratio +
         " times longer than the fastest. This could mean that an intermediate result is "
         "being cached.";
}

TimeitResult timeit(const std::function<void()>& f, TimeitOptions options) {
  check_options(options);
  if (!f) throw Error("timeit: the function to time is empty; pass a callable");
  auto clock = options.clock ? options.clock : std::function<double()>(steady_seconds);
  Device device = options.device.value_or(cuda_available() ? cuda() : host());

  TimeitResult r;
  r.repeats = options.repeats;
  r.precision = options.precision;
  r.loops = options.loops ? options.loops : choose_loops(f, device, clock);
  for (int i = 0; i < r.repeats; ++i)
    r.per_loop.push_back(run_repeat(f, r.loops, device, clock) / static_cast<double>(r.loops));
  auto [lo, hi] = std::minmax_element(r.per_loop.begin(), r.per_loop.end());
  r.best = *lo;
  r.worst = *hi;

  if (options.print) {
    std::ostream& out = options.out ? *options.out : std::cout;
    if (std::string w = r.warning(); !w.empty()) out << w << "\n";
    out << r.str() << "\n";
  }
  return r;
}

}  // namespace kiln
