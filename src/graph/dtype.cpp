#include "kiln/dtype.hpp"
#include "graph/dtype_table.hpp"

namespace kiln {

int itemsize(DType t) { return graph::row(t).itemsize; }
const char* dtype_name(DType t) { return graph::row(t).name; }
bool is_integer(DType t) { return graph::row(t).kind == graph::DTypeKind::Integer; }
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

DType float_dtype(DType t) {
  if (t == DType::Bool) return DType::Float32;
  if (is_integer(t)) return DType::Float64;
  return t;
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  if (is_integer(a) && is_integer(b)) return DType::Int64;
  // Any integer with a float or complex needs 53 bits of mantissa: double precision.
  if (is_integer(a) || is_integer(b)) {
    DType other = is_integer(a) ? b : a;
    return is_complex(other) ? DType::Complex128 : DType::Float64;
  }
  bool complex = is_complex(a) || is_complex(b);
  bool dbl = real_dtype(a) == DType::Float64 || real_dtype(b) == DType::Float64;
  if (complex) return dbl ? DType::Complex128 : DType::Complex64;
  return dbl ? DType::Float64 : DType::Float32;
}

}  // namespace kiln
