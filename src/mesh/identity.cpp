#include "mesh/identity.hpp"

#include <complex>
#include <limits>
#include <string>
#include <type_traits>

#include "kiln/array.hpp"
#include "kiln/errors.hpp"

namespace kiln::mesh {

// (The largest unsigned integers are not Scalars: they come from flipping the bits of zero.)
Array extremum_identity(bool lowest, DType t, const Shape& s, Device d) {
  return visit_dtype(t, [&](auto v) -> Array {
    using T = decltype(v);
    constexpr double inf = std::numeric_limits<double>::infinity();
    if constexpr (std::is_same_v<T, bool>)
      return full(s, !lowest, t, d);
    else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>)
      return lowest ? zeros(s, t, d) : ~zeros(s, t, d);
    else if constexpr (std::is_integral_v<T>)
      return full(s, lowest ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max(), t, d);
    else if constexpr (std::is_floating_point_v<T>)
      return full(s, lowest ? -inf : inf, t, d);
    else if constexpr (std::is_same_v<T, std::complex<float>> ||
                       std::is_same_v<T, std::complex<double>>)
      return full(s, std::complex<double>(lowest ? -inf : inf, lowest ? -inf : inf), t, d);
    else
      throw DTypeError(std::string("no identity of ") + dtype_name(t) + " for a collective");
  });
}

}  // namespace kiln::mesh
