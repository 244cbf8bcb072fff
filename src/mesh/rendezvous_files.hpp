// Processes that meet through files (a directory or one file every rank can see): writing a
// file so that readers see all of it or nothing, polling for one with a deadline, and telling a
// live process from an exited one. Used by the host processes' communicator and by the NCCL
// unique id's rendezvous.
#pragma once
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <istream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "kiln/errors.hpp"

namespace kiln::mesh::rendezvous {

// Who wrote a rendezvous file, written into it as "pid host": so that a file an exited process
// left (an earlier run's) is not taken for this run's, and a peer that exits is noticed.
struct Writer {
  long pid = 0;
  std::string host;

  static Writer me();                  // this process
  static Writer parse(std::istream&);  // reads "pid host"
  std::string str() const;             // "pid host"
  // A process of this host that has exited (an exited one not yet reaped counts as gone); one
  // on another host cannot be seen, so it never is.
  bool gone() const;
};
// Written under a temporary name, then renamed into place. DeviceError when it cannot be.
void write_atomically(const std::filesystem::path& path, const void* data, size_t bytes);
std::optional<std::vector<char>> read_if_present(const std::filesystem::path& path);

// Calls attempt() until it returns a value; between attempts backs off from 50 us to 5 ms and,
// every 20 ms, calls check(), which throws when waiting is pointless (attempt() gets one more
// try first, for a peer that posted and then exited). DeviceError late() at the deadline.
template <class Attempt, class Check, class Late>
auto poll(Attempt attempt, Check check, std::chrono::steady_clock::time_point deadline, Late late) {
  using Clock = std::chrono::steady_clock;
  auto pause = std::chrono::microseconds(50);
  auto next_check = Clock::now();
  for (;;) {
    if (auto got = attempt()) return std::move(*got);
    const auto now = Clock::now();
    if (now >= next_check) {
      try {
        check();
      } catch (...) {
        if (auto got = attempt()) return std::move(*got);
        throw;
      }
      next_check = now + std::chrono::milliseconds(20);
    }
    if (now >= deadline) throw DeviceError(late());
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(5000));
  }
}

}  // namespace kiln::mesh::rendezvous
