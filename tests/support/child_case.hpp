// One case of this test binary run in a fresh process, for what only a new process shows (a
// disk cache found from the start, a first call with nothing loaded yet). The case is marked
// doctest::skip(), so that only its parent runs it (with --no-skip); a filter that matches no
// case exits 1 (test_main.cpp), so a misspelled name cannot pass.
#pragma once
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <string>
#include <thread>

extern char** environ;

namespace kiln::test_support {

// Runs the case `name` in a child with this process's environment as it is now; whether it
// exited with status 0 within `deadline` (a child still running then is killed: a hang fails).
inline bool run_case_in_child(const std::string& name,
                              std::chrono::milliseconds deadline = std::chrono::minutes(10)) {
  std::string self = "/proc/self/exe", filter = "--test-case=" + name;
  const char* argv[] = {self.c_str(), filter.c_str(), "--no-skip", nullptr};
  pid_t pid;
  if (posix_spawn(&pid, self.c_str(), nullptr, nullptr, const_cast<char**>(argv), environ) != 0)
    return false;
  int status = 0;
  const auto end = std::chrono::steady_clock::now() + deadline;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > end) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace kiln::test_support
