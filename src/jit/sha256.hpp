// SHA-256 (FIPS 180-4), for cache keys: a kernel key must never collide, even across machines
// sharing one cache directory, and kiln takes on no crypto dependency for it.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::jit {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  std::array<uint8_t, 32> digest();  // finishes the hash; the object is spent afterwards
  std::string hex_digest();

 private:
  void compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

std::string to_hex(const uint8_t* data, size_t size);

}  // namespace kiln::jit
