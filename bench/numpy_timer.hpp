// NumPy beside kiln on the host, in the same run: Debian's python3-numpy times a statement with
// timeit, one run per repeat, and reports the median.
#pragma once
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace bench {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
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
