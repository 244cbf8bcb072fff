// KILN_DEBUG: 1 prints a line per step (a kernel: name, cache origin, time, GB/s, its first
// launch marked as such; an FFT or a random draw: time, GB/s), 2 adds each
// plan, 3 adds each generated kernel's source. Read once per process.
#pragma once

namespace kiln::runtime {

int debug_level();

}  // namespace kiln::runtime
