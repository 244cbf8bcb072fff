#include "mesh/rendezvous_files.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace kiln::mesh::rendezvous {

namespace fs = std::filesystem;

namespace {

std::string this_host() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

// A process that exited but was not yet reaped by its parent (a zombie) still answers kill(0):
// Linux's /proc says its state is Z.
bool process_alive(long pid) {
  if (kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;  // no /proc: kill's answer stands
  const size_t name_end = line.rfind(')');     // "pid (name) state ...": the name may hold spaces
  return name_end == std::string::npos || line.size() < name_end + 3 || line[name_end + 2] != 'Z';
}

}  // namespace

Writer Writer::me() { return {static_cast<long>(getpid()), this_host()}; }

Writer Writer::parse(std::istream& in) {
  Writer w;
  in >> w.pid >> w.host;
  return w;
}

std::string Writer::str() const { return std::to_string(pid) + " " + host; }

bool Writer::gone() const { return host == this_host() && !process_alive(pid); }

// Written under a temporary name, then renamed into place: a reader sees all of it or nothing.
void write_atomically(const fs::path& path, const void* data, size_t bytes) {
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
    if (!out)
      throw DeviceError("kiln mesh: cannot write " + tmp.string() + ": " + std::strerror(errno));
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) throw DeviceError("kiln mesh: cannot rename " + tmp.string() + ": " + ec.message());
}

std::optional<std::vector<char>> read_if_present(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

}  // namespace kiln::mesh::rendezvous
