// One update of an element on the host, as kernels/scatter.cuh's apply does it on a GPU: the
// step of a scatter (set, add, multiply, min, max) and of a scan (add, multiply). Halves compute
// in float32 and round once; complex values go through their parts.
#pragma once
#include <complex>
#include <type_traits>

#include "../../kernels/scatter.cuh"
#include "host/convert.hpp"

namespace kiln::cpu {

template <class T>
inline constexpr bool is_std_complex_v = false;
template <class R>
inline constexpr bool is_std_complex_v<std::complex<R>> = true;

template <int OP, class T>
T update(T old, T v) {
  if constexpr (is_half_v<T>) {
    return convert<T>(scatter::apply<OP>(convert<float>(old), convert<float>(v)));
  } else if constexpr (is_std_complex_v<T>) {
    using R = typename T::value_type;
    auto p = scatter::apply_parts<OP, R>({old.real(), old.imag()}, {v.real(), v.imag()});
    return T(p.re, p.im);
  } else {
    return scatter::apply<OP>(old, v);
  }
}

}  // namespace kiln::cpu
