#include "mesh/communicator.hpp"

#include <memory>
#include <string>

#include "graph/node.hpp"
#include "mesh/map_shards.hpp"
#include "mesh/wire_type.hpp"

namespace kiln::mesh {

void Communicator::check_parts(const std::vector<Array>& parts, const char* what) const {
  auto fail = [&](const std::string& why) {
    throw Error(std::string("mesh ") + what + " on " + describe() + ": " + why +
                " (a bug in kiln's mesh code)");
  };
  if (static_cast<int>(parts.size()) != size())
    fail(std::to_string(parts.size()) + " parts for " + std::to_string(size()) + " ranks");
  const Array* first = nullptr;
  for (int r = 0; r < size(); ++r) {
    const Array& p = parts[r];
    if (p.valid() != holds(r))
      fail("part " + std::to_string(r) +
           (p.valid() ? " is given, but another process holds it" : " is missing"));
    if (!p.valid()) continue;
    if (p.device() != device(r)) fail("part " + std::to_string(r) + " is on " + p.device().str());
    if (!first) first = &p;
    if (p.dtype() != first->dtype() || p.shape() != first->shape())
      fail("the parts differ in shape or dtype");
  }
  if (!first) fail("this process holds none of the ranks");
}

std::vector<Array> Communicator::collective(graph::CollectiveKind kind, Reduction op,
                                            const std::vector<Array>& parts, const Shape& shape) {
  graph::CollectiveAttrs attrs{shared_from_this(), kind, op, size(), 0, {}};
  std::vector<graph::NodeRef> inputs;
  for (int r = 0; r < size(); ++r)
    if (holds(r)) {
      attrs.ranks.push_back(r);
      inputs.push_back(parts[r].node());
    }
  const DType t = first_held(parts).dtype();
  std::vector<Array> out;
  for (int r = 0; r < size(); ++r) {
    if (!holds(r)) {
      out.emplace_back();
      continue;
    }
    attrs.rank = r;
    out.emplace_back(graph::make_node(
        graph::NodeSpec{graph::OpKind::Collective, 0, t, shape, device(r), inputs, attrs}));
  }
  return out;
}

std::vector<Array> Communicator::all_reduce(const std::vector<Array>& parts, Reduction op) {
  check_parts(parts, "all-reduce");
  const DType t = first_held(parts).dtype();
  if (wire_type(t).per_element > 1 && op != Reduction::Sum)
    throw DTypeError(std::string("an all-reduce can only sum ") + dtype_name(t) +
                     " values (NCCL combines their parts, not the numbers)");
  return collective(graph::CollectiveKind::AllReduce, op, parts, first_held(parts).shape());
}

std::vector<Array> Communicator::all_gather(const std::vector<Array>& parts) {
  check_parts(parts, "all-gather");
  Shape stacked = first_held(parts).shape();
  stacked.insert(stacked.begin(), size());
  return collective(graph::CollectiveKind::AllGather, Reduction::Sum, parts, stacked);
}

std::vector<Array> Communicator::all_to_all(const std::vector<Array>& parts) {
  check_parts(parts, "all-to-all");
  const Array& one = first_held(parts);
  if (one.ndim() == 0 || one.shape()[0] != size())
    throw Error("mesh all-to-all on " + describe() + ": parts of shape " + shape_str(one.shape()) +
                " do not hold one block per rank (a bug in kiln's " + "mesh code)");
  return collective(graph::CollectiveKind::AllToAll, Reduction::Sum, parts, one.shape());
}

void Communicator::run_collective(const graph::CollectiveCall& c) {
  std::vector<const void*> send(static_cast<size_t>(size()), nullptr);
  std::vector<void*> recv(static_cast<size_t>(size()), nullptr);
  for (size_t i = 0; i < c.ranks.size(); ++i) {
    send[c.ranks[i]] = c.in[i];
    recv[c.ranks[i]] = c.out[i];
  }
  const auto nbytes = static_cast<size_t>(c.part_elements) * itemsize(c.dtype);
  if (nbytes == 0) return;
  std::lock_guard lock(mu_);
  switch (c.kind) {
    case graph::CollectiveKind::AllReduce: {
      const WireType wire = wire_type(c.dtype);
      reduce_buffers(send, recv, static_cast<size_t>(c.part_elements) * wire.per_element, wire.type,
                     c.reduction);
      return;
    }
    case graph::CollectiveKind::AllGather:
      gather_buffers(send, recv, nbytes);
      return;
    case graph::CollectiveKind::AllToAll:
      exchange_buffers(send, recv, nbytes / static_cast<size_t>(size()));
      return;
  }
}

}  // namespace kiln::mesh
