// A thread-safe cache of library plans (cuFFT plans, cuBLASLt matmul plans) keyed by a list of
// integers, capped on the number of entries and on the sum of their costs (the device bytes a
// plan holds, such as a cuFFT work area), least recently used evicted first. A value evicted
// while a caller still holds it lives until that caller lets go. Values are made outside the
// lock (planning takes milliseconds) and destroyed outside it (a destructor may wait for the
// device).
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace kiln::gpu {

template <class Value>
class LruCache {
 public:
  using Key = std::vector<int64_t>;
  using Ref = std::shared_ptr<Value>;
  struct Info {
    size_t entries, cost, max_entries, max_cost;
    int64_t hits, misses;
  };

  explicit LruCache(size_t max_entries, size_t max_cost = std::numeric_limits<size_t>::max())
      : max_entries_(max_entries), max_cost_(max_cost) {}

  // The cached value for key, or make() (a Ref) stored under it at cost cost_of(*value).
  template <class Make, class Cost>
  Ref acquire(const Key& key, Make&& make, Cost&& cost_of) {
    {
      std::lock_guard lock(mu_);
      if (auto it = index_.find(key); it != index_.end()) {
        ++hits_;
        lru_.splice(lru_.begin(), lru_, it->second);  // most recently used first
        return it->second->value;
      }
      ++misses_;
    }
    Ref value = make();
    const size_t cost = cost_of(*value);
    std::vector<Ref> evicted;  // destroyed after the lock is released
    std::lock_guard lock(mu_);
    if (auto it = index_.find(key); it != index_.end()) return it->second->value;  // a race
    lru_.push_front({key, value, cost});
    index_[key] = lru_.begin();
    cost_ += cost;
    trim(evicted);
    return value;
  }
  template <class Make>
  Ref acquire(const Key& key, Make&& make) {
    return acquire(key, std::forward<Make>(make), [](const Value&) { return size_t{0}; });
  }

  // Whether key is cached, without counting a hit or a miss or touching the order.
  bool contains(const Key& key) {
    std::lock_guard lock(mu_);
    return index_.count(key) > 0;
  }

  Info info() {
    std::lock_guard lock(mu_);
    return {lru_.size(), cost_, max_entries_, max_cost_, hits_, misses_};
  }

  void set_limits(size_t max_entries, size_t max_cost = std::numeric_limits<size_t>::max()) {
    std::vector<Ref> evicted;
    std::lock_guard lock(mu_);
    max_entries_ = max_entries;
    max_cost_ = max_cost;
    trim(evicted);
  }

  // Drops every entry (the counters keep counting).
  void clear() {
    std::vector<Ref> evicted;
    std::lock_guard lock(mu_);
    size_t keep = std::exchange(max_entries_, 0);  // trim everything, then restore the limit
    trim(evicted);
    max_entries_ = keep;
  }

 private:
  struct Entry {
    Key key;
    Ref value;
    size_t cost;
  };
  using Lru = std::list<Entry>;

  void trim(std::vector<Ref>& evicted) {
    while (!lru_.empty() && (lru_.size() > max_entries_ || cost_ > max_cost_)) {
      cost_ -= lru_.back().cost;
      evicted.push_back(std::move(lru_.back().value));
      index_.erase(lru_.back().key);
      lru_.pop_back();
    }
  }

  std::mutex mu_;
  Lru lru_;
  std::map<Key, typename Lru::iterator> index_;
  size_t cost_ = 0;
  size_t max_entries_, max_cost_;
  int64_t hits_ = 0, misses_ = 0;
};

}  // namespace kiln::gpu
