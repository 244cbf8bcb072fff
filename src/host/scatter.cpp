#include "host/scatter.hpp"

#include <complex>
#include <cstring>
#include <type_traits>

#include "../../kernels/scatter.cuh"
#include "host/convert.hpp"
#include "kiln/errors.hpp"

namespace kiln::cpu {
namespace {

template <class T>
struct is_complex : std::false_type {};
template <class R>
struct is_complex<std::complex<R>> : std::true_type {};

template <int OP, class T>
void apply_all(T* out, const int64_t* positions, const T* values, int64_t count) {
  for (int64_t k = 0; k < count; ++k) {
    T& o = out[positions[k]];
    if constexpr (is_half_v<T>) {  // in float32, rounded once (kernels/scatter.cuh's apply)
      o = convert<T>(scatter::apply<OP>(convert<float>(o), convert<float>(values[k])));
    } else if constexpr (is_complex<T>::value) {
      using R = typename T::value_type;
      auto p =
          scatter::apply_parts<OP, R>({o.real(), o.imag()}, {values[k].real(), values[k].imag()});
      o = T(p.re, p.im);
    } else {
      o = scatter::apply<OP>(o, values[k]);
    }
  }
}

}  // namespace

void run_scatter(const plan::ScatterStep& step, const plan::PlanBuffer& out_desc, const void* x,
                 const int64_t* positions, const void* values, int64_t count, void* out) {
  const size_t bytes = static_cast<size_t>(shape_size(out_desc.shape) * itemsize(out_desc.dtype));
  if (bytes && out != x) std::memcpy(out, x, bytes);
  visit_dtype(out_desc.dtype, [&](auto tag) {
    using T = decltype(tag);
    auto* o = static_cast<T*>(out);
    auto* v = static_cast<const T*>(values);
    switch (step.op) {
      case graph::ScatterOp::Set:
        return apply_all<scatter::Set>(o, positions, v, count);
      case graph::ScatterOp::Add:
        return apply_all<scatter::Add>(o, positions, v, count);
      case graph::ScatterOp::Multiply:
        return apply_all<scatter::Multiply>(o, positions, v, count);
      case graph::ScatterOp::Min:
        if constexpr (!is_complex<T>::value) return apply_all<scatter::Min>(o, positions, v, count);
        break;
      case graph::ScatterOp::Max:
        if constexpr (!is_complex<T>::value) return apply_all<scatter::Max>(o, positions, v, count);
        break;
    }
    throw Error(
        "scatter min/max of a complex array reached the host executor; this is a kiln "
        "bug, please report it");
  });
}

}  // namespace kiln::cpu
