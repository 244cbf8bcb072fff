#include "common/background.hpp"

#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln {
namespace {

struct Task final : BackgroundStop {
  mutable std::mutex mu;
  bool stop = false;
  std::thread thread;

  bool requested() const override {
    std::lock_guard lock(mu);
    return stop;
  }
  // Joined, not waited for by a flag: the thread's own end (its thread-local clean-up, such as
  // OpenSSL's per-thread state) must also be over before exit() runs the atexit handlers.
  void stop_and_join() {
    {
      std::lock_guard lock(mu);
      stop = true;
    }
    if (thread.joinable()) thread.join();
  }
};

// The tasks a thread started; its destructor runs when that thread ends.
struct Started {
  std::vector<std::shared_ptr<Task>> tasks;
  ~Started() {
    for (const auto& t : tasks) t->stop_and_join();
  }
};
thread_local Started t_started;

}  // namespace

bool start_background(std::function<void(const BackgroundStop&)> work) {
  auto task = std::make_shared<Task>();
  try {
    // The thread sees the task only through requested(), never its own std::thread.
    task->thread = std::thread([stop = task.get(), work = std::move(work)] {
      try {
        work(*stop);
      } catch (...) {  // the work reports its own failures where they matter
      }
    });
  } catch (...) {
    return false;
  }
  t_started.tasks.push_back(std::move(task));
  return true;
}

}  // namespace kiln
