// The matmul step of an array's plan, for tests of how matmuls plan (test_matmul,
// test_matmul_epilogue).
#pragma once
#include <doctest/doctest.h>

#include <kiln/kiln.hpp>
#include <variant>

#include "plan/planner.hpp"

inline kiln::plan::MatmulStep step_of(const kiln::Array& r) {
  kiln::plan::Plan p = kiln::plan::make_plan({r.node()});
  for (const auto& s : p.steps)
    if (const auto* m = std::get_if<kiln::plan::MatmulStep>(&s)) return *m;
  FAIL("no matmul step");
  return {};
}
