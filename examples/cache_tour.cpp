// The kernel cache across processes: this program evaluates an expression (its kernels are
// compiled by NVRTC and written to KILN_CACHE_DIR), then runs itself again as a second process
// that evaluates the same expression and finds every kernel on disk, compiling nothing. Last,
// `kiln-cache list` and `kiln-cache show` describe what the cache holds. The cache directory is
// a fresh temporary one, removed at the end, so your own cache is untouched.
//
// Without a GPU, KILN_JIT_ARCH=sm_90 makes kiln compile every kernel it runs on the host too, so
// the tour works the same on any machine with the CUDA toolkit.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <kiln/cache.hpp>
#include <kiln/kiln.hpp>
#include <string>
#include <system_error>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;

constexpr const char* kChildFlag = "--second-process";

void section(const std::string& title) { std::printf("\n== %s\n", title.c_str()); }

// Runs argv with this process's environment and output; returns its exit status (-1 when it
// could not run or did not exit normally).
int run(const std::vector<std::string>& argv) {
  std::fflush(stdout);  // what was printed so far comes before the child's output
  std::cout.flush();
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int err = ::posix_spawn(&pid, argv[0].c_str(), nullptr, nullptr, args.data(), environ);
  if (err != 0) {
    std::printf("could not run %s: %s\n", argv[0].c_str(), std::strerror(err));
    return -1;
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The same work in both processes. Returns what the kernel cache did in this process.
kiln::cache::Stats evaluate(int process) {
  kiln::Device d = kiln::cuda_available() ? kiln::cuda() : kiln::host();
  kiln::Array x = kiln::arange(0, 1 << 20, 1, kiln::DType::Float32, d) * 1e-5;
  kiln::Array y = kiln::sin(x) * 2 + kiln::cos(x) / 3;
  double top = kiln::max(y).item<double>();
  double mean = kiln::mean(y * y).item<double>();
  kiln::cache::Stats s = kiln::cache::stats();
  std::printf("process %d (pid %d) on %s: max(y) = %.4f, mean(y * y) = %.4f\n", process,
              static_cast<int>(::getpid()), d.str().c_str(), top, mean);
  std::printf("process %d: %lld compiled (%.1f ms of NVRTC), %lld disk hits, %lld memory hits\n",
              process, static_cast<long long>(s.compiles), s.compile_ms,
              static_cast<long long>(s.disk_hits), static_cast<long long>(s.memory_hits));
  return s;
}

// The second process: its exit status says whether it compiled nothing and read the disk.
int second_process() {
  kiln::cache::Stats s = evaluate(2);
  return s.compiles == 0 && s.disk_hits > 0 ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc > 1 && std::string(argv[1]) == kChildFlag) return second_process();

    bool gpu = kiln::cuda_available();
    // Both set before kiln evaluates anything (it reads them once), and inherited by the child.
    if (!gpu) ::setenv("KILN_JIT_ARCH", "sm_90", 0);
    std::string tmpl = (fs::temp_directory_path() / "kiln-cache-tour-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) {
      std::perror("mkdtemp");
      return 1;
    }
    const std::string dir = tmpl;
    ::setenv("KILN_CACHE_DIR", dir.c_str(), 1);
    ::setenv("KILN_CACHE", "disk", 1);
    std::printf("kiln cache tour. GPU: %s. KILN_CACHE_DIR=%s (fresh, empty)\n",
                gpu ? "found" : "none (kernels compiled for KILN_JIT_ARCH on the host)",
                dir.c_str());
    std::printf(
        "Both processes compute, for x = arange(2^20) * 1e-5 in float32,\n"
        "y = sin(x) * 2 + cos(x) / 3, then max(y) and mean(y * y).\n");

    section("process 1: an empty cache, so every kernel is compiled");
    kiln::cache::Stats first = evaluate(1);

    section("process 2: the same program again, as a child process");
    const fs::path self = fs::read_symlink("/proc/self/exe");
    int status = run({self.string(), kChildFlag});
    if (status == 0)
      std::printf(
          "process 2 compiled nothing: each of the %lld kernels came from the disk cache\n"
          "(%.1f ms of NVRTC saved).\n",
          static_cast<long long>(first.compiles), first.compile_ms);
    else
      std::printf("process 2 did not find its kernels on disk (exit status %d)\n", status);

    section("kiln-cache list");
    const fs::path tool = self.parent_path() / "kiln-cache";
    if (::access(tool.c_str(), X_OK) != 0) {
      std::printf("kiln-cache is not next to this program (%s); build the kiln-cache target\n",
                  tool.c_str());
    } else {
      run({tool.string(), "--dir", dir, "list"});
      std::vector<kiln::cache::Entry> entries = kiln::cache::entries();
      if (!entries.empty()) {
        const std::string prefix = entries[0].key.substr(0, 12);
        section("kiln-cache show " + prefix + " (" + entries[0].name + ")");
        run({tool.string(), "--dir", dir, "show", prefix});
      }
    }

    std::error_code ec;
    fs::remove_all(dir, ec);
    std::printf("\nremoved %s\n", dir.c_str());
    return status == 0 ? 0 : 1;
  } catch (const kiln::Error& e) {
    std::cerr << "kiln error: " << e.what() << "\n";
    return 1;
  }
}
