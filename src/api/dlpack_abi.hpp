// The DLPack structs, from Debian's libdlpack-dev (DLPack 0.6), completed with what DLPack 1.x
// added where that header lacks it: the versioned tensor (whose layout the 1.x ABI fixes) and
// the bool type code. A newer dlpack.h declares them itself.
#pragma once
#include <dlpack/dlpack.h>

#include <cstdint>

#ifndef DLPACK_MAJOR_VERSION
extern "C" {
typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;
}
#define DLPACK_FLAG_BITMASK_READ_ONLY (UINT64_C(1) << UINT64_C(0))
#define DLPACK_FLAG_BITMASK_IS_COPIED (UINT64_C(1) << UINT64_C(1))
#endif

namespace kiln::dlpack_abi {
// DLPack 1.x's kDLBool, a value the 0.6 enum does not have.
constexpr uint8_t kBool = 6;
// The version kiln's versioned tensors say they follow.
constexpr uint32_t kMajor = 1, kMinor = 0;
}  // namespace kiln::dlpack_abi
