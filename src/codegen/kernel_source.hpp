// FusedGroup -> CUDA C++ source. The text depends only on the group's structure (operations,
// dtypes, which accesses are dense, constant or strided, the collapsed rank, the loop form and
// index width), never on scalar values or buffer addresses, so equal structures share one
// compiled kernel. The loops themselves live in kernels/*.cuh; this file emits the body.
#pragma once
#include <string>
#include <vector>

#include "plan/iteration.hpp"
#include "plan/plan.hpp"

namespace kiln::codegen {

enum class Form : uint8_t {
  Elementwise,          // grid-stride over the iteration space, V lanes per step when aligned
  Tiled,                // an input contiguous along another axis than the output (a transpose):
                        // 32 x 32 tiles of that axis and the last staged through shared memory
  ReduceFull,           // one output: block partials, merged by the last block to finish
  ReduceRows,           // a warp per output row (reduced axes contiguous in memory), long rows
                        // split over blocks when the rows are too few to fill the GPU
  ReducePerThread,      // a thread per output (short contiguous rows)
  ReduceColumns,        // reduced axes strided: outputs across the threads of a block row, the
                        // rows split over its rows of threads and, when outputs are too few, over
                        // blocks too (column_block)
  RowFused,             // a group with row axes: a block stages its rows' dense inputs in shared
                        // memory, then a warp (short rows) or the block (long ones) per row makes
                        // the reducing passes over it and the pass that writes the outputs
  ColumnFused,          // a group whose row axes lead (x - mean(x, 0)): a block of 32 x 8 threads
                        // per tile of 32 columns stages the tile in shared memory, folds each
                        // column over its 8 rows of threads, and writes the outputs row by row
  ReduceNarrowColumns,  // reduced rows of few columns, every input dense in memory (colsum
                        // 1000000x7): the matrix read as one stream of 16-byte loads, each
                        // thread's lanes keeping one column each, blocks merged by the last
  NarrowRows,           // an elementwise output of rows of at most 64 values with a strided or
               // broadcast input (outer 100000x33): written as one stream of 16-byte stores,
               // each lane keeping one column, its inputs' offsets advanced per step
  Scan,  // a group with a fused scan (FusedGroup::scan): kernels/scan.cuh's scan, loading
         // each value by computing the group's program at its position (scan_tiles says
         // which of its forms at launch)
};
enum class AccessKind : uint8_t { Dense, Constant, Strided };

// One kernel parameter, in signature order; the executor fills them in this order.
struct Arg {
  enum Kind : uint8_t {
    Input,         // pointer to access `index`'s buffer, advanced by the access offset
    Output,        // pointer to output `index`
    Param,         // scalar parameter `index`
    IotaOffset,    // the offset of Iota access `index` (I)
    Count,         // elements in the iteration space (I); ReduceRows/PerThread: rows K
    RowLength,     // elements folded into each output (I)
    VecFlag,       // int: 1 when every dense pointer is aligned for V-lane access
    Layout,        // kiln::layout<R, A>: collapsed shape and every access's strides
    Partials,      // Launch::partials accumulators of scratch
    Counter,       // Launch::counters unsigned ints, zero before the launch; the kernel re-zeroes
    RowsPerBlock,  // RowFused: Launch::rows_per_block (I)
    StagedLength,  // RowFused over long rows: Launch::staged_length (I)
    ScanExtent,    // Scan: KernelSource::scan's outer (index 0), n (1) or inner (2) (long long)
    ScanTiles,     // Scan: Launch::scan_tiles (long long)
    LookBack,      // Scan: the look-back's status over Launch::scan_tiles tiles a row (a null
                   // pointer for a thread per lane)
    CheckWords,    // u64*: the group's range-check words (FusedGroup::check_buffer)
  } kind;
  int index = -1;
};

struct KernelSource {
  std::string name;     // readable, with a hash of the source: k_sin_mul_add_f32_1a2b3c4d
  std::string source;   // complete translation unit
  std::string summary;  // the expression, in one line
  std::string dtypes;   // what it reads and writes, "i64 f32 -> f64"
  Form form = Form::Elementwise;
  int vec = 1;  // lanes per step (16-byte accesses)
  bool index64 = false;
  bool gathers = false;  // reads an input at computed positions (take's Gather instructions)
  std::vector<Arg> args;
  std::vector<AccessKind> access_kinds;
  plan::IterationSpace space;
  int64_t kept = 1, row = 1;  // outputs, and values folded into each (1, n when elementwise)
  int tile_axis = -1;         // Tiled: the axis of the space tiled with the last one
  int tile = 32;              // Tiled: the tile's side (64 or 32)
  size_t partial_bytes = 64;  // an upper bound on one accumulator's size
  int block = 256;            // threads per block (__launch_bounds__)
  int row_threads = 0;     // RowFused, ReduceRows: threads per row, 4-32 lanes or the whole block
                           // (ColumnFused: staged_itemsizes are of a column's tile, 32 columns)
  bool long_rows = false;  // RowFused: a block of 1024 per row, staged as far as it fits
  int row_registers = 0;   // RowFused: 16-byte vectors of each staged row a lane keeps in
                           // registers (0: the rows are staged in shared memory)
  std::vector<int> staged_itemsizes;  // RowFused: per input staged in shared memory
  bool tall_columns = false;  // ColumnFused: staged tiles past a block's 32 KB, split over the
                              // blocks of a thread block cluster (launch.cpp: column_fused)
  bool row_kept = false;  // RowFused: a value of a reducing pass kept in shared memory for later
                          // passes (softmax's exp(x - max)) instead of recomputed
  plan::ScanFold scan{};  // Scan: the group's scan
  int scan_itemsize = 0;  // Scan: bytes of a scanned value
};

KernelSource generate(const plan::FusedGroup& g);

// The schedule in a few words, for explain(): "rows: a warp per row, 16-byte loads".
std::string describe_schedule(const KernelSource& k);

// How a kernel is launched on a device with `sm_count` SMs: decided here, with the kernel it
// belongs to, so that the launcher only allocates what it says and packs arguments.
struct Launch {
  int64_t grid_x = 1, grid_y = 1;  // grid_x 0: nothing to launch (the output is empty)
  int block_x = 256, block_y = 1;
  int64_t partials = 0;        // accumulators of scratch the kernel needs (Arg::Partials)
  int64_t counters = 0;        // zeroed completion counters it needs (Arg::Counter)
  int64_t count = 0;           // the value of Arg::Count
  int64_t rows_per_block = 0;  // RowFused: rows a block stages at once (Arg::RowsPerBlock)
  int64_t shared_bytes = 0;    // dynamic shared memory per block
  int64_t staged_length = 0;   // RowFused over long rows: leading values of a row staged;
                               // ColumnFused: rows of a block's slice of the column staged
  int cluster = 1;             // ColumnFused: blocks per thread block cluster (sharing a tile)
  int64_t scan_tiles = 0;      // Scan: tiles of each row (Arg::ScanTiles); 0: a thread per lane
};
// A column reduction's block shape (threads across the outputs, rows at once), with x * y <= 256.
struct ColumnBlock {
  int x = 32, y = 8;
};
ColumnBlock column_block(const KernelSource& k);

// `max_shared`: the dynamic shared memory a block of this kernel may opt in to on the device
// (its limit less the kernel's static shared memory); only long rows and clusters of column
// blocks use more than 48 KB. `clusters`: the device launches thread block clusters (sm_90 on).
Launch launch_for(const KernelSource& k, int sm_count, int64_t max_shared = 48 * 1024,
                  bool clusters = false);

// kernels/scan.cuh's block (kThreads) and tile (kTileBytes), which the kernels that call it
// assert.
constexpr int kScanBlock = 512;
constexpr int64_t kScanTileBytes = int64_t{kScanBlock} * 4 * 16;
// How a scan runs on a device of `sm_count` SMs, for the scan step (src/cuda/scan.cpp) and a
// scan with a fused producer alike: the number of tiles of each row for kernels/scan.cuh's
// single pass (decoupled look-back), or 0 for its thread per lane walking the row in order.
int64_t scan_tiles(const plan::ScanFold& s, int itemsize, int sm_count);

}  // namespace kiln::codegen
