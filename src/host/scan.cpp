#include "host/scan.hpp"

#include <complex>
#include <type_traits>

#include "host/update.hpp"
#include "kiln/errors.hpp"

namespace kiln::cpu {
namespace {

template <int OP, class T>
void scan(const T* in, T* out, int64_t outer, int64_t n, int64_t inner) {
  for (int64_t o = 0; o < outer; ++o) {
    const T* src = in + o * n * inner;
    T* dst = out + o * n * inner;
    if (n > 0)
      for (int64_t i = 0; i < inner; ++i) dst[i] = src[i];
    for (int64_t j = 1; j < n; ++j)
      for (int64_t i = 0; i < inner; ++i)
        dst[j * inner + i] = update<OP>(dst[(j - 1) * inner + i], src[j * inner + i]);
  }
}

}  // namespace

void run_scan(const plan::ScanStep& step, const plan::PlanBuffer& out_desc, const void* in,
              void* out) {
  visit_dtype(out_desc.dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      throw Error("bool scan reached the host executor; this is a kiln bug, please report it");
    } else {
      auto* o = static_cast<T*>(out);
      auto* i = static_cast<const T*>(in);
      if (step.op == graph::ScanOp::Sum)
        scan<scatter::Add>(i, o, step.outer, step.n, step.inner);
      else
        scan<scatter::Multiply>(i, o, step.outer, step.n, step.inner);
    }
  });
}

}  // namespace kiln::cpu
