// The one way an operation that keeps the shape applies to a sharded array: rank by rank, on
// each rank's piece (lazy, on its device), the layout unchanged.
#pragma once
#include <vector>

#include "kiln/mesh.hpp"

namespace kiln::mesh {

template <class F>
ShardedArray map_shards(const ShardedArray& a, F&& f) {
  std::vector<Array> out;
  out.reserve(a.shards().size());
  for (const Array& s : a.shards()) out.push_back(f(s));
  return ShardedArray(a.mesh(), a.axis(), a.shape(), std::move(out));
}

}  // namespace kiln::mesh
