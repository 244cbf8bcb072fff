// Past one device: arrays split over the ranks of a kiln::Mesh (docs/multi-gpu.md).
//
//   auto mesh = kiln::Mesh::gpus({0, 1});                 // NCCL communicators, one per GPU
//   auto x = kiln::shard(kiln::random::uniform(0, 1, {1 << 20, 64}), mesh, 0);
//   auto y = kiln::sin(x) * 2 + kiln::cos(x) / 3;        // lazy on each GPU
//   auto s = kiln::sum(y, 0);                            // local sums, then an NCCL all-reduce
//   std::cout << s << "\n";                              // gathered and printed like an Array
//
// A ShardedArray is one kiln::Array per rank, each on its rank's device. Elementwise work and
// reductions over other axes build each rank's expression lazily and stay on its device, so an
// evaluation runs one fused kernel per GPU, all queued before any is waited for. A reduction
// over the sharded axis reduces each shard and then combines the partial results with a
// collective (NCCL's all-reduce on GPUs): the result is replicated, every rank holding all of
// it. Collectives are lazy too: each is a step of the plan that evaluates its result, after the
// kernels that compute the parts and before those that read it, and kiln::explain of a rank's
// piece shows it with the bytes each rank sends. ShardedArray::eval() evaluates every rank's
// piece held in one plan, so each collective runs once for all of them.
//
// Link kiln::mesh (the library kiln_mesh) for these. A mesh of GPUs opens libnccl.so.2 at run
// time; without it Mesh::gpus throws DeviceError, and Mesh::host(n) runs the same programs on
// n host "ranks" whose collectives are done on the host (kiln's tests run them on CI).
//
// A mesh of processes (Mesh::host_processes, Mesh::gpu_process) holds one rank per process:
// each process holds its rank's pieces, and every process runs the same program, evaluating
// (eval(), get(), printing) in the same order: a collective runs when an evaluation needs it.
//
// Not built yet (docs/multi-gpu.md): statistics over the split axis beyond var and std, and
// operations beyond the ones declared here.
#pragma once
#include <array>
#include <chrono>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/array.hpp"
#include "kiln/fft.hpp"

namespace kiln {

namespace mesh {
class Communicator;
}

struct MeshOptions {
  // How long a collective may run before kiln gives up on it: it then aborts the mesh's
  // communicators (ncclCommAbort) and throws DeviceError, so a rank that died or hangs fails
  // the program instead of hanging it. An aborted mesh refuses later collectives.
  std::chrono::milliseconds timeout = std::chrono::minutes(5);
};

// The devices an array can be split over, one rank each, and the communicator that combines
// their results. Copies share the communicator; two meshes made separately are different
// meshes, even over the same devices (arrays on them do not mix).
class Mesh {
 public:
  // The GPUs of this process named by `devices` (CUDA indices, distinct), rank r on
  // cuda(devices[r]), through NCCL (ncclCommInitAll). DeviceError when NCCL cannot be loaded
  // (naming libnccl.so.2 and how to install it), for a missing GPU, a repeated index or an
  // empty list.
  static Mesh gpus(const std::vector<int>& devices, MeshOptions options = {});
  // Every GPU of the process (cuda_device_count()).
  static Mesh all_gpus(MeshOptions options = {});
  // `ranks` ranks on the host, whose collectives combine host memory in rank order with NCCL's
  // semantics: the same programs as on a mesh of GPUs, without one. ranks >= 1.
  static Mesh host(int ranks);

  // Meshes of processes, one rank per process (as mpirun or srun start them): every process
  // makes the mesh with its own rank, holds that rank's pieces only, and evaluates (eval(),
  // get(), printing) in the same order as the others, as in any SPMD program: each collective
  // runs when an evaluation needs it.
  //
  // One host rank per process, meeting in the directory `dir` (created 0700 where missing; one
  // per run: rank 0 removes what an earlier run left there) and combining results through files
  // in it with Mesh::host's arithmetic: multi-process programs tested without NCCL or GPUs (no
  // speed is sought). DeviceError when a rank does not join or post its part within
  // options.timeout, when a rank's process exits (seen from the same host) or gives up; the
  // others then fail rather than hang.
  static Mesh host_processes(const std::string& dir, int rank, int size, MeshOptions options = {});

  // One GPU per process through NCCL (ncclCommInitRank): this process is rank `rank` of `size`
  // on cuda(device). Rank 0 makes NCCL's unique id and writes it to `id_file` (under a
  // temporary name, then renamed; an earlier run's file is removed first), the others wait for
  // it there (up to options.timeout), so every rank must see that path (a shared filesystem
  // across hosts). The communicator is non-blocking (ncclCommInitRankConfig), and this returns
  // once every rank has joined it: DeviceError without NCCL (naming libnccl.so.2; 2.14 or
  // later), for a missing GPU, when the id does not come in time, or when a rank has not joined
  // within options.timeout (the communicator is aborted: no rank hangs on one that died).
  static Mesh gpu_process(const std::string& id_file, int rank, int size, int device,
                          MeshOptions options = {});
  // The same, with the id passed by the program: rank 0 calls nccl_unique_id() and sends the
  // bytes to the others (MPI_Bcast), so kiln links no MPI.
  using NcclUniqueId = std::array<unsigned char, 128>;
  static NcclUniqueId nccl_unique_id();
  static Mesh gpu_process(const NcclUniqueId& id, int rank, int size, int device,
                          MeshOptions options = {});

