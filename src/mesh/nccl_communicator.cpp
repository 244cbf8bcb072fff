#include "mesh/nccl_communicator.hpp"

#include <algorithm>
#include <set>

#include "cuda/per_device.hpp"
#include "cuda/runtime.hpp"
#include "cuda/streams.hpp"
#include "kiln/errors.hpp"
#include "mesh/collective_wait.hpp"
#include "mesh/nccl_api.hpp"

namespace kiln::mesh {
namespace {

void check_devices(const std::vector<int>& devices) {
  if (devices.empty()) throw DeviceError("kiln::Mesh::gpus: the list of GPUs is empty");
  if (std::set<int>(devices.begin(), devices.end()).size() != devices.size())
    throw DeviceError(
        "kiln::Mesh::gpus: a GPU is listed twice; NCCL gives each GPU one rank of a mesh");
}

nccl::ncclRedOp_t nccl_op(Reduction op) {
  switch (op) {
    case Reduction::Sum:
      return nccl::ncclSum;
    case Reduction::Prod:
      return nccl::ncclProd;
    case Reduction::Max:
      return nccl::ncclMax;
    case Reduction::Min:
      return nccl::ncclMin;
  }
  return nccl::ncclSum;
}

// NCCL's asynchronous state of a communicator: ncclInProgress while a non-blocking one is still
// joining or queueing, an error once it failed.
nccl::ncclResult_t async_state(nccl::ncclComm_t comm) {
  nccl::ncclResult_t state = nccl::ncclSuccess;
  nccl::ncclResult_t asked = nccl::api().ncclCommGetAsyncError(comm, &state);
  return asked != nccl::ncclSuccess ? asked : state;
}

std::optional<std::string> async_failure(nccl::ncclComm_t comm) {
  const nccl::ncclResult_t state = async_state(comm);
  if (state == nccl::ncclSuccess || state == nccl::ncclInProgress) return std::nullopt;
  return std::string("NCCL error ") + std::to_string(state) + " (" +
         nccl::api().ncclGetErrorString(state) + ")";
}

// NCCL's calls on a non-blocking communicator may answer that they go on in the background.
void check_queued(nccl::ncclResult_t r, const char* what) {
  if (r != nccl::ncclInProgress) nccl::check(r, what);
}

}  // namespace

// A process's rank joining its communicator (non-blocking: ncclCommInitRankConfig returns at
// once), as the wait polls it: a rank that never joins fails it at the mesh's timeout.
class NcclCommunicator::Joining final : public InFlight {
 public:
  explicit Joining(NcclCommunicator& comm) : comm_(comm) {}
  int ranks() const override { return static_cast<int>(comm_.comms_.size()); }
  int rank_name(int i) const override { return comm_.first_ + i; }
  bool finished(int rank) override {
    return async_state(comm_.comms_[rank]) != nccl::ncclInProgress;
  }
  std::optional<std::string> failure(int rank) override {
    return async_failure(comm_.comms_[rank]);
  }
  void abort() override { comm_.abort_all(); }

 private:
  NcclCommunicator& comm_;
};

// The collective queued on each rank's stream, as the wait polls it.
class NcclCommunicator::Collective final : public InFlight {
 public:
  Collective(NcclCommunicator& comm, std::vector<cudaStream_t> streams)
      : comm_(comm), streams_(std::move(streams)) {}
  int ranks() const override { return static_cast<int>(streams_.size()); }
  int rank_name(int i) const override { return comm_.first_ + i; }
  bool finished(int rank) override {
    // A non-blocking communicator may still be queueing it: its stream is not the whole story.
    if (async_state(comm_.comms_[rank]) == nccl::ncclInProgress) return false;
    cudaError_t e = cudaStreamQuery(streams_[rank]);
    if (e == cudaErrorNotReady) return false;
    gpu::check(e, "cudaStreamQuery (a mesh collective's stream)");
    return true;
  }
  std::optional<std::string> failure(int rank) override {
    return async_failure(comm_.comms_[rank]);
  }
  void abort() override { comm_.abort_all(); }

