// kiln::Mesh: which communicator a mesh is, chosen once at its creation.
#include <memory>
#include <numeric>
#include <vector>

#include "kiln/mesh.hpp"
#include "mesh/file_communicator.hpp"
#include "mesh/host_communicator.hpp"
#include "mesh/nccl_communicator.hpp"

namespace kiln {

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

int Mesh::size() const { return comm_->size(); }

Device Mesh::device(int rank) const {
  if (rank < 0 || rank >= size())
    throw Error("kiln::Mesh::device: rank " + std::to_string(rank) + " is not in " + str() +
                ", whose ranks are 0 to " + std::to_string(size() - 1));
  return comm_->device(rank);
}

bool Mesh::holds(int rank) const {
  device(rank);  // checks the rank
  return comm_->holds(rank);
}

std::string Mesh::str() const { return "Mesh(" + comm_->describe() + ")"; }

}  // namespace kiln
