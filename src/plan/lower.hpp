// Lowering one fusion group from graph nodes to the FusedGroup IR: views are pushed down to
// the leaves and composed into one strided Access per leaf, so they cost nothing.
#pragma once
#include <functional>
#include <optional>
#include <unordered_set>
#include <vector>

#include "graph/node.hpp"
#include "plan/plan.hpp"

namespace kiln::plan {

// Thrown when a reshape cannot be expressed as strides over its input: the planner then
// materializes `node` (the reshape's input) and tries again.
struct NeedsMaterialize {
  const graph::Node* node;
};

// Thrown when a reduction the planner meant to fold inside its reader (a Reduce instruction)
// is read in a way that needs it in memory: the planner then writes it.
struct CannotInline {
  const graph::Node* node;
};

struct GroupSpec {
  std::vector<const graph::Node*> roots;  // computed and written by this group
  const graph::Node* reduce = nullptr;    // set for a reduction group (roots = {reduce})
};

// `buffer_of` maps a materialized node (leaf or root of another group) to its plan buffer id;
// `is_materialized` says whether a node is read from memory rather than computed here.
// `param_nodes` receives the constant (a node and which of its, Node::scalar_value) that is each
// entry of the group's params, or a null node for a structural constant.
FusedGroup lower_group(const GroupSpec& spec,
                       const std::function<int(const graph::Node*)>& buffer_of,
                       const std::function<bool(const graph::Node*)>& is_materialized,
                       std::vector<graph::Value>& param_nodes);

// n, a chain of views (or none), as strides over the first node below it that is not a view
// or that `stop` accepts (read densely, in its own shape): that node, and the offset and
// strides in elements of n's elements in it. Nothing when a reshape on the way is not a view.
// How a library step reads an operand in place.
struct StridedView {
  const graph::Node* base;
  int64_t offset;
  Strides strides;
};
std::optional<StridedView> strided_view(const graph::Node& n,
                                        const std::function<bool(const graph::Node*)>& stop);

}  // namespace kiln::plan
