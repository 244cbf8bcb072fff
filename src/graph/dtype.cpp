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
  if (t == DType::Float32 || t == DType::Complex64) return DType::Complex64;
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

}  // namespace

// The float dtype that holds every value of an integer type exactly, as NumPy picks it: int16
// and uint16 fit float32's 24-bit significand, 32 and 64 bits take float64; 8 bits (and bool)
// would take float16, which kiln does not have: float32.
DType float_dtype(DType t) {
  if (t == DType::Bool) return DType::Float32;
  if (is_integer(t)) return itemsize(t) <= 2 ? DType::Float32 : DType::Float64;
  return t;
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  if (is_integer(a) && is_integer(b)) return promote_integers(a, b);
  // An integer with a float or complex: the float that holds the integer's values, then the
  // wider of the two.
  if (is_integer(a)) return promote_types(float_dtype(a), b);
  if (is_integer(b)) return promote_types(a, float_dtype(b));
  bool complex = is_complex(a) || is_complex(b);
  bool dbl = real_dtype(a) == DType::Float64 || real_dtype(b) == DType::Float64;
  if (complex) return dbl ? DType::Complex128 : DType::Complex64;
  return dbl ? DType::Float64 : DType::Float32;
}

}  // namespace kiln
