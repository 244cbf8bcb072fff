// Work on a thread of its own that the thread which started it waits for when that thread ends
// (the main thread: in exit(), which runs thread_local destructors before any atexit handler).
// A process must not start its clean-up while such work is inside a library's initialiser:
// exit runs the handlers registered last first, and a library registers its static destructors
// while it initialises, so they would run under the initialiser. A process exiting while NVRTC
// loaded on a detached thread hung or crashed (developer machine: 1 in ~500 processes exiting
// 0-30 ms after the start; with a wait registered by atexit instead, 147 of 1500 hung).
#pragma once
#include <functional>

namespace kiln {

// What the work may ask: whether its starter is ending, so that it stops after its current step.
class BackgroundStop {
 public:
  virtual bool requested() const = 0;

 protected:
  ~BackgroundStop() = default;
};

// Runs work on a thread of its own, joined (after a stop request) when the calling thread ends,
// so that the thread's own end is over too: a process whose warm-up thread freed OpenSSL's
// per-thread state while exit() ran OPENSSL_cleanup double-freed it (ASan: 10 of 60 processes of
// test_cuda_runtime's exit case, with a wait for the work alone). False, with nothing run, when
// no thread could be made.
bool start_background(std::function<void(const BackgroundStop&)> work);

}  // namespace kiln
