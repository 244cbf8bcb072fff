#include "common/background.hpp"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln {
namespace {

struct Task final : BackgroundStop {
  mutable std::mutex mu;
  std::condition_variable idle;
  bool stop = false, done = false;

  bool requested() const override {
    std::lock_guard lock(mu);
    return stop;
  }
  void finish() {
    std::lock_guard lock(mu);
    done = true;
    idle.notify_all();
  }
  void stop_and_wait() {
    std::unique_lock lock(mu);
    stop = true;
    idle.wait(lock, [this] { return done; });
  }
};

// The tasks a thread started; its destructor runs when that thread ends.
struct Started {
  std::vector<std::shared_ptr<Task>> tasks;
  ~Started() {
    for (const auto& t : tasks) t->stop_and_wait();
  }
};
thread_local Started t_started;

}  // namespace

bool start_background(std::function<void(const BackgroundStop&)> work) {
  auto task = std::make_shared<Task>();
  try {
    std::thread([task, work = std::move(work)] {
      try {
        work(*task);
      } catch (...) {  // the work reports its own failures where they matter
      }
      task->finish();
    }).detach();
  } catch (...) {
    return false;
  }
  t_started.tasks.push_back(std::move(task));
  return true;
}

}  // namespace kiln
