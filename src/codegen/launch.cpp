// The launch shape of each kernel form: grid, block, and the scratch it needs. Decided here,
// beside the code generator that wrote the kernel, so that the CUDA executor only allocates
// what the Launch says and packs arguments.
#include <algorithm>
#include <numeric>
#include <string>

#include "codegen/kernel_source.hpp"

namespace kiln::codegen {
namespace {

constexpr int kBlock = 256;  // matches the __launch_bounds__ of every generated kernel
constexpr int64_t kMaxGrid = int64_t{1} << 30;
constexpr int64_t kLongRowStage = 96 * 1024;  // long_rows: shared memory a block stages at most

constexpr int64_t kMinRowsPerThread = 16;  // column reductions: rows each thread folds at least

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The narrow forms' block: as many threads as make whole rows of `cols` values in one step of
// V lanes each (block * V a multiple of cols), at most kBlock.
int whole_rows_block(int64_t cols, int vec) {
  const int64_t m = cols / std::gcd<int64_t>(cols, vec);
  return static_cast<int>(kBlock / m * m);
}

}  // namespace

// A column reduction's block: 32 x 8 threads (32 V outputs across a warp, 8 rows at once), with
// two exceptions. A reduced axis too short to give each thread kMinRowsPerThread rows takes
// fewer rows at once and more outputs across (7x1000000 would leave a warp of 8 idle and merge
// through shared memory for nothing). Outputs too few for the block's width take only the
// threads they need across and more rows at once (1000000x7 would idle 25 lanes of every 32):
// the threads of a block then still read consecutive addresses, row after row.
ColumnBlock column_block(const KernelSource& k) {
  int by = 8;
  while (by > 1 && k.row < by * kMinRowsPerThread) by /= 2;
  const int64_t lanes = ceil_div(k.kept, k.vec), widest = kBlock / by;
  if (lanes == 0) return {};  // no outputs: nothing is launched
  const int64_t tiles = ceil_div(lanes, widest);
  const int bx = static_cast<int>(ceil_div(lanes, tiles));  // as even as the tiles allow
  if (bx == widest) return {bx, by};
  const int64_t rows = std::max<int64_t>(by, ceil_div(k.row, kMinRowsPerThread));
  return {bx, static_cast<int>(std::min<int64_t>(kBlock / bx, rows))};
}

namespace {

// Column reductions: enough blocks for 8 resident per SM, splitting the rows over blocks only
// as far as that needs and while each thread still folds at least kMinRowsPerThread rows (fewer
// would spend more on the merge than on the fold).
void columns(Launch& l, const KernelSource& k, int sm_count) {
  constexpr int64_t kMaxGridY = 65535;
  const ColumnBlock b = column_block(k);
  l.block_x = b.x;
  l.block_y = b.y;
  l.grid_x = ceil_div(k.kept, int64_t{b.x} * k.vec);
  // Rounded down: one wave. colsum 4096x16384 (128 column tiles) ran 0.087 ms with 9 blocks
  // down each column, 1152 blocks where 1056 fit at once, the last 96 a wave of their own.
  int64_t want = std::max<int64_t>(1, int64_t{sm_count} * 8 / l.grid_x);
  int64_t most = std::max<int64_t>(1, k.row / (b.y * kMinRowsPerThread));
  l.grid_y = std::clamp<int64_t>(std::min(want, most), 1, kMaxGridY);
  if (l.grid_y > 1) {
    l.partials = l.grid_y * k.kept;
    l.counters = l.grid_x;
  }
}

// Narrow columns: a block whose lane steps cover whole rows (block_x * V a multiple of the
// column count, as many threads as that allows up to 256), so every lane keeps one column; a
// grid of blocks numbered along y (the merge counts them there, as for split columns), enough
// for 8 resident per SM while each thread still takes kMinRowsPerThread steps.
void narrow_columns(Launch& l, const KernelSource& k, int sm_count) {
  l.block_x = whole_rows_block(k.kept, k.vec);
  const int64_t steps = ceil_div(k.kept * k.row, int64_t{l.block_x} * k.vec * kMinRowsPerThread);
  l.grid_y = std::clamp<int64_t>(std::min<int64_t>(int64_t{sm_count} * 8, steps), 1, 65535);
  if (l.grid_y > 1) {
    l.partials = l.grid_y * k.kept;
    l.counters = 1;
  }
}

// Narrow rows (NarrowRows): blocks whose lane steps cover whole rows (block_x * V a multiple
// of the row length), as for narrow columns; as many blocks as the elementwise form takes.
void narrow_rows(Launch& l, const KernelSource& k, int sm_count) {
  l.block_x = whole_rows_block(k.space.shape[1], k.vec);
  const int64_t steps = ceil_div(shape_size(k.space.shape), int64_t{l.block_x} * k.vec);
  l.grid_x = std::clamp<int64_t>(steps, 1, int64_t{sm_count} * 64);
}

// Row reductions: row_threads per row (a few lanes for short rows, a warp, or the whole block for
// long ones), 256 / row_threads rows per block; rows too few to fill the GPU are split over
// blocks while each warp's share stays at least kMinPerWarp elements long (a block's share then
// stays at least that long too).
void rows(Launch& l, const KernelSource& k, int sm_count) {
  constexpr int64_t kMinPerWarp = 1024, kMaxGridY = 65535;
  l.grid_x = ceil_div(k.kept, kBlock / k.row_threads);
  int64_t want = std::max<int64_t>(1, int64_t{sm_count} * 8 / l.grid_x);  // one wave, as columns
  int64_t most = std::max<int64_t>(1, k.row / kMinPerWarp);
  l.grid_y = std::clamp<int64_t>(std::min(want, most), 1, kMaxGridY);
  if (l.grid_y > 1) {
    l.partials = l.grid_y * k.kept;
    l.counters = l.grid_x;
  }
}

// Tiled: a block per 32 x 32 tile of the (tile axis, last axis) plane; blockIdx.y walks the
// other axes, looping when there are more than a grid may have.
void tiles(Launch& l, const KernelSource& k) {
  constexpr int64_t kMaxGridY = 65535;
  const auto& s = k.space.shape;
  int64_t nl = s.back(), nd = s[static_cast<size_t>(k.tile_axis)];
  l.block_x = 32;
  l.block_y = 8;
  l.grid_x = ceil_div(nl, k.tile) * ceil_div(nd, k.tile);
  l.grid_y = std::clamp<int64_t>(shape_size(s) / (nl * nd), 1, kMaxGridY);
}

// RowFused: a block stages as many rows as fill kStageTarget bytes of shared memory, a multiple
// of the rows it takes at once (256 / row_threads, so every warp's lanes loop alike) and at
// most kMaxRows; within the 48 KB a block may have without opting in (codegen staged only what
// fits the rows of one step). Each staged input takes a 16-byte aligned region.
void row_fused(Launch& l, const KernelSource& k) {
  constexpr int64_t kStageTarget = 32 * 1024, kMaxShared = 48 * 1024, kMaxRows = 512;
  auto shared = [&](int64_t rows) {
    int64_t bytes = 0;
    for (int isz : k.staged_itemsizes) bytes += ceil_div(rows * k.row * isz, 16) * 16;
    return bytes;
  };
  const int64_t step = kBlock / k.row_threads;
  if (k.row_registers) {  // rows in registers: a block takes the rows of its lanes at once
    l.rows_per_block = step;
    l.grid_x = std::min(ceil_div(k.kept, step), kMaxGrid);
    return;
  }
  // A block per row takes one: layernorm 16384x4096 ran in 0.134 ms so and in 0.156 ms with
  // two rows per block (two runs on the H200), fewer blocks per SM overlapping their staging.
  int64_t rows = k.row_threads == kBlock
                     ? 1
                     : std::clamp<int64_t>(kStageTarget / std::max<int64_t>(1, shared(1)), step,
                                           std::max(step, kMaxRows));
  rows = rows / step * step;
  while (rows > step && shared(rows) > kMaxShared) rows -= step;
  l.rows_per_block = rows;
  l.shared_bytes = shared(rows);
  l.grid_x = std::min(ceil_div(k.kept, rows), kMaxGrid);
}

// RowFused over long rows: a block of k.block threads per row, staging the first
// staged_length values of the row of every staged input, as many as `max_shared` (at most
// kLongRowStage) holds with 16
// values more for the shift to a 16-byte boundary (kernel_source.cpp), a multiple of 16 so the
// staging loads stay whole.
void long_rows(Launch& l, const KernelSource& k, int64_t max_shared) {
  auto shared = [&](int64_t staged) {
    int64_t bytes = 0;
    for (int isz : k.staged_itemsizes) bytes += ceil_div((staged + 16) * isz, 16) * 16;
    return bytes;
  };
  int64_t per_value = 0;
  for (int isz : k.staged_itemsizes) per_value += isz;
  int64_t staged = 0;
  // At most 96 KB, so two blocks share an SM and one stages while the other computes; the rest
  // of a longer row is read in place (from L2 on the later passes). Measured on the H200
  // (ms, staging all that fits / at most 96 KB, one run through a knob since removed): softmax
  // 4096x50257 0.815 / 0.724, layernorm 1024x32000 0.123 / 0.099; rows that fit in 96 KB are
  // unchanged (softmax 2048x12300 0.0965 / 0.0964, 8192x20000 0.514 / 0.514). Capping at 48 KB lost
  // (0.819, 0.106). Splitting rows past 96 KB over a thread block cluster (two blocks of 98 KB
  // for 50257 values, the whole row staged, statistics merged through distributed shared
  // memory; session 15, reverted) lost too: softmax 4096x50257 0.765 ms against 0.732,
  // layernorm 4096x50257 0.705 / 0.682, layernorm 1024x32000 0.117 / 0.099 (ncu: 48% of DRAM
  // bandwidth at 98% occupancy; every block stages its whole slice before it computes).
  max_shared = std::min<int64_t>(max_shared, kLongRowStage);
  if (per_value && shared(0) < max_shared) {
    staged = std::min((max_shared - shared(0)) / per_value / 16 * 16, k.row);
    while (staged > 0 && shared(staged) > max_shared) staged -= 16;
  }
  l.block_x = k.block;
  l.rows_per_block = 1;
  l.staged_length = std::max<int64_t>(staged, 0);
  l.shared_bytes = l.staged_length ? shared(l.staged_length) : 0;  // sr 0: nothing staged
  l.grid_x = std::min(k.kept, kMaxGrid);
}

// ColumnFused: a block of 32 x 8 threads per tile of 32 columns, staging the tile's rows in
// dynamic shared memory. Tiles of up to kColumnStage take a block each, as they fit without
// opting in beside the merges' static arrays (48 KB of tiles made launches fail: GPU fuzz
// seeds 5695, 7146, 7651). Taller tiles, on a device with thread block clusters, take a
// cluster of blocks each staging kClusterStage of consecutive rows (up to kMaxCluster
// blocks, the portable cluster size), which merge their columns through distributed shared
// memory: colnorm 4096x4096 then reads x once. Rows past what is staged, or all rows past
// kColumnStage on a device without clusters, are read in place on every pass. Measured on the
// H200 (bench/shape_sweep.py, session 15): colnorm 4096x4096 0.0843 ms against 0.0958 for the
// statistics' own kernels before (ncu: 78 us, 29% of DRAM bandwidth at 34% occupancy, three
// 64 KB blocks per SM: far from the roof, but ahead); 2048x8192 0.080, 600x20000 0.053.
void column_fused(Launch& l, const KernelSource& k, int64_t max_shared, bool clusters) {
  constexpr int64_t kColumnStage = 32 * 1024, kClusterStage = 64 * 1024;
  constexpr int kMaxCluster = 8;
  l.block_x = 32;
  l.block_y = 8;
  int64_t per_row = 0;  // bytes of one row of every staged tile
  for (int isz : k.staged_itemsizes) per_row += 32 * isz;
  int64_t blocks = 1, staged = k.row;
  if (k.tall_columns) {
    const int64_t budget = clusters ? std::min(kClusterStage, max_shared) : kColumnStage;
    if (clusters) blocks = std::clamp<int64_t>(ceil_div(per_row * k.row, budget), 1, kMaxCluster);
    staged = std::min(ceil_div(k.row, blocks), budget / per_row);
  }
  if (!per_row) staged = 0;
  for (int isz : k.staged_itemsizes) l.shared_bytes += ceil_div(staged * 32 * isz, 16) * 16;
  l.staged_length = staged;
  l.cluster = static_cast<int>(blocks);
  l.grid_x = std::min(ceil_div(k.kept, 32), kMaxGrid / blocks) * blocks;
}

// A row's tiles or, for a thread per lane, as many threads as the scan step's grid-stride
// helpers (16 blocks of 256 threads an SM: 8 of these blocks of kScanBlock = 512).
void scan(Launch& l, const KernelSource& k, int sm_count) {
  const int64_t lanes = k.scan.outer * k.scan.inner;
  l.block_x = kScanBlock;
  l.scan_tiles = scan_tiles(k.scan, k.scan_itemsize, sm_count);
  l.grid_x = l.scan_tiles ? lanes * l.scan_tiles
                          : std::clamp<int64_t>(ceil_div(lanes, kScanBlock), 1, sm_count * 8);
}

}  // namespace

// Rows longer than kLong scan in tiles when they are contiguous (coalesced loads, where a
// thread per lane would read one value per row) or when their lanes are too few to fill the
// device (a quarter of 16 blocks of 256 threads an SM); otherwise a thread per lane, in order:
// consecutive lanes read consecutive values when inner > 1.
int64_t scan_tiles(const plan::ScanFold& s, int itemsize, int sm_count) {
  constexpr int64_t kLong = 2048;
  const int64_t lanes = s.outer * s.inner;
  const bool tiled = s.n > kLong && (s.inner == 1 || lanes < int64_t{sm_count} * 16 * 256 / 4);
  return tiled ? ceil_div(s.n, kScanTileBytes / itemsize) : 0;
}

Launch launch_for(const KernelSource& k, int sm_count, int64_t max_shared, bool clusters) {
  Launch l;
  auto cap = [&](int64_t want, int64_t per_sm) {
    return std::clamp<int64_t>(want, 1, int64_t{sm_count} * per_sm);
  };
  const int64_t n = shape_size(k.space.shape);
  const int64_t steps = ceil_div(n, int64_t{k.vec} * kBlock);
  const bool elementwise = k.form == Form::Elementwise || k.form == Form::Tiled ||
                           k.form == Form::NarrowRows || k.form == Form::Scan;
  l.count = elementwise || k.form == Form::ReduceFull ? n : k.kept;
  if ((elementwise ? n : k.kept) == 0) {  // an empty output: nothing to launch
    l.grid_x = 0;
    return l;
  }
  // Blocks per SM, measured on the H200 (bench/gpu_bench): 64 for elementwise kernels (the
  // chain: 0.390 ms against 0.402 ms with 32 and 0.433 ms uncapped), 8 for one-output
  // reductions (max of 128 MB: 0.0364 ms; 16 and 32 were slower). A gather's random reads
  // wait on memory rather than stream through it, so it takes a block per step, uncapped:
  // take of 2^26 from 2^27 float32 in Clip mode 1.890-1.895 ms capped, 1.863 uncapped.
  switch (k.form) {
    case Form::Elementwise:
      l.grid_x = k.gathers ? std::min<int64_t>(steps, 0x7fffffff) : cap(steps, 64);
      break;
    case Form::Tiled:
      tiles(l, k);
      break;
    case Form::ReduceFull:
      l.grid_x = cap(steps, 8);
      l.partials = l.grid_x;
      l.counters = 1;
      break;
    case Form::ReduceRows:
      rows(l, k, sm_count);
      break;
    case Form::ReducePerThread:
      l.grid_x = cap(ceil_div(k.kept, kBlock), 32);
      break;
    case Form::ReduceColumns:
      columns(l, k, sm_count);
      break;
    case Form::ReduceNarrowColumns:
      narrow_columns(l, k, sm_count);
      break;
    case Form::NarrowRows:
      narrow_rows(l, k, sm_count);
      break;
    case Form::RowFused:
      k.long_rows ? long_rows(l, k, max_shared) : row_fused(l, k);
      break;
    case Form::ColumnFused:
      column_fused(l, k, max_shared, clusters);
      break;
    case Form::Scan:
      scan(l, k, sm_count);
      break;
  }
  return l;
}

std::string describe_schedule(const KernelSource& k) {
  std::string vec = k.vec > 1 ? ", " + std::to_string(k.vec) + " lanes per 16-byte access" : "";
  switch (k.form) {
    case Form::Elementwise:
      return "elementwise, grid-stride" + vec;
    case Form::Tiled:
      return "tiled: " + std::to_string(k.tile) + " x " + std::to_string(k.tile) +
             " tiles of axes " + std::to_string(k.tile_axis) + " and " +
             std::to_string(k.space.shape.size() - 1) +
             " of the collapsed space through shared memory";
    case Form::ReduceFull:
      return "full reduction: block partials merged by the last block" + vec;
    case Form::ReduceRows:
      return k.row_threads < 32 ? "rows: " + std::to_string(k.row_threads) + " lanes per row, " +
                                      std::to_string(32 / k.row_threads) + " rows per warp" + vec
             : k.row_threads == 32 ? "rows: a warp per row, long rows split over blocks" + vec
                                   : "rows: a block per row, long rows split over blocks" + vec;
    case Form::ReducePerThread:
      return "short rows: a thread per output";
    case Form::ReduceColumns: {
      const ColumnBlock b = column_block(k);
      return "columns: " + std::to_string(b.x * k.vec) + " outputs across " + std::to_string(b.x) +
             " threads" + (k.vec > 1 ? " in 16-byte loads" : "") + ", " + std::to_string(b.y) +
             (b.y > 1 ? " rows at once" : " row at a time") + ", rows split over blocks";
    }
    case Form::ReduceNarrowColumns: {
      return "narrow columns: the matrix read as one stream" +
             std::string(k.vec > 1 ? " of 16-byte loads" : "") + ", each lane of " +
             std::to_string(whole_rows_block(k.kept, k.vec)) + " threads keeping one of the " +
             std::to_string(k.kept) + " columns, blocks merged in order";
    }
    case Form::NarrowRows: {
      return "narrow rows: the output written as one stream" +
             std::string(k.vec > 1 ? " of 16-byte stores" : "") + ", each lane of " +
             std::to_string(whole_rows_block(k.space.shape[1], k.vec)) +
             " threads keeping one of the " + std::to_string(k.space.shape[1]) +
             " columns, its inputs' offsets advanced per step";
    }
    case Form::RowFused: {
      std::string staged =
          k.row_registers ? "rows held in registers, " + std::to_string(k.row_registers) +
                                " vector(s) of each per lane"
          : k.staged_itemsizes.empty()
              ? "inputs read in place on every pass"
              : std::to_string(k.staged_itemsizes.size()) + " input(s) staged in shared memory" +
                    (k.vec > 1 ? ", 16 bytes at a time" : "");
      if (k.long_rows)
        return "reductions and their broadcast in one kernel: a block of " +
               std::to_string(k.block) + " threads per row, " +
               std::to_string(k.staged_itemsizes.size()) +
               " input(s) staged in shared memory, up to 96 KB a block, the rest read in place";
      std::string threads = k.row_threads == kBlock ? "a block"
                            : k.row_threads == 32   ? "a warp"
                                                    : std::to_string(k.row_threads) + " lanes";
      return "reductions and their broadcast in one kernel: " + threads + " per row, " + staged +
             (k.row_kept ? ", a value of one pass kept there for the next (not recomputed)" : "");
    }
    case Form::Scan:  // the form is the device's choice (scan_tiles)
      return "inclusive scan computing its producer as it loads (nothing written between): "
             "long rows in tiles of 32 KiB in one pass (decoupled look-back), others a thread "
             "per lane in order" +
             (k.vec > 1 ? ", " + std::to_string(k.vec) + " values per 16-byte access" : "");
    case Form::ColumnFused:
      return "reductions down columns and their broadcast in one kernel: " +
             std::string(k.tall_columns ? "a thread block cluster (up to 8 blocks, each a slice "
                                          "of the rows, merged through distributed shared "
                                          "memory) per tile of 32 columns, "
                                        : "a block per tile of 32 columns, ") +
             (k.staged_itemsizes.empty() ? std::string("inputs read in place on every pass")
                                         : std::to_string(k.staged_itemsizes.size()) +
                                               " input(s) staged in shared memory") +
             ", 8 rows of threads merged in order";
  }
  return "";
}

}  // namespace kiln::codegen
