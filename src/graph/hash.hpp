// Hash combining shared by the graph's hashes.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::graph {

inline size_t hash_mix(size_t seed, uint64_t v) {
  // wyhash's mix: the 128-bit product of the two (each xored with a constant), its halves
  // folded; a few instructions where boost::hash_combine's took about fourteen, and it runs
  // about a dozen times per node built. The seed is xored back in so that the one v that
  // zeroes the product does not erase what was mixed before.
  const unsigned __int128 m =
      static_cast<unsigned __int128>(seed ^ 0xa0761d6478bd642full) * (v ^ 0xe7037ed1a0b428dbull);
  return static_cast<size_t>(m) ^ static_cast<size_t>(m >> 64) ^ seed;
}

// Pointer -> value for the walks over a graph (signature, held nodes), which visit every node
// once per evaluation: open addressing in one array, no allocation per entry. Each slot is
// stamped with the use that filled it, so emptying the map is one increment, not a pass over
// the array (a tiny evaluation's walk visits two nodes).
template <class V>
class PtrMap {
 public:
  // The value for p, or null.
  V* find(const void* p) {
    for (size_t i = home(p);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.use != use_) return nullptr;
      if (s.key == p) return &s.value;
    }
  }
  // Adds p (not yet in the map) with value v.
  void add(const void* p, V v) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    size_t i = home(p);
    while (slots_[i].use == use_) i = (i + 1) & mask_;
    slots_[i] = {p, std::move(v), use_};
    ++size_;
  }
  // Empties the map. A table a large graph grew, and this use filled by less than an eighth,
  // starts small again.
  void clear() {
    if (slots_.size() > kFirst && size_ * 8 < slots_.size())
      *this = PtrMap();
    else if (++use_ == 0)  // the stamps wrapped: clear them for real
      std::fill(slots_.begin(), slots_.end(), Slot{}), use_ = 1;
    size_ = 0;
  }

 private:
  static constexpr size_t kFirst = 32;
  struct Slot {
    const void* key = nullptr;
    V value{};
    uint32_t use = 0;  // the use that filled it; stale when not the map's
  };
  size_t home(const void* p) const {
    return (reinterpret_cast<uintptr_t>(p) * 0x9E3779B97F4A7C15ull) >> shift_;
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    --shift_;
    size_ = 0;
    const uint32_t use = use_;
    use_ = 1;
    for (auto& s : old)
      if (s.use == use) add(s.key, std::move(s.value));
  }

  std::vector<Slot> slots_ = std::vector<Slot>(kFirst);
  size_t mask_ = kFirst - 1, size_ = 0;
  int shift_ = 64 - 5;
  uint32_t use_ = 1;
};

}  // namespace kiln::graph
