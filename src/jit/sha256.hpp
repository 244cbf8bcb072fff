// SHA-256 for cache keys, through OpenSSL's libcrypto (EVP): a kernel key must never collide,
// even across machines sharing one cache directory, and a kept, audited implementation is
// better than a hand-written one. Digests are plain FIPS 180-4 SHA-256, so keys do not depend
// on which implementation computed them.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX, kept out of this header

namespace kiln::jit {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  std::array<uint8_t, 32> digest();  // finishes the hash; the object is spent afterwards
  std::string hex_digest();

 private:
  struct FreeContext {
    void operator()(evp_md_ctx_st* ctx) const;
  };
  std::unique_ptr<evp_md_ctx_st, FreeContext> ctx_;
};

std::string to_hex(const uint8_t* data, size_t size);

}  // namespace kiln::jit
