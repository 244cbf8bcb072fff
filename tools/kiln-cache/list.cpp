// kiln-cache list: the entries as a table.
#include <algorithm>
#include <functional>
#include <iostream>

#include "cli.hpp"

namespace kiln_cache {
namespace {
namespace jit = kiln::jit;

using Order = std::function<bool(const jit::EntryFile&, const jit::EntryFile&)>;

// Largest or most recent first; the key breaks ties so the order is stable between runs.
Order order_for(const std::string& column) {
  auto by = [](auto field) -> Order {
    return [field](const jit::EntryFile& a, const jit::EntryFile& b) {
      auto fa = field(a), fb = field(b);
      return fa != fb ? fa > fb : a.key < b.key;
    };
  };
  if (column == "hits") return by([](const jit::EntryFile& f) { return f.usage.hits; });
  if (column == "size") return by([](const jit::EntryFile& f) { return f.bytes; });
  if (column == "compile") return by([](const jit::EntryFile& f) { return f.entry.compile_ms; });
  if (column == "used") return by([](const jit::EntryFile& f) { return f.last_used_us(); });
  throw UsageError("--sort takes hits, size, compile or used, not '" + column + "'");
}

void print_json(const std::string& dir, const std::vector<jit::EntryFile>& files) {
  Json entries = Json::array();
  for (const auto& f : files) entries.push_back(entry_json(f));
  write_json({{"dir", dir}, {"entries", std::move(entries)}});
}

std::vector<std::string> row(const jit::EntryFile& f, int64_t now) {
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.1f", f.entry.compile_ms);
  return {f.key.substr(0, 12),
          shorten(f.entry.name, 40),
          shorten(f.entry.summary, 36),
          shorten(f.entry.dtypes, 18),
          f.entry.arch,
          human_bytes(f.bytes),
          ms,
          std::to_string(f.usage.hits),
          human_age(f.last_used_us(), now)};
}

void print_text(const std::string& dir, const std::vector<jit::EntryFile>& files) {
  std::vector<std::vector<std::string>> rows = {
      {"KEY", "NAME", "SUMMARY", "DTYPES", "ARCH", "SIZE", "COMPILE MS", "HITS", "LAST USED"}};
  int64_t now = jit::now_us(), hits = 0;
  uint64_t bytes = 0, bad_bytes = 0;
  size_t bad = 0;
  for (const auto& f : files) {
    if (!f.valid) {
      ++bad;
      bad_bytes += f.bytes;
      continue;
    }
    bytes += f.bytes;
    hits += f.usage.hits;
    rows.push_back(row(f, now));
  }
  if (rows.size() > 1)
    print_table(rows, {false, false, false, false, false, true, true, true, false});
  std::cout << count(files.size() - bad, "entry", "entries") << ", " << human_bytes(bytes) << ", "
            << count(uint64_t(hits), "hit", "hits") << " in " << dir << "\n";
  if (bad)
    std::cout << count(bad, "bad file", "bad files") << " (damaged or untrusted, "
              << human_bytes(bad_bytes) << ") not shown: run kiln-cache verify\n";
}

}  // namespace

int run_list(const Options& o) {
  Order order = order_for(o.sort);
  auto files = load_entries(o.dir);
  std::stable_sort(files.begin(), files.end(), order);
  if (o.json)
    print_json(o.dir, files);
  else
    print_text(o.dir, files);
  return 0;
}

}  // namespace kiln_cache