  int size() const;
  // Error for a rank outside [0, size()), or one another process holds (its device is its own).
  Device device(int rank) const;
  // Whether this process holds rank r: every rank of a mesh made in one process; its own rank
  // only in a mesh of processes (Mesh::processes, Mesh::gpu_process).
  bool holds(int rank) const;
  // "Mesh(host x 3)", "Mesh(cuda:0, cuda:1; NCCL 2.28.3)".
  std::string str() const;
  bool operator==(const Mesh& o) const { return comm_ == o.comm_; }

  mesh::Communicator& communicator() const { return *comm_; }

 private:
  explicit Mesh(std::shared_ptr<mesh::Communicator> comm) : comm_(std::move(comm)) {}
  std::shared_ptr<mesh::Communicator> comm_;
};

// An array over the ranks of a mesh: split along one axis (each rank holds a contiguous piece,
// near-equal in size as numpy.array_split makes them: of 7 over 3 ranks, 3, 2 and 2), or
// replicated (each rank holds all of it). Shape, dtype and values are those of the whole
// array. A cheap handle, like Array.
class ShardedArray {
 public:
  // Prefer kiln::shard and kiln::replicate. `shards[r]` is rank r's piece on mesh.device(r);
  // `axis` the axis split, or none for a replicated array. Checks that the pieces fit.
  ShardedArray(Mesh mesh, std::optional<int> axis, Shape shape, std::vector<Array> shards);

