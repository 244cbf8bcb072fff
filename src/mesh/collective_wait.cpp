#include "mesh/collective_wait.hpp"

#include <algorithm>
#include <thread>
#include <vector>

#include "kiln/errors.hpp"

namespace kiln::mesh {
namespace {

[[noreturn]] void fail(InFlight& op, const std::string& what, const std::string& why) {
  op.abort();
  throw DeviceError(what + " failed: " + why +
                    ". kiln aborted the mesh's communicators; its collectives now fail: make a "
                    "new kiln::Mesh (if a process or GPU died, restart the job)");
}

}  // namespace

void wait_or_abort(InFlight& op, std::chrono::milliseconds timeout, const std::string& what) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  std::vector<bool> done(op.ranks(), false);
  // Short collectives finish within microseconds: poll often at first, then back off to a
  // millisecond so that a long one does not keep a core busy.
  auto pause = std::chrono::microseconds(1);
  for (;;) {
    bool all = true;
    for (int r = 0; r < op.ranks(); ++r) {
      if (done[r]) continue;
      if (auto why = op.failure(r))
        fail(op, what, "rank " + std::to_string(op.rank_name(r)) + ": " + *why);
      done[r] = op.finished(r);
      all = all && done[r];
    }
    if (all) return;
    if (Clock::now() >= deadline) {
      int waiting = static_cast<int>(std::find(done.begin(), done.end(), false) - done.begin());
      fail(op, what,
           "rank " + std::to_string(op.rank_name(waiting)) + " did not finish within " +
               std::to_string(timeout.count()) +
               " ms (kiln::MeshOptions::timeout): a rank died, hangs, or never joined");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

}  // namespace kiln::mesh
