// KILN_DEBUG: 1 prints a line per kernel launch (name, cache origin, time, GB/s), 2 adds each
// plan, 3 adds each generated kernel's source. Read once per process.
#pragma once

namespace kiln::runtime {

int debug_level();

}  // namespace kiln::runtime
