// FNV-1a, 64 bits: the payload checksum of cache files. Not a defence against tampering (the
// key is SHA-256 for that); it catches torn writes and bit rot. Each step is a bijection of the
// running state, so any single changed byte always changes the result.
#pragma once
#include <cstddef>
#include <cstdint>

namespace kiln::jit {

inline uint64_t fnv1a64(const void* data, size_t size) {
  auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

}  // namespace kiln::jit
