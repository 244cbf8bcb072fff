#include "mesh/file_communicator.hpp"

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "kiln/errors.hpp"
#include "mesh/host_communicator.hpp"
#include "mesh/rendezvous_files.hpp"
#include "mesh/wire_type.hpp"

namespace kiln::mesh {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using rendezvous::poll;
using rendezvous::read_if_present;
using rendezvous::write_atomically;
using rendezvous::Writer;

fs::path rank_file(const fs::path& dir, int r) {
  return dir / ("rank" + std::to_string(r) + ".pid");
}
fs::path abort_file(const fs::path& dir, int r) { return dir / ("abort.r" + std::to_string(r)); }
fs::path part_file(const fs::path& dir, long k, int r) {
  return dir / ("c" + std::to_string(k) + ".r" + std::to_string(r));
}

// What an earlier run left: its rank, part and abort files.
void remove_leftovers(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const bool part = name.size() > 1 && name[0] == 'c' && name.find(".r") != std::string::npos;
    if (part || name.rfind("abort.r", 0) == 0 || name.rfind("rank", 0) == 0)
      fs::remove(e.path(), ec);
  }
}

// A rank file: "pid host session".
struct RankFile {
  Writer writer;
  std::string session;
};

std::optional<RankFile> read_rank_file(const fs::path& path) {
  auto text = read_if_present(path);
  if (!text) return std::nullopt;
  std::istringstream in(std::string(text->begin(), text->end()));
  RankFile f{Writer::parse(in), {}};
  in >> f.session;
  if (f.session.empty()) return std::nullopt;
  return f;
}

void make_private_directory(const fs::path& dir) {
  std::error_code ec;
  if (fs::create_directories(dir, ec))
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  if (ec || !fs::is_directory(dir))
    throw DeviceError("kiln::Mesh::host_processes: cannot create the directory " + dir.string() +
                      (ec ? ": " + ec.message() : std::string()) +
                      "; pass a directory every rank can write");
}

}  // namespace

// Rank 0 clears the directory and names the run (a session: its process id and start time);
// the others wait for rank 0's file of a live process, then write theirs with that session, and
// every rank waits for the files of its session: files of an earlier run never pass for this
// one's, and a rank that exits after joining is still seen to have joined.
FileCommunicator::FileCommunicator(fs::path dir, int rank, int size,
                                   std::chrono::milliseconds timeout)
    : dir_(std::move(dir)), rank_(rank), size_(size), timeout_(timeout), peers_(size) {
  if (size < 1 || rank < 0 || rank >= size)
    throw Error("kiln::Mesh::host_processes: rank " + std::to_string(rank) + " of " +
                std::to_string(size) + ": a mesh has at least one rank, numbered 0 to size - 1");
  make_private_directory(dir_);
  const auto deadline = Clock::now() + timeout_;
  auto late = [&](int s) {
    return [this, s] {
      return "kiln::Mesh::host_processes in " + dir_.string() + ": rank " + std::to_string(s) +
             " did not join within " + std::to_string(timeout_.count()) +
             " ms (kiln::MeshOptions::timeout); start every rank with the same directory";
    };
  };
  std::string session;
  if (rank_ == 0) {
    remove_leftovers(dir_);
    session = std::to_string(getpid()) + "-" +
              std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
  } else {
    session = poll(
        [&]() -> std::optional<std::string> {
          auto f = read_rank_file(rank_file(dir_, 0));
          if (!f || f->writer.gone()) return std::nullopt;
          return f->session;
        },
        [] {}, deadline, late(0));
  }
  const std::string me = Writer::me().str() + " " + session;
  write_atomically(rank_file(dir_, rank_), me.data(), me.size());
  for (int s = 0; s < size_; ++s)
    peers_[s] = poll(
        [&]() -> std::optional<Writer> {
          auto f = read_rank_file(rank_file(dir_, s));
          if (!f || f->session != session) return std::nullopt;
          return f->writer;
        },
        [] {}, deadline, late(s));
}

std::string FileCommunicator::describe() const {
  return "host processes x " + std::to_string(size_) + ", rank " + std::to_string(rank_) + ", in " +
         dir_.string();
}

