// DLPack: kiln arrays to and from PyTorch, CuPy, JAX, NumPy and any other library that speaks
// DLPack, without a copy. Both the unversioned DLManagedTensor (DLPack 0.x, what NumPy 1.x and
// older frameworks exchange) and DLPack 1.x's DLManagedTensorVersioned are supported.
//
// Include <dlpack/dlpack.h> (Debian: libdlpack-dev) to look inside the structs; this header
// only names them.
//
// Exporting (to_dlpack): the array is evaluated and kiln's device work finished, so the consumer
// may read the memory at once from any stream. The tensor is dense, C order (strides given),
// byte_offset 0, on kDLCPU or kDLCUDA. Its deleter releases kiln's hold on the memory: the
// memory stays valid until the consumer calls it, even after every kiln Array is gone. kiln's
// arrays are immutable and a consumer must not write the memory (the versioned tensor carries
// DLPACK_FLAG_BITMASK_READ_ONLY; copy it before writing).
//
// Importing (from_dlpack): the tensor's memory is read in place, never copied, as kiln::wrap
// reads memory (kiln/interop.hpp: what it means for timing and later changes to the memory).
// kiln takes ownership on success: it calls the tensor's deleter once no kiln array may read the
// memory any more (an evaluated view holds a value of its own, so for a strided tensor that may
// be soon). On an exception ownership stays with the caller and nothing was called.
// Strides are honoured without a copy: permuted axes (a transpose), steps, broadcast axes
// (stride 0) and negative strides (a flip) become kiln views over the memory the tensor spans;
// strides no view expresses (rows that interleave, as a[:, ::2] of rows of odd length, or
// overlap) a gather from it. Either fuses into the kernel that reads the array. Device
// memory must hold its data when kiln evaluates: synchronise the producer's stream first (or use
// the Python protocol's stream argument to have the producer do it).
// Devices: kDLCPU and kDLCUDAHost (host memory), kDLCUDA and kDLCUDAManaged (cuda(device_id));
// others raise DeviceError. Dtypes: every kiln dtype with one lane (bool as kDLBool or 8-bit
// code 6, bfloat16 as kDLBfloat); others raise DTypeError.
#pragma once
#include "kiln/array.hpp"

struct DLManagedTensor;
struct DLManagedTensorVersioned;

namespace kiln {

// A DLPack 0.x tensor over a's value. Call its deleter when done with it.
DLManagedTensor* to_dlpack(const Array& a);
// A DLPack 1.x tensor (version 1.0, read-only flag set) over a's value.
DLManagedTensorVersioned* to_dlpack_versioned(const Array& a);

// An array over the tensor's memory; kiln owns the tensor afterwards (see above).
Array from_dlpack(DLManagedTensor* tensor);
// The same for a DLPack 1.x tensor. A major version other than 1 raises kiln::Error (its layout
// is unknown); a tensor flagged read-only is fine (kiln never writes what it wraps).
Array from_dlpack(DLManagedTensorVersioned* tensor);

}  // namespace kiln
