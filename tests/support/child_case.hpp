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
#include <vector>

extern char** environ;

namespace kiln::test_support {

// Starts the case `name` in a child, with this process's environment as it is now plus `env`
// ("NAME=value" entries); the child's pid, or -1.
inline pid_t start_case_in_child(const std::string& name,
                                 const std::vector<std::string>& env = {}) {
  std::string self = "/proc/self/exe", filter = "--test-case=" + name;
  const char* argv[] = {self.c_str(), filter.c_str(), "--no-skip", nullptr};
  std::vector<char*> envp;
  for (char** e = environ; *e; ++e) envp.push_back(*e);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid;
  if (posix_spawn(&pid, self.c_str(), nullptr, nullptr, const_cast<char**>(argv), envp.data()) != 0)
    return -1;
  return pid;
}

// Waits for the child `pid` until `end`: its exit status, or -1 when it died by a signal or was
// still running at `end` (it is then killed: a hang fails).
inline int wait_for_child(pid_t pid, std::chrono::steady_clock::time_point end) {
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > end) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Runs the case `name` in a child with this process's environment as it is now; whether it
// exited with status 0 within `deadline` (a child still running then is killed: a hang fails).
inline bool run_case_in_child(const std::string& name,
                              std::chrono::milliseconds deadline = std::chrono::minutes(10)) {
  pid_t pid = start_case_in_child(name);
  return pid > 0 && wait_for_child(pid, std::chrono::steady_clock::now() + deadline) == 0;
}

}  // namespace kiln::test_support
