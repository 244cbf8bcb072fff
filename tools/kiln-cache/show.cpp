// kiln-cache show KEY: one entry in full, with its SASS when cuobjdump is available.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "cli.hpp"
#include "jit/file_util.hpp"

extern char** environ;

namespace kiln_cache {
namespace {
namespace jit = kiln::jit;

// The disassembly, or why there is none.
struct Disassembly {
  std::string kind;  // "sass", "ptx" or "" when unavailable
  std::string text;
  std::string note;  // why unavailable
};

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

// Runs argv[0] with stdout and stderr into one pipe; returns the output and the exit status.
std::pair<std::string, int> run_capture(const std::vector<std::string>& argv) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return {"cannot create a pipe", -1};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int err = ::posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  std::string out;
  if (auto bytes = jit::read_all(pipe_fds[0])) out.assign(bytes->begin(), bytes->end());
  ::close(pipe_fds[0]);
  if (err != 0) return {"cannot run " + argv[0], -1};
  int status = 0;
  ::waitpid(pid, &status, 0);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

// cuobjdump reads files only, so the cubin goes to a temporary file first.
Disassembly sass_of(const std::vector<char>& cubin) {
  std::string tool = find_on_path("cuobjdump");
  if (tool.empty())
    return {"", "",
            "cuobjdump is not on PATH (it ships with the CUDA toolkit, /usr/local/cuda/bin)"};
  const char* tmpdir = std::getenv("TMPDIR");
  std::string path = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/kiln-cache-XXXXXX.cubin";
  int fd = ::mkstemps(path.data(), 6);
  if (fd < 0) return {"", "", "cannot create a temporary file for cuobjdump"};
  int err = jit::write_all(fd, cubin);
  ::close(fd);
  auto [out, status] =
      err ? std::pair<std::string, int>{"", -1} : run_capture({tool, "-sass", path});
  ::unlink(path.c_str());
  if (status != 0) return {"", "", "cuobjdump -sass failed: " + shorten(out, 300)};
  return {"sass", out, ""};
}

Disassembly disassemble(const jit::CacheEntry& e) {
  if (e.arch.starts_with("compute_")) {  // the binary is NUL-terminated PTX text
    std::string ptx(e.binary.begin(), e.binary.end());
    return {"ptx", ptx.substr(0, ptx.find('\0')), ""};
  }
  return sass_of(e.binary);
}

void print_json(const jit::EntryFile& f, const Disassembly& d) {
  Json j;
  j.begin_object();
  entry_members(j, f);
  j.key("binary_bytes").value(uint64_t(f.entry.binary.size()));
  j.key("source").value(f.entry.source);
  j.key("sass");
  d.kind == "sass" ? j.value(d.text) : j.null();
  j.key("ptx");
  d.kind == "ptx" ? j.value(d.text) : j.null();
  if (d.kind.empty()) j.key("sass_unavailable").value(d.note);
  j.end_object().print();
}

void print_metadata(const jit::EntryFile& f) {
  const auto& e = f.entry;
  int64_t now = jit::now_us();
  std::cout << "key        " << f.key << "\nfile       " << f.path << "\nname       " << e.name
            << "\nsummary    " << e.summary << "\narch       " << e.arch << "\nnvrtc      "
            << e.nvrtc_version << "\noptions    " << join(e.options, " ") << "\nsize       "
            << human_bytes(f.bytes) << " (binary " << human_bytes(e.binary.size())
            << ")\ncompile    " << human_ms(e.compile_ms) << "\nhits       " << f.usage.hits
            << " (saved " << human_ms(double(f.usage.hits) * e.compile_ms)
            << " of compiling)\ncreated    " << local_time(e.created) << "\nlast used  "
            << local_time(f.last_used_us() / 1'000'000) << " (" << human_age(f.last_used_us(), now)
            << ")\n";
}

void print_text(const jit::EntryFile& f, const Disassembly& d) {
  print_metadata(f);
  std::cout << "\n--- CUDA source ---\n" << f.entry.source;
  if (!f.entry.source.ends_with("\n")) std::cout << "\n";
  if (d.kind == "sass")
    std::cout << "\n--- SASS (cuobjdump -sass) ---\n" << d.text;
  else if (d.kind == "ptx")
    std::cout << "\n--- PTX ---\n" << d.text;
  else
    std::cout << "\n--- PTX/SASS unavailable: " << d.note << " ---\n";
}

}  // namespace

int run_show(const Options& o) {
  ArgReader args(o.args);
  auto keys = args.positionals(1);
  if (keys.empty()) throw UsageError("show needs a KEY (a key prefix from `kiln-cache list`)");
  std::string key = resolve_key(o.dir, keys[0]);
  jit::EntryFile f = jit::read_entry_file(o.dir + "/" + key + ".kkc", true);
  if (!f.valid)
    throw Failure("entry " + key + " is damaged (" + f.problem +
                  "); `kiln-cache verify --fix` removes it");
  jit::UsageMap usage = jit::fold_usage(o.dir);
  if (auto it = usage.find(key); it != usage.end()) f.usage = it->second;
  Disassembly d = disassemble(f.entry);
  if (o.json)
    print_json(f, d);
  else
    print_text(f, d);
  return 0;
}

}  // namespace kiln_cache
