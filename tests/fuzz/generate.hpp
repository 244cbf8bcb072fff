// Random programs from a seed.
#pragma once
#include <cstdint>

#include "fuzz/program.hpp"

namespace kiln::fuzz {

struct Limits {
  int max_ops = 12;          // operations per program (each case draws 1..max_ops)
  int64_t max_elems = 4096;  // elements of any value
  int max_rank = kMaxRank;
  bool fft = true;
};

// The same seed and limits give the same program. Every op of the program builds (kiln
// accepts it) and is allowed by infer() (its paths can be compared), except that a few
// programs end on purpose with an op that kiln rejects, to check that every path rejects it
// alike and the engine keeps working afterwards.
Program generate(uint64_t seed, const Limits& limits);

}  // namespace kiln::fuzz
