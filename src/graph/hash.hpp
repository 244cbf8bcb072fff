// Hash combining shared by the graph's hashes.
#pragma once
#include <cstddef>
#include <cstdint>

namespace kiln::graph {

inline size_t hash_mix(size_t seed, uint64_t v) {
  // boost::hash_combine's mixing on 64 bits.
  v *= 0x9E3779B97F4A7C15ull;
  v ^= v >> 32;
  return seed ^ (v + 0x9E3779B97F4A7C15ull + (seed << 6) + (seed >> 2));
}

}  // namespace kiln::graph
