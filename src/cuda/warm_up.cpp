#include "cuda/warm_up.hpp"

#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "cuda/cufft_api.hpp"
#include "jit/cache_config.hpp"
#include "jit/cache_key.hpp"
#include "jit/nvrtc_api.hpp"

namespace kiln::gpu {
namespace {

// NVRTC first: a program with an empty cache compiles at once, while its first FFT usually comes
// later. The loader opens one library at a time, so the other order makes the first compile wait
// for cuFFT. Measured on the H200 machine (fresh processes alternating; gpuwork/s19b.sh):
// a first integer fftn with a warm cache 3.95-5.16 ms this way, 3.92-5.21 cuFFT first, 7.56-9.85
// with nothing loaded, 8.65-9.78 with NVRTC alone; the first compile with an empty cache 21.5-31.8
// ms this way, 27.4-38.6 cuFFT first.
constexpr const char* kDefault = "nvrtc,cufft";

void load(const std::string& library) {
  if (library == "nvrtc") jit::nvrtc();
  if (library == "cufft") fft::cufft();
}

}  // namespace

std::vector<std::string> preload_list(const char* setting) {
  std::vector<std::string> list;
  std::stringstream in(setting ? setting : kDefault);
  for (std::string name; std::getline(in, name, ',');) {
    if (name == "none" || name.empty()) continue;
    if (name == "nvrtc" || name == "cufft")
      list.push_back(name);
    else
      jit::warn("KILN_PRELOAD names '" + name +
                "', which kiln cannot load ahead (it knows nvrtc and cufft); leaving it out");
  }
  return list;
}

namespace {

// The thread's state, shared with the thread that started it, which waits for it when it ends:
// a library's initialiser must not be running when the process's clean-up starts. Exit runs the
// handlers registered last first, and a library registers its static destructors while it
// initialises, so an exit while NVRTC loaded destroyed NVRTC's statics under its initialiser,
// which then spun or crashed (developer machine, /tmp/exp/exitrace, a process exiting 0-30 ms
// after its first GPU touch: 147 of 1500 hung with an atexit handler waiting, 1 in ~500 before).
// A thread's thread_local destructors run before any of that, at exit() for the main thread.
// The wait stops the thread after its current step: at most one library's load.
struct WarmUp {
  std::mutex mu;
  std::condition_variable idle;
  bool stop = false, done = false;

  bool stopped() {
    std::lock_guard lock(mu);
    return stop;
  }
  void finish() {
    std::lock_guard lock(mu);
    done = true;
    idle.notify_all();
  }
};

struct WarmUpHolder {
  std::shared_ptr<WarmUp> state;  // set in the thread that started the warm-up only
  ~WarmUpHolder() {
    if (!state) return;
    std::unique_lock lock(state->mu);
    state->stop = true;
    state->idle.wait(lock, [this] { return state->done; });
  }
};
thread_local WarmUpHolder t_started;

void run(const std::shared_ptr<WarmUp>& state, const std::vector<std::string>& libraries) {
  try {
    jit::prepare_cache_keys();
    for (const auto& library : libraries)
      if (!state->stopped()) load(library);
  } catch (...) {  // reported to whoever needs it, who tries again
  }
  state->finish();
}

}  // namespace

void warm_up_in_background() {
  static std::once_flag started;
  std::call_once(started, [] {
    jit::foresee_nvrtc();  // here, before the thread below may hold the loader
    const auto libraries = preload_list(std::getenv("KILN_PRELOAD"));
    auto state = std::make_shared<WarmUp>();
    try {
      std::thread(run, state, libraries).detach();
      t_started.state = std::move(state);
    } catch (...) {  // no thread: each is done where it is first needed
    }
  });
}

}  // namespace kiln::gpu
