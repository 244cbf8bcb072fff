// The element types that collectives carry. NCCL reduces 8-, 32- and 64-bit integers and
// floats; kiln's other dtypes travel as one of those: bool as uint8 (0 and 1, so max is "any"),
// complex as pairs of floats (a sum adds real and imaginary parts apart). 16-bit integers and
// floats are widened first (wider_for_collective), which also keeps a sum of float16 partials
// from rounding at every step.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kiln/dtype.hpp"
#include "mesh/nccl.hpp"

namespace kiln::mesh {

struct WireType {
  nccl::ncclDataType_t type;
  int64_t per_element;  // wire values per element: 2 for complex, else 1
};

// How dtype t travels; DTypeError for the dtypes wider_for_collective widens.
WireType wire_type(DType t);
// The bytes of one value of an NCCL data type.
size_t wire_bytes(nccl::ncclDataType_t t);
// The dtype a reduction's partial results take for a collective: int16 and uint16 widen to
// int32 and uint32, float16 and bfloat16 to float32; every other dtype is carried as it is.
DType wider_for_collective(DType t);

}  // namespace kiln::mesh
