// Human-readable formatting, tables and JSON for kiln-cache.
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iostream>

#include "cli.hpp"

namespace kiln_cache {

std::string human_bytes(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(bytes);
  int unit = 0;
  while (v >= 1024 && unit < 4) v /= 1024, ++unit;
  char buf[32];
  if (unit == 0)
    std::snprintf(buf, sizeof buf, "%llu B", (unsigned long long)bytes);
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[unit]);
  return buf;
}

std::string human_ms(double ms) {
  char buf[32];
  if (ms < 1000)
    std::snprintf(buf, sizeof buf, "%.1f ms", ms);
  else if (ms < 120'000)
    std::snprintf(buf, sizeof buf, "%.2f s", ms / 1000);
  else if (ms < 7'200'000)
    std::snprintf(buf, sizeof buf, "%.1f min", ms / 60'000);
  else
    std::snprintf(buf, sizeof buf, "%.1f h", ms / 3'600'000);
  return buf;
}

std::string human_age(int64_t then_us, int64_t now_us) {
  if (then_us <= 0) return "never";
  int64_t s = std::max<int64_t>(0, (now_us - then_us) / 1'000'000);
  if (s < 60) return std::to_string(s) + " s ago";
  if (s < 3600) return std::to_string(s / 60) + " min ago";
  if (s < 48 * 3600) return std::to_string(s / 3600) + " h ago";
  if (s < 60 * 86400) return std::to_string(s / 86400) + " days ago";
  return local_time(then_us / 1'000'000).substr(0, 10);
}

std::string local_time(int64_t unix_s) {
  time_t t = time_t(unix_s);
  tm parts;
  char buf[32];
  if (!localtime_r(&t, &parts) || !std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &parts))
    return std::to_string(unix_s);
  return buf;
}

std::string shorten(std::string_view s, size_t max) {
  std::string out;
  for (char c : s) out += c == '\n' || c == '\t' || c == '\r' ? ' ' : c;
  if (out.size() > max && max > 3) out = out.substr(0, max - 3) + "...";
  return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? std::string(sep) : "") + parts[i];
  return out;
}

std::string count(uint64_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

void print_table(const std::vector<std::vector<std::string>>& rows,
                 const std::vector<bool>& right) {
  std::vector<size_t> width;
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], row[i].size());
    }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      std::string pad(width[i] - row[i].size(), ' ');
      bool last = i + 1 == row.size();
      line += i < right.size() && right[i] ? pad + row[i] : row[i] + (last ? "" : pad);
      if (!last) line += "  ";
    }
    std::cout << line << "\n";
  }
}

// ---- JSON ------------------------------------------------------------------------------------

namespace {
bool g_json_written = false;
}  // namespace

void write_json(const Json& document) {
  std::cout << document.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
  g_json_written = true;
}

bool json_written() { return g_json_written; }

Json entry_json(const kiln::jit::EntryFile& f) {
  const auto& e = f.entry;
  return {
      {"key", f.key},         {"file", f.path},       {"valid", f.valid},
      {"problem", f.problem}, {"name", e.name},       {"summary", e.summary},
      {"dtypes", e.dtypes},   {"arch", e.arch},       {"nvrtc", e.nvrtc_version},
      {"options", e.options}, {"bytes", f.bytes},     {"compile_ms", e.compile_ms},
      {"hits", f.usage.hits}, {"created", e.created}, {"last_used", f.last_used_us() / 1'000'000}};
}

}  // namespace kiln_cache
