// kiln::timeit, IPython's %timeit for C++: picks a loop count, runs several repeats, waits for
// the device after each one and prints "100 loops, best of 5: 7.54 ms per loop".
#pragma once
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "kiln/device.hpp"

namespace kiln {

struct TimeitOptions {
  int64_t loops = 0;  // calls per repeat; 0 picks 1, 2, 5, 10, 20, ... until one takes >= 0.2 s
  int repeats = 5;
  // Synchronised after every repeat, so queued GPU work is inside the measurement. Default:
  // cuda() when a GPU is present, else the host (nothing to wait for).
  std::optional<Device> device;
  bool print = true;
  std::ostream* out = nullptr;  // where to print; nullptr means std::cout
  int precision = 3;            // significant digits of the printed time
  // Seconds from any fixed origin. Empty means std::chrono::steady_clock; tests pass a fake.
  std::function<double()> clock;
};

struct TimeitResult {
  int64_t loops = 0;
  int repeats = 0;
  std::vector<double> per_loop;  // seconds per call, one entry per repeat
  double best = 0;               // the smallest entry of per_loop
  double worst = 0;              // the largest
  int precision = 3;

  // "100 loops, best of 5: 7.54 ms per loop" ("1 loop, ..." for a single call).
  std::string str() const;
  // IPython's caching warning when the slowest repeat took over 4x the fastest, else "".
  std::string warning() const;
};

// Times f as IPython's %timeit does. f should evaluate what it computes (eval(), item(), ...):
// building a lazy expression alone costs almost nothing.
TimeitResult timeit(const std::function<void()>& f, TimeitOptions options = {});

// IPython's _format_time: "7.54 ms", "812 ns", "1.5 s", "2min 3s" (units ns, us, ms, s).
std::string format_time(double seconds, int precision = 3);

}  // namespace kiln
