// The counted reference to a node of the lazy graph (src/graph/node.hpp) that kiln::Array
// holds. The count lives in the node itself: with std::shared_ptr, a node that the hash-cons
// table can hand out again needed enable_shared_from_this, whose weak count cost two more
// atomic operations per node and kept every release off shared_ptr's fast path. Building
// and dropping nodes is on every program's path, and each count change is an atomic
// operation once a process has a second thread (every program on a GPU has).
#pragma once
#include <cstddef>
#include <utility>

namespace kiln::graph {

struct Node;
void retain(const Node* n) noexcept;   // one more reference
void release(const Node* n) noexcept;  // one fewer; the last frees the node
long use_count(const Node* n) noexcept;

// As std::shared_ptr<const Node>, for what kiln uses of it.
class NodeRef {
 public:
  constexpr NodeRef() noexcept = default;
  constexpr NodeRef(std::nullptr_t) noexcept {}
  NodeRef(const NodeRef& o) noexcept : p_(o.p_) {
    if (p_) retain(p_);
  }
  NodeRef(NodeRef&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  NodeRef& operator=(const NodeRef& o) noexcept {
    NodeRef(o).swap(*this);
    return *this;
  }
  NodeRef& operator=(NodeRef&& o) noexcept {
    NodeRef(std::move(o)).swap(*this);
    return *this;
  }
  ~NodeRef() {
    if (p_) release(p_);
  }
  // A reference to n that is already counted (a new node's first, a revived one's).
  static NodeRef adopt(const Node* n) noexcept {
    NodeRef r;
    r.p_ = n;
    return r;
  }

  // Gives up the reference without releasing it: its count is the caller's to drop.
  const Node* detach() noexcept { return std::exchange(p_, nullptr); }

  const Node* get() const noexcept { return p_; }
  const Node& operator*() const noexcept { return *p_; }
  const Node* operator->() const noexcept { return p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  long use_count() const noexcept { return p_ ? graph::use_count(p_) : 0; }
  void reset() noexcept { NodeRef().swap(*this); }
  void swap(NodeRef& o) noexcept { std::swap(p_, o.p_); }
  friend bool operator==(const NodeRef& a, const NodeRef& b) noexcept { return a.p_ == b.p_; }
  friend bool operator==(const NodeRef& a, std::nullptr_t) noexcept { return !a.p_; }

 private:
  const Node* p_ = nullptr;
};

}  // namespace kiln::graph
