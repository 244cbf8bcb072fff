// Building a node without allocating: a node from this thread's pool of retired nodes, whose
// shape and input list keep the memory of their last use, filled in by the builder and then
// published by make_node. A program builds and drops nodes at a steady rate, and a dropped
// graph frees hundreds at once, far more than malloc's per-thread cache keeps; so a node that
// dies goes to its thread's pool (graph/node.cpp), and the builders of the common operations
// (api/build.cpp) take their nodes from it.
#pragma once
#include <utility>

#include "graph/node.hpp"

namespace kiln::graph {

// A node being built, not yet in the graph: set its shape, inputs and attributes through ->,
// then make_node. Dropped unpublished, it goes back to the pool.
class Draft {
 public:
  Draft(OpKind k, uint8_t op, DType t, Device d);
  Draft(Draft&& o) noexcept : n_(std::exchange(o.n_, nullptr)), same_data_(o.same_data_) {}
  Draft& operator=(Draft&&) = delete;
  ~Draft();

  NodeSpec* operator->() const { return n_; }
  // The node's shape is in's (an elementwise node's input): copied, and remembered so that
  // make_node takes in's data hash rather than hashing the shape again where dtypes agree.
  // Element by element into the empty shape (a pooled node's, its memory kept), not assigned:
  // assigning a few words is a call of memmove, and this runs for nearly every node built.
  void copy_shape(const Node& in) {
    for (int64_t d : in.shape) n_->shape.push_back(d);
    same_data_ = &in;
  }

 private:
  friend NodeRef make_node(Draft&& d);
  Node* n_;
  const Node* same_data_ = nullptr;
};

// The node the draft describes: an equal node if one is alive (the draft goes back to the
// pool, its inputs released), else the draft itself, entered into the hash-cons table.
NodeRef make_node(Draft&& d);

}  // namespace kiln::graph
