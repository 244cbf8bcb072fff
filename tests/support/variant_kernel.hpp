// Small test kernels in numbered variants: one template, a distinct source (so a distinct cache
// key) for each variant. Shared by test_jit_cache and test_kiln_cache.
#pragma once
#include <string>

#include "jit/jit.hpp"

namespace kiln::test_support {

// Replaces every `from` in `s` with `to`.
inline std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// A request for an sm_90 kernel of float32 data named name_prefix + variant, made from
// `source_template` with that name written for NAME and the variant's number for VARIANT.
inline kiln::jit::Request variant_kernel(const std::string& source_template,
                                         const std::string& name_prefix,
                                         const std::string& summary_prefix, int variant) {
  kiln::jit::Request r;
  r.name = name_prefix + std::to_string(variant);
  r.summary = summary_prefix + std::to_string(variant);
  r.dtypes = "f32 -> f32";
  r.arch = "sm_90";
  r.source =
      replace_all(replace_all(source_template, "NAME", r.name), "VARIANT", std::to_string(variant));
  return r;
}

}  // namespace kiln::test_support
