#include "runtime/stats.hpp"

#include "runtime/pipeline.hpp"

#include "kiln/stats.hpp"

#include <initializer_list>

namespace kiln::runtime {

Counters& counters() {
  static Counters c;
  return c;
}

}  // namespace kiln::runtime

namespace kiln {

EngineStats engine_stats() {
  auto& c = runtime::counters();
  return {c.plans, c.kernels, c.library, c.copies, c.bytes};
}
void reset_engine_stats() {
  auto hold = runtime::hold_evaluation();  // the counters' writers hold it (runtime/stats.hpp)
  auto& c = runtime::counters();
  for (auto* n : {&c.plans, &c.kernels, &c.library, &c.copies, &c.bytes}) *n = 0;
}

}  // namespace kiln