  const Mesh& mesh() const { return mesh_; }
  // The axis split over the ranks; none when every rank holds the whole array.
  std::optional<int> axis() const { return axis_; }
  bool replicated() const { return !axis_; }
  DType dtype() const;
  const Shape& shape() const { return shape_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  int64_t size() const { return shape_size(shape_); }
  // Rank r's piece, on mesh().device(r). Error for a rank another process holds.
  const Array& shard(int rank) const;
  // One entry per rank: the pieces this process holds, empty Arrays for the others'.
  const std::vector<Array>& shards() const { return shards_; }
  // "sharded along axis 0 over Mesh(host x 3): (3, 4), (2, 4), (2, 4)" or "replicated over ...".
  std::string layout() const;

  // Evaluates every rank's piece held, in one plan: each GPU's work is queued before any is
  // waited for, and each collective runs once for all ranks (it waits for its own end, so that
  // a rank that died or hangs fails here). Returns *this.
  const ShardedArray& eval() const;
  // The whole array as one host Array (each piece copied to the host, joined along the axis),
  // evaluated: a collective that fails throws here. In a mesh of processes every process must
  // call it (the pieces it lacks come by an all-gather), and every one gets the whole array.
  Array get() const;
  ShardedArray astype(DType t) const;

 private:
  Mesh mesh_;
  std::optional<int> axis_;
  Shape shape_;
  std::vector<Array> shards_;
};

// x split along `axis` (negative counts from the end) over the mesh's ranks, each piece copied
// to its rank's device; lazy, like the copies of asarray. ShapeError for an axis out of range.
ShardedArray shard(const Array& x, const Mesh& mesh, int axis);
// x copied to every rank of the mesh.
ShardedArray replicate(const Array& x, const Mesh& mesh);
// x on the same mesh, split along `axis` (negative counts from the end), or replicated (none).
// Replicated to split moves nothing (each rank keeps its part); split to replicated is an
// all-gather of the pieces (padded to the longest, as a collective moves equal blocks); split to
// another axis an all-to-all (each rank sends its piece once, cut into the parts the new pieces
// cover). ShapeError for an axis out of range.
ShardedArray reshard(const ShardedArray& x, std::optional<int> axis);

// ---- elementwise: each rank computes its own piece (lazy, fused like any expression) -------
// Two operands must be on the same Mesh (DeviceError). The result is split along the axis
// both are split along; operands split along different axes of the result give the larger
// operand's layout, the smaller one resharded to it first (an all-to-all, kiln::reshard); an
// operand split along an axis it broadcasts along (length 1) or lacks is replicated first (an
// all-gather). A replicated operand combines with a split one by taking, on each rank, the part
// that rank's piece covers: nothing moves.
#define KILN_SHARDED_BINARY(op)                                           \
  ShardedArray operator op(const ShardedArray& a, const ShardedArray& b); \
  ShardedArray operator op(const ShardedArray& a, Scalar b);              \
  ShardedArray operator op(Scalar a, const ShardedArray& b);
KILN_SHARDED_BINARY(+)
KILN_SHARDED_BINARY(-)
KILN_SHARDED_BINARY(*)
KILN_SHARDED_BINARY(/)
#undef KILN_SHARDED_BINARY
ShardedArray operator-(const ShardedArray& a);
ShardedArray abs(const ShardedArray& a);
ShardedArray sqrt(const ShardedArray& a);
ShardedArray exp(const ShardedArray& a);
ShardedArray log(const ShardedArray& a);
ShardedArray sin(const ShardedArray& a);
ShardedArray cos(const ShardedArray& a);
ShardedArray tanh(const ShardedArray& a);

// ---- reductions, with kiln::sum's axes, keepdims and dtype rules ------------------------------
// Over axes that leave the split axis alone: each rank reduces its piece, and the result stays
// split (along the same axis, renumbered). Over the split axis: each rank reduces its piece,
// then a collective combines the partial results (an all-reduce: any as a max of bools, all as a
// min; for complex values, whose max, min and product NCCL cannot form, an all-gather and a local
// reduction), and every rank holds the result (replicated). Float sums and products may round
// differently from one device's (other partial results, and NCCL's order of combining them);
// max and min propagate NaN as NumPy does.
ShardedArray sum(const ShardedArray& a, AxesArg axes = {}, bool keepdims = false);
ShardedArray mean(const ShardedArray& a, AxesArg axes = {}, bool keepdims = false);
ShardedArray prod(const ShardedArray& a, AxesArg axes = {}, bool keepdims = false);
ShardedArray max(const ShardedArray& a, AxesArg axes = {}, bool keepdims = false);
ShardedArray min(const ShardedArray& a, AxesArg axes = {}, bool keepdims = false);
ShardedArray any(const ShardedArray& a, AxesArg axes = {}, bool keepdims = false);
ShardedArray all(const ShardedArray& a, AxesArg axes = {}, bool keepdims = false);
// NumPy's argmax and argmin (none: of the raveled array), indices into the whole array. Along
// the split axis (or of a raveled split array) each rank finds its piece's best value and its
// index, an all-gather brings the pairs to every rank, and each keeps the best value's lowest
// index (a NaN is best, as in NumPy): the result is replicated. Along another axis the result
// stays split.
ShardedArray argmax(const ShardedArray& a, std::optional<int> axis = std::nullopt,
                    bool keepdims = false);
ShardedArray argmin(const ShardedArray& a, std::optional<int> axis = std::nullopt,
                    bool keepdims = false);
// kiln::var and kiln::std (ddof: NumPy's delta degrees of freedom): over the split axis the
// mean and the sum of squared deviations are two all-reduces of the reduced shape; the data
// stays where it is. Complex values give their real variance (|x - mean|^2).
ShardedArray var(const ShardedArray& a, AxesArg axes = {}, double ddof = 0, bool keepdims = false);
ShardedArray std(const ShardedArray& a, AxesArg axes = {}, double ddof = 0, bool keepdims = false);

// The whole array's repr, as NumPy prints it (gathered to the host first).
std::ostream& operator<<(std::ostream& os, const ShardedArray& a);

// ---- FFTs (numpy.fft's names, lengths, axes and norm, as kiln/fft.hpp) -----------------------
// Axes that are not split transform on each rank. The split axis transforms by the slab
// decomposition: the other axes first, then the array resharded along the longest other axis
// (reshard, above: an all-to-all), the old split axis transformed on each rank, and the result
// resharded back; a 1-d array goes through replicated. rfftn halves its last axis first (on each
// rank; when that axis is the split one, the array moves off it and back), then transforms the
// others; irfftn the other way round, as NumPy. A length pads or crops its axis in that axis's
// round. Results keep the input's layout and may round differently from one device's (the axes
// transform in another order).
namespace fft {
ShardedArray fft(const ShardedArray& x, std::optional<int64_t> n = std::nullopt, int axis = -1,
                 std::string_view norm = "backward");
ShardedArray ifft(const ShardedArray& x, std::optional<int64_t> n = std::nullopt, int axis = -1,
                  std::string_view norm = "backward");
ShardedArray fftn(const ShardedArray& x, Lengths s = std::nullopt, FftAxes axes = std::nullopt,
                  std::string_view norm = "backward");
ShardedArray ifftn(const ShardedArray& x, Lengths s = std::nullopt, FftAxes axes = std::nullopt,
                   std::string_view norm = "backward");
ShardedArray rfft(const ShardedArray& x, std::optional<int64_t> n = std::nullopt, int axis = -1,
                  std::string_view norm = "backward");
ShardedArray irfft(const ShardedArray& x, std::optional<int64_t> n = std::nullopt, int axis = -1,
                   std::string_view norm = "backward");
ShardedArray rfftn(const ShardedArray& x, Lengths s = std::nullopt, FftAxes axes = std::nullopt,
                   std::string_view norm = "backward");
ShardedArray irfftn(const ShardedArray& x, Lengths s = std::nullopt, FftAxes axes = std::nullopt,
                    std::string_view norm = "backward");
}  // namespace fft

}  // namespace kiln
