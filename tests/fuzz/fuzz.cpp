#include "fuzz/fuzz.hpp"

#include <chrono>
#include <cstdio>
#include <ostream>
#include <sstream>

#include "fuzz/shrink.hpp"

namespace kiln::fuzz {

std::string failure_report(uint64_t seed, const Program& p, const CheckResult& failure,
                           const CheckOptions& options, bool shrink_it) {
  std::ostringstream os;
  os << "=== fuzz " << verdict_name(failure.verdict) << ", seed " << seed << " (kiln_fuzz --seed "
     << seed << " --cases 1" << (options.gpu ? " --gpu" : "") << ")\n"
     << failure.message << "\n";
  Program reduced = p;
  CheckResult last = failure;
  if (shrink_it) {
    int checks = 0;
    reduced = shrink(p, [&](const Program& c) {
      ++checks;
      CheckResult r = check(c, options);
      if (r.verdict != failure.verdict) return false;
      last = r;
      return true;
    });
    os << "reduced from " << p.ops.size() << " ops to " << reduced.ops.size() << " ops (" << checks
       << " checks); it fails with\n"
       << last.message << "\n";
  }
  os << "--- C++\n" << to_cpp(reduced) << "---\n";
  return os.str();
}

RunStats run_cases(const RunOptions& o) {
  RunStats s;
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < o.cases; ++i) {
    uint64_t seed = o.seed + static_cast<uint64_t>(i);
    if (o.before_case) o.before_case(seed);
    Program p = generate(seed, o.limits);
    CheckResult r = check(p, o.check);
    ++s.cases;
    s.ok += r.verdict == Verdict::Ok;
    s.rejected += r.verdict == Verdict::Rejected;
    s.mismatches += r.verdict == Verdict::Mismatch;
    s.crashes += r.verdict == Verdict::Crash;
    if (o.out && o.verbose)
      *o.out << "seed " << seed << ": " << p.ops.size() << " ops, " << verdict_name(r.verdict)
             << std::endl;
    if (!is_failure(r.verdict)) continue;
    s.failed_seeds.push_back(seed);
    if (o.out && static_cast<int>(s.failed_seeds.size()) <= o.max_reports)
      *o.out << failure_report(seed, p, r, o.check, o.shrink) << std::flush;
  }
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

std::string summary(const RunStats& s) {
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "fuzz: %lld cases, %lld rejected, %lld mismatches, %lld crashes, %.1f s",
                static_cast<long long>(s.cases), static_cast<long long>(s.rejected),
                static_cast<long long>(s.mismatches), static_cast<long long>(s.crashes), s.seconds);
  return buf;
}

}  // namespace kiln::fuzz