void FileCommunicator::fail(const std::string& why) {
  aborted_ = why;
  try {
    write_atomically(abort_file(dir_, rank_), why.data(), why.size());
  } catch (...) {  // the others still stop at their deadline
  }
}

void FileCommunicator::check_alive(const char* what, int peer) const {
  if (auto why = read_if_present(abort_file(dir_, peer)))
    throw DeviceError(std::string(what) + ": rank " + std::to_string(peer) + " gave up (" +
                      std::string(why->begin(), why->end()) + ")");
  const Writer& p = peers_[peer];
  if (p.gone())
    throw DeviceError(std::string(what) + ": rank " + std::to_string(peer) + " (process " +
                      std::to_string(p.pid) + ") exited before posting its part");
}

std::vector<char> FileCommunicator::await_part(const char* what, int peer, size_t bytes) {
  const long k = sequence_ - 1;
  std::vector<char> part = poll([&] { return read_if_present(part_file(dir_, k, peer)); },
                                [&] { check_alive(what, peer); }, Clock::now() + timeout_,
                                [&] {
                                  return std::string(what) + ": rank " + std::to_string(peer) +
                                         " did not post its part within " +
                                         std::to_string(timeout_.count()) +
                                         " ms (kiln::MeshOptions::timeout): a rank died, "
                                         "hangs, or never called this collective";
                                });
  if (part.size() != bytes)
    throw DeviceError(std::string(what) + ": rank " + std::to_string(peer) + " posted " +
                      std::to_string(part.size()) + " bytes where this rank expected " +
                      std::to_string(bytes) +
                      ": the ranks called different collectives (every rank must call the same "
                      "ones, in the same order)");
  return part;
}

std::vector<std::vector<char>> FileCommunicator::trade(const char* what, const void* mine,
                                                       size_t bytes) {
  const std::string name = std::string("mesh ") + what + " on " + describe();
  if (aborted_)
    throw DeviceError(name + ": this rank gave up earlier (" + *aborted_ +
                      "); make a new kiln::Mesh");
  const long k = sequence_++;
  try {
    write_atomically(part_file(dir_, k, rank_), mine, bytes);
    std::vector<std::vector<char>> parts(size_);
    for (int s = 0; s < size_; ++s)
      parts[s] = s == rank_ ? std::vector<char>(static_cast<const char*>(mine),
                                                static_cast<const char*>(mine) + bytes)
                            : await_part(name.c_str(), s, bytes);
    // Every rank has posted part k, so none still reads part k - 1.
    std::error_code ec;
    if (k > 0) fs::remove(part_file(dir_, k - 1, rank_), ec);
    return parts;
  } catch (const DeviceError& e) {
    fail(e.what());
    throw DeviceError(std::string(e.what()) +
                      ". This rank gave up; the mesh's collectives now fail: make a new "
                      "kiln::Mesh (if a process died, restart the job)");
  }
}

void FileCommunicator::reduce_buffers(const std::vector<const void*>& send,
                                      const std::vector<void*>& recv, size_t count,
                                      nccl::ncclDataType_t type, Reduction op) {
  auto parts = trade("all-reduce", send[rank_], count * wire_bytes(type));
  std::vector<const void*> all;
  for (const auto& p : parts) all.push_back(p.data());
  combine_on_host(all, recv[rank_], count, type, op);
}

void FileCommunicator::gather_buffers(const std::vector<const void*>& send,
                                      const std::vector<void*>& recv, size_t bytes) {
  auto parts = trade("all-gather", send[rank_], bytes);
  for (int s = 0; s < size_; ++s)
    std::memcpy(static_cast<char*>(recv[rank_]) + s * bytes, parts[s].data(), bytes);
}

// Each rank posts its whole part (a block for every rank) and keeps block rank_ of each.
void FileCommunicator::exchange_buffers(const std::vector<const void*>& send,
                                        const std::vector<void*>& recv, size_t bytes) {
  auto parts = trade("all-to-all", send[rank_], bytes * static_cast<size_t>(size_));
  for (int s = 0; s < size_; ++s)
    std::memcpy(static_cast<char*>(recv[rank_]) + s * bytes, parts[s].data() + rank_ * bytes,
                bytes);
}

}  // namespace kiln::mesh
