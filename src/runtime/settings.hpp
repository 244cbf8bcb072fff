// The calling thread's evaluation mode, read where every operation is built (api::finish):
// inline, a thread-local load, where kiln::get_mode is a call.
#pragma once
#include <cstdint>

#include "kiln/array.hpp"

namespace kiln::runtime {

// The thread's mode, -1 until its first use reads KILN_MODE. Constant-initialised (constinit),
// so that another file reads it directly, with no initialisation check around it.
extern constinit thread_local int8_t t_mode;
// Reads KILN_MODE into t_mode: a thread's first read.
Mode first_mode();

inline Mode thread_mode() {
  if (t_mode < 0) [[unlikely]]
    return first_mode();
  return static_cast<Mode>(t_mode);
}

}  // namespace kiln::runtime
