#include "kiln/dtype.hpp"
#include "graph/dtype_table.hpp"

namespace kiln {

int itemsize(DType t) { return graph::row(t).itemsize; }
const char* dtype_name(DType t) { return graph::row(t).name; }
bool is_integer(DType t) { return graph::row(t).kind == graph::DTypeKind::Integer; }
bool is_unsigned(DType t) { return is_integer(t) && !graph::row(t).is_signed; }
bool is_floating(DType t) { return graph::row(t).kind == graph::DTypeKind::Floating; }
bool is_complex(DType t) { return graph::row(t).kind == graph::DTypeKind::Complex; }

DType real_dtype(DType t) {
  if (t == DType::Complex64) return DType::Float32;
  if (t == DType::Complex128) return DType::Float64;
  return t;
}

DType complex_dtype(DType t) {
  if (t == DType::Float32 || t == DType::Complex64 || is_half(t)) return DType::Complex64;
  return DType::Complex128;
}

namespace {

DType signed_of_size(int bytes) {
  return bytes == 1   ? DType::Int8
         : bytes == 2 ? DType::Int16
         : bytes == 4 ? DType::Int32
                      : DType::Int64;
}

// NumPy's rule for two integer dtypes: the larger of one signedness; a signed and an unsigned
// one need a signed type wider than the unsigned one, and none holds uint64 (float64 then).
DType promote_integers(DType a, DType b) {
  if (is_unsigned(a) == is_unsigned(b)) return itemsize(a) >= itemsize(b) ? a : b;
  DType s = is_unsigned(a) ? b : a, u = is_unsigned(a) ? a : b;
  if (itemsize(s) > itemsize(u)) return s;
  return itemsize(u) < 8 ? signed_of_size(2 * itemsize(u)) : DType::Float64;
}

// Two real float dtypes: the wider; float16 and bfloat16 hold none of each other's values
// (ml_dtypes registers no safe cast between them), so they meet in float32.
DType promote_reals(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Float64 || b == DType::Float64) return DType::Float64;
  return DType::Float32;
}

}  // namespace

// The float dtype that holds every value of an integer type exactly, as NumPy picks it: 8 bits
// (and bool) fit float16's 11-bit significand, int16 and uint16 float32's 24 bits, 32 and 64
// bits take float64.
DType float_dtype(DType t) {
  if (t == DType::Bool) return DType::Float16;
  if (is_integer(t))
    return itemsize(t) == 1 ? DType::Float16 : itemsize(t) == 2 ? DType::Float32 : DType::Float64;
  return t;
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  if (is_integer(a) && is_integer(b)) return promote_integers(a, b);
  if (is_integer(a) || is_integer(b)) {
    DType i = is_integer(a) ? a : b, other = is_integer(a) ? b : a;
    // int8 and uint8 cast safely to either 16-bit float (NumPy's table for float16;
    // ml_dtypes registers the same safe casts, from bool, int8 and uint8, for bfloat16).
    if (itemsize(i) == 1 && is_half(other)) return other;
    // Otherwise the float that holds the integer's values, then the wider of the two.
    return promote_types(float_dtype(i), other);
  }
  DType real = promote_reals(real_dtype(a), real_dtype(b));
  return is_complex(a) || is_complex(b) ? complex_dtype(real) : real;
}

}  // namespace kiln
