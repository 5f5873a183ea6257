// reduce_sum on NVIDIA GPUs: kernel choice at descriptor creation (plan) and
// launches at execute (run). Kernels live in kernel.cuh.
//
// Choice, in this order (W = elements per 16-byte vector; "few rows": fewer
// than 4 per SM):
//   axis_len == 0                        -> zeros
//   dense rows (inner == 1, axis stride 1):
//     16-bit, one row (the sum of all elements), 2^20-2^26 -> sweep, two passes
//     up to 8 vectors a lane (4 with few rows)             -> G lanes per row, G
//                                          chosen so each lane has ~4 vectors in flight
//     few rows, L >= 16384, but not 7/8 to 2 rows a SM:
//       clusters (sm_90) and outer * C >= SMs              -> cluster of C blocks per row
//       otherwise                                          -> two-pass split rows
//     otherwise                                            -> one block per row (few
//                                          rows: ~4 vectors a thread, up to 1024 threads)
//   strided rows with many outputs (inner == 1, outer >= 1024 * SMs) -> thread per output
//   everything else (inner > 1, or few strided rows):
//     at most 2^20 elements and 16-column tiles for a quarter of the SMs
//                                                          -> one pass, 16-column tiles
//     an axis >= 16x an inner run of >= 1024               -> 256-byte tile rows, split
//     outer 1, whole vectors, 2^22 to under 2^24 elements:
//       16-bit, an axis of 120-128 under a longer inner run -> flight warps (a column's
//                                          rows joined by shuffles), one pass
//       16-bit, a dense inner run of 128 under a longer axis
//                                                          -> column sweep (one moving
//                                          front of blocks), two passes
//       axis and inner run >= 128                          -> flight tiles (16 rows
//                                          in flight a thread), split when tall
//     otherwise                                            -> inner tile as wide as
//     the inner run; when outer * tiles cannot fill the GPU's resident blocks the
//     axis is split in two passes; tiles are narrowed (down to 1 KB rows) only
//     when the axis is too short to split enough
// Split passes (and the sweeps) keep their partial sums in
// the caller's workspace and add them in a fixed order: deterministic, no
// atomics, no memset. Cluster kernels add their blocks' sums in rank order
// through distributed shared memory: deterministic too, and no workspace.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "runtime/gpu/gpu_runtime.h"
#include "ops/reduce_sum/nvidia/kernel.cuh"
#include "ops/reduce_sum/nvidia/ladder.cuh"
#include "ops/reduce_sum/reduce_sum_backends.h"

