// kiln-cache clear: remove every entry.
#include <iostream>

#include "cli.hpp"

namespace kiln_cache {

int run_clear(const Options& o) {
  ArgReader(o.args).positionals(0);
  require_directory(o.dir);
  kiln::jit::ClearResult r = kiln::jit::clear_directory(o.dir);
  if (o.json) {
    Json j;
    j.begin_object().key("dir").value(o.dir).key("removed_entries").value(uint64_t(r.entries));
    j.key("removed_bytes").value(r.bytes).key("complete").value(r.complete).end_object().print();
  } else {
    std::cout << "removed " << count(r.entries, "entry", "entries") << " (" << human_bytes(r.bytes)
              << ") from " << o.dir << "\n";
  }
  if (!r.complete) throw Failure("some files in " + o.dir + " could not be removed (permissions?)");
  return 0;
}

}  // namespace kiln_cache
