// Evaluating a fused group's program on one chunk of its iteration space.
#pragma once
#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

#include "plan/iteration.hpp"
#include "plan/plan.hpp"

namespace kiln::cpu {

inline constexpr int64_t kChunk = 1024;  // elements: a few columns of these fit in L1/L2

// out[k] = offset + the element offset that `strides` give iteration index start + k of
// `shape`, for k < len: the multi-index walked with the innermost axis in the inner loop.
void element_offsets(const Shape& shape, const plan::Strides& strides, int64_t offset,
                     int64_t start, int64_t len, int64_t* out);

class ChunkEvaluator {
 public:
  // `bases[a]`: address of access a's buffer at element 0 (null for Iota).
  ChunkEvaluator(const plan::FusedGroup& g, const plan::IterationSpace& space,
                 const std::vector<const char*>& bases, const std::vector<Scalar>& params);
  // Evaluates every instruction for iteration indices [start, start + len), len <= kChunk
  // (and never past the iteration space).
  // `dest[i]`, when not null, is where instruction i's values go (an output buffer at
  // `start`), which saves copying them there afterwards.
  // `end` >= 0 stops after instruction end - 1 (what a reduction phase needs).
  void run(int64_t start, int64_t len, const std::vector<char*>& dest = {}, int end = -1);
  // The values of Reduce instruction i for the rows first_row.. of a group with row axes
  // (`values`: one per row, of the instruction's dtype, packed); rows are `row_length` long.
  void set_row_values(int i, int64_t first_row, int64_t row_length,
                      const std::vector<unsigned char>& values);
  // The value column of instruction i after run().
  const void* column(int i) const { return cols_[i]; }

 private:
  enum class Mode : uint8_t { Dense, Constant, Gather };
  void load(int i, const plan::Instr& ins, int64_t start, int64_t len);
  void fill_rows(int i, int64_t start, int64_t len, char* out);
  char* scratch(int i) { return reinterpret_cast<char*>(storage_.data()) + slot_[i]; }
  // Whether instruction i's column holds one value throughout (a parameter, or a load that
  // does not move), so an operation with it may use what it knows of that one value.
  bool uniform(int i) const {
    const plan::Instr& ins = g_.code[i];
    return ins.kind == plan::InstrKind::Param ||
           (ins.kind == plan::InstrKind::Load && modes_[ins.access()] == Mode::Constant);
  }

  const plan::FusedGroup& g_;
  const plan::IterationSpace& space_;
  const std::vector<const char*>& bases_;
  const std::vector<Scalar>& params_;
  // Column length: kChunk, or the whole iteration space when it is smaller, so a tiny array
  // neither allocates nor fills columns of kChunk elements.
  const int64_t chunk_;
  std::vector<Mode> modes_;
  std::vector<const void*> cols_;
  std::vector<bool> filled_;  // constant columns, computed once per evaluator
  // One column per instruction, packed by its dtype's size so the columns of a chunk share
  // as few cache sets as possible.
  std::vector<std::complex<double>> storage_;
  std::vector<size_t> slot_;  // byte offset of each instruction's column
  std::vector<int64_t> idx_;
  std::vector<std::vector<unsigned char>> row_values_;  // per Reduce instruction
  int64_t first_row_ = 0, row_length_ = 1;
};

}  // namespace kiln::cpu
