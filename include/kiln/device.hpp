// Where an array lives.
#pragma once
#include <cstdint>
#include <string>

namespace kiln {

struct Device {
  enum class Kind : uint8_t { Host, Cuda };
  Kind kind = Kind::Host;
  int index = 0;
  bool is_host() const { return kind == Kind::Host; }
  bool is_cuda() const { return kind == Kind::Cuda; }
  bool operator==(const Device&) const = default;
  std::string str() const;  // "host", "cuda:0"
};

inline Device host() { return {}; }
// A CUDA device. Using it where no GPU (or driver) exists raises DeviceError.
Device cuda(int index = 0);
// True when a driver and at least one GPU are present. Never throws.
bool cuda_available();
int cuda_device_count();
// Waits until kiln's work on the calling thread's current stream of the device has finished
// (kiln/stream.hpp); outside any StreamScope that is everything kiln queued there whose
// evaluation has returned. A no-op for the host.
void synchronize(Device d);

}  // namespace kiln