namespace oprt::reduce_sum::OPRT_GPU_BACKEND_NS {
namespace {

using namespace oprt::reduce_sum::gpu_kernels;
using gpu::ceil_div;
using gpu::clamp64;
using gpu::kMaxGridBlocks;
using gpu::next_pow2;

constexpr const char *kOp = "oprt_execute_reduce_sum";
constexpr const char *kPlanOp = "oprt_create_reduce_sum_descriptor";

// AxisPlan::kernel values. launch[] holds, per kernel:
//   kRowsGroup: [0] lanes per row    kRowsBlock: [0] threads, [1] batch (kBatch)
//   kRowsSplit: [0] threads, [1] chunks (blocks) per row, [2] chunk length, [3] batch
//   kRowsCluster: [0] threads, [1] chunks (blocks) per row, [2] chunk length
//   kInnerTile, kInnerFlight: [0] vector width V, [1] chunks along the axis
//     (each ceil(L / chunks) long), [2] threads, [3] bx (threads across the inner run)
//   kSweep: [0] threads, [1] blocks P (partial sums)
//   kInnerFlightWarp: [0] threads (G and R: kFlightWarpRows, kFlightWarpInFlight)
//   kInnerColumnSweep: [0] threads, [1] blocks P (partial sums a column; B: kColumnSweepBatch)
enum Kernel : int32_t {
    kZero = 1,
    kRowsGroup = 2,
    kRowsBlock = 3,
    kRowsSplit = 4,
    kInnerTile = 5,
    kStrided = 6,
    kRowsCluster = 7,
    kSweep = 11,
    kInnerFlight = 12,
    kInnerFlightWarp = 13,
    kInnerColumnSweep = 14,
    kSmemTree = 9,     // ladder step "smem_tree" (ladder.cuh)
    kWarpShuffle = 10, // ladder step "warp_shuffle" (ladder.cuh)
};

constexpr int kGroupThreads = 256;
constexpr int kInnerThreads = 512;
constexpr int kFinalizeThreads = 1024;
constexpr int kStridedThreads = 256;
constexpr int64_t kVectorsPerLane = 8;       // a row up to this many vectors per lane fits one warp
constexpr int64_t kBlockRowVectorsPerThread = 8;
constexpr int64_t kSplitMinRow = 16384;      // shorter rows are never split
// Few rows: rows longer than a warp's 4 vectors a lane go to a block of about
// 4 vectors a thread (64 to 1024 threads; 16-bit rows with 16 vectors in
// flight, 512 at most). H200, 2026-12-02, camp_reduce_sum_bench, hot + dram:
// (1, 4096) f32 block t128 3.57 -> t256 3.20 us; (144, 1280) axis 1 bf16 warp
// 4.00 -> block t64 b16 3.43 (b8 3.73); (144, 1280) f32 keeps t128 (3.39).
constexpr int64_t kFewRowsVectorsPerThread = 4;
// Few long rows, but at least about one a SM (7/8 of the SMs: 128 rows on
// 132) and fewer than 2 a SM: a block a row fills the GPU without a cluster
// or a split (H200, 2026-12-02, hot + dram, (128, 65536) axis 1: cluster
// 18.13 -> block t1024 b8 15.57 us f32, 13.11 -> block t512 b16 10.46 bf16).
constexpr int64_t kBlockRowsBelowPerSm = 2;
// Two-pass split rows, one 16-byte vector a thread a round: 256-thread blocks
// for f32, 512 for 16-bit (512 also for f32 when a 256-thread chunk would be
// over 16 vectors a thread), kResidentBlocksPerSm chunks a SM in all, each
// thread at least 3 vectors (f32) or 2 (16-bit) a chunk; 16-bit chunks of
// under 4 vectors a thread use the 16-vector kernel (the same loads: its
// 512-thread bound measured faster), longer ones the 8-vector one. H200,
// 2026-12-02, hot + dram: all of (144, 1280) f32 6.49 -> t256 c60 6.24 us;
// all of (1024, 1024) f32 7.70 -> t256 c256 7.42, bf16 7.66 -> t512 c128 b16
// 6.88 (b8 7.57); 8M, 64M and (8, 2^25) elements keep t512, b8 (16-bit b16
// there: 12.42 -> 15.51 us at 8M).
constexpr int kSplitThreadsF32 = 256;
constexpr int kSplitThreads16 = 512;
constexpr int64_t kSplitMaxVectorsPerThread = 16;
// Split passes aim at the blocks resident at once, not more: the split and
// inner-tile kernels' 512-thread blocks use 47-64 registers a thread, so two
// fit an SM's register file. One wave of them measured faster than twice as
// many short blocks (H200, 2026-11-29: (65536, 1024) axis 0 f32
// 69.1 -> 66.0 us, bf16 40.9 -> 37.8; 2^23 elements in all f32 13.4 -> 11.6).
constexpr int64_t kResidentBlocksPerSm = 2;
// Rows are split (or clustered) while fewer than this many per SM.
constexpr int64_t kSplitRowsBelowPerSm = 4;
constexpr int64_t kStridedOutputsPerSm = 1024;
// Cluster rows: about 2 blocks of 256 threads per SM, each streaming a long
// chunk (measured at (128, 65536) f32: 2 blocks per row 11.1 us, 4: 13.9,
// 8: 14.2; two-pass split 11.9-15.8). 512 threads a block gained 1-4% there
// and lost 8-18% at (64, 50000) (H200, 2026-11-30).
constexpr int kClusterRowThreads = 256;
constexpr int64_t kClusterRowBlocksPerSm = 2;
constexpr int64_t kMaxClusterBlocks = 16;     // 16 needs the non-portable opt-in
// Inner tiles are as wide as the inner run allows (up to 512 threads x 16 bytes):
// measured at (16384, 16384) axis 0, 256-byte tile rows streamed 7% slower
// than 8 KB rows. They are narrowed (down to this) only when the axis is too
// short to split into enough chunks of at least kMinChunkRows rows per thread.
constexpr int64_t kMinTileRowBytes = 1024;
// Small inputs (at most 2^20 elements) whose outputs give at least a quarter
// of the SMs a tile of 16 columns: one pass, no split, tiles 16 columns wide
// (4-element vectors, also for 16-bit), 256 threads (512 for axes of more
// than 256). H200, 2026-12-02, camp_reduce_sum_bench, hot + dram: (144, 1280)
// axis 0 f32 7.09 -> tile v4 t256 bx4 c1 4.83 us, bf16 8.96 -> 4.87;
// (1024, 1024) axis 0 f32 9.72 -> tile v4 t512 bx4 c1 7.12, bf16 11.25 -> 6.73
// (both were split in two passes over wide tiles).
constexpr int64_t kOnePassMaxElements = int64_t(1) << 20;
constexpr int64_t kNarrowTileColumns = 16;
// A long axis (at least 16 times the inner run) over an inner run of at least
// 1024: 256-thread blocks of 256-byte tile rows (16 threads of 16 bytes),
// the axis split for kResidentBlocksPerSm x 512 threads a SM. H200,
// 2026-12-02, hot + dram, (65536, 1024) axis 0: f32 132.1 -> tile v4 t256
// bx16 c33 127.2 us, bf16 75.3 -> tile v8 t256 bx16 c66 69.4.
constexpr int64_t kTallMinInner = 1024;
constexpr int64_t kTallAxisRatio = 16;
constexpr int64_t kTallThreads = 256;
constexpr int64_t kTallTileRowBytes = 256;
constexpr int64_t kMinChunkRows = 16;
// Sweep (reduce_sweep_kernel): the sum of all of a 16-bit tensor of 2^20 to
// 2^26 elements, B = 4 vectors a thread a slab; SMs blocks of 256 threads
// below 2^22 elements, 2 * SMs of 512 from there. H200, 2026-12-02, hot +
// dram, rows_split_two_pass (hot and dram added) -> sweep: (1024, 1024) all
// f16 6.57 -> 2.54 + 2.97 us (p132 t256), 8M elements f16 12.33 -> 4.43 +
// 6.41 (p264 t512), 64M f16 69.05 -> 32.72 + 32.73. f32 and longer sums keep
// the split (not measured).
constexpr int64_t kSweepMinElements = int64_t(1) << 20;
constexpr int64_t kSweepMaxElements = int64_t(1) << 26;
constexpr int64_t kSweepWideElements = int64_t(1) << 22;
constexpr int kSweepBatch = 4;
// Flight tiles (reduce_inner_tile_kernel, R = 16 or 8): outer 1, at least 2^22 and
// under 2^24 elements (measured at 2^23), an axis and an inner run of at least 128 each, whole
// 16-byte columns. 256 threads; 8 threads across (128-byte tile rows) when
// the axis is at least as long as the inner run, the axis then split for
// kResidentBlocksPerSm blocks a SM; else 32 across (512 bytes), one pass. R =
// 16 rows in flight a thread, 8 for f32 in one pass. H200, 2026-12-02, hot +
// dram: (65536, 128) axis 0 f32 inner_tile_split_two_pass 8.13 + 11.93 ->
// flight bx8 c66 7.38 + 11.28 us, bf16 6.89 + 9.08 -> bx8 c132 6.16 + 8.44;
// (128, 65536) axis 0 f32 inner_tile 6.10 + 10.19 -> bx32 r8 5.60 + 9.71,
// bf16 5.25 + 7.29 -> bx32 r16 4.06 + 6.28.
constexpr int64_t kFlightMinElements = int64_t(1) << 22;
constexpr int64_t kFlightMaxElements = int64_t(1) << 24;
constexpr int64_t kFlightMinSide = 128;
constexpr int kFlightThreads = 256;
int flight_rows(int64_t W, int64_t chunks) { return W == 4 && chunks == 1 ? 8 : 16; }
// Flight warps (reduce_inner_flight_warp_kernel): 16-bit, outer 1, whole
// 16-byte columns, 2^22 to under 2^24 elements, an axis of kFlightWarpMinAxis
// to kFlightWarpMaxAxis rows under a longer inner run (the flight tiles' one-pass
// side): one pass, 256 threads, warps of G = 8 rows by (warp width) / G columns
// (4 on 32 lanes), R = 16 rows in flight a lane (a warp's round covers G * R =
// 128 rows). H200, 2026-12-02, camp_reduce_sum_bench, hot / dram: (128, 65536)
// axis 0 f16 inner_flight 4.36 / 6.59 -> flight_warp t256 g8 r16 3.65 / 6.19 us
// (torch 3.87 / 6.55), bf16 4.33 / 6.53 -> 3.59 / 6.20; (127, 65536) f16 3.61 /
// 6.19 (hot + dram 9.80 against the best inner tile's 11.68). A short axis leaves
// half of a round's loads empty: (64, 131072) f16 5.68 / 8.36 against the inner
// tile's 4.50 / 6.68, so the rule starts just under the measured 127-128 rows.
// Longer axes keep the flight tiles; f32 keeps them too (not measured).
constexpr int64_t kFlightWarpMaxAxis = 128;
constexpr int64_t kFlightWarpMinAxis = 120;
constexpr int kFlightWarpThreads = 256;
constexpr int kFlightWarpRows = 8;       // G
constexpr int kFlightWarpInFlight = 16;  // R
// Column sweep (reduce_inner_column_sweep_kernel, then the row kernel over each
// column's P partials, as split rows' second pass): 16-bit, outer 1, a dense
// inner run (axis stride == inner) of exactly kColumnSweepInner elements (16
// vectors, a power of two dividing the block), 2^22 to under 2^24 elements (so
// the axis is at least 32768 rows): P = one block of 512 threads a SM, B = 4
// vectors a thread a slab. H200, 2026-12-02, hot / dram: (65536, 128) axis 0
// f16 inner_flight_split_two_pass 6.53 / 8.82 -> column_sweep t512 p132 b4
// 5.75 / 7.78 us (torch 6.58 / 8.40), bf16 6.48 / 8.70 -> 5.77 / 7.73. Other
// widths and f32 keep the flight tiles (not measured).
constexpr int64_t kColumnSweepInner = 128;
constexpr int kColumnSweepThreads = 512;
constexpr int kColumnSweepBatch = 4;
static_assert(kColumnSweepThreads % (kColumnSweepInner / 8) == 0 &&
                  ((kColumnSweepInner / 8) & (kColumnSweepInner / 8 - 1)) == 0,
              "a row's vectors: a power of two that divides the block");
constexpr int64_t kFinalizeRowBytes = 128;
constexpr int64_t kFinalizeRowsPerThread = 4;
constexpr int64_t kFinalizeMinThreads = 256;

// Workspace pointers are rounded up to a vector boundary; plans ask for the slack.
using gpu::kWorkspaceAlign;

int64_t elems_per_vector(oprt_dtype_t dtype) { return dtype == OPRT_DTYPE_F32 ? 4 : 8; }

// Rows of length L with W elements per vector: lanes per row (group) or block
// size and batch. `few`: fewer rows than kSplitRowsBelowPerSm a SM.
struct RowsChoice {
    bool group;
    int lanes;
    int threads;
    int batch;  // vectors in flight a thread (the block kernel's kBatch)
};
RowsChoice rows_choice(int64_t L, int64_t W, bool few) {
    const int64_t lane_vectors = few ? kFewRowsVectorsPerThread : kVectorsPerLane;
    if (L <= dev::kWarpSize * W * lane_vectors) {
        // About four vectors per lane rather than one on each of 32 lanes
        // (measured at (65536, 128) f32, tests/cpp/nvidia/bench/axis_variants.cu:
        // 32 lanes 20.3 us, 8 lanes 9.8, 4 lanes 10.5, 2 lanes 10.7).
        const int64_t lanes = next_pow2(ceil_div(L > 0 ? L : 1, W * 4));
        return {true, int(lanes < dev::kWarpSize ? lanes : dev::kWarpSize), kGroupThreads, 8};
    }
    if (few) {  // see kFewRowsVectorsPerThread
        const int batch = W == 8 ? 16 : 8;
        const int64_t threads = next_pow2(ceil_div(L, W * kFewRowsVectorsPerThread));
        return {false, 0, int(clamp64(threads, 64, max_threads_for_batch(batch))), batch};
    }
    // Many rows, a block per row: about eight vectors per thread (four made
    // 16-bit rows of 16384 stream at 94% of the copy ceiling, eight at 106%;
    // (4097, 4099) f16 18.9 -> 11.8 us; H200, 2026-11-30).
    return {false, 0, int(clamp64(next_pow2(ceil_div(L, W * kBlockRowVectorsPerThread)), 128, 512)), 8};
}

// bx x by tile of the inner kernel for `threads` threads and V-wide columns.
struct TileShape {
    int bx, by;
    int64_t tiles;
};
// Chunks the axis of length L may be split into when by threads walk it:
// at least kMinChunkRows rows per thread.
int64_t max_axis_chunks(int64_t L, int64_t by) { return std::max<int64_t>(1, L / (by * kMinChunkRows)); }
// As wide as the inner run (up to `threads`); halved, down to kMinTileRowBytes,
// while even the most axis chunks would give fewer than `target` blocks.
TileShape tile_shape(int64_t inner, int V, int64_t elem_bytes, int threads, int64_t outer, int64_t L,
                     int64_t target) {
    const int64_t columns = ceil_div(inner, V);
    int64_t bx = clamp64(next_pow2(columns), 1, threads);
    const int64_t min_bx = clamp64(kMinTileRowBytes / (V * elem_bytes), 1, threads);
    auto most_blocks = [&](int64_t b) { return outer * ceil_div(columns, b) * max_axis_chunks(L, threads / b); };
    while (bx > min_bx && most_blocks(bx) < target) bx /= 2;
    return {int(bx), int(threads / bx), ceil_div(columns, bx)};
}
TileShape tile_of(int64_t inner, int V, int bx, int threads) {
    return {bx, threads / bx, ceil_div(ceil_div(inner, V), bx)};
}
// Tile of the second pass over `rows` partial rows: the partials sit in L2, so
// tile rows can be short (128 bytes: many blocks share the pass), and the tile
// is as tall as gives each thread about kFinalizeRowsPerThread rows (one
// round of loads). The first pass's 1 KB rows at 1024 threads gave (65536,
// 1024) axis 0 four blocks of 33 rows a thread: 71.6 -> 68.9 us f32, 43.8 ->
// 41.1 bf16 with this tile (H200, 2026-11-29).
TileShape finalize_tile(int64_t inner, int V, int64_t rows) {
    const int64_t columns = ceil_div(inner, V);
    const int64_t min_bx = clamp64(kFinalizeRowBytes / (V * int64_t(sizeof(float))), 1, kFinalizeThreads);
    const int64_t by = clamp64(next_pow2(ceil_div(rows, kFinalizeRowsPerThread)), 1, kFinalizeThreads / min_bx);
    const int64_t bx = clamp64(std::max(min_bx, kFinalizeMinThreads / by), 1, next_pow2(columns));
    return tile_of(inner, V, int(bx), int(bx * by));
}

bool divisible(const AxisPlan &p, int64_t v) {
    if (p.inner % v != 0) return false;
    if (p.axis_len > 1 && p.in_axis_stride % v != 0) return false;
    for (int d = 0; d < p.outer_ndim; ++d)
        if (p.in_outer_strides[d] % v != 0) return false;
    return true;
}

// Calls f(std::integral_constant<int, G>) for the runtime lane count g.
template <int G, typename F>
void with_lanes(int g, F f) {
    if (g == G) {
        f(std::integral_constant<int, G>{});
    } else if constexpr (G > 1) {
        with_lanes<G / 2>(g, f);
    }
}

// Calls f(std::integral_constant<int, V>) for the runtime width v (<= MaxV).
template <int MaxV, typename F>
void with_vector_width(int v, F f) {
    if constexpr (MaxV >= 8) {
        if (v >= 8) return f(std::integral_constant<int, 8>{});
    }
    if (v >= 4) return f(std::integral_constant<int, 4>{});
    if (v >= 2) return f(std::integral_constant<int, 2>{});
    f(std::integral_constant<int, 1>{});
}

// Row sums of `rows` rows of length L (L >= 1) as `rc` says.
template <typename Tin, typename Tout>
void launch_rows(const Tin *in, Tout *out, int64_t rows, int64_t L, const RowsChoice &rc, const gpu::OuterIndex &ix,
                 dev::stream_t stream) {
    if (rc.group) {
        with_lanes<dev::kWarpSize>(rc.lanes, [&](auto lanes) {
            constexpr int G = decltype(lanes)::value;
            const int64_t blocks = clamp64(ceil_div(rows, kGroupThreads / G), 1, kMaxGridBlocks);
            gpu::launch_overlapped(&reduce_rows_group_kernel<Tin, Tout, G>, unsigned(blocks), kGroupThreads, 0, stream,
                                   in, out, rows, L, ix);
        });
        return;
    }
    const unsigned blocks = unsigned(clamp64(rows, 1, kMaxGridBlocks));
    if constexpr (sizeof(Tin) == 2) {
        if (rc.batch == 16) {
            gpu::launch_overlapped(&reduce_rows_block_kernel<Tin, Tout, 16>, blocks, unsigned(rc.threads), 0, stream,
                                   in, out, rows, L, ix);
            return;
        }
    }
    gpu::launch_overlapped(&reduce_rows_block_kernel<Tin, Tout, 8>, blocks, unsigned(rc.threads), 0, stream, in, out,
                           rows, L, ix);
}

// The inner tile kernel's launch: q takes the tile's shape; a block per tile and
// chunk, V floats of shared memory a thread. R rows in flight a thread: 4 (any
// width V), or 8 or 16 (the flight tile, first passes: V = 16 bytes).
template <typename Tin, typename Tout>
void launch_inner(const Tin *in, Tout *out, float *partial, InnerParams q, int V, int R, const TileShape &t,
                  dev::stream_t stream) {
    q.bx = t.bx;
    q.by = t.by;
    q.tiles = t.tiles;
    const unsigned threads = unsigned(t.bx * t.by);
    const dim3 grid(unsigned(clamp64(q.outer * q.tiles, 1, kMaxGridBlocks)), unsigned(q.chunks));
    const size_t smem = size_t(threads) * size_t(V) * sizeof(float);
    constexpr int W = gpu::vector_width<Tin>();
    if constexpr (std::is_same_v<Tin, Tout>) {  // first passes only
        if (R != 4 && V == W) {
            auto *kernel =
                R == 8 ? &reduce_inner_tile_kernel<Tin, Tout, W, 8> : &reduce_inner_tile_kernel<Tin, Tout, W, 16>;
            gpu::launch_overlapped(kernel, grid, threads, smem, stream, in, out, partial, q);
            return;
        }
    }
    with_vector_width<W>(V, [&](auto width) {
        constexpr int kV = decltype(width)::value;
        gpu::launch_overlapped(&reduce_inner_tile_kernel<Tin, Tout, kV>, grid, threads, smem, stream, in, out,
                               partial, q);
    });
}

#if !OPRT_DEVICE_HAS_CLUSTER_LAUNCH
// This toolchain (MetaX) cannot launch clusters; plans never choose a cluster
// kernel here, so reaching a cluster launch is a plan bug, reported not hidden.
oprt_status_t clusters_unavailable() {
    return fail(OPRT_ERR_RUNTIME, "%s: a cluster kernel was planned but this build cannot launch clusters", kOp);
}
#endif

template <typename T>
oprt_status_t launch_rows_cluster(const T *in, T *out, int64_t rows, int64_t L, int threads, int64_t C,
                                  int64_t chunk_len, const gpu::OuterIndex &ix, dev::stream_t stream) {
#if OPRT_DEVICE_HAS_CLUSTER_LAUNCH
    auto *kernel = &reduce_rows_cluster_kernel<T, T>;
    oprt_status_t s;
    if (C > 8 && (s = gpu::allow_large_clusters(kOp, reinterpret_cast<const void *>(kernel))) != OPRT_SUCCESS)
        return s;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(unsigned(clamp64(rows, 1, kMaxGridBlocks / C) * C), 1, 1);
    config.blockDim = dim3(unsigned(threads), 1, 1);
    config.dynamicSmemBytes = 0;
    config.stream = stream;
    cudaLaunchAttribute attr[2];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = unsigned(C);
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    config.attrs = attr;
    config.numAttrs = gpu::add_overlapped_attribute(attr, 1);
    const cudaError_t e = cudaLaunchKernelEx(&config, kernel, in, out, rows, L, chunk_len, ix);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return gpu::runtime_error(kOp, "cudaLaunchKernelEx(reduce_rows_cluster_kernel)", int(e));
    }
    return OPRT_SUCCESS;
#else
    (void)in, (void)out, (void)rows, (void)L, (void)threads, (void)C, (void)chunk_len, (void)ix, (void)stream;
    return clusters_unavailable();
#endif
}

// Whether `kernel` (a cluster kernel with static shared memory only) can run
// here in clusters of C blocks of `threads` threads.
oprt_status_t cluster_fits(const void *kernel, int64_t C, int threads, bool *fits) {
    *fits = false;
    int ptx = 0;
    oprt_status_t s = gpu::kernel_ptx_version(kPlanOp, kernel, &ptx);
    if (s != OPRT_SUCCESS || ptx < 90) return s;  // built without sm_90 code: clusters compiled out
    int active = 0;
    s = gpu::max_active_clusters(kPlanOp, kernel, int(C), threads, 0, &active);
    *fits = active > 0;
    return s;
}

const void *rows_cluster_kernel(oprt_dtype_t dtype) {
    switch (dtype) {
    case OPRT_DTYPE_F32: return reinterpret_cast<const void *>(&reduce_rows_cluster_kernel<float, float>);
    case OPRT_DTYPE_F16: return reinterpret_cast<const void *>(&reduce_rows_cluster_kernel<dev::half_t, dev::half_t>);
    case OPRT_DTYPE_BF16: return reinterpret_cast<const void *>(&reduce_rows_cluster_kernel<dev::bf16_t, dev::bf16_t>);
    }
    return nullptr;
}

// The inner tile kernel over p's axis with V-wide columns, bx of `threads`
// across, R rows in flight a thread, the axis in `chunks` chunks: chunks > 1
// write partial rows into the workspace and a second tile pass adds them.
template <typename T>
void run_inner_tiles(const AxisPlan &p, const T *in, T *out, void *workspace, const gpu::OuterIndex &ix, int V,
                     int64_t chunks, int threads, int bx, int R, dev::stream_t stream) {
    InnerParams q;
    q.outer = p.outer;
    q.inner = p.inner;
    q.L = p.axis_len;
    q.S = p.in_axis_stride;
    q.chunks = chunks;
    q.chunk_len = ceil_div(p.axis_len, chunks);
    q.ix = ix;
    const TileShape t = tile_of(p.inner, V, bx, threads);
    float *partial = chunks == 1 ? nullptr : gpu::aligned_workspace<float>(workspace);
    launch_inner<T, T>(in, out, partial, q, V, R, t, stream);
    if (chunks == 1) return;
    // Second pass: partial is [chunks][outer][inner]; reduce its first axis,
    // with tiles narrowed like the first pass's so many blocks share it.
    InnerParams f;
    f.outer = p.outer;
    f.inner = p.inner;
    f.L = chunks;
    f.S = p.outer * p.inner;
    f.chunks = 1;
    f.chunk_len = chunks;
    f.ix = ix;
    f.ix.in_row_stride = p.inner;
    int fv = 4;
    while (fv > 1 && p.inner % fv != 0) fv /= 2;
    const TileShape ft = finalize_tile(p.inner, fv, chunks);
    launch_inner<float, T>(partial, out, nullptr, f, fv, 4, ft, stream);
}

template <typename T>
oprt_status_t run_typed(const AxisPlan &p, const ExecArgs &args, dev::stream_t stream) {
    const T *in = static_cast<const T *>(args.in0);
    T *out = static_cast<T *>(args.out);
    const gpu::OuterIndex ix = gpu::outer_index(p);
    const int64_t L = p.axis_len;
    switch (p.kernel) {
    case kZero: {
        const int64_t blocks = clamp64(ceil_div(p.outer * p.inner, 256), 1, kMaxGridBlocks);
        gpu::launch_overlapped(&reduce_zero_kernel<T>, unsigned(blocks), 256, 0, stream, out, p.outer, p.inner, ix);
        return OPRT_SUCCESS;
    }
    case kRowsGroup:
        launch_rows(in, out, p.outer, L, RowsChoice{true, int(p.launch[0]), kGroupThreads, 8}, ix, stream);
        return OPRT_SUCCESS;
    case kRowsBlock:
        launch_rows(in, out, p.outer, L, RowsChoice{false, 0, int(p.launch[0]), int(p.launch[1])}, ix, stream);
        return OPRT_SUCCESS;
    case kSweep: {
        const int64_t P = p.launch[1];
        float *partial = gpu::aligned_workspace<float>(args.workspace);
        gpu::launch_overlapped(&reduce_sweep_kernel<T, kSweepBatch>, unsigned(P), unsigned(p.launch[0]), 0, stream,
                               in, partial, L);
        gpu::OuterIndex fix = ix;  // one row of P partials
        fix.in_row_stride = P;
        launch_rows<float, T>(partial, out, 1, P, rows_choice(P, 4, false), fix, stream);
        return OPRT_SUCCESS;
    }
    case kRowsSplit: {
        const unsigned threads = unsigned(p.launch[0]);
        const int64_t chunks = p.launch[1], chunk_len = p.launch[2];
        float *partial = gpu::aligned_workspace<float>(args.workspace);
        const unsigned blocks = unsigned(clamp64(p.outer * chunks, 1, kMaxGridBlocks));
        bool launched = false;
        if constexpr (sizeof(T) == 2) {
            if (p.launch[3] == 16) {
                gpu::launch_overlapped(&reduce_rows_split_kernel<T, 16>, blocks, threads, 0, stream, in, partial,
                                       p.outer, L, chunks, chunk_len, ix);
                launched = true;
            }
        }
        if (!launched)
            gpu::launch_overlapped(&reduce_rows_split_kernel<T, 8>, blocks, threads, 0, stream, in, partial, p.outer,
                                   L, chunks, chunk_len, ix);
        gpu::OuterIndex fix = ix;  // partials of a row are dense, `chunks` apart
        fix.in_row_stride = chunks;
        launch_rows<float, T>(partial, out, p.outer, chunks, rows_choice(chunks, 4, false), fix, stream);
        return OPRT_SUCCESS;
    }
    case kStrided: {
        const int64_t blocks = clamp64(ceil_div(p.outer, kStridedThreads), 1, kMaxGridBlocks);
        gpu::launch_overlapped(&reduce_strided_kernel<T>, unsigned(blocks), kStridedThreads, 0, stream, in, out, p.outer,
                               L, p.in_axis_stride, ix);
        return OPRT_SUCCESS;
    }
    case kRowsCluster:
        return launch_rows_cluster(in, out, p.outer, L, int(p.launch[0]), p.launch[1], p.launch[2], ix, stream);
    case kInnerTile:
    case kInnerFlight: {
        int V = int(p.launch[0]);
        const int threads = int(p.launch[2]);
        int bx = int(p.launch[3]);
        int R = p.kernel == kInnerFlight ? flight_rows(gpu::vector_width<T>(), p.launch[1]) : 4;
        if (!gpu::aligned_to(in, size_t(V) * sizeof(T))) {  // same sums, scalar loads, same tile width (inner tile)
            bx = int(clamp64(int64_t(bx) * V, 1, threads));
            V = 1;
            R = 4;
        }
        run_inner_tiles(p, in, out, args.workspace, ix, V, p.launch[1], threads, bx, R, stream);
        return OPRT_SUCCESS;
    }
    case kInnerFlightWarp: {
        if constexpr (sizeof(T) == 2) {  // the plan's range: 16-bit only
            if (gpu::aligned_to(in, gpu::kVectorBytes)) {
                constexpr int W = gpu::vector_width<T>();
                constexpr int64_t columns_a_warp = dev::kWarpSize / kFlightWarpRows;
                const int threads = int(p.launch[0]);
                const int64_t warps = ceil_div(p.inner / W, columns_a_warp);
                // A warp for every column group (the kernel does not loop): the
                // plan's inner runs (under 2^24 elements) need under 2^16 blocks.
                const int64_t blocks = ceil_div(warps, threads / dev::kWarpSize);
                gpu::launch_overlapped(&reduce_inner_flight_warp_kernel<T, kFlightWarpInFlight, kFlightWarpRows>,
                                       unsigned(blocks), unsigned(threads), 0, stream, in, out, L, p.in_axis_stride,
                                       p.inner);
                return OPRT_SUCCESS;
            }
        }
        // Off a 16-byte boundary: the inner tile with scalar columns, one pass
        // (no workspace), as the flight tile's one-pass fallback.
        run_inner_tiles(p, in, out, nullptr, ix, 1, 1, kFlightThreads, kFlightThreads, 4, stream);
        return OPRT_SUCCESS;
    }
    case kInnerColumnSweep: {
        constexpr int W = gpu::vector_width<T>();
        const int64_t P = p.launch[1];
        if constexpr (sizeof(T) == 2) {  // the plan's range: 16-bit only
            if (gpu::aligned_to(in, gpu::kVectorBytes)) {
                const int threads = int(p.launch[0]);
                float *partial = gpu::aligned_workspace<float>(args.workspace);
                const int64_t rows = threads / std::max<int64_t>(p.inner / W, dev::kWarpSize);  // of column sums
                const size_t smem = size_t(rows * p.inner) * sizeof(float);
                gpu::launch_overlapped(&reduce_inner_column_sweep_kernel<T, kColumnSweepBatch>, unsigned(P),
                                       unsigned(threads), smem, stream, in, partial, L, int(p.inner));
                // Second pass: the row kernel over each column's row of P partials.
                gpu::OuterIndex fix;
                fix.ndim = 1;
                fix.shape[0] = p.inner;
                fix.in_strides[0] = P;
                fix.out_strides[0] = 1;  // outer 1: the output's inner run from its start
                fix.in_row_stride = P;
                launch_rows<float, T>(partial, out, p.inner, P, rows_choice(P, 4, false), fix, stream);
                return OPRT_SUCCESS;
            }
        }
        // Off a 16-byte boundary: the inner tile with scalar columns, the axis in
        // P chunks (their partial rows fill the same workspace), 8 vectors' worth
        // of columns across as the flight tile's split fallback.
        run_inner_tiles(p, in, out, args.workspace, ix, 1, ceil_div(L, ceil_div(L, P)), kFlightThreads, 8 * W, 4,
                        stream);
        return OPRT_SUCCESS;
    }
    case kSmemTree:
    case kWarpShuffle: {
        SliceSum q;
        q.outer = p.outer;
        q.inner = p.inner;
        q.L = L;
        q.S = p.in_axis_stride;
        q.ix = ix;
        const int64_t outputs = p.outer * p.inner;
        if (p.kernel == kSmemTree) {
            reduce_smem_tree_kernel<T>
                <<<unsigned(clamp64(outputs, 1, kMaxGridBlocks)), kSmemTreeThreads, 0, stream>>>(in, out, q);
        } else {
            const int64_t warps = kWarpShuffleThreads / dev::kWarpSize;
            reduce_warp_shuffle_kernel<T><<<unsigned(clamp64(ceil_div(outputs, warps), 1, kMaxGridBlocks)),
                                            kWarpShuffleThreads, 0, stream>>>(in, out, q);
        }
        return OPRT_SUCCESS;
    }
    default: return OPRT_SUCCESS;
    }
}

}  // namespace

