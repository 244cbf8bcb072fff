// The plan cache: a graph whose structure was planned before reuses that plan, bound to its own
// buffers, scalars and random draws. Every rebinding must give this graph's values.
#include <doctest/doctest.h>

#include <kiln/kiln.hpp>
#include <vector>

#include "graph/node.hpp"

using kiln::Array;
using kiln::DType;

TEST_CASE("plan cache: same structure, new scalars") {
  auto x = kiln::arange(0, 10, 1, DType::Float64).eval();
  for (int k = 1; k <= 5; ++k) {
    auto y = (x * k + (2 * k)).to_vector<double>();  // one structure, five sets of scalars
    for (int i = 0; i < 10; ++i) CHECK(y[i] == doctest::Approx(i * k + 2 * k));
  }
}

TEST_CASE("plan cache: same structure, new buffers") {
  std::vector<Array> inputs;
  for (int k = 0; k < 4; ++k) inputs.push_back(kiln::full({3, 4}, k, DType::Int64).eval());
  for (int k = 0; k < 4; ++k) {
    auto v = kiln::sum(inputs[k] * inputs[k], {1}).to_vector<int64_t>();
    for (auto e : v) CHECK(e == 4 * k * k);
  }
}

TEST_CASE("plan cache: the structural signature tells a+a from a+b") {
  auto a = kiln::arange(5).eval(), b = (kiln::arange(5) * 10).eval();
  auto s1 = kiln::graph::signature({(a + a).node()});
  auto s2 = kiln::graph::signature({(a + b).node()});
  CHECK(s1.hash != s2.hash);
  CHECK((a + a).to_vector<int64_t>()[4] == 8);
  CHECK((a + b).to_vector<int64_t>()[4] == 44);
  // Same structure, other values: same hash.
  auto c = kiln::arange(5).eval();
  CHECK(kiln::graph::signature({(c + b * 3).node()}).hash ==
        kiln::graph::signature({(a + c * 7).node()}).hash);
}

TEST_CASE("plan cache: random draws are rebound, not repeated") {
  kiln::random::Generator g(7);
  auto r1 = (g.randint(0, 1000000, {64}) * 2 + 1).to_vector<int64_t>();
  auto r2 = (g.randint(0, 1000000, {64}) * 2 + 1).to_vector<int64_t>();
  CHECK(r1 != r2);
  kiln::random::Generator h(7);
  CHECK((h.randint(0, 1000000, {64}) * 2 + 1).to_vector<int64_t>() == r1);
}

TEST_CASE("transfer policy: explicit by default, Auto copies the smaller operand") {
  CHECK(kiln::get_transfer_policy() == kiln::TransferPolicy::Explicit);
  if (!kiln::cuda_available()) {
    MESSAGE("no GPU found: the mixed-device half of this test is skipped");
    return;
  }
  auto big = kiln::arange(0, 1000, 1, DType::Float32, kiln::cuda());
  auto small = kiln::full({1000}, 2.0f, DType::Float32);
  CHECK_THROWS_AS((void)(big + small), kiln::DeviceError);
  kiln::set_transfer_policy(kiln::TransferPolicy::Auto);
  auto r = big * small;
  kiln::set_transfer_policy(kiln::TransferPolicy::Explicit);
  CHECK(r.device() == kiln::cuda());
  CHECK(r.get().to_vector<float>()[10] == 20.0f);
}
