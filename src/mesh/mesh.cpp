// kiln::Mesh: which communicator a mesh is, chosen once at its creation.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/mesh.hpp"
#include "mesh/file_communicator.hpp"
#include "mesh/host_communicator.hpp"
#include "mesh/nccl_api.hpp"
#include "mesh/nccl_communicator.hpp"
#include "mesh/rendezvous_files.hpp"

namespace kiln {
namespace {

static_assert(sizeof(Mesh::NcclUniqueId) == nccl::kUniqueIdBytes);

// The id file: NCCL's id, then the writer's "pid host" (so that an earlier run's file, whose
// writer is gone, is not taken for this run's).
Mesh::NcclUniqueId id_through_file(const std::string& path, int rank,
                                   std::chrono::milliseconds timeout) {
  namespace rv = mesh::rendezvous;
  Mesh::NcclUniqueId id;
  if (rank == 0) {
    std::error_code ec;
    std::filesystem::remove(path, ec);
    id = Mesh::nccl_unique_id();
    std::string text(reinterpret_cast<const char*>(id.data()), id.size());
    text += rv::Writer::me().str();
    rv::write_atomically(path, text.data(), text.size());
    return id;
  }
  auto attempt = [&]() -> std::optional<Mesh::NcclUniqueId> {
    auto bytes = rv::read_if_present(path);
    if (!bytes || bytes->size() <= id.size()) return std::nullopt;
    std::istringstream writer(std::string(bytes->begin() + id.size(), bytes->end()));
    if (rv::Writer::parse(writer).gone()) return std::nullopt;
    Mesh::NcclUniqueId got;
    std::copy_n(bytes->begin(), got.size(), got.begin());
    return got;
  };
  return rv::poll(
      attempt, [] {}, std::chrono::steady_clock::now() + timeout,
      [&] {
        return "kiln::Mesh::gpu_process: rank " + std::to_string(rank) + " waited " +
               std::to_string(timeout.count()) + " ms (kiln::MeshOptions::timeout) for rank 0's " +
               "NCCL id in " + path + "; start rank 0 with the same file";
      });
}

}  // namespace

Mesh Mesh::gpus(const std::vector<int>& devices, MeshOptions options) {
  return Mesh(std::make_shared<mesh::NcclCommunicator>(devices, options.timeout));
}

Mesh Mesh::all_gpus(MeshOptions options) {
  std::vector<int> devices(cuda_device_count());
  if (devices.empty())
    throw DeviceError(
        "kiln::Mesh::all_gpus: this process sees no GPU (no GPU, no driver, or "
        "CUDA_VISIBLE_DEVICES hides them); kiln::Mesh::host(n) runs the same programs on the host");
  std::iota(devices.begin(), devices.end(), 0);
  return gpus(devices, options);
}

Mesh Mesh::host(int ranks) { return Mesh(std::make_shared<mesh::HostCommunicator>(ranks)); }

Mesh Mesh::host_processes(const std::string& dir, int rank, int size, MeshOptions options) {
  return Mesh(std::make_shared<mesh::FileCommunicator>(dir, rank, size, options.timeout));
}

Mesh::NcclUniqueId Mesh::nccl_unique_id() {
  nccl::ncclUniqueId id;
  KILN_NCCL_CHECK(nccl::api().ncclGetUniqueId(&id));
  NcclUniqueId out;
  std::memcpy(out.data(), id.internal, out.size());
  return out;
}

Mesh Mesh::gpu_process(const NcclUniqueId& id, int rank, int size, int device,
                       MeshOptions options) {
  nccl::ncclUniqueId nid;
  std::memcpy(nid.internal, id.data(), id.size());
  return Mesh(std::make_shared<mesh::NcclCommunicator>(device, rank, size, nid, options.timeout));
}

Mesh Mesh::gpu_process(const std::string& id_file, int rank, int size, int device,
                       MeshOptions options) {
  nccl::api();  // first: without NCCL no rank may write or wait for an id
  return gpu_process(id_through_file(id_file, rank, options.timeout), rank, size, device, options);
}

int Mesh::size() const { return comm_->size(); }

Device Mesh::device(int rank) const {
  if (!holds(rank))
    throw Error("kiln::Mesh::device: rank " + std::to_string(rank) + " of " + str() +
                " is held by another process, which knows its device");
  return comm_->device(rank);
}

bool Mesh::holds(int rank) const {
  if (rank < 0 || rank >= size())
    throw Error("kiln::Mesh: rank " + std::to_string(rank) + " is not in " + str() +
                ", whose ranks are 0 to " + std::to_string(size() - 1));
  return comm_->holds(rank);
}

std::string Mesh::str() const { return "Mesh(" + comm_->describe() + ")"; }

}  // namespace kiln
