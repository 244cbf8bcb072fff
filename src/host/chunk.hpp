// Evaluating a fused group's program on one chunk of its iteration space.
#pragma once
#include <array>
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
  // `bases[a]`: address of access a's buffer at element 0 (null for Iota); one more, after
  // the accesses', for a group with range checks: its words (FusedGroup::check_buffer).
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
  // Where an instruction's values vary over the iteration space, which decides how often it is
  // computed. Index maps (pad, roll, take) are mostly arithmetic on one coordinate at a time:
  // what varies only along the innermost axis is computed once for a whole row into a table,
  // which a chunk then reads a slice of; what varies only along outer axes has one value per
  // row, computed once per row and spread over the chunk's column.
  enum class Reach : uint8_t {
    Chunk,   // everywhere: computed for every chunk
    Fixed,   // one value everywhere (a parameter, a load that does not move): filled once
    Inner,   // along the innermost axis only: a table of one row
    Outer,   // along outer axes only: one value per row
    Folded,  // never computed: an address a row or dense gather reads without it
  };
  // A Gather whose index is table[column] of Inner instruction `inner` plus the sum of the
  // Fixed and Outer `row_terms` (see find_row_gathers).
  struct RowGather {
    int inner = -1;
    std::vector<int> row_terms;
    std::vector<int32_t> run_end;  // per column, the end of its run of consecutive addresses
  };
  void classify();
  void load(int i, const plan::Instr& ins, int64_t start, int64_t len);
  // Check instruction ins over a column of len: folds the indices it finds out of range into
  // its words.
  void check(const plan::Instr& ins, int64_t len, const std::vector<const void*>& cols);
  // A Load's column, or a Fixed instruction's (filled once).
  void read(int i, const plan::Instr& ins, int64_t start, int64_t len);
  // Instruction i (not a Load or Param) at [start, start + len) into `out`, its operands'
  // columns in `cols`. Returns where its values are: `out`, or an operand's column where the
  // operation leaves it as it is (identity); compute_into copies them to `out` then.
  const void* compute(int i, int64_t start, int64_t len, char* out,
                      const std::vector<const void*>& cols);
  void compute_into(int i, int64_t start, int64_t len, char* out,
                    const std::vector<const void*>& cols);
  const void* identity(const plan::Instr& ins, const std::vector<const void*>& cols);
  std::vector<int> use_counts() const;
  void find_dense_gathers();
  void find_short_circuits();
  // After Where condition i's column is computed: notes the Wheres it selects uniformly in
  // this chunk and skips what only their unselected side reads.
  void short_circuit(int i, int64_t len);
  void fill_rows(int i, int64_t start, int64_t len, char* out);
  // The Inner and Outer columns of the chunk [start, start + len).
  void by_rows(int64_t start, int64_t len);
  void find_row_gathers();
  void row_gather(int i, int64_t start, int64_t len, char* out);
  void build_tables();
  void outer_values(int64_t row);
  void outer_columns(int64_t start, int64_t len);
  void inner_columns(int64_t start, int64_t len);
  char* scratch(int i) { return reinterpret_cast<char*>(storage_.data()) + slot_[i]; }
  char* table(int i) { return reinterpret_cast<char*>(tables_.data()) + table_slot_[i]; }
  // Where a Fixed or Outer instruction's one value (in a row) is computed, and spreading it
  // over elements [a, b) of its column.
  char* one_value(int i) { return reinterpret_cast<char*>(&one_values_[i]); }
  void spread(int i, int64_t a, int64_t b);
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
  std::vector<std::complex<double>> one_values_;        // Fixed ones, and Outer ones of values_row_
  std::vector<std::vector<unsigned char>> row_values_;  // per Reduce instruction
  int64_t first_row_ = 0, row_length_ = 1;
  // Computing by rows (row_ > 0: the innermost axis's length, when some instruction is Inner
  // or Outer and rows are neither too short to pay nor too long to tabulate).
  std::vector<Reach> reach_;
  std::vector<bool> needed_;  // an Inner or Outer value that a Chunk instruction or output reads
  int64_t row_ = 0;
  std::vector<std::complex<double>> tables_;  // Inner values for one row, built on first use
  std::vector<size_t> table_slot_;
  bool tables_built_ = false;
  int64_t values_row_ = -1, filled_row_ = -1;  // filled_row_: whose values fill the columns
  std::vector<int64_t> dense_from_;     // per Gather of consecutive elements: its first index
  std::vector<RowGather> row_gathers_;  // per instruction
  std::vector<const void*> view_;       // operand columns while building tables/values
  // Short circuits: a Where whose condition holds (or fails) throughout a chunk takes its one
  // side's column as it is, and the instructions that only the other side reads (computed
  // after the condition) are skipped in that chunk (a concatenate computes each input only in
  // its stretch). dead_[w][0]: skipped when the condition is all false, [1]: all true.
  std::vector<std::vector<int>> wheres_of_;  // per condition instruction, the Wheres it selects
  std::vector<std::array<std::vector<int>, 2>> dead_;
  std::vector<int8_t> live_;  // per Where in this chunk: 1 all true, -1 all false, 0 mixed
  std::vector<uint8_t> skip_;
  std::vector<int> touched_;  // Wheres and instructions to reset after the chunk
};

}  // namespace kiln::cpu
