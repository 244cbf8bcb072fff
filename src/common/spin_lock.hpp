// A lock for sections of a few dozen instructions taken on every node built or every block
// allocated: one exchange to take, one store to release, where a mutex costs a library call and
// an atomic operation each way. A waiter yields its core, since the holder may have been
// descheduled; so a rare long hold (a cache's trim) costs waiters time, not a spinning core.
#pragma once
#include <atomic>
#include <thread>

namespace kiln {

class SpinLock {
 public:
  void lock() {
    while (held_.exchange(true, std::memory_order_acquire))
      while (held_.load(std::memory_order_relaxed)) std::this_thread::yield();
  }
  void unlock() { held_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> held_{false};
};

}  // namespace kiln
