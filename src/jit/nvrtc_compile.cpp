// NVRTC compilation and compile-failure reports.
#include "jit/nvrtc_compile.hpp"
#include "jit/nvrtc_api.hpp"

#include <dlfcn.h>
#include <nvrtc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <span>

#include "jit/cache_config.hpp"
#include "jit/file_util.hpp"
#include "kiln/errors.hpp"

namespace kiln::jit {
namespace {

// Owns an nvrtcProgram so every exit path destroys it.
struct Program {
  nvrtcProgram handle = nullptr;
  ~Program() {
    if (handle) nvrtc().nvrtcDestroyProgram(&handle);
  }
};

// Pointer arrays for nvrtcCreateProgram, built once from the embedded headers.
struct HeaderArrays {
  std::vector<const char*> names, texts;
};

const HeaderArrays& header_arrays() {
  static const HeaderArrays arrays = [] {
    HeaderArrays a;
    for (const Header& h : embedded_headers()) {
      a.names.push_back(h.name);
      a.texts.push_back(h.text);
    }
    return a;
  }();
  return arrays;
}

std::string program_log(nvrtcProgram p) {
  size_t size = 0;
  if (nvrtc().nvrtcGetProgramLogSize(p, &size) != NVRTC_SUCCESS || size == 0) return "";
  std::string log(size, '\0');
  if (nvrtc().nvrtcGetProgramLog(p, log.data()) != NVRTC_SUCCESS) return "";
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

enum class Output { Cubin, Ptx, LtoIr };

// What the options ask NVRTC for: LTO-IR under -dlto (for cuFFT's JIT callbacks), PTX for a
// virtual arch, SASS otherwise.
Output output_of(const Request& r, const std::vector<std::string>& options) {
  if (std::find(options.begin(), options.end(), "-dlto") != options.end()) return Output::LtoIr;
  return r.arch.starts_with("compute_") ? Output::Ptx : Output::Cubin;
}

std::vector<char> program_binary(nvrtcProgram p, Output kind) {
  size_t size = 0;
  const NvrtcApi& api = nvrtc();
  auto get_size = kind == Output::Ptx     ? api.nvrtcGetPTXSize
                  : kind == Output::LtoIr ? api.nvrtcGetLTOIRSize
                                          : api.nvrtcGetCUBINSize;
  auto get = kind == Output::Ptx     ? api.nvrtcGetPTX
             : kind == Output::LtoIr ? api.nvrtcGetLTOIR
                                     : api.nvrtcGetCUBIN;
  if (get_size(p, &size) != NVRTC_SUCCESS) return {};
  std::vector<char> binary(size);
  if (get(p, binary.data()) != NVRTC_SUCCESS) return {};
  return binary;
}

// Kernel names may come from users; keep file names to [A-Za-z0-9_].
std::string file_stem(const std::string& name, const std::string& key) {
  std::string stem = name.empty() ? "kernel" : name.substr(0, 100);
  for (char& c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  return stem + "-" + key.substr(0, 16);
}

// Saves the failing source verbatim (line numbers in NVRTC's log must match). Returns the path,
// or a note saying why it could not be saved.
std::string save_failed_source(const Request& r, const std::string& key,
                               const std::string& failed_dir) {
  std::error_code ec;
  // Per user: another user's /tmp/kiln-failed would not be writable.
  std::string temp =
      (std::filesystem::temp_directory_path(ec) / ("kiln-failed-" + std::to_string(::getuid())))
          .string();
  int err = 0;
  for (const std::string& dir : {failed_dir, temp}) {
    if (dir.empty()) continue;
    std::string path = dir + "/" + file_stem(r.name, key) + ".cu";
    err = make_directories(dir, cache_modes().dir);
    if (err == 0) err = write_file_atomically(path, std::span(r.source), cache_modes().file);
    if (err == 0) return path;
  }
  return std::string("(not saved: ") + std::strerror(err) + ")";
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

std::string supported_archs_text() {
  std::string s;
  for (int a : nvrtc_supported_archs()) s += " sm_" + std::to_string(a);
  return s;
}

[[noreturn]] void fail(const Request& r, const std::vector<std::string>& options,
                       const std::string& key, const std::string& failed_dir, nvrtcResult rc,
                       const std::string& log) {
  std::string msg = "kiln: NVRTC could not compile kernel '" + r.name + "' for " + r.arch + ": " +
                    nvrtc().nvrtcGetErrorString(rc) + "\n  options: " + join(options) +
                    "\n  source saved to: " + save_failed_source(r, key, failed_dir);
  if (rc == NVRTC_ERROR_INVALID_OPTION)
    msg += "\n  this NVRTC (" + nvrtc_identity() + ") supports:" + supported_archs_text();
  msg += "\nNVRTC log:\n" + (log.empty() ? std::string("(empty)") : log) +
         "\nIf kiln generated this source, please report it with the saved file.";
  throw CompileError(msg);
}

}  // namespace

std::vector<std::string> compile_options(const std::string& arch,
                                         const std::vector<std::string>& extra) {
  // No --use_fast_math: results must match the host executor; a kernel may opt in.
  std::vector<std::string> options = {"--gpu-architecture=" + arch, "-std=c++17",
                                      "-default-device"};
  options.insert(options.end(), extra.begin(), extra.end());
  return options;
}

const std::vector<int>& nvrtc_supported_archs() {
  static const std::vector<int> archs = [] {
    int n = 0;
    if (nvrtc().nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0) return std::vector<int>{};
    std::vector<int> a(static_cast<size_t>(n));
    if (nvrtc().nvrtcGetSupportedArchs(a.data()) != NVRTC_SUCCESS) return std::vector<int>{};
    std::sort(a.begin(), a.end());
    return a;
  }();
  return archs;
}

CompileOutput compile_with_nvrtc(const Request& r, const std::vector<std::string>& options,
                                 const std::string& key, const std::string& failed_dir) {
  auto start = std::chrono::steady_clock::now();
  const HeaderArrays& headers = header_arrays();
  Program prog;
  std::string file_name = r.name + ".cu";  // what NVRTC's log calls the source
  nvrtcResult rc = nvrtc().nvrtcCreateProgram(&prog.handle, r.source.c_str(), file_name.c_str(),
                                              int(headers.names.size()), headers.texts.data(),
                                              headers.names.data());
  if (rc != NVRTC_SUCCESS) fail(r, options, key, failed_dir, rc, "");

  std::vector<const char*> argv;
  for (auto& o : options) argv.push_back(o.c_str());
  rc = nvrtc().nvrtcCompileProgram(prog.handle, int(argv.size()), argv.data());
  if (rc != NVRTC_SUCCESS) fail(r, options, key, failed_dir, rc, program_log(prog.handle));

  CompileOutput out;
  out.binary = program_binary(prog.handle, output_of(r, options));
  if (out.binary.empty())
    fail(r, options, key, failed_dir, NVRTC_ERROR_INTERNAL_ERROR, "no binary produced");
  out.ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace kiln::jit
