#include "mesh/wire_type.hpp"

#include <string>

#include "kiln/errors.hpp"

namespace kiln::mesh {

using namespace nccl;

WireType wire_type(DType t) {
  switch (t) {
    case DType::Bool:
    case DType::UInt8:
      return {ncclUint8, 1};
    case DType::Int8:
      return {ncclInt8, 1};
    case DType::Int32:
      return {ncclInt32, 1};
    case DType::UInt32:
      return {ncclUint32, 1};
    case DType::Int64:
      return {ncclInt64, 1};
    case DType::UInt64:
      return {ncclUint64, 1};
    case DType::Float32:
      return {ncclFloat32, 1};
    case DType::Float64:
      return {ncclFloat64, 1};
    case DType::Complex64:
      return {ncclFloat32, 2};
    case DType::Complex128:
      return {ncclFloat64, 2};
    default:
      throw DTypeError(std::string("collectives carry no ") + dtype_name(t) +
                       " values; widen them first (mesh::wider_for_collective)");
  }
}

DType wider_for_collective(DType t) {
  switch (t) {
    case DType::Int16:
      return DType::Int32;
    case DType::UInt16:
      return DType::UInt32;
    case DType::Float16:
    case DType::BFloat16:
      return DType::Float32;
    default:
      return t;
  }
}

size_t wire_bytes(nccl::ncclDataType_t t) {
  using namespace nccl;
  switch (t) {
    case ncclInt8:
    case ncclUint8:
      return 1;
    case ncclFloat16:
    case ncclBfloat16:
      return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
      return 4;
    default:  // the 64-bit types
      return 8;
  }
}

}  // namespace kiln::mesh
