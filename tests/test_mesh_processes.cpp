// Meshes of processes (Mesh::host_processes): N processes of this binary, each one rank, run
// the same programs as one process's Mesh::host(N) and must give its results bit for bit (the
// host arithmetic combines the ranks' parts in rank order in both); and the fault cases: a rank
// that exits, one that hangs, ranks that call different collectives. The others must fail with
// a clear DeviceError within the mesh's timeout, not hang (a child still running at the parent's
// deadline is killed and fails the test).
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <kiln/kiln.hpp>
#include <kiln/mesh.hpp>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/child_case.hpp"
#include "support/gpu.hpp"

namespace {

namespace fs = std::filesystem;
using kiln::Array;
using kiln::DType;
using kiln::Mesh;
using kiln::ShardedArray;
using Results = std::vector<std::pair<std::string, Array>>;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// (7, 5) float64 values of both signs, none repeated.
Array matrix() { return kiln::arange(35).reshape({7, 5}).astype(DType::Float64) / 7 - 2; }

// What every rank computes, in the same order on every rank (each get() is a collective in a
// mesh of processes). The results are whole arrays, gathered.
Results programs(const Mesh& mesh) {
  const Array x = matrix();
  const ShardedArray s = kiln::shard(x, mesh, 0), t = kiln::shard(x, mesh, 1);
  const ShardedArray chained = kiln::sin(s) * 2 + kiln::cos(s) / 3;
  return {
      {"chain", chained.get()},
      {"sum over the split axis", kiln::sum(chained, 0).get()},
      {"sum over the other axis", kiln::sum(s, 1).get()},
      {"mean", kiln::mean(s).get()},
      {"max with NaN", kiln::max(kiln::shard(kiln::where(x > 1.0, kNaN, x), mesh, 0), 0).get()},
      {"argmax raveled", kiln::argmax(s).get()},
      {"argmin along the split axis", kiln::argmin(t, 1).get()},
      {"var", kiln::var(s, 0).get()},
      {"reshard to axis 1", kiln::reshard(s, 1).get()},
      {"operands split along different axes", (s + t * 2.0).get()},
      {"a replicated mean meets the pieces", (s - kiln::mean(s, 0, true)).get()},
      {"int32 sum",
       kiln::sum(kiln::shard(kiln::arange(35).reshape({7, 5}).astype(DType::Int32), mesh, 0), 0)
           .get()},
      {"fft along the split axis",
       kiln::fft::fft(kiln::shard(x.astype(DType::Complex128), mesh, 0), std::nullopt, 0).get()},
      {"fewer elements than ranks", kiln::argmax(kiln::shard(kiln::arange(2.0), mesh, 0)).get()},
      {"empty pieces summed", kiln::sum(kiln::shard(x(kiln::Slice(0, 2)), mesh, 0), 0).get()},
      {"empty pieces' max", kiln::max(kiln::shard(x(kiln::Slice(0, 2)), mesh, 0), 0).get()},
      {"empty pieces resharded",
       kiln::reshard(kiln::shard(x(kiln::Slice(0, 2)), mesh, 0), 1).get()},
  };
}

std::string printed(const ShardedArray& a) {
  std::ostringstream os;
  os << a;
  return os.str();
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_text(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

// A fresh directory under the system's temporary one, removed by the destructor.
struct TempDir {
  fs::path path;
  TempDir() {
    static int n = 0;
    path = fs::temp_directory_path() /
           ("kiln_mesh_processes_" + std::to_string(getpid()) + "_" + std::to_string(n++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

// Starts `size` ranks of the case below on `program`; their exit statuses (-1: killed at the
// deadline or by a signal). Rank `killed_late`'s is not waited for: it is killed once the others
// are done (a rank that hangs).
std::vector<int> run_ranks(const std::string& program, int size, const fs::path& out,
                           int killed_late = -1) {
  const fs::path dir = out / "mesh";
  std::vector<pid_t> pids;
  for (int r = 0; r < size; ++r)
    pids.push_back(kiln::test_support::start_case_in_child(
        "mesh process child: one rank",
        {"KILN_TEST_MESH_PROGRAM=" + program, "KILN_TEST_MESH_DIR=" + dir.string(),
         "KILN_TEST_MESH_RANK=" + std::to_string(r), "KILN_TEST_MESH_SIZE=" + std::to_string(size),
         "KILN_TEST_MESH_OUT=" + out.string()}));
  for (pid_t p : pids) REQUIRE(p > 0);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::vector<int> status(size, -1);
  for (int r = 0; r < size; ++r)
    if (r != killed_late) status[r] = kiln::test_support::wait_for_child(pids[r], end);
  if (killed_late >= 0) kiln::test_support::wait_for_child(pids[killed_late], {});
  return status;
}

// What an earlier run of `size` ranks in `dir` would have left: rank files of an exited process
// (a child spawned and reaped here) and a first collective's parts of the wrong length. A run
// that took them for its own would wait for no one or read the wrong bytes.
void leave_an_earlier_run(const fs::path& dir, int size) {
  const char* argv[] = {"/bin/true", nullptr};
  pid_t pid;
  REQUIRE(posix_spawn(&pid, argv[0], nullptr, nullptr, const_cast<char**>(argv), environ) == 0);
  REQUIRE(kiln::test_support::wait_for_child(pid, std::chrono::steady_clock::now() +
                                                      std::chrono::seconds(10)) == 0);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  fs::create_directories(dir);
  for (int r = 0; r < size; ++r) {
    write_text(dir / ("rank" + std::to_string(r) + ".pid"),
               std::to_string(pid) + " " + host + " an-earlier-session");
    write_text(dir / ("c0.r" + std::to_string(r)), "three");
  }
}

// A rank's fault case: the collective must throw DeviceError; its message goes to
// OUT/error.r<rank>, and a later collective must refuse, saying to make a new mesh.
void expect_failure(const Mesh& mesh, const ShardedArray& operand, const fs::path& out, int rank) {
  std::string message;
  try {
    kiln::sum(operand, 0).get();
  } catch (const kiln::DeviceError& e) {
    message = e.what();
  }
  write_text(out / ("error.r" + std::to_string(rank)), message);
  CHECK_THROWS_WITH_AS(kiln::sum(kiln::shard(matrix(), mesh, 0), 0).get(),
                       doctest::Contains("make a new kiln::Mesh"), kiln::DeviceError);
}

}  // namespace

TEST_CASE("mesh process child: one rank" * doctest::skip()) {
  const std::string program = env("KILN_TEST_MESH_PROGRAM");
  const fs::path out = env("KILN_TEST_MESH_OUT");
  const int rank = std::stoi(env("KILN_TEST_MESH_RANK")),
            size = std::stoi(env("KILN_TEST_MESH_SIZE"));
  kiln::MeshOptions options;
  if (program == "hang") options.timeout = std::chrono::milliseconds(1500);
  if (program == "gpu die") options.timeout = std::chrono::seconds(30);
  const Mesh mesh =
      program.rfind("gpu ", 0) == 0
          ? Mesh::gpu_process(env("KILN_TEST_MESH_DIR") + ".id", rank, size, rank, options)
          : Mesh::host_processes(env("KILN_TEST_MESH_DIR"), rank, size, options);
  REQUIRE(mesh.size() == size);
  for (int r = 0; r < size; ++r) CHECK(mesh.holds(r) == (r == rank));
  if (size > 1) {
    CHECK_THROWS_WITH_AS(mesh.device((rank + 1) % size),
                         doctest::Contains("held by another process"), kiln::Error);
    // A piece for every rank, where this process holds one: the others' are not its to give.
    std::vector<Array> every(size, kiln::zeros({1}, DType::Float64, mesh.device(rank)));
    CHECK_THROWS_WITH_AS(ShardedArray(mesh, 0, {size}, every),
                         doctest::Contains("but another process holds rank"), kiln::ShapeError);
  }
  if (program == "programs" || program == "gpu programs") {
    for (const auto& [name, result] : programs(mesh))
      kiln::save_npy((out / (name + ".r" + std::to_string(rank) + ".npy")).string(), result);
    write_text(out / ("printed.r" + std::to_string(rank)), printed(kiln::shard(matrix(), mesh, 0)));
    if (size > 1)
      CHECK_THROWS_WITH_AS(kiln::shard(matrix(), mesh, 0).shard((rank + 1) % size),
                           doctest::Contains("held by another process"), kiln::Error);
  } else if (program == "die" || program == "gpu die") {
    if (rank == 1) _exit(3);  // after joining, before its first collective
    expect_failure(mesh, kiln::shard(matrix(), mesh, 0), out, rank);
  } else if (program == "hang") {
    if (rank == 1) std::this_thread::sleep_for(std::chrono::minutes(2));  // killed by the parent
    expect_failure(mesh, kiln::shard(matrix(), mesh, 0), out, rank);
  } else if (program == "mismatch") {  // rank 0 sums a 7 x 5 array, the others a 7 x 4 one
    const Array x = rank == 0 ? matrix() : matrix()(kiln::Slice(), kiln::Slice(0, 4));
    expect_failure(mesh, kiln::shard(x, mesh, 0), out, rank);
  }
}

TEST_CASE("N processes, one rank each, give one process's host mesh results bit for bit") {
  for (int size : {1, 2, 3}) {
    CAPTURE(size);
    TempDir out;
    leave_an_earlier_run(out.path / "mesh", size);
    const std::vector<int> status = run_ranks("programs", size, out.path);
    for (int r = 0; r < size; ++r) CHECK(status[r] == 0);
    const Results want = programs(Mesh::host(size));
    const std::string want_printed = printed(kiln::shard(matrix(), Mesh::host(size), 0));
    for (int r = 0; r < size; ++r) {
      CAPTURE(r);
      for (const auto& [name, expected] : want) {
        CAPTURE(name);
        const fs::path file = out.path / (name + ".r" + std::to_string(r) + ".npy");
        REQUIRE(fs::exists(file));
        const Array got = kiln::load_npy(file.string());
        CHECK(got.dtype() == expected.dtype());
        CHECK(got.shape() == expected.shape());
        CHECK(kiln::array_equal(got, expected, true));
      }
      CHECK(read_text(out.path / ("printed.r" + std::to_string(r))) == want_printed);
    }
  }
  // And the reference itself is plain kiln's, within rounding (test_mesh checks more of it).
  CHECK(kiln::allclose(programs(Mesh::host(3)).at(1).second,
                       kiln::sum(kiln::sin(matrix()) * 2 + kiln::cos(matrix()) / 3, 0)));
}

// One GPU per process through NCCL (Mesh::gpu_process, the id through a file): the results of
// the host mesh, within rounding (the GPUs' sums may add in another order).
MULTI_GPU_TEST_CASE("N processes, one GPU each through NCCL, give the host mesh's results") {
  const int size = std::min(kiln::cuda_device_count(), 4);
  TempDir out;
  const std::vector<int> status = run_ranks("gpu programs", size, out.path);
  for (int r = 0; r < size; ++r) CHECK(status[r] == 0);
  const Results want = programs(Mesh::host(size));
  for (int r = 0; r < size; ++r)
    for (const auto& [name, expected] : want) {
      CAPTURE(r);
      CAPTURE(name);
      const fs::path file = out.path / (name + ".r" + std::to_string(r) + ".npy");
      REQUIRE(fs::exists(file));
      const Array got = kiln::load_npy(file.string());
      CHECK(got.shape() == expected.shape());
      CHECK(kiln::allclose(got, expected, 1e-12, 1e-12, true));
    }
}

TEST_CASE("a rank whose process exits: the others fail with a DeviceError naming it, not hang") {
  TempDir out;
  const std::vector<int> status = run_ranks("die", 3, out.path);
  CHECK(status[1] == 3);
  for (int r : {0, 2}) {
    CAPTURE(r);
    CHECK(status[r] == 0);
    const std::string error = read_text(out.path / ("error.r" + std::to_string(r)));
    // Rank 2 may hear of it from rank 0's abort file first: either names rank 1's exit.
    CHECK(error.find("rank 1 (process") != std::string::npos);
    CHECK(error.find("exited before posting its part") != std::string::npos);
    CHECK(error.find("make a new kiln::Mesh") != std::string::npos);
  }
}

// The same through NCCL, one GPU per process: the others' collective fails (NCCL's error for a
// peer that exited, or the mesh's 30 s timeout) and aborts their communicators, not a hang.
MULTI_GPU_TEST_CASE("a rank process on a GPU exits: the others' NCCL collective fails, not hangs") {
  const int size = std::min(kiln::cuda_device_count(), 4);
  TempDir out;
  const std::vector<int> status = run_ranks("gpu die", size, out.path);
  CHECK(status[1] == 3);
  for (int r = 0; r < size; ++r) {
    if (r == 1) continue;
    CAPTURE(r);
    CHECK(status[r] == 0);
    const std::string error = read_text(out.path / ("error.r" + std::to_string(r)));
    CHECK(error.find("kiln aborted the mesh's communicators") != std::string::npos);
  }
}

TEST_CASE("a rank that hangs: the others fail at the mesh's timeout") {
  TempDir out;
  const std::vector<int> status = run_ranks("hang", 3, out.path, /*killed_late=*/1);
  for (int r : {0, 2}) {
    CAPTURE(r);
    CHECK(status[r] == 0);
    const std::string error = read_text(out.path / ("error.r" + std::to_string(r)));
    const bool timed_out =
        error.find("rank 1 did not post its part within 1500 ms") != std::string::npos;
    const bool heard = error.find("gave up") != std::string::npos;  // from the other's abort
    CHECK((timed_out || heard));
  }
}

TEST_CASE("ranks that call different collectives fail, saying so") {
  TempDir out;
  const std::vector<int> status = run_ranks("mismatch", 2, out.path);
  for (int r : {0, 1}) {
    CAPTURE(r);
    CHECK(status[r] == 0);
    const std::string error = read_text(out.path / ("error.r" + std::to_string(r)));
    CHECK((error.find("the ranks called different collectives") != std::string::npos ||
           error.find("gave up") != std::string::npos));
  }
}

TEST_CASE("host_processes: bad ranks and a directory that cannot be made") {
  TempDir out;
  CHECK_THROWS_WITH_AS(Mesh::host_processes(out.path.string(), 2, 2),
                       doctest::Contains("numbered 0 to size - 1"), kiln::Error);
  CHECK_THROWS_WITH_AS(Mesh::host_processes(out.path.string(), 0, 0),
                       doctest::Contains("at least one rank"), kiln::Error);
  write_text(out.path / "file", "x");
  CHECK_THROWS_WITH_AS(Mesh::host_processes((out.path / "file" / "sub").string(), 0, 1),
                       doctest::Contains("cannot create the directory"), kiln::DeviceError);
  kiln::MeshOptions quick;
  quick.timeout = std::chrono::milliseconds(200);
  CHECK_THROWS_WITH_AS(Mesh::host_processes((out.path / "alone").string(), 0, 2, quick),
                       doctest::Contains("rank 1 did not join within 200 ms"), kiln::DeviceError);
  // A mesh of one process and one rank needs no other: its collectives are its own.
  const Mesh one = Mesh::host_processes((out.path / "one").string(), 0, 1);
  CHECK(
      kiln::array_equal(kiln::sum(kiln::shard(matrix(), one, 0), 0).get(), kiln::sum(matrix(), 0)));
  CHECK((fs::status(out.path / "one").permissions() & fs::perms::all) == fs::perms::owner_all);
}
