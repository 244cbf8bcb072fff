// kernels/random.cuh's Philox4x32-10, run on the host, against the published known answers and
// against the words of cuRAND's host generator (the host executor's source, LEGACY ordering):
// word for word, for seeds above 2^32, offsets that split a Philox block, offsets whose block
// index needs the counter's second word, and runs that cross cuRAND's 2^16-block interleave.
// No GPU needed: this is what lets a GPU thread compute any word of the stream by itself.
#include <curand.h>
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "../kernels/random.cuh"

namespace {

// A cuRAND host generator placed at (seed, offset), as src/host/random.cpp makes it.
class CurandHost {
 public:
  CurandHost() {
    REQUIRE(curandCreateGeneratorHost(&gen_, CURAND_RNG_PSEUDO_PHILOX4_32_10) ==
            CURAND_STATUS_SUCCESS);
    REQUIRE(curandSetGeneratorOrdering(gen_, CURAND_ORDERING_PSEUDO_LEGACY) ==
            CURAND_STATUS_SUCCESS);
  }
  ~CurandHost() { curandDestroyGenerator(gen_); }
  CurandHost(const CurandHost&) = delete;
  CurandHost& operator=(const CurandHost&) = delete;

  std::vector<uint32_t> words(uint64_t seed, uint64_t offset, size_t n) {
    REQUIRE(curandSetPseudoRandomGeneratorSeed(gen_, seed) == CURAND_STATUS_SUCCESS);
    REQUIRE(curandSetGeneratorOffset(gen_, offset) == CURAND_STATUS_SUCCESS);
    std::vector<uint32_t> w(n);
    REQUIRE(curandGenerate(gen_, w.data(), n) == CURAND_STATUS_SUCCESS);
    return w;
  }

 private:
  curandGenerator_t gen_ = nullptr;
};

// Words [offset, offset + n) of seed's stream from the closed form, one block at a time.
std::vector<uint32_t> closed_form(uint64_t seed, uint64_t offset, size_t n) {
  std::vector<uint32_t> w;
  w.reserve(n);
  for (uint64_t x = offset; w.size() < n; ++x) {
    unsigned block[4];
    kiln::rng::philox_block(seed, x / 4, block);
    w.push_back(block[x % 4]);
  }
  return w;
}

// Index of the first difference, or -1.
int64_t first_mismatch(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return static_cast<int64_t>(i);
  return a.size() == b.size() ? -1 : static_cast<int64_t>(a.size());
}

}  // namespace

TEST_CASE("philox4x32_10 gives Random123's known answers") {
  // Random123 kat_vectors: counter, key, result.
  struct Kat {
    unsigned ctr[4], key[2], out[4];
  };
  const Kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& k : kats) {
    unsigned c[4] = {k.ctr[0], k.ctr[1], k.ctr[2], k.ctr[3]};
    kiln::rng::philox4x32_10(c, k.key[0], k.key[1]);
    for (int i = 0; i < 4; ++i) CHECK(c[i] == k.out[i]);
  }
  // The host's form, a counter per lane of a vector: every lane gives the third known answer.
  kiln::rng::lanes_u32 lanes[4];
  for (int i = 0; i < 4; ++i)
    for (int l = 0; l < kiln::rng::kLanes; ++l) lanes[i][l] = kats[2].ctr[i];
  kiln::rng::philox4x32_10(lanes, kats[2].key[0], kats[2].key[1]);
  for (int i = 0; i < 4; ++i)
    for (int l = 0; l < kiln::rng::kLanes; ++l) CHECK(lanes[i][l] == kats[2].out[i]);
}

TEST_CASE("philox_block's stream equals curandGenerate (host generator, LEGACY) word for word") {
  CurandHost curand;
  const uint64_t seeds[] = {
      0, 1, 42, 0xFFFFFFFFull, 1ull << 32, (1ull << 40) + 7, ~0ull, 0x123456789ABCDEF0ull};
  // Offsets inside a block (1, 2, 3 mod 4), next to and across the 2^16-block interleave
  // (4 * 2^16 words), and far enough out that b >> 16 needs the counter's second word (2^50).
  const uint64_t offsets[] = {0,
                              1,
                              2,
                              3,
                              5,
                              4 * 65536 - 3,
                              4 * 65536 + 2,
                              12345679,
                              (1ull << 33) + 2,
                              (1ull << 50) + 1,
                              (1ull << 62) + 3,
                              ~0ull - 1000};
  const size_t counts[] = {1, 3, 4, 7, 1001};
  for (uint64_t seed : seeds)
    for (uint64_t offset : offsets)
      for (size_t n : counts) {
        INFO("seed " << seed << " offset " << offset << " count " << n);
        CHECK(first_mismatch(closed_form(seed, offset, n), curand.words(seed, offset, n)) == -1);
      }
}

TEST_CASE("long runs across many interleave rounds match too") {
  CurandHost curand;
  // 2^20 + 5 words: 4 full rounds of cuRAND's 2^16 blocks and change.
  const size_t n = (size_t{1} << 20) + 5;
  for (auto [seed, offset] : {std::pair<uint64_t, uint64_t>{2026, 0},
                              {(1ull << 40) + 7, 3},
                              {~0ull, (1ull << 33) + 1},
                              {0x123456789ABCDEF0ull, (1ull << 50) + 2}}) {
    INFO("seed " << seed << " offset " << offset);
    CHECK(first_mismatch(closed_form(seed, offset, n), curand.words(seed, offset, n)) == -1);
  }
}

TEST_CASE("philox_blocks computes blocks side by side as philox_block does one at a time") {
  // Batches that cross the 2^16-block interleave (counter word 2 wraps, the step moves on) and
  // reach the counter's second word.
  for (uint64_t first : {uint64_t{0}, uint64_t{65536 - 3}, (uint64_t{1} << 50) - 5})
    for (uint64_t seed : {uint64_t{42}, uint64_t{0x123456789ABCDEF0ull}}) {
      INFO("seed " << seed << " first block " << first);
      unsigned lanes[kiln::rng::kLanes][4], one[4];
      kiln::rng::philox_blocks(seed, first, lanes);
      for (int l = 0; l < kiln::rng::kLanes; ++l) {
        kiln::rng::philox_block(seed, first + l, one);
        for (int i = 0; i < 4; ++i) CHECK(lanes[l][i] == one[i]);
      }
    }
}
