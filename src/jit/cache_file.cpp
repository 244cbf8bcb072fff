// Encoding and validating cache files; see cache_file.hpp for the layout.
#include "jit/cache_file.hpp"

#include <bit>
#include <cstring>

#include "jit/checksum.hpp"

namespace kiln::jit {
namespace {

constexpr char kMagic[8] = {'\x89', 'K', 'I', 'L', 'N', 'K', 'C', '\n'};

class Writer {
 public:
  explicit Writer(std::vector<char>& out) : out_(out) {}
  template <typename T>
  void integer(T v) {
    for (size_t i = 0; i < sizeof(T); ++i) out_.push_back(char(uint64_t(v) >> (8 * i)));
  }
  // resize + memcpy rather than insert(): GCC 12 misreads the latter (-Wstringop-overflow).
  void bytes(const void* p, size_t n) {
    if (n == 0) return;
    size_t at = out_.size();
    out_.resize(at + n);
    std::memcpy(out_.data() + at, p, n);
  }
  void string(std::string_view s) {
    integer(uint32_t(s.size()));
    bytes(s.data(), s.size());
  }

 private:
  std::vector<char>& out_;
};

// Every read checks the remaining length first, so a malformed payload fails cleanly instead
// of reading past the end or allocating a huge string.
class Reader {
 public:
  explicit Reader(std::span<const char> in) : in_(in) {}
  template <typename T>
  bool integer(T& v) {
    if (in_.size() < sizeof(T)) return false;
    uint64_t x = 0;
    for (size_t i = 0; i < sizeof(T); ++i) x |= uint64_t(uint8_t(in_[i])) << (8 * i);
    v = T(x);
    in_ = in_.subspan(sizeof(T));
    return true;
  }
  bool string(std::string& s) {
    uint32_t n;
    if (!integer(n) || in_.size() < n) return false;
    s.assign(in_.data(), n);
    in_ = in_.subspan(n);
    return true;
  }
  bool blob(std::vector<char>& b) {
    uint64_t n;
    if (!integer(n) || in_.size() < n) return false;
    b.assign(in_.data(), in_.data() + n);
    in_ = in_.subspan(n);
    return true;
  }
  bool at_end() const { return in_.empty(); }

 private:
  std::span<const char> in_;
};

std::vector<char> encode_payload(const CacheEntry& e) {
  std::vector<char> p;
  p.reserve(e.binary.size() + e.source.size() + 1024);
  Writer w(p);
  for (auto* s : {&e.key, &e.name, &e.summary, &e.dtypes, &e.arch, &e.nvrtc_version}) w.string(*s);
  w.integer(uint32_t(e.options.size()));
  for (auto& o : e.options) w.string(o);
  w.integer(std::bit_cast<uint64_t>(e.compile_ms));
  w.integer(e.created);
  w.string(e.source);
  w.integer(uint64_t(e.binary.size()));
  w.bytes(e.binary.data(), e.binary.size());
  return p;
}

bool decode_payload(std::span<const char> payload, CacheEntry& e) {
  Reader r(payload);
  for (auto* s : {&e.key, &e.name, &e.summary, &e.dtypes, &e.arch, &e.nvrtc_version})
    if (!r.string(*s)) return false;
  uint32_t n_options;
  if (!r.integer(n_options)) return false;
  e.options.clear();
  for (uint32_t i = 0; i < n_options; ++i)
    if (!r.string(e.options.emplace_back())) return false;
  uint64_t ms_bits;
  if (!r.integer(ms_bits) || !r.integer(e.created)) return false;
  e.compile_ms = std::bit_cast<double>(ms_bits);
  return r.string(e.source) && r.blob(e.binary) && r.at_end();
}

}  // namespace

std::vector<char> encode_entry(const CacheEntry& e) {
  std::vector<char> payload = encode_payload(e);
  std::vector<char> file;
  file.reserve(kFileHeaderSize + payload.size());
  Writer w(file);
  w.bytes(kMagic, sizeof kMagic);
  w.integer(kFormatVersion);
  w.integer(uint32_t(0));
  w.integer(uint64_t(payload.size()));
  w.integer(fnv1a64(payload.data(), payload.size()));
  w.bytes(payload.data(), payload.size());
  return file;
}

bool decode_entry(std::span<const char> file, CacheEntry& out, std::string& problem) {
  auto fail = [&](std::string why) {
    problem = std::move(why);
    return false;
  };
  if (file.size() < kFileHeaderSize) return fail("truncated header");
  if (std::memcmp(file.data(), kMagic, sizeof kMagic) != 0) return fail("bad magic");
  Reader header(file.subspan(sizeof kMagic, kFileHeaderSize - sizeof kMagic));
  uint32_t version = 0, reserved = 0;
  uint64_t payload_size = 0, checksum = 0;
  header.integer(version), header.integer(reserved);
  header.integer(payload_size), header.integer(checksum);
  if (version != kFormatVersion) return fail("format version " + std::to_string(version));
  auto payload = file.subspan(kFileHeaderSize);
  if (payload.size() != payload_size) return fail("payload size mismatch (truncated?)");
  if (fnv1a64(payload.data(), payload.size()) != checksum) return fail("checksum mismatch");
  if (!decode_payload(payload, out)) return fail("malformed payload");
  return true;
}

}  // namespace kiln::jit
