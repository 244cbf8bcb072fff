// kiln-cache stats: totals over the directory.
#include <iostream>

#include "cli.hpp"

namespace kiln_cache {
namespace {

struct Totals {
  size_t entries = 0, bad = 0;
  uint64_t bytes = 0;
  int64_t hits = 0;
  double compile_ms = 0;  // what compiling every entry once cost
  double saved_ms = 0;    // what the hits avoided: sum of hits x compile ms
};

Totals totals_of(const std::vector<kiln::jit::EntryFile>& files) {
  Totals t;
  for (const auto& f : files) {
    t.bytes += f.bytes;
    if (!f.valid) {
      ++t.bad;
      continue;
    }
    ++t.entries;
    t.hits += f.usage.hits;
    t.compile_ms += f.entry.compile_ms;
    t.saved_ms += double(f.usage.hits) * f.entry.compile_ms;
  }
  return t;
}

void print_json(const std::string& dir, const Totals& t) {
  write_json({{"dir", dir},
              {"entries", t.entries},
              {"bad_entries", t.bad},
              {"bytes", t.bytes},
              {"hits", t.hits},
              {"compile_ms", t.compile_ms},
              {"saved_ms", t.saved_ms}});
}

void print_text(const std::string& dir, const Totals& t) {
  std::cout << "directory     " << dir << "\nentries       " << t.entries;
  if (t.bad) std::cout << " (and " << t.bad << " damaged or untrusted: run kiln-cache verify)";
  std::cout << "\nsize          " << human_bytes(t.bytes) << "\nhits          " << t.hits
            << "\ncompile time  " << human_ms(t.compile_ms)
            << " (compiling every entry once)\ntime saved    " << human_ms(t.saved_ms)
            << " (hits x compile time)\n";
}

}  // namespace

int run_stats(const Options& o) {
  Totals t = totals_of(load_entries(o.dir));
  if (o.json)
    print_json(o.dir, t);
  else
    print_text(o.dir, t);
  return 0;
}

}  // namespace kiln_cache
