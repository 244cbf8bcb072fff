// NumPy beside kiln on the host, in the same run: Debian's python3-numpy times a statement with
// timeit, one run per repeat, and reports the median.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace bench {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The fastest and the median of a set of runs, in ms (the minimum is the less noisy figure on
// a shared machine).
struct Timing {
  double min = -1, median = -1;
};

// kiln's side: `repeats` runs of `run` after one untimed run (plans made, the thread pool
// started).
inline Timing time_ms(const std::function<void()>& run, int repeats) {
  run();
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    run();
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return {*std::min_element(ms.begin(), ms.end()), median(ms)};
}
inline double time_median_ms(const std::function<void()>& run, int repeats) {
  return time_ms(run, repeats).median;
}

// NumPy's times for `statement` after `setup` (Python source, `import numpy as np` done; no
// single quotes), or negative ones when /usr/bin/python3 has no NumPy.
inline Timing time_numpy_ms(const std::string& setup, const std::string& statement, int repeats) {
  std::string script =
      "import numpy as np, timeit\n" + setup + "\ndef run():\n  " + statement +
      "\nrun()\nts=sorted(timeit.repeat(run,number=1,repeat=" + std::to_string(repeats) +
      "))\nprint(ts[0]*1e3, ts[len(ts)//2]*1e3)\n";
  std::string cmd = "/usr/bin/python3 -c '" + script + "' 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {};
  Timing t;
  if (std::fscanf(p, "%lf %lf", &t.min, &t.median) != 2) t = {};
  pclose(p);
  return t;
}
inline double time_numpy(const std::string& setup, const std::string& statement, int repeats) {
  return time_numpy_ms(setup, statement, repeats).median;
}

}  // namespace bench
