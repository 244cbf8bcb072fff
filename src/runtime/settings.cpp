// The evaluation settings of kiln/array.hpp: eager or lazy mode (per thread, from KILN_MODE),
// and whether an evaluation also writes the held nodes below its outputs.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>

#include "jit/cache_config.hpp"
#include "kiln/array.hpp"
#include "runtime/settings.hpp"

namespace kiln {
namespace {

// Every thread reads KILN_MODE as it starts: one warning per bad value, not one per thread.
void warn_bad_mode(const std::string& value) {
  static std::mutex mu;
  static std::string warned;
  std::lock_guard lock(mu);
  if (value == warned) return;
  warned = value;
  jit::warn("KILN_MODE=" + value + " is not one of lazy, eager; using lazy");
}

// Out of line: inlined, it made get_mode save six registers on every call.
[[gnu::noinline]] Mode mode_from_env() {
  const char* m = std::getenv("KILN_MODE");
  std::string value = m ? m : "";
  if (value == "eager") return Mode::Eager;
  if (!value.empty() && value != "lazy") warn_bad_mode(value);
  return Mode::Lazy;
}
std::atomic<bool> g_materialize_held{true};

}  // namespace

namespace runtime {
constinit thread_local int8_t t_mode = -1;
Mode first_mode() {
  t_mode = static_cast<int8_t>(mode_from_env());
  return static_cast<Mode>(t_mode);
}
}  // namespace runtime

void set_mode(Mode m) { runtime::t_mode = static_cast<int8_t>(m); }
Mode get_mode() { return runtime::thread_mode(); }

void set_materialize_held(bool on) { g_materialize_held = on; }
bool get_materialize_held() { return g_materialize_held; }

}  // namespace kiln
