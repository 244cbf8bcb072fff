// Cache keys.
#include "jit/cache_key.hpp"

#include "jit/cache_file.hpp"
#include "jit/nvrtc_api.hpp"
#include "jit/sha256.hpp"

namespace kiln::jit {
namespace {

// Length-prefixed, so ("ab","c") and ("a","bc") hash differently.
void field(Sha256& h, std::string_view s) {
  uint64_t n = s.size();
  uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = uint8_t(n >> (8 * i));
  h.update(len, sizeof len);
  h.update(s);
}

// The headers never change while the process runs, so they are hashed once.
const std::array<uint8_t, 32>& headers_digest() {
  static const std::array<uint8_t, 32> digest = [] {
    Sha256 h;
    field(h, std::to_string(embedded_headers().size()));
    for (const Header& header : embedded_headers()) {
      field(h, header.name);
      field(h, header.text);
    }
    return h.digest();
  }();
  return digest;
}

}  // namespace

std::string cache_key(const Request& r, const std::vector<std::string>& options) {
  Sha256 h;
  field(h, "kiln kernel");
  field(h, std::to_string(kFormatVersion));
  field(h, nvrtc_identity());
  field(h, r.arch);
  field(h, r.name);
  field(h, r.source);
  field(h, std::to_string(options.size()));
  for (auto& o : options) field(h, o);
  h.update(headers_digest().data(), headers_digest().size());
  return h.hex_digest();
}

void prepare_cache_keys() { headers_digest(); }

bool is_cache_key(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace kiln::jit
