#include "common/parallel.hpp"

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::cpu {
namespace {

class Pool {
 public:
  Pool() {
    unsigned n = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned i = 1; i < n; ++i) workers_.emplace_back([this] { work(); });
  }
  ~Pool() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  void run(int64_t n, const std::function<void(int64_t)>& f) {
    std::lock_guard serial(run_mu_);  // one parallel region at a time
    {
      std::lock_guard lock(mu_);
      job_ = &f;
      n_ = n;
      next_ = 0;
      pending_ = n;
      error_ = nullptr;
      ++generation_;
    }
    cv_.notify_all();
    drain();
    std::unique_lock lock(mu_);
    // Also wait for every worker to leave drain(), so none sees the next job half set up.
    done_cv_.wait(lock, [this] { return pending_ == 0 && active_ == 0; });
    job_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void drain() {
    for (;;) {
      int64_t i = next_.fetch_add(1);
      if (i >= n_) return;
      try {
        (*job_.load())(i);
      } catch (...) {
        std::lock_guard lock(mu_);
        if (!error_) error_ = std::current_exception();
      }
      if (pending_.fetch_sub(1) == 1) {
        std::lock_guard lock(mu_);
        done_cv_.notify_all();
      }
    }
  }

  void work() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stop_ || (generation_ != seen && job_); });
        if (stop_) return;
        seen = generation_;
        ++active_;
      }
      drain();
      std::lock_guard lock(mu_);
      --active_;
      done_cv_.notify_all();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mu_, run_mu_;
  std::condition_variable cv_, done_cv_;
  // Atomics: a worker still draining the previous job may pick up the next one unlocked.
  std::atomic<const std::function<void(int64_t)>*> job_{nullptr};
  std::atomic<int64_t> next_{0}, pending_{0}, n_{0};
  int active_ = 0;  // workers inside drain(); guarded by mu_
  uint64_t generation_ = 0;
  std::exception_ptr error_;
  bool stop_ = false;
};

Pool& pool() {
  static Pool p;
  return p;
}

}  // namespace

void parallel_for(int64_t n, const std::function<void(int64_t)>& f) {
  if (n <= 0) return;
  if (n == 1 || pool().size() == 1) {
    for (int64_t i = 0; i < n; ++i) f(i);
    return;
  }
  pool().run(n, f);
}

int thread_count() { return pool().size(); }

}  // namespace kiln::cpu
