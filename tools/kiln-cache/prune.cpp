// kiln-cache prune: remove least recently used entries, by total size or by age.
#include <cmath>
#include <iostream>

#include "cli.hpp"
#include "jit/cache_config.hpp"
#include "jit/eviction.hpp"

namespace kiln_cache {
namespace {
namespace jit = kiln::jit;

uint64_t parse_bytes(const std::string& v) {
  uint64_t n = 0;
  if (!jit::parse_size(v, n))
    throw UsageError("--max-bytes takes a size such as 1000000, 500M or 2G, not '" + v + "'");
  return n;
}

int64_t parse_cutoff_us(const std::string& v) {
  char* end = nullptr;
  double days = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0' || !(days >= 0) || days > 1e6)
    throw UsageError("--older-than takes a number of days such as 30 or 0.5, not '" + v + "'");
  return jit::now_us() - int64_t(std::llround(days * 86400e6));
}

jit::PruneRequest request_from(const Options& o) {
  jit::PruneRequest r;
  if (o.max_bytes) r.max_bytes = parse_bytes(*o.max_bytes);
  if (o.older_than) r.used_before_us = parse_cutoff_us(*o.older_than);
  if (!r.max_bytes && !r.used_before_us)
    throw UsageError("prune needs --max-bytes N or --older-than DAYS");
  return r;
}

void print_json(const std::string& dir, const jit::PruneResult& p) {
  write_json({{"dir", dir},
              {"removed", p.removed},
              {"removed_bytes", p.removed_bytes},
              {"remaining_entries", p.kept},
              {"remaining_bytes", p.kept_bytes}});
}

void print_text(const std::string& dir, const jit::PruneResult& p) {
  for (const auto& k : p.removed) std::cout << "removed " << k.substr(0, 12) << "\n";
  std::cout << "removed " << count(p.removed.size(), "entry", "entries") << " ("
            << human_bytes(p.removed_bytes) << ") from " << dir << "; "
            << count(p.kept, "entry", "entries") << " (" << human_bytes(p.kept_bytes)
            << ") remain\n";
}

}  // namespace

int run_prune(const Options& o) {
  jit::PruneRequest r = request_from(o);
  require_trusted_directory(o.dir, "prune");
  jit::PruneResult p = jit::prune(o.dir, r);
  if (o.json)
    print_json(o.dir, p);
  else
    print_text(o.dir, p);
  return 0;
}

}  // namespace kiln_cache
