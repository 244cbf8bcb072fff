#include "plan/iteration.hpp"

#include <algorithm>

namespace kiln::plan {
namespace {

// Merges axes [lo, hi) of `s` where possible; appends the result to `out`.
void collapse_range(const Shape& shape, const std::vector<Strides>& strides, int lo, int hi,
                    IterationSpace& out) {
  size_t first = out.shape.size();
  for (int i = lo; i < hi; ++i) {
    if (shape[i] == 1) continue;
    bool merge = out.shape.size() > first;
    for (size_t a = 0; merge && a < strides.size(); ++a)
      merge = out.strides[a].back() == strides[a][i] * shape[i];
    if (merge) {
      out.shape.back() *= shape[i];
      for (size_t a = 0; a < strides.size(); ++a) out.strides[a].back() = strides[a][i];
    } else {
      out.shape.push_back(shape[i]);
      for (size_t a = 0; a < strides.size(); ++a) out.strides[a].push_back(strides[a][i]);
    }
  }
}

}  // namespace

IterationSpace iteration_space(const FusedGroup& g) {
  const std::vector<int>& folded = g.reduction ? g.reduction->axes : g.row_axes;
  std::vector<int> order, reduced;
  for (int i = 0; i < static_cast<int>(g.shape.size()); ++i)
    (std::binary_search(folded.begin(), folded.end(), i) ? reduced : order).push_back(i);
  int kept = static_cast<int>(order.size());
  order.insert(order.end(), reduced.begin(), reduced.end());
  // The outputs' dense strides take part in the collapse like one more access, so axes merge
  // only where the outputs walk them contiguously too.
  const bool columns = g.folds_columns();
  const Strides dense = graph::contiguous_strides(g.shape);
  const size_t walks = g.accesses.size() + (columns ? 1 : 0);
  Shape shape;
  std::vector<Strides> strides(walks);
  for (int ax : order) {
    shape.push_back(g.shape[ax]);
    for (size_t a = 0; a < walks; ++a)
      strides[a].push_back(a < g.accesses.size() ? g.accesses[a].strides[ax] : dense[ax]);
  }
  IterationSpace out;
  out.strides.resize(walks);
  collapse_range(shape, strides, 0, kept, out);
  size_t kept_axes = out.shape.size();
  collapse_range(shape, strides, kept, static_cast<int>(shape.size()), out);
  out.reduced = static_cast<int>(out.shape.size() - kept_axes);
  if (columns) {
    out.out_strides = std::move(out.strides.back());
    out.strides.pop_back();
  }
  return out;
}

bool is_dense(const Shape& shape, const Strides& strides) {
  int64_t expect = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expect) return false;
    expect *= shape[i];
  }
  return true;
}

bool is_constant(const Strides& strides) {
  return std::all_of(strides.begin(), strides.end(), [](int64_t s) { return s == 0; });
}

}  // namespace kiln::plan
