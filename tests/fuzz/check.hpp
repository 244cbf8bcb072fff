// Runs a program on every path and compares the results.
//
// Paths: host lazy (the reference), host eager, and when a GPU is present (and asked for)
// GPU lazy and GPU eager, built from the same inputs made on the GPU. Exact values must be
// identical (NaN equal to NaN, -0 equal to 0); noisy ones within their error bound (see
// facts.hpp). A program whose op kiln rejects while building must be rejected the same way on
// every path. Every value's dtype and shape must be the oracle's (oracle.hpp). With
// `reference`, host lazy must also agree with the scalar reference (reference.hpp) within the
// same bounds; float sums, there and between paths, within gamma_{n-1} * sum |x_i| of their
// actual terms when the reference models the program. A crash (an exception that is not a
// rejection, thrown while building or evaluating) or a disagreement is a failure.
#pragma once
#include <string>

#include "fuzz/program.hpp"

namespace kiln::fuzz {

enum class Verdict {
  Ok,
  Rejected,  // kiln refused an op while building, alike on every path: fine
  Illegal,   // the program asks for a comparison its facts forbid (shrinking only)
  Mismatch,
  Crash,
};
const char* verdict_name(Verdict v);
inline bool is_failure(Verdict v) { return v == Verdict::Mismatch || v == Verdict::Crash; }

struct CheckOptions {
  bool gpu = false;  // also the GPU paths (skipped when no GPU is present)
  // Host eager must equal host lazy bit for bit, noisy values included (the sign of zero
  // too; any NaN equals any NaN): both run the same host executor, whose results do not
  // depend on how work is fused or split (README, tests/test_eager_lazy.cpp).
  bool host_bitwise = true;
  // Also compare host lazy with the scalar reference (reference.hpp), for programs it
  // models (every program without an FFT): dtypes and shapes are compared with the oracle
  // (oracle.hpp) on every program regardless.
  bool reference = false;
};

struct CheckResult {
  Verdict verdict = Verdict::Ok;
  std::string message;  // for failures: which paths, which output, where and how
};

CheckResult check(const Program& p, const CheckOptions& options);

}  // namespace kiln::fuzz
