// What the generator produces, counted: how often each op, dtype, rank and feature occurs.
#pragma once
#include <cstdint>
#include <string>

#include "fuzz/generate.hpp"

namespace kiln::fuzz {

// Generates `cases` programs from seed on (nothing is evaluated) and tabulates them.
std::string coverage_report(uint64_t seed, int64_t cases, const Limits& limits);

}  // namespace kiln::fuzz
