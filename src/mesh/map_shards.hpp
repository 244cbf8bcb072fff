// The one way an operation applies to each rank of a sharded array: rank by rank, on the ranks
// this process holds (lazy, on each rank's device), an empty Array for the ranks other processes
// hold.
#pragma once
#include <vector>

#include "kiln/mesh.hpp"

namespace kiln::mesh {

// f(rank) for every rank of `m` this process holds, an empty Array for the others.
template <class F>
std::vector<Array> per_held_rank(const Mesh& m, F&& f) {
  std::vector<Array> out;
  out.reserve(static_cast<size_t>(m.size()));
  for (int r = 0; r < m.size(); ++r) out.push_back(m.holds(r) ? Array(f(r)) : Array());
  return out;
}

// The first of one-per-rank Arrays this process holds (every ShardedArray and every
// collective's result holds one at least).
inline const Array& first_held(const std::vector<Array>& per_rank) {
  for (const Array& s : per_rank)
    if (s.valid()) return s;
  return per_rank.front();
}
inline const Array& first_held(const ShardedArray& a) { return first_held(a.shards()); }

// f(x) for each Array of a one-per-rank list this process holds, in place.
template <class F>
void for_each_held(std::vector<Array>& per_rank, F&& f) {
  for (Array& x : per_rank)
    if (x.valid()) x = f(x);
}

// An operation that keeps the shape and the layout, applied to each piece held.
template <class F>
ShardedArray map_shards(const ShardedArray& a, F&& f) {
  return ShardedArray(a.mesh(), a.axis(), a.shape(),
                      per_held_rank(a.mesh(), [&](int r) { return f(a.shard(r)); }));
}

}  // namespace kiln::mesh
