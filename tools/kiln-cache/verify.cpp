// kiln-cache verify [--fix]: check every entry, name the bad ones, optionally remove them.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "cli.hpp"

namespace kiln_cache {
namespace {
namespace jit = kiln::jit;

struct Finding {
  std::string file, problem;
  bool removed = false;
  std::string remove_error;
};

std::vector<Finding> check(const std::vector<jit::EntryFile>& files, bool fix) {
  std::vector<Finding> bad;
  for (const auto& f : files) {
    if (f.valid) continue;
    Finding b;
    b.file = f.path;
    b.problem = f.problem;
    if (fix) {
      b.removed = ::unlink(f.path.c_str()) == 0 || errno == ENOENT;
      if (!b.removed) b.remove_error = std::strerror(errno);
    }
    bad.push_back(b);
  }
  return bad;
}

void print_json(const std::string& dir, size_t checked, const std::vector<Finding>& bad,
                const std::vector<std::string>& unknown, bool ok) {
  Json findings = Json::array();
  for (const auto& b : bad)
    findings.push_back({{"file", b.file}, {"problem", b.problem}, {"removed", b.removed}});
  write_json({{"dir", dir},
              {"checked", checked},
              {"ok", ok},
              {"bad", std::move(findings)},
              {"unknown_files", unknown}});
}

void print_text(const std::string& dir, size_t checked, const std::vector<Finding>& bad,
                const std::vector<std::string>& unknown, bool fix) {
  size_t removed = 0;
  for (const auto& b : bad) {
    removed += b.removed;
    std::cout << "bad: " << b.file << ": " << b.problem;
    if (b.removed) std::cout << " (removed)";
    if (!b.remove_error.empty()) std::cout << " (cannot remove: " << b.remove_error << ")";
    std::cout << "\n";
  }
  for (const auto& u : unknown)
    std::cout << "note: " << dir << "/" << u << " is not a kiln file; left alone\n";
  std::cout << "checked " << count(checked, "entry", "entries") << " in " << dir << ": ";
  if (bad.empty())
    std::cout << "all good\n";
  else if (fix)
    std::cout << bad.size() << " bad, " << removed << " removed\n";
  else if (bad[0].file == dir)  // the directory: no --fix for that
    std::cout << bad.size() << " bad; fix the directory first, as said above\n";
  else
    std::cout << bad.size() << " bad; `kiln-cache verify --fix` removes them\n";
}

}  // namespace

int run_verify(const Options& o) {
  bool fix = o.fix;
  if (fix)
    require_trusted_directory(o.dir, "verify --fix");
  else
    require_directory(o.dir);
  auto files = jit::list_entry_files(o.dir, {});
  size_t checked = files.size();
  std::vector<Finding> bad = check(files, fix);
  // The directory itself first: while another user can write it, no entry in it is used.
  if (auto why = distrust(o.dir)) bad.insert(bad.begin(), {o.dir, *why, false, ""});
  bool ok = true;
  for (const auto& b : bad) ok &= b.removed;
  auto unknown = jit::unknown_files(o.dir);
  if (o.json)
    print_json(o.dir, checked, bad, unknown, ok);
  else
    print_text(o.dir, checked, bad, unknown, fix);
  return ok ? 0 : 1;
}

}  // namespace kiln_cache
