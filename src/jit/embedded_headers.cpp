// The embedded kernels/ headers, as the jit interface hands them out.
#include "jit/embedded_files.hpp"
#include "jit/jit.hpp"

namespace kiln::jit {

const std::vector<Header>& embedded_headers() {
  static const std::vector<Header> headers = [] {
    std::vector<Header> h;
    for (auto* f = detail::kEmbeddedFiles; f->name != nullptr; ++f) h.push_back({f->name, f->text});
    return h;
  }();
  return headers;
}

}  // namespace kiln::jit
