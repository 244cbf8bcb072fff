#include "api/evaluate.hpp"

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>

#include "api/run_plan.hpp"
#include "kiln/array.hpp"
#include "plan/planner.hpp"

namespace kiln {
namespace {

Mode mode_from_env() {
  const char* m = std::getenv("KILN_MODE");
  return m && std::strcmp(m, "eager") == 0 ? Mode::Eager : Mode::Lazy;
}
thread_local Mode t_mode = mode_from_env();

}  // namespace

void set_mode(Mode m) { t_mode = m; }
Mode get_mode() { return t_mode; }

}  // namespace kiln

namespace kiln::api {
namespace {

int debug_level() {
  static const int level = [] {
    const char* d = std::getenv("KILN_DEBUG");
    return d ? std::atoi(d) : 0;
  }();
  return level;
}

// One evaluation at a time: evaluation turns nodes into leaves, which planning must not see
// half-done. Building graphs needs no lock beyond the hash-cons table's.
std::mutex& eval_mutex() {
  static std::mutex mu;
  return mu;
}

}  // namespace

void realize(const std::vector<graph::NodeRef>& nodes) {
  std::lock_guard lock(eval_mutex());
  std::vector<graph::NodeRef> todo;
  for (const auto& n : nodes)
    if (!n->is_leaf()) todo.push_back(n);
  if (todo.empty()) return;
  plan::Plan p = plan::make_plan(todo);
  if (debug_level() >= 2) std::cerr << "[kiln] plan\n" << plan::to_string(p);
  auto results = run_plan(p);
  for (size_t i = 0; i < todo.size(); ++i) graph::set_realized(*todo[i], results[i]);
}

}  // namespace kiln::api
