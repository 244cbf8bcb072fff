// A mesh of processes, one host rank each, that meet in a directory and combine their results
// through files there, with NCCL's semantics (the host arithmetic of host_communicator.hpp).
// It is the multi-process mode of kiln::Mesh (one rank per process, every rank calling each
// collective in the same order) for machines without NCCL or GPUs: CI runs the programs of a
// process mesh with it, including ranks that die. It seeks no speed: every part goes through
// the filesystem, and an all-to-all posts each rank's whole part.
//
// Files in the directory: rank<r>.pid (the process id and host name of rank r and the run it
// joined, written when it joins), c<k>.r<r> (rank r's part of collective k, removed by r once
// collective k + 1 is done everywhere it can see, since no rank is still reading it then),
// abort.r<r> (why rank r gave up). Each is written under a temporary name and renamed, so a reader
// never sees half a file.
#pragma once
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "mesh/communicator.hpp"
#include "mesh/rendezvous_files.hpp"

namespace kiln::mesh {

class FileCommunicator final : public Communicator {
 public:
  // Joins as `rank` of `size`: creates `dir` (mode 0700) where it is missing, writes this
  // process's rank file, and waits (up to `timeout`) for every other rank's. Rank 0 first
  // removes the files an earlier run left there. Error for a bad rank or size; DeviceError
  // when a rank does not join in time.
  FileCommunicator(std::filesystem::path dir, int rank, int size,
                   std::chrono::milliseconds timeout);

  int size() const override { return size_; }
  Device device(int) const override { return host(); }
  bool holds(int r) const override { return r == rank_; }
  std::string describe() const override;

 protected:
  void reduce_buffers(const std::vector<const void*>& send, const std::vector<void*>& recv,
                      size_t count, nccl::ncclDataType_t type, Reduction op) override;
  void gather_buffers(const std::vector<const void*>& send, const std::vector<void*>& recv,
                      size_t bytes) override;
  void exchange_buffers(const std::vector<const void*>& send, const std::vector<void*>& recv,
                        size_t bytes) override;

 private:
  // Posts this rank's `bytes` of `mine` as its part of the next collective and returns every
  // rank's part (this rank's too), each checked to be `bytes` long. On any failure it posts
  // an abort file, so that the others stop waiting, and later collectives refuse.
  std::vector<std::vector<char>> trade(const char* what, const void* mine, size_t bytes);
  std::vector<char> await_part(const char* what, int peer, size_t bytes);
  // Throws if rank `peer` gave up (its abort file) or its process is gone (same host only).
  void check_alive(const char* what, int peer) const;
  void fail(const std::string& why);

  std::filesystem::path dir_;
  int rank_, size_;
  std::chrono::milliseconds timeout_;
  std::vector<rendezvous::Writer> peers_;  // each rank's process
  long sequence_ = 0;                      // the next collective's number
  std::optional<std::string> aborted_;     // why this rank gave up
};

}  // namespace kiln::mesh
