// Issue 16's targets on the GPUs of one machine: a mesh of every GPU (or of the first
// KILN_BENCH_GPUS) against one GPU. One workload per run, one JSON line each:
//   mesh_bench chain [LOG2N]      the chain of PERFORMANCE.md on 2^LOG2N (default 30) float32
//                                 elements: one GPU, then split over the mesh (each rank's
//                                 inputs drawn on its own GPU); scaling = one / (N * mesh)
//   mesh_bench sum [ROWS COLS]    sum over the split axis of (N * ROWS, COLS) float32 (default
//                                 256 x 2^22 per rank): the local sums plus the all-reduce of
//                                 COLS values, beside a bare ncclAllReduce of the same bytes
//                                 timed as nccl-tests times it (in place, busbw = bytes / time
//                                 * 2 (N - 1) / N)
//   mesh_bench fft [SIDE]         fftn of SIDE x SIDE complex64 (default 16384): one GPU, then
//                                 split along axis 0 over the mesh (the slab decomposition)
// On one GPU the mesh has one rank (the code path runs; the scaling is trivially 1).
#include <kiln/kiln.hpp>
#include <kiln/mesh.hpp>

#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include "cuda/runtime.hpp"
#include "mesh/nccl_api.hpp"
#include "mesh/split.hpp"
#include "timing.hpp"

