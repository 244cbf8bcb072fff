// The differential fuzzer: random programs (generate.hpp) run on every path (check.hpp), and
// each failure reduced (shrink.hpp) and printed as C++ with the seed that reproduces it.
#pragma once
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "fuzz/check.hpp"
#include "fuzz/generate.hpp"
#include "fuzz/program.hpp"

namespace kiln::fuzz {

struct RunOptions {
  uint64_t seed = 1;  // case i uses seed + i
  int64_t cases = 1000;
  Limits limits;
  CheckOptions check;
  bool shrink = true;
  int max_reports = 5;          // failures shrunk and printed; later ones are only counted
  std::ostream* out = nullptr;  // reports (and progress when verbose)
  bool verbose = false;         // one line per case
  // Called with each case's seed before it runs (so a crash that kills the process can say
  // which case it was).
  std::function<void(uint64_t)> before_case;
};

struct RunStats {
  int64_t cases = 0, ok = 0, rejected = 0, mismatches = 0, crashes = 0;
  double seconds = 0;
  std::vector<uint64_t> failed_seeds;
};

RunStats run_cases(const RunOptions& options);
// "fuzz: N cases, R rejected, M mismatches, C crashes, T s"
std::string summary(const RunStats& stats);

// Shrinks one failing program and describes it: the seed, what failed, the reduced program
// as C++ and how it fails.
std::string failure_report(uint64_t seed, const Program& p, const CheckResult& failure,
                           const CheckOptions& options, bool shrink);

}  // namespace kiln::fuzz
