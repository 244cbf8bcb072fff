// SHA-256 through OpenSSL's EVP interface (the SHA256_* functions are deprecated since 3.0).
#include "jit/sha256.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>

#include <new>

#include "kiln/errors.hpp"

namespace kiln::jit {
namespace {

// libcrypto fails here only when out of memory or misconfigured (no SHA-256 in its providers);
// a cache key cannot be made then, so the error reaches the caller rather than a wrong key.
void check(int ok, const char* what) {
  if (ok == 1) return;
  char reason[256] = "no reason given";
  if (unsigned long code = ERR_get_error()) ERR_error_string_n(code, reason, sizeof reason);
  throw Error(std::string("kiln: OpenSSL's ") + what + " failed (" + reason +
              "); check the OpenSSL configuration (OPENSSL_CONF) offers SHA-256");
}

}  // namespace

void Sha256::FreeContext::operator()(evp_md_ctx_st* ctx) const { EVP_MD_CTX_free(ctx); }

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_) throw std::bad_alloc();
  check(EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr), "EVP_DigestInit_ex(SHA-256)");
}

void Sha256::update(const void* data, size_t size) {
  check(EVP_DigestUpdate(ctx_.get(), data, size), "EVP_DigestUpdate");
}

std::array<uint8_t, 32> Sha256::digest() {
  std::array<uint8_t, 32> out;
  unsigned size = 0;
  check(EVP_DigestFinal_ex(ctx_.get(), out.data(), &size), "EVP_DigestFinal_ex");
  check(size == out.size(), "SHA-256 digest size");
  return out;
}

std::string Sha256::hex_digest() {
  auto d = digest();
  return to_hex(d.data(), d.size());
}

std::string to_hex(const uint8_t* data, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(2 * size, '0');
  for (size_t i = 0; i < size; ++i) {
    s[2 * i] = kDigits[data[i] >> 4];
    s[2 * i + 1] = kDigits[data[i] & 15];
  }
  return s;
}

}  // namespace kiln::jit
