#include "host/scatter.hpp"

#include <complex>
#include <cstring>
#include <type_traits>

#include "host/update.hpp"
#include "kiln/errors.hpp"

namespace kiln::cpu {
namespace {

template <int OP, class T>
void apply_all(T* out, const int64_t* positions, const T* values, int64_t count) {
  for (int64_t k = 0; k < count; ++k)
    if (positions[k] >= 0)  // a negative one: an update left out (a value a mask drops)
      out[positions[k]] = update<OP>(out[positions[k]], values[k]);
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
        if constexpr (!is_std_complex_v<T>) return apply_all<scatter::Min>(o, positions, v, count);
        break;
      case graph::ScatterOp::Max:
        if constexpr (!is_std_complex_v<T>) return apply_all<scatter::Max>(o, positions, v, count);
        break;
    }
    throw Error(
        "scatter min/max of a complex array reached the host executor; this is a kiln "
        "bug, please report it");
  });
}

}  // namespace kiln::cpu
