// Where NCCL's own header is installed (the GPU machines: /usr/include/nccl.h), compares
// mesh/nccl.hpp with it at compile time: every enumerator kiln uses, the unique id's size, and
// each loaded function's signature. A mismatch fails the build instead of corrupting data.
// CMake defines KILN_HAVE_NCCL_H when it finds nccl.h; elsewhere this file is empty.
#ifdef KILN_HAVE_NCCL_H
#include <nccl.h>

#include <cstddef>

#include <type_traits>

#include "mesh/nccl_api.hpp"

namespace kiln::nccl {
namespace {

#define KILN_SAME_VALUE(name) \
  static_assert(static_cast<int>(name) == static_cast<int>(::name), #name " differs from nccl.h");
KILN_SAME_VALUE(ncclSuccess)
KILN_SAME_VALUE(ncclUnhandledCudaError)
KILN_SAME_VALUE(ncclSystemError)
KILN_SAME_VALUE(ncclInternalError)
KILN_SAME_VALUE(ncclInvalidArgument)
KILN_SAME_VALUE(ncclInvalidUsage)
KILN_SAME_VALUE(ncclRemoteError)
KILN_SAME_VALUE(ncclInProgress)
KILN_SAME_VALUE(ncclInt8)
KILN_SAME_VALUE(ncclUint8)
KILN_SAME_VALUE(ncclInt32)
KILN_SAME_VALUE(ncclUint32)
KILN_SAME_VALUE(ncclInt64)
KILN_SAME_VALUE(ncclUint64)
KILN_SAME_VALUE(ncclFloat16)
KILN_SAME_VALUE(ncclFloat32)
KILN_SAME_VALUE(ncclFloat64)
KILN_SAME_VALUE(ncclBfloat16)
KILN_SAME_VALUE(ncclSum)
KILN_SAME_VALUE(ncclProd)
KILN_SAME_VALUE(ncclMax)
KILN_SAME_VALUE(ncclMin)
KILN_SAME_VALUE(ncclAvg)
#undef KILN_SAME_VALUE

static_assert(kUniqueIdBytes == NCCL_UNIQUE_ID_BYTES);
static_assert(sizeof(ncclUniqueId) == sizeof(::ncclUniqueId));
static_assert(sizeof(ncclResult_t) == sizeof(::ncclResult_t));
static_assert(sizeof(ncclDataType_t) == sizeof(::ncclDataType_t));
static_assert(sizeof(ncclRedOp_t) == sizeof(::ncclRedOp_t));
static_assert(version_code(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH) == NCCL_VERSION_CODE);
// The config's prefix: the same fields at the same places, and no longer than NCCL's own.
#define KILN_SAME_FIELD(field)                                                          \
  static_assert(offsetof(ncclConfigPrefix, field) == offsetof(::ncclConfig_t, field) && \
                    sizeof(ncclConfigPrefix::field) == sizeof(::ncclConfig_t::field),   \
                "ncclConfig_t's " #field " differs from nccl.h");
KILN_SAME_FIELD(size)
KILN_SAME_FIELD(magic)
KILN_SAME_FIELD(version)
KILN_SAME_FIELD(blocking)
KILN_SAME_FIELD(cgaClusterSize)
#undef KILN_SAME_FIELD
static_assert(sizeof(ncclConfigPrefix) <= sizeof(::ncclConfig_t));
static_assert(ncclConfigPrefix::kUndefined == NCCL_CONFIG_UNDEF_INT);
constexpr ::ncclConfig_t kInitialized = NCCL_CONFIG_INITIALIZER;
static_assert(ncclConfigPrefix{}.magic == kInitialized.magic);
static_assert(ncclConfigPrefix{}.version == NCCL_VERSION(2, 14, 0));

// NCCL's types mapped to kiln's declarations, so that whole signatures can be compared.
template <class T>
struct Ours {
  using type = T;
};
template <>
struct Ours<::ncclComm_t> {
  using type = ncclComm_t;
};
template <>
struct Ours<::ncclResult_t> {
  using type = ncclResult_t;
};
template <>
struct Ours<::ncclDataType_t> {
  using type = ncclDataType_t;
};
template <>
struct Ours<::ncclRedOp_t> {
  using type = ncclRedOp_t;
};
template <>
struct Ours<::ncclUniqueId> {
  using type = ncclUniqueId;
};
template <>
struct Ours<::ncclConfig_t> {
  using type = ncclConfigPrefix;
};
template <class T>
struct Ours<T*> {
  using type = typename Ours<T>::type*;
};
template <class T>
struct Ours<const T> {
  using type = const typename Ours<T>::type;
};
template <class R, class... A>
struct Ours<R (*)(A...)> {
  using type = typename Ours<R>::type (*)(typename Ours<A>::type...);
};

#define KILN_SAME_SIGNATURE(name, result, params)                                        \
  static_assert(std::is_same_v<Ours<decltype(&::name)>::type, decltype(NcclApi{}.name)>, \
                #name "'s signature differs from nccl.h");
KILN_NCCL_FUNCTIONS(KILN_SAME_SIGNATURE)
#undef KILN_SAME_SIGNATURE

}  // namespace
}  // namespace kiln::nccl
#endif