namespace {

using kiln::Array;
using kiln::DType;
using kiln::Mesh;
using kiln::ShardedArray;

Mesh bench_mesh() {
  int n = kiln::cuda_device_count();
  if (const char* e = std::getenv("KILN_BENCH_GPUS")) n = std::min(n, std::atoi(e));
  std::vector<int> devices(n);
  std::iota(devices.begin(), devices.end(), 0);
  return Mesh::gpus(devices);
}

void sync_all(const Mesh& m) {
  for (int r = 0; r < m.size(); ++r) kiln::synchronize(m.device(r));
}

template <class A>
A chain(const A& x, const A& y) {
  auto t = x * 2 + 1;
  t = sin(t) * cos(y);
  t = t * t + y / 3;
  return exp(-t) - x;
}

// Uniform [0, 1) values of `shape` split along axis 0, each rank's piece drawn on its own GPU.
ShardedArray drawn(const Mesh& m, kiln::Shape shape, uint64_t seed) {
  std::vector<Array> pieces;
  for (int r = 0; r < m.size(); ++r) {
    kiln::Shape piece = shape;
    piece[0] = kiln::mesh::piece_of(shape[0], m.size(), r).length();
    kiln::random::Generator g(seed + r, m.device(r));
    pieces.push_back(g.uniform(0, 1, piece, DType::Float32).eval());
  }
  return ShardedArray(m, 0, shape, std::move(pieces));
}

void bench_chain(const Mesh& m, int log2n) {
  const int64_t n = int64_t{1} << log2n;
  double one;
  {
    kiln::random::Generator g(1, kiln::cuda(0));
    Array x = g.uniform(0, 1, {n}, DType::Float32).eval();
    Array y = g.uniform(0, 1, {n}, DType::Float32).eval();
    one = bench::median_ms([&] { chain(x, y).eval(); }, [] { kiln::synchronize(kiln::cuda(0)); },
                           10, 5);
  }
  const ShardedArray x = drawn(m, {n}, 1), y = drawn(m, {n}, 100);
  const double mesh = bench::median_ms([&] { chain(x, y).eval(); }, [&] { sync_all(m); }, 10, 5);
  bench::print("mesh_chain", {{"gpus", double(m.size())},
                              {"n", double(n)},
                              {"one_gpu_ms", one},
                              {"mesh_ms", mesh},
                              {"scaling", one / (m.size() * mesh)}});
}

// A bare in-place ncclAllReduce of `count` floats on every GPU of the mesh, its own
// communicators (ncclCommInitAll), timed as nccl-tests does.
double bare_all_reduce_ms(const Mesh& m, size_t count) {
  const auto& nccl = kiln::nccl::api();
  const int n = m.size();
  std::vector<int> devices(n);
  std::iota(devices.begin(), devices.end(), 0);
  std::vector<kiln::nccl::ncclComm_t> comms(n);
  KILN_NCCL_CHECK(nccl.ncclCommInitAll(comms.data(), n, devices.data()));
  std::vector<void*> buf(n);
  std::vector<cudaStream_t> streams(n);
  for (int r = 0; r < n; ++r) {
    cudaSetDevice(r);
    cudaMalloc(&buf[r], count * sizeof(float));
    cudaMemset(buf[r], 0, count * sizeof(float));
    cudaStreamCreate(&streams[r]);
  }
  auto once = [&] {
    nccl.ncclGroupStart();
    for (int r = 0; r < n; ++r)
      nccl.ncclAllReduce(buf[r], buf[r], count, kiln::nccl::ncclFloat32, kiln::nccl::ncclSum,
                         comms[r], streams[r]);
    nccl.ncclGroupEnd();
  };
  auto wait = [&] {
    for (int r = 0; r < n; ++r) cudaStreamSynchronize(streams[r]);
  };
  const double ms = bench::median_ms(once, wait, 20, 5);
  for (int r = 0; r < n; ++r) {
    cudaSetDevice(r);
    cudaFree(buf[r]);
    cudaStreamDestroy(streams[r]);
    nccl.ncclCommDestroy(comms[r]);
  }
  cudaSetDevice(0);
  return ms;
}

void bench_sum(const Mesh& m, int64_t rows, int64_t cols) {
  const ShardedArray x = drawn(m, {rows * m.size(), cols}, 7);
  const double sum = bench::median_ms([&] { kiln::sum(x, 0).eval(); }, [&] { sync_all(m); }, 10, 5);
  const double local = bench::median_ms([&] { kiln::sum(x.shard(0), 0).eval(); },
                                        [] { kiln::synchronize(kiln::cuda(0)); }, 10, 5);
  const double bare = bare_all_reduce_ms(m, static_cast<size_t>(cols));
  const double bytes = double(cols) * 4, factor = 2.0 * (m.size() - 1) / m.size();
  bench::print("mesh_sum", {{"gpus", double(m.size())},
                            {"rows_per_rank", double(rows)},
                            {"cols", double(cols)},
                            {"kiln_sum_ms", sum},
                            {"local_sum_ms", local},
                            {"bare_all_reduce_ms", bare},
                            {"bare_busbw_gbs", bytes / bare / 1e6 * factor},
                            {"kiln_collective_busbw_gbs", bytes / (sum - local) / 1e6 * factor}});
}

void bench_fft(const Mesh& m, int64_t side) {
  double one;
  {
    kiln::random::Generator g(3, kiln::cuda(0));
    Array x = g.uniform(0, 1, {side, side}, DType::Float32).astype(DType::Complex64).eval();
    one = bench::median_ms([&] { kiln::fft::fftn(x).eval(); },
                           [] { kiln::synchronize(kiln::cuda(0)); }, 5, 5);
  }
  const ShardedArray x = drawn(m, {side, side}, 3).astype(DType::Complex64).eval();
  const double mesh =
      bench::median_ms([&] { kiln::fft::fftn(x).eval(); }, [&] { sync_all(m); }, 5, 5);
  bench::print("mesh_fft", {{"gpus", double(m.size())},
                            {"side", double(side)},
                            {"one_gpu_ms", one},
                            {"mesh_ms", mesh},
                            {"speedup", one / mesh}});
}

}  // namespace

int main(int argc, char** argv) {
  if (!kiln::cuda_available()) {
    std::printf("{\"error\": \"no GPU\"}\n");
    return 0;
  }
  const std::string w = argc > 1 ? argv[1] : "";
  auto arg = [&](int i, int64_t otherwise) { return argc > i ? std::atoll(argv[i]) : otherwise; };
  const Mesh m = bench_mesh();
  if (w == "chain")
    bench_chain(m, static_cast<int>(arg(2, 30)));
  else if (w == "sum")
    bench_sum(m, arg(2, 256), arg(3, int64_t{1} << 22));
  else if (w == "fft")
    bench_fft(m, arg(2, 16384));
  else {
    std::fprintf(stderr, "usage: mesh_bench chain [LOG2N] | sum [ROWS COLS] | fft [SIDE]\n");
    return 2;
  }
  return 0;
}
