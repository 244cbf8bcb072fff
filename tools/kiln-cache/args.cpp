// Command options.
#include "cli.hpp"

namespace kiln_cache {

bool ArgReader::flag(std::string_view name) {
  for (auto it = args_.begin(); it != args_.end(); ++it)
    if (*it == name) {
      args_.erase(it);
      return true;
    }
  return false;
}

std::optional<std::string> ArgReader::value(std::string_view name) {
  std::string eq = std::string(name) + "=";
  for (size_t i = 0; i < args_.size(); ++i) {
    if (args_[i].starts_with(eq)) {
      std::string v = args_[i].substr(eq.size());
      args_.erase(args_.begin() + long(i));
      if (v.empty()) throw UsageError(std::string(name) + " needs a value");
      return v;
    }
    if (args_[i] != name) continue;
    if (i + 1 >= args_.size()) throw UsageError(std::string(name) + " needs a value");
    std::string v = args_[i + 1];
    args_.erase(args_.begin() + long(i), args_.begin() + long(i) + 2);
    return v;
  }
  return std::nullopt;
}

std::vector<std::string> ArgReader::positionals(size_t max) {
  for (const auto& a : args_)
    if (a.size() > 1 && a[0] == '-') throw UsageError("unknown option " + a);
  if (args_.size() > max) throw UsageError("unexpected argument '" + args_[max] + "'");
  return args_;
}

}  // namespace kiln_cache
