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
  // The layouts of kiln issue 11 (reduce-then-broadcast chains, rank 3-4 permutations,
  // strided slices then transposes, odd extents): the share of steps that add one, and the
  // elements a program may reach when one of its inputs has one long axis.
  double patterns = 0.25;
  int64_t max_long_elems = 4400;  // at least 4100: pattern_shape's longest axis
};

// The same seed and limits give the same program. Every op of the program builds (kiln
// accepts it) and is allowed by infer() (its paths can be compared), except that a few
// programs end on purpose with an op that kiln rejects, to check that every path rejects it
// alike and the engine keeps working afterwards.
Program generate(uint64_t seed, const Limits& limits);

}  // namespace kiln::fuzz
