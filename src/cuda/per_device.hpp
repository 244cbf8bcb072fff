// State kept per CUDA device and built on first use. Each device has its own std::call_once, so
// threads racing to initialise one device wait for a single initialisation while other devices
// stay independent. Callers validate the index (kiln::gpu::device) before get().
#pragma once
#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>

#include "kiln/device.hpp"

namespace kiln::gpu {

template <class T>
class PerDevice {
 public:
  PerDevice() : count_(std::max(cuda_device_count(), 0)), slots_(new Slot[count_]) {}

  // The state of device `index`, built by init(T&) on the first call. If init throws, the next
  // call tries again (call_once semantics).
  template <class Init>
  T& get(int index, Init&& init) {
    Slot& s = slots_[index];
    // Built long ago on every call but the first few: one load, not call_once's library call.
    if (s.ready.load(std::memory_order_acquire)) return s.value;
    std::call_once(s.once, [&] {
      init(s.value);
      s.ready.store(true, std::memory_order_release);
    });
    return s.value;
  }

  // The state if it has been built, else null. Never builds it, never throws.
  T* find(int index) noexcept {
    if (index < 0 || index >= count_) return nullptr;
    Slot& s = slots_[index];
    return s.ready.load(std::memory_order_acquire) ? &s.value : nullptr;
  }

  int count() const { return count_; }

 private:
  struct Slot {
    std::once_flag once;
    std::atomic<bool> ready{false};
    T value{};
  };
  int count_;
  std::unique_ptr<Slot[]> slots_;
};

// Makes a device current for a scope and restores the previous one, so kiln's internal work on
// device i does not change the device that the caller's thread had selected.
class ScopedDevice {
 public:
  explicit ScopedDevice(int index);
  ~ScopedDevice();
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_ = -1;
  int index_;
};

}  // namespace kiln::gpu
