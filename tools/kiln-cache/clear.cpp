// kiln-cache clear: remove every entry.
#include <iostream>

#include "cli.hpp"

namespace kiln_cache {

int run_clear(const Options& o) {
  require_trusted_directory(o.dir, "clear");
  kiln::jit::ClearResult r = kiln::jit::clear_directory(o.dir);
  if (o.json) {
    write_json({{"dir", o.dir},
                {"removed_entries", r.entries},
                {"removed_bytes", r.bytes},
                {"complete", r.complete}});
  } else {
    std::cout << "removed " << count(r.entries, "entry", "entries") << " (" << human_bytes(r.bytes)
              << ") from " << o.dir << "\n";
  }
  if (!r.complete) throw Failure("some files in " + o.dir + " could not be removed (permissions?)");
  return 0;
}

}  // namespace kiln_cache
