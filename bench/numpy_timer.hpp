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

// kiln's side: the median time in ms of `repeats` runs of `run` after one untimed run (plans
// made, the thread pool started).
inline double time_median_ms(const std::function<void()>& run, int repeats) {
  run();
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    run();
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(ms);
}

// NumPy's median time in ms for `statement` after `setup` (Python source, `import numpy as np`
// done; no single quotes), or a negative number when /usr/bin/python3 has no NumPy.
inline double time_numpy(const std::string& setup, const std::string& statement, int repeats) {
  std::string script =
      "import numpy as np, timeit\n" + setup + "\ndef run():\n  " + statement +
      "\nrun()\nts=sorted(timeit.repeat(run,number=1,repeat=" + std::to_string(repeats) +
      "))\nprint(ts[len(ts)//2]*1e3)\n";
  std::string cmd = "/usr/bin/python3 -c '" + script + "' 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  double ms = -1;
  if (std::fscanf(p, "%lf", &ms) != 1) ms = -1;
  pclose(p);
  return ms;
}

}  // namespace bench