oprt_status_t plan(AxisPlan &p) {
    p.workspace_bytes = 0;
    if (p.axis_len == 0) {
        p.kernel = kZero;
        p.kernel_name = "empty_axis_zeros";
        return OPRT_SUCCESS;
    }
    if (p.out_numel == 0) {  // nothing will run; any valid choice
        p.kernel = kZero;
        p.kernel_name = "empty_output";
        return OPRT_SUCCESS;
    }
    gpu::DeviceInfo dev_info;
    oprt_status_t s = gpu::current_device(kPlanOp, &dev_info);
    if (s != OPRT_SUCCESS) return s;
    const bool clusters = OPRT_DEVICE_HAS_CLUSTER_LAUNCH && dev_info.cc_major >= 9 && gpu::clusters_allowed();
    const int64_t sms = dev_info.sm_count;
    const int64_t L = p.axis_len;
    const int64_t W = elems_per_vector(p.dtype);

    if (p.rows_contiguous(/*check_out_axis=*/false)) {
        const bool few = p.outer < kSplitRowsBelowPerSm * sms;
        if (W == 8 && p.outer == 1 && L >= kSweepMinElements && L <= kSweepMaxElements) {
            // The sum of all elements, 16-bit (see kSweepMinElements).
            const bool wide = L >= kSweepWideElements;
            const int64_t P = wide ? 2 * sms : sms;
            p.kernel = kSweep;
            p.kernel_name = "all_sweep_two_pass";
            p.launch[0] = wide ? 512 : 256;
            p.launch[1] = P;
            p.workspace_bytes = size_t(P) * sizeof(float) + kWorkspaceAlign;
            return OPRT_SUCCESS;
        }
        const RowsChoice rc = rows_choice(L, W, few);
        if (rc.group) {
            p.kernel = kRowsGroup;
            p.kernel_name = rc.lanes < dev::kWarpSize ? "rows_subwarp" : "rows_warp";
            p.launch[0] = rc.lanes;
            return OPRT_SUCCESS;
        }
        const bool block_a_row_fills = p.outer * 8 >= sms * 7 && p.outer < kBlockRowsBelowPerSm * sms;
        if (few && L >= kSplitMinRow && !block_a_row_fills) {
            if (clusters) {  // one launch: a cluster of C blocks per row, when rows * C fill the GPU
                const int64_t max_c = clamp64(ceil_div(L, int64_t(kClusterRowThreads) * W * 8), 1, kMaxClusterBlocks);
                int64_t C = clamp64(kClusterRowBlocksPerSm * sms / p.outer, 2, max_c);
                for (; C > 1 && p.outer * C >= sms; C = C > 8 ? 8 : 1) {
                    const int64_t chunk_len = ceil_div(ceil_div(L, C), 256) * 256;
                    const int64_t c = ceil_div(L, chunk_len);
                    bool fits = false;
                    if ((s = cluster_fits(rows_cluster_kernel(p.dtype), c, kClusterRowThreads, &fits)) != OPRT_SUCCESS)
                        return s;
                    if (!fits) continue;
                    p.kernel = kRowsCluster;
                    p.kernel_name = "rows_cluster";
                    p.launch[0] = kClusterRowThreads;
                    p.launch[1] = c;
                    p.launch[2] = chunk_len;
                    return OPRT_SUCCESS;
                }
            }
            // Two passes (see kSplitThreadsF32): chunks for kResidentBlocksPerSm
            // blocks a SM in all, none shorter than the minimum vectors a thread.
            int64_t chunks = clamp64(ceil_div(kResidentBlocksPerSm * sms, p.outer), 1, L);
            int64_t threads = W == 4 ? kSplitThreadsF32 : kSplitThreads16;
            if (ceil_div(L, chunks) > threads * W * kSplitMaxVectorsPerThread) threads = kSplitThreads16;
            const int64_t min_vectors = W == 4 ? 3 : 2;
            chunks = std::min(chunks, ceil_div(L, threads * W * min_vectors));
            if (chunks > 1) {
                // Whole vectors for every thread of a chunk (each thread's share
                // the same number of loads, so none trails its block) where that
                // lengthens chunks by at most an eighth; else 256-element steps.
                const int64_t even = ceil_div(L, chunks);
                const int64_t step = threads * W;
                int64_t chunk_len = ceil_div(even, step) * step;
                if (chunk_len - even > even / 8) chunk_len = ceil_div(even, 256) * 256;
                chunks = ceil_div(L, chunk_len);
                p.kernel = kRowsSplit;
                p.kernel_name = "rows_split_two_pass";
                p.launch[0] = threads;
                p.launch[1] = chunks;
                p.launch[2] = chunk_len;
                p.launch[3] = W == 8 && chunk_len < threads * W * 4 ? 16 : 8;
                p.workspace_bytes = size_t(p.outer * chunks) * sizeof(float) + kWorkspaceAlign;
                return OPRT_SUCCESS;
            }
        }
        p.kernel = kRowsBlock;
        p.kernel_name = "rows_block";
        p.launch[0] = rc.threads;
        p.launch[1] = rc.batch;
        return OPRT_SUCCESS;
    }

    if (p.inner == 1 && p.outer >= kStridedOutputsPerSm * sms) {
        p.kernel = kStrided;
        p.kernel_name = "strided_thread_per_output";
        return OPRT_SUCCESS;
    }

    int64_t V = W;
    while (V > 1 && !divisible(p, V)) V /= 2;
    int64_t target = kResidentBlocksPerSm * sms;
    int64_t threads = kInnerThreads;
    TileShape t{};
    const int64_t elems = p.outer * L * p.inner;
    const bool flight_range = p.outer == 1 && V == W && elems >= kFlightMinElements && elems < kFlightMaxElements;
    if (flight_range && W == 8 && L >= kFlightWarpMinAxis && L <= kFlightWarpMaxAxis && p.inner > L) {
        // Flight warps, one pass (see kFlightWarpMaxAxis).
        p.launch[0] = kFlightWarpThreads;
        p.kernel = kInnerFlightWarp;
        p.kernel_name = "inner_flight_warp";
        return OPRT_SUCCESS;
    }
    if (flight_range && W == 8 && p.inner == kColumnSweepInner && p.in_axis_stride == p.inner && L > p.inner) {
        // Column sweep, then each column's partials (see kColumnSweepInner).
        p.launch[0] = kColumnSweepThreads;
        p.launch[1] = sms;
        p.kernel = kInnerColumnSweep;
        p.kernel_name = "inner_column_sweep_two_pass";
        p.workspace_bytes = size_t(p.inner * sms) * sizeof(float) + kWorkspaceAlign;
        return OPRT_SUCCESS;
    }
    if (flight_range && L >= kFlightMinSide && p.inner >= kFlightMinSide) {
        // Flight tiles (see kFlightMinElements).
        const int64_t bx = L >= p.inner ? 8 : 32;
        t = tile_of(p.inner, int(V), int(bx), kFlightThreads);
        int64_t chunks = 1;
        if (bx == 8) chunks = clamp64(ceil_div(target, t.tiles), 1, std::min<int64_t>(65535, L / t.by));
        chunks = ceil_div(L, ceil_div(L, chunks));
        p.launch[0] = V;
        p.launch[1] = chunks;
        p.launch[2] = kFlightThreads;
        p.launch[3] = bx;
        p.kernel = kInnerFlight;
        p.kernel_name = chunks > 1 ? "inner_flight_split_two_pass" : "inner_flight";
        if (chunks > 1) p.workspace_bytes = size_t(chunks * p.inner) * sizeof(float) + kWorkspaceAlign;
        return OPRT_SUCCESS;
    }
    if (elems <= kOnePassMaxElements && p.outer * ceil_div(p.inner, kNarrowTileColumns) * 4 >= sms) {
        // Small inputs: one pass over narrow tiles (see kOnePassMaxElements).
        V = std::min<int64_t>(V, 4);
        threads = clamp64(next_pow2(L), 256, 512);
        t = tile_of(p.inner, int(V), int(kNarrowTileColumns / V), int(threads));
        target = 0;  // never split
    } else if (p.inner >= kTallMinInner && L >= kTallAxisRatio * p.inner) {
        // A long axis over a wide inner run: 256-byte tile rows, split (see kTallAxisRatio).
        threads = kTallThreads;
        target = kResidentBlocksPerSm * sms * kInnerThreads / kTallThreads;
        const int64_t bx = clamp64(kTallTileRowBytes / (V * (W == 4 ? 4 : 2)), 1, threads);
        t = tile_of(p.inner, int(V), int(bx), int(threads));
    } else {
        t = tile_shape(p.inner, int(V), W == 4 ? 4 : 2, kInnerThreads, p.outer, L, target);
    }
    const int64_t blocks = p.outer * t.tiles;
    int64_t chunks = 1;
    if (blocks < target) {
        const int64_t max_chunks = clamp64(max_axis_chunks(L, t.by), 1, 65535);
        chunks = clamp64(ceil_div(target, blocks), 1, max_chunks);
        chunks = ceil_div(L, ceil_div(L, chunks));
    }
    p.launch[0] = V;
    p.launch[1] = chunks;
    p.launch[2] = threads;
    p.launch[3] = t.bx;
    p.kernel = kInnerTile;
    p.kernel_name = chunks > 1 ? "inner_tile_split_two_pass" : "inner_tile";
    if (chunks > 1)
        p.workspace_bytes = size_t(chunks * p.outer * p.inner) * sizeof(float) + kWorkspaceAlign;
    return OPRT_SUCCESS;
}