 private:
  NcclCommunicator& comm_;
  std::vector<cudaStream_t> streams_;
};

NcclCommunicator::NcclCommunicator(std::vector<int> devices, std::chrono::milliseconds timeout)
    : devices_(std::move(devices)), size_(static_cast<int>(devices_.size())), timeout_(timeout) {
  check_devices(devices_);
  const auto& api = nccl::api();          // first: without NCCL no mesh of GPUs can work
  for (int d : devices_) gpu::device(d);  // DeviceError for a GPU that does not exist
  comms_.resize(devices_.size());
  gpu::ScopedDevice keep(devices_[0]);  // NCCL switches devices; the caller's comes back
  KILN_NCCL_CHECK(api.ncclCommInitAll(comms_.data(), size(), devices_.data()));
}

NcclCommunicator::NcclCommunicator(int device, int rank, int size, const nccl::ncclUniqueId& id,
                                   std::chrono::milliseconds timeout)
    : devices_{device}, first_(rank), size_(size), timeout_(timeout) {
  if (size < 1 || rank < 0 || rank >= size)
    throw Error("kiln::Mesh::gpu_process: rank " + std::to_string(rank) + " of " +
                std::to_string(size) + ": a mesh has at least one rank, numbered 0 to size - 1");
  const auto& api = nccl::api();
  gpu::device(device);
  comms_.resize(1);
  gpu::ScopedDevice on(device);
  // Non-blocking, so that this process waits for the others with the mesh's deadline (a rank
  // that died before joining would otherwise hang it in NCCL's bootstrap for ever).
  nccl::ncclConfigPrefix config;
  config.blocking = 0;
  check_queued(api.ncclCommInitRankConfig(comms_.data(), size, id, rank, &config),
               "ncclCommInitRankConfig");
  Joining joining(*this);
  wait_or_abort(joining, timeout_,
                "joining NCCL's communicator as rank " + std::to_string(rank) + " of " +
                    std::to_string(size) + " on cuda:" + std::to_string(device));
}

NcclCommunicator::~NcclCommunicator() {
  if (aborted_) return;
  const auto& api = nccl::api();
  for (nccl::ncclComm_t c : comms_) api.ncclCommDestroy(c);
}

std::string NcclCommunicator::describe() const {
  std::string s;
  if (static_cast<int>(devices_.size()) == size_)
    for (int r = 0; r < size(); ++r) s += (r ? ", " : "") + device(r).str();
  else
    s = "rank " + std::to_string(first_) + " of " + std::to_string(size_) + " on " +
        device(first_).str();
  return s + "; NCCL " + nccl::version_string(nccl::api().version);
}

void NcclCommunicator::abort_all() noexcept {
  const auto& api = nccl::api();
  for (nccl::ncclComm_t c : comms_) api.ncclCommAbort(c);
  aborted_ = "a collective failed or timed out";
}

template <class Enqueue>
void NcclCommunicator::run(const char* what, Enqueue enqueue) {
  const std::string name = std::string(what) + " on " + describe();
  if (aborted_)
    throw DeviceError(name + ": this mesh was aborted (" + *aborted_ + "); make a new kiln::Mesh");
  const auto& api = nccl::api();
  std::vector<cudaStream_t> streams;
  for (int d : devices_) streams.push_back(gpu::current_stream(d));
  {
    gpu::ScopedDevice keep(devices_[0]);
    KILN_NCCL_CHECK(api.ncclGroupStart());
    for (size_t i = 0; i < devices_.size(); ++i) {
      nccl::ncclResult_t queued = enqueue(api, first_ + static_cast<int>(i), comms_[i], streams[i]);
      if (queued != nccl::ncclSuccess && queued != nccl::ncclInProgress) {
        api.ncclGroupEnd();  // closes the group; the error below is the one to report
        nccl::check(queued, what);
      }
    }
    // A process's own rank is non-blocking (gpu_process): the group may go on queueing, which
    // the wait below sees through NCCL's asynchronous state.
    check_queued(api.ncclGroupEnd(), "ncclGroupEnd");
  }
  Collective in_flight(*this, std::move(streams));
  try {
    wait_or_abort(in_flight, timeout_, name);
  } catch (const DeviceError& e) {
    aborted_ = e.what();  // wait_or_abort has aborted: later collectives say why
    throw;
  }
}

void NcclCommunicator::reduce_buffers(const std::vector<const void*>& send,
                                      const std::vector<void*>& recv, size_t count,
                                      nccl::ncclDataType_t type, Reduction op) {
  run("ncclAllReduce", [&](const nccl::NcclApi& api, int r, nccl::ncclComm_t c, cudaStream_t s) {
    return api.ncclAllReduce(send[r], recv[r], count, type, nccl_op(op), c, s);
  });
}

void NcclCommunicator::gather_buffers(const std::vector<const void*>& send,
                                      const std::vector<void*>& recv, size_t bytes) {
  run("ncclAllGather", [&](const nccl::NcclApi& api, int r, nccl::ncclComm_t c, cudaStream_t s) {
    return api.ncclAllGather(send[r], recv[r], bytes, nccl::ncclUint8, c, s);
  });
}

// One send and one receive per pair of ranks, all in run()'s group: NCCL matches rank r's
// send to peer p with p's receive from r.
void NcclCommunicator::exchange_buffers(const std::vector<const void*>& send,
                                        const std::vector<void*>& recv, size_t bytes) {
  run("ncclSend/ncclRecv",
      [&](const nccl::NcclApi& api, int r, nccl::ncclComm_t c, cudaStream_t s) {
        for (int p = 0; p < size(); ++p) {
          const auto at = static_cast<size_t>(p) * bytes;
          nccl::ncclResult_t sent =
              api.ncclSend(static_cast<const char*>(send[r]) + at, bytes, nccl::ncclUint8, p, c, s);
          if (sent != nccl::ncclSuccess) return sent;
          nccl::ncclResult_t received =
              api.ncclRecv(static_cast<char*>(recv[r]) + at, bytes, nccl::ncclUint8, p, c, s);
          if (received != nccl::ncclSuccess) return received;
        }
        return nccl::ncclSuccess;
      });
}

}  // namespace kiln::mesh
