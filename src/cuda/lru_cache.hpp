// A thread-safe cache of library plans (cuBLASLt matmul plans) keyed by a list of integers,
// capped on the number of entries, least recently used evicted first. A value evicted while a
// caller still holds it lives until that caller lets go. Values are made outside the lock
// (planning takes milliseconds) and destroyed outside it.
#pragma once
#include <cstdint>
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
    size_t entries, max_entries;
    int64_t hits, misses;
  };

  explicit LruCache(size_t max_entries) : max_(max_entries) {}

  // The cached value for key, or make() (a Ref) stored under it.
  template <class Make>
  Ref acquire(const Key& key, Make&& make) {
    {
      std::lock_guard lock(mu_);
      if (auto it = index_.find(key); it != index_.end()) {
        ++hits_;
        lru_.splice(lru_.begin(), lru_, it->second);  // most recently used first
        return it->second->second;
      }
      ++misses_;
    }
    Ref value = make();
    std::vector<Ref> evicted;  // destroyed after the lock is released
    std::lock_guard lock(mu_);
    if (auto it = index_.find(key); it != index_.end()) return it->second->second;  // a race
    lru_.emplace_front(key, value);
    index_[key] = lru_.begin();
    trim(evicted);
    return value;
  }

  Info info() {
    std::lock_guard lock(mu_);
    return {lru_.size(), max_, hits_, misses_};
  }

  void set_limit(size_t max_entries) {
    std::vector<Ref> evicted;
    std::lock_guard lock(mu_);
    max_ = max_entries;
    trim(evicted);
  }

  void clear() {
    std::vector<Ref> evicted;
    std::lock_guard lock(mu_);
    size_t keep = std::exchange(max_, 0);  // trim everything, then restore the limit
    trim(evicted);
    max_ = keep;
  }

 private:
  using Lru = std::list<std::pair<Key, Ref>>;

  void trim(std::vector<Ref>& evicted) {
    while (lru_.size() > max_) {
      evicted.push_back(std::move(lru_.back().second));
      index_.erase(lru_.back().first);
      lru_.pop_back();
    }
  }

  std::mutex mu_;
  Lru lru_;
  std::map<Key, typename Lru::iterator> index_;
  size_t max_;
  int64_t hits_ = 0, misses_ = 0;
};

}  // namespace kiln::gpu
