// The part of NCCL's C API that kiln calls, declared here because nccl.h is not on the machines
// that build kiln without NCCL (Debian has no NCCL package; CI has none): the library is opened
// at run time (mesh/nccl_api.hpp), never linked. Types keep NCCL's names inside kiln::nccl, and
// the values are NCCL's documented ones: a wrong enumerator would silently reduce the wrong
// type or with the wrong operation. Where nccl.h exists, nccl_header_check.cpp compares all of
// this with it at compile time.
#pragma once
#include <cuda_runtime_api.h>  // cudaStream_t

#include <cstddef>

namespace kiln::nccl {

struct ncclComm;  // opaque inside NCCL
using ncclComm_t = ncclComm*;

inline constexpr size_t kUniqueIdBytes = 128;  // NCCL_UNIQUE_ID_BYTES
struct ncclUniqueId {
  char internal[kUniqueIdBytes];
};

// NCCL's enums are C enums of int size; fixing the underlying type keeps them that size.
enum ncclResult_t : int {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,  // a peer exited or the network failed (NCCL 2.13)
  ncclInProgress = 7,   // non-blocking communicators: still being progressed (NCCL 2.14)
};

enum ncclDataType_t : int {
  ncclInt8 = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclFloat32 = 7,
  ncclFloat64 = 8,
  ncclBfloat16 = 9,
};

enum ncclRedOp_t : int {
  ncclSum = 0,
  ncclProd = 1,
  ncclMax = 2,
  ncclMin = 3,
  ncclAvg = 4,
};

// The first fields of NCCL's ncclConfig_t, as NCCL 2.14 defined it. NCCL copies `size` bytes of
// the config it is given and gives every field newer than `version` its default, so this prefix
// is a whole config to any NCCL since 2.14 (nccl_header_check.cpp compares its offsets with
// nccl.h). kiln sets `blocking` only.
struct ncclConfigPrefix {
  static constexpr int kUndefined = -2147483647 - 1;  // NCCL_CONFIG_UNDEF_INT (INT_MIN)
  size_t size = sizeof(ncclConfigPrefix);
  unsigned int magic = 0xcafebeef;  // NCCL_API_MAGIC
  unsigned int version = 21400;     // NCCL_VERSION(2, 14, 0)
  int blocking = kUndefined;
  int cgaClusterSize = kUndefined;
};

// X(name, return type, parameter list): one row per function kiln loads.
#define KILN_NCCL_FUNCTIONS(X)                                                                    \
  X(ncclGetVersion, ncclResult_t, (int* version))                                                 \
  X(ncclGetUniqueId, ncclResult_t, (ncclUniqueId * unique_id))                                    \
  X(ncclCommInitAll, ncclResult_t, (ncclComm_t * comms, int ndev, const int* devlist))            \
  X(ncclCommInitRank, ncclResult_t,                                                               \
    (ncclComm_t * comm, int nranks, ncclUniqueId comm_id, int rank))                              \
  X(ncclCommInitRankConfig, ncclResult_t,                                                         \
    (ncclComm_t * comm, int nranks, ncclUniqueId comm_id, int rank, ncclConfigPrefix* config))    \
  X(ncclCommDestroy, ncclResult_t, (ncclComm_t comm))                                             \
  X(ncclCommAbort, ncclResult_t, (ncclComm_t comm))                                               \
  X(ncclCommGetAsyncError, ncclResult_t, (ncclComm_t comm, ncclResult_t * async_error))           \
  X(ncclGetErrorString, const char*, (ncclResult_t result))                                       \
  X(ncclAllReduce, ncclResult_t,                                                                  \
    (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op, \
     ncclComm_t comm, cudaStream_t stream))                                                       \
  X(ncclAllGather, ncclResult_t,                                                                  \
    (const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,             \
     ncclComm_t comm, cudaStream_t stream))                                                       \
  X(ncclReduceScatter, ncclResult_t,                                                              \
    (const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,             \
     ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream))                                       \
  X(ncclBroadcast, ncclResult_t,                                                                  \
    (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,       \
     ncclComm_t comm, cudaStream_t stream))                                                       \
  X(ncclSend, ncclResult_t,                                                                       \
    (const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,      \
     cudaStream_t stream))                                                                        \
  X(ncclRecv, ncclResult_t,                                                                       \
    (void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,            \
     cudaStream_t stream))                                                                        \
  X(ncclGroupStart, ncclResult_t, ())                                                             \
  X(ncclGroupEnd, ncclResult_t, ())

// NCCL_VERSION(major, minor, patch) as ncclGetVersion reports it (2.9 and later).
constexpr int version_code(int major, int minor, int patch) {
  return major * 10000 + minor * 100 + patch;
}

}  // namespace kiln::nccl