// ---- The kernel ladder (oprt_list_reduce_sum_variants), plain to fastest ----------
namespace {

oprt_status_t plan_smem_tree(AxisPlan &p) {
    p.kernel = kSmemTree;
    p.kernel_name = "smem_tree";
    p.workspace_bytes = 0;
    return OPRT_SUCCESS;
}

oprt_status_t plan_warp_shuffle(AxisPlan &p) {
    p.kernel = kWarpShuffle;
    p.kernel_name = "warp_shuffle";
    p.workspace_bytes = 0;
    return OPRT_SUCCESS;
}

// The row steps read rows with 16-byte loads: the reduced axis must be the dense last one.
oprt_status_t needs_rows(const AxisPlan &p, const char *step) {
    return fail(OPRT_ERR_NOT_SUPPORTED,
                "'%s' reads dense rows with 16-byte loads: the reduced axis must have stride 1 with "
                "nothing after it (here axis stride %lld, inner run %lld); use 'smem_tree', "
                "'warp_shuffle' or 'auto'",
                step, (long long)p.in_axis_stride, (long long)p.inner);
}

// Step 3: 16-byte loads, a warp (or a few lanes) per row, a block per long row: never split.
oprt_status_t plan_vec16(AxisPlan &p) {
    // An axis of length 0 or 1 sums to zeros or a copy, whatever its layout: the plan's kernel.
    if (p.axis_len <= 1 || p.out_numel == 0) return plan(p);
    if (!p.rows_contiguous(/*check_out_axis=*/false)) return needs_rows(p, "vec16");
    gpu::DeviceInfo dev_info;
    const oprt_status_t s = gpu::current_device(kPlanOp, &dev_info);
    if (s != OPRT_SUCCESS) return s;
    const bool few = p.outer < kSplitRowsBelowPerSm * dev_info.sm_count;
    const RowsChoice rc = rows_choice(p.axis_len, elems_per_vector(p.dtype), few);
    p.workspace_bytes = 0;
    p.kernel = rc.group ? kRowsGroup : kRowsBlock;
    p.kernel_name = rc.group ? (rc.lanes < dev::kWarpSize ? "rows_subwarp" : "rows_warp") : "rows_block";
    p.launch[0] = rc.group ? rc.lanes : rc.threads;
    p.launch[1] = rc.batch;
    return OPRT_SUCCESS;
}

// Step 4: the plan for dense rows, which also splits few long rows over
// several blocks (a cluster, or two passes through the workspace).
oprt_status_t plan_multi_block(AxisPlan &p) {
    if (p.axis_len > 1 && !p.rows_contiguous(/*check_out_axis=*/false)) return needs_rows(p, "multi_block");
    return plan(p);
}

const Variant<AxisPlan> kLadderSteps[] = {
    {"smem_tree", &plan_smem_tree},
    {"warp_shuffle", &plan_warp_shuffle},
    {"vec16", &plan_vec16},
    {"multi_block", &plan_multi_block},
};

}  // namespace

const VariantList<AxisPlan> ladder = {kLadderSteps, 4};

oprt_status_t run(const AxisPlan &p, const ExecArgs &args) {
    oprt_status_t s = OPRT_SUCCESS;
    dev::stream_t stream = static_cast<dev::stream_t>(args.stream);
    switch (p.dtype) {
    case OPRT_DTYPE_F32: s = run_typed<float>(p, args, stream); break;
    case OPRT_DTYPE_F16: s = run_typed<dev::half_t>(p, args, stream); break;
    case OPRT_DTYPE_BF16: s = run_typed<dev::bf16_t>(p, args, stream); break;
    default: s = OPRT_ERR_UNSUPPORTED_DTYPE; break;
    }
    if (s != OPRT_SUCCESS) return s;
    return gpu::check_launch(kOp, p.kernel_name);
}

}  // namespace oprt::reduce_sum::OPRT_GPU_BACKEND_NS
