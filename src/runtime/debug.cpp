#include "runtime/debug.hpp"

#include <cstdlib>

namespace kiln::runtime {

int debug_level() {
  static const int level = [] {
    const char* d = std::getenv("KILN_DEBUG");
    return d ? std::atoi(d) : 0;
  }();
  return level;
}

}  // namespace kiln::runtime
