#include "mesh/communicator.hpp"

#include <memory>
#include <string>

#include "graph/node.hpp"
#include "mesh/map_shards.hpp"
#include "mesh/wire_type.hpp"
#include "runtime/backends.hpp"

namespace kiln::mesh {
namespace {

// Each part's evaluated memory (null for a rank another process holds): every rank's work is
// queued first, then each is waited for, so the GPUs compute their parts at the same time.
std::vector<const void*> evaluated(const std::vector<Array>& parts) {
  for (const Array& p : parts)
    if (p.valid()) p.eval();
  std::vector<const void*> data;
  for (const Array& p : parts) data.push_back(p.valid() ? p.data() : nullptr);
  return data;
}

struct Results {
  std::vector<std::shared_ptr<graph::Buffer>> buffers;
  std::vector<void*> data;
};

Results allocate(const Communicator& comm, size_t nbytes) {
  Results r;
  for (int rank = 0; rank < comm.size(); ++rank) {
    r.buffers.push_back(comm.holds(rank) ? runtime::allocate(comm.device(rank), nbytes) : nullptr);
    r.data.push_back(r.buffers.back() ? r.buffers.back()->data() : nullptr);
  }
  return r;
}

std::vector<Array> wrap(Results&& r, DType t, const Shape& s) {
  std::vector<Array> out;
  for (auto& b : r.buffers)
    out.push_back(b ? Array(graph::buffer_node(std::move(b), t, s)) : Array());
  return out;
}

}  // namespace

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

std::vector<Array> Communicator::all_reduce(const std::vector<Array>& parts, Reduction op) {
  check_parts(parts, "all-reduce");
  const Array& one = first_held(parts);
  const DType t = one.dtype();
  const WireType wire = wire_type(t);
  if (wire.per_element > 1 && op != Reduction::Sum)
    throw DTypeError(std::string("an all-reduce can only sum ") + dtype_name(t) +
                     " values (NCCL combines their parts, not the numbers)");
  const size_t nbytes = static_cast<size_t>(one.nbytes());
  std::vector<const void*> send = evaluated(parts);
  std::lock_guard lock(mu_);
  Results results = allocate(*this, nbytes);
  const auto count = static_cast<size_t>(one.size() * wire.per_element);
  if (count > 0) reduce_buffers(send, results.data, count, wire.type, op);
  return wrap(std::move(results), t, one.shape());
}

std::vector<Array> Communicator::all_gather(const std::vector<Array>& parts) {
  check_parts(parts, "all-gather");
  const Array& one = first_held(parts);
  const size_t nbytes = static_cast<size_t>(one.nbytes());
  std::vector<const void*> send = evaluated(parts);
  std::lock_guard lock(mu_);
  Results results = allocate(*this, nbytes * size());
  if (nbytes > 0) gather_buffers(send, results.data, nbytes);
  Shape stacked = one.shape();
  stacked.insert(stacked.begin(), size());
  return wrap(std::move(results), one.dtype(), stacked);
}

std::vector<Array> Communicator::all_to_all(const std::vector<Array>& parts) {
  check_parts(parts, "all-to-all");
  const Array& one = first_held(parts);
  if (one.ndim() == 0 || one.shape()[0] != size())
    throw Error("mesh all-to-all on " + describe() + ": parts of shape " + shape_str(one.shape()) +
                " do not hold one block per rank (a bug in kiln's " + "mesh code)");
  const size_t nbytes = static_cast<size_t>(one.nbytes());
  std::vector<const void*> send = evaluated(parts);
  std::lock_guard lock(mu_);
  Results results = allocate(*this, nbytes);
  if (nbytes > 0) exchange_buffers(send, results.data, nbytes / static_cast<size_t>(size()));
  return wrap(std::move(results), one.dtype(), one.shape());
}

}  // namespace kiln::mesh
