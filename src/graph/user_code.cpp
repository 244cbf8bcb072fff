#include "graph/user_code.hpp"

#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>

namespace kiln::graph {
namespace {

struct Registry {
  std::mutex mu;
  std::deque<UserCode> codes;  // a deque never moves its elements: references stay valid
  std::map<std::pair<std::string, std::vector<std::string>>, int64_t> ids;
};
Registry& registry() {
  static auto* r = new Registry;  // leaked on purpose: nodes and kernels may outlive statics
  return *r;
}

}  // namespace

int64_t intern_user_code(const UserCode& code) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto [it, inserted] =
      r.ids.emplace(std::make_pair(code.expr, code.names), static_cast<int64_t>(r.codes.size()));
  if (inserted) r.codes.push_back(code);
  return it->second;
}

const UserCode& user_code(int64_t id) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  if (id < 0 || id >= static_cast<int64_t>(r.codes.size()))
    throw std::logic_error("graph: unknown user code id (kiln bug)");
  return r.codes[static_cast<size_t>(id)];
}

}  // namespace kiln::graph
