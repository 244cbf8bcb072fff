// Forked children that start at the same moment, for tests of what processes sharing a cache
// directory do to each other.
#pragma once
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

namespace kiln::test_support {

// Forks `n` children that block on a pipe until all exist, then run `body(i)`; returns how many
// exited with status 0. A child still running after `timeout_s` seconds is killed by alarm()
// and counts as a failure, so a hang fails the test instead of stalling it.
template <typename Body>
int run_children(int n, unsigned timeout_s, Body body) {
  int go[2];
  REQUIRE(::pipe(go) == 0);
  std::vector<pid_t> pids;
  for (int i = 0; i < n; ++i) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::alarm(timeout_s);
      ::close(go[1]);
      char c;
      while (::read(go[0], &c, 1) > 0) {
      }
      ::_exit(body(i) ? 0 : 1);
    }
    pids.push_back(pid);
  }
  ::close(go[0]);
  ::close(go[1]);  // EOF releases every child at once
  int ok = 0;
  for (pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  return ok;
}

}  // namespace kiln::test_support
