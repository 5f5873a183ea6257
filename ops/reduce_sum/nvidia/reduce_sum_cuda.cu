// reduce_sum on NVIDIA GPUs: kernel choice at descriptor creation (plan) and
// the dispatch of its launch at execute (run). The kernel families, each with
// its launchers: rows.cuh, inner.cuh, ladder.cuh (kernel.cuh: what they share,
// the empty-axis and strided kernels).
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
//       an axis of 120-128 under a longer inner run        -> flight warps (a column's
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

#include "ops/reduce_sum/nvidia/inner.cuh"
#include "ops/reduce_sum/nvidia/kernel.cuh"
#include "ops/reduce_sum/nvidia/ladder.cuh"
#include "ops/reduce_sum/nvidia/rows.cuh"
#include "ops/reduce_sum/reduce_sum_backends.h"

namespace oprt::reduce_sum::OPRT_GPU_BACKEND_NS {
namespace {

using namespace oprt::reduce_sum::gpu_kernels;
using gpu::ceil_div;
using gpu::clamp64;
using gpu::next_pow2;

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

// The plan's sizes; their measurements: docs/kernels/reduce_sum.md ("Why these
// sizes", "The plan's rules from the shape sweep", "The other axes").
constexpr int kInnerThreads = 512;
constexpr int64_t kVectorsPerLane = 8;       // a row up to this many vectors per lane fits one warp
constexpr int64_t kBlockRowVectorsPerThread = 8;
constexpr int64_t kSplitMinRow = 16384;      // shorter rows are never split
// Few rows: rows longer than a warp's 4 vectors a lane go to a block of about
// 4 vectors a thread (64 to 1024 threads; 16-bit rows with 16 vectors in
// flight, 512 at most).
constexpr int64_t kFewRowsVectorsPerThread = 4;
// Few long rows, but at least about one a SM (7/8 of the SMs: 128 rows on
// 132) and fewer than 2 a SM: a block a row fills the GPU without a cluster
// or a split.
constexpr int64_t kBlockRowsBelowPerSm = 2;
// Two-pass split rows, one 16-byte vector a thread a round: 256-thread blocks
// for f32, 512 for 16-bit (512 also for f32 when a 256-thread chunk would be
// over 16 vectors a thread), kResidentBlocksPerSm chunks a SM in all, each
// thread at least 3 vectors (f32) or 2 (16-bit) a chunk; 16-bit chunks of
// under 4 vectors a thread use the 16-vector kernel (the same loads: its
// 512-thread bound measured faster), longer ones the 8-vector one.
constexpr int kSplitThreadsF32 = 256;
constexpr int kSplitThreads16 = 512;
constexpr int64_t kSplitMaxVectorsPerThread = 16;
// Split passes aim at the blocks resident at once, not more: the split and
// inner-tile kernels' 512-thread blocks use 47-64 registers a thread, so two
// fit an SM's register file; one wave beat twice as many short blocks.
constexpr int64_t kResidentBlocksPerSm = 2;
// Rows are split (or clustered) while fewer than this many per SM.
constexpr int64_t kSplitRowsBelowPerSm = 4;
constexpr int64_t kStridedOutputsPerSm = 1024;
// Cluster rows: about 2 blocks of 256 threads per SM, each streaming a long chunk.
constexpr int kClusterRowThreads = 256;
constexpr int64_t kClusterRowBlocksPerSm = 2;
constexpr int64_t kMaxClusterBlocks = 16;     // 16 needs the non-portable opt-in
// Inner tiles are as wide as the inner run allows (up to 512 threads x 16
// bytes). They are narrowed (down to this) only when the axis is too short to
// split into enough chunks of at least kMinChunkRows rows per thread.
constexpr int64_t kMinTileRowBytes = 1024;
// Small inputs (at most 2^20 elements) whose outputs give at least a quarter
// of the SMs a tile of 16 columns: one pass, no split, tiles 16 columns wide
// (4-element vectors, also for 16-bit), 256 threads (512 for axes of more
// than 256).
constexpr int64_t kOnePassMaxElements = int64_t(1) << 20;
constexpr int64_t kNarrowTileColumns = 16;
// A long axis (at least 16 times the inner run) over an inner run of at least
// 1024: 256-thread blocks of 256-byte tile rows (16 threads of 16 bytes),
// the axis split for kResidentBlocksPerSm x 512 threads a SM.
constexpr int64_t kTallMinInner = 1024;
constexpr int64_t kTallAxisRatio = 16;
constexpr int64_t kTallThreads = 256;
constexpr int64_t kTallTileRowBytes = 256;
constexpr int64_t kMinChunkRows = 16;
// Sweep (reduce_sweep_kernel): the sum of all of a 16-bit tensor of 2^20 to
// 2^26 elements, B = 4 vectors a thread a slab; SMs blocks of 256 threads
// below 2^22 elements, 2 * SMs of 512 from there. f32 and longer sums keep
// the split (not measured).
constexpr int64_t kSweepMinElements = int64_t(1) << 20;
constexpr int64_t kSweepMaxElements = int64_t(1) << 26;
constexpr int64_t kSweepWideElements = int64_t(1) << 22;
// Flight tiles (reduce_inner_tile_kernel, R = 16 or 8): outer 1, at least 2^22 and
// under 2^24 elements (measured at 2^23), an axis and an inner run of at least 128 each, whole
// 16-byte columns. 256 threads; 8 threads across (128-byte tile rows) when
// the axis is at least as long as the inner run, the axis then split for
// kResidentBlocksPerSm blocks a SM; else 32 across (512 bytes), one pass. R =
// 16 rows in flight a thread, 8 for f32 in one pass.
constexpr int64_t kFlightMinElements = int64_t(1) << 22;
constexpr int64_t kFlightMaxElements = int64_t(1) << 24;
constexpr int64_t kFlightMinSide = 128;
constexpr int kFlightThreads = 256;
// Flight warps (reduce_inner_flight_warp_kernel): outer 1, whole 16-byte
// columns, 2^22 to under 2^24 elements, an axis of kFlightWarpMinAxis to
// kFlightWarpMaxAxis rows under a longer inner run (the flight tiles' one-pass
// side): one pass, 256 threads, warps of G = 8 rows by (warp width) / G columns
// (4 on 32 lanes), R = 16 rows in flight a lane (a warp's round covers G * R =
// 128 rows). A shorter axis leaves part of each round's loads empty, so the
// rule starts just under the measured 127-128 rows; longer axes keep the
// flight tiles.
constexpr int64_t kFlightWarpMaxAxis = 128;
constexpr int64_t kFlightWarpMinAxis = 120;
constexpr int kFlightWarpThreads = 256;
// Column sweep (reduce_inner_column_sweep_kernel, then the row kernel over each
// column's P partials, as split rows' second pass): 16-bit, outer 1, a dense
// inner run (axis stride == inner) of exactly kColumnSweepInner elements (16
// vectors, a power of two dividing the block), 2^22 to under 2^24 elements (so
// the axis is at least 32768 rows): P = one block of 512 threads a SM, B = 4
// vectors a thread a slab. Other widths and f32 keep the flight tiles (not
// measured).
constexpr int64_t kColumnSweepInner = 128;
constexpr int kColumnSweepThreads = 512;
static_assert(kColumnSweepThreads % (kColumnSweepInner / 8) == 0 &&
                  ((kColumnSweepInner / 8) & (kColumnSweepInner / 8 - 1)) == 0,
              "a row's vectors: a power of two that divides the block");

// Workspace pointers are rounded up to a vector boundary; plans ask for the slack.
using gpu::kWorkspaceAlign;

int64_t elems_per_vector(oprt_dtype_t dtype) { return dtype == OPRT_DTYPE_F32 ? 4 : 8; }

// Rows of length L with W elements per vector: lanes per row (group) or block
// size and batch. `few`: fewer rows than kSplitRowsBelowPerSm a SM.
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
    // Many rows, a block per row: about eight vectors per thread.
    return {false, 0, int(clamp64(next_pow2(ceil_div(L, W * kBlockRowVectorsPerThread)), 128, 512)), 8};
}

// Lanes a row for a second pass over P f32 partial sums: rows_choice's groups,
// which take up to 1024 (the plans make at most 2 a SM); a warp beyond.
int finish_lanes(int64_t P) {
    const RowsChoice rc = rows_choice(P, 4, false);
    return rc.group ? rc.lanes : dev::kWarpSize;
}

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
bool divisible(const AxisPlan &p, int64_t v) {
    if (p.inner % v != 0) return false;
    if (p.axis_len > 1 && p.in_axis_stride % v != 0) return false;
    for (int d = 0; d < p.outer_ndim; ++d)
        if (p.in_outer_strides[d] % v != 0) return false;
    return true;
}

#if !OPRT_DEVICE_HAS_CLUSTER_LAUNCH
// This toolchain (MetaX) cannot launch clusters; plans never choose a cluster
// kernel here, so reaching a cluster launch is a plan bug, reported not hidden.
oprt_status_t clusters_unavailable() {
    return fail(OPRT_ERR_RUNTIME, "%s: a cluster kernel was planned but this build cannot launch clusters", kExecuteOp);
}
#endif

const void *rows_cluster_kernel(oprt_dtype_t dtype) {
    switch (dtype) {
    case OPRT_DTYPE_F32: return reinterpret_cast<const void *>(&reduce_rows_cluster_kernel<float, float>);
    case OPRT_DTYPE_F16: return reinterpret_cast<const void *>(&reduce_rows_cluster_kernel<dev::half_t, dev::half_t>);
    case OPRT_DTYPE_BF16: return reinterpret_cast<const void *>(&reduce_rows_cluster_kernel<dev::bf16_t, dev::bf16_t>);
    }
    return nullptr;
}

// The inner-axis kernels' geometry (their launchers set the chunks).
InnerParams inner_params(const AxisPlan &p, const gpu::OuterIndex &ix) {
    InnerParams q;
    q.outer = p.outer;
    q.inner = p.inner;
    q.L = p.axis_len;
    q.S = p.in_axis_stride;
    q.ix = ix;
    return q;
}

template <typename T>
oprt_status_t run_typed(const AxisPlan &p, const ExecArgs &args, dev::stream_t stream) {
    const T *in = static_cast<const T *>(args.in0);
    T *out = static_cast<T *>(args.out);
    const gpu::OuterIndex ix = gpu::outer_index(p);
    const int64_t L = p.axis_len;
    switch (p.kernel) {
    case kZero: launch_zero(out, p.outer, p.inner, ix, stream); break;
    case kRowsGroup:
        launch_row_groups(in, out, p.outer, L, int(p.launch[0]), ix, stream);
        break;
    case kRowsBlock:
        launch_row_blocks(in, out, p.outer, L, int(p.launch[0]), int(p.launch[1]), ix, stream);
        break;
    case kSweep:  // the plan's range: 16-bit only
        if constexpr (sizeof(T) == 2)
            launch_sweep(in, out, gpu::aligned_workspace<float>(args.workspace), L, int(p.launch[0]), p.launch[1],
                         finish_lanes(p.launch[1]), ix, stream);
        break;
    case kRowsSplit:
        launch_rows_split(in, out, gpu::aligned_workspace<float>(args.workspace), p.outer, L, int(p.launch[0]),
                          p.launch[1], p.launch[2], int(p.launch[3]), finish_lanes(p.launch[1]), ix, stream);
        break;
    case kStrided: launch_strided(in, out, p.outer, L, p.in_axis_stride, ix, stream); break;
    case kRowsCluster:
#if OPRT_DEVICE_HAS_CLUSTER_LAUNCH
        return launch_rows_cluster(in, out, p.outer, L, int(p.launch[0]), p.launch[1], p.launch[2], ix, stream);
#else
        return clusters_unavailable();
#endif
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
        launch_inner_tiles(in, out, args.workspace, inner_params(p, ix), V, p.launch[1], threads, bx, R, stream);
        break;
    }
    case kInnerFlightWarp:
        if (gpu::aligned_to(in, gpu::kVectorBytes)) {
            launch_flight_warp(in, out, L, p.in_axis_stride, p.inner, int(p.launch[0]), stream);
            break;
        }
        // Off a 16-byte boundary: the inner tile with scalar columns, one pass
        // (no workspace), as the flight tile's one-pass fallback.
        launch_inner_tiles(in, out, nullptr, inner_params(p, ix), 1, 1, kFlightThreads, kFlightThreads, 4, stream);
        break;
    case kInnerColumnSweep: {
        const int64_t P = p.launch[1];
        if constexpr (sizeof(T) == 2) {  // the plan's range: 16-bit only
            if (gpu::aligned_to(in, gpu::kVectorBytes)) {
                launch_column_sweep(in, out, gpu::aligned_workspace<float>(args.workspace), L, p.inner,
                                    int(p.launch[0]), P, finish_lanes(P), stream);
                break;
            }
        }
        // Off a 16-byte boundary: the inner tile with scalar columns, the axis in
        // P chunks (their partial rows fill the same workspace), 8 vectors' worth
        // of columns across as the flight tile's split fallback.
        launch_inner_tiles(in, out, args.workspace, inner_params(p, ix), 1, ceil_div(L, ceil_div(L, P)), kFlightThreads,
                           8 * gpu::vector_width<T>(), 4, stream);
        break;
    }
    case kSmemTree:
    case kWarpShuffle: {
        SliceSum q;
        q.outer = p.outer;
        q.inner = p.inner;
        q.L = L;
        q.S = p.in_axis_stride;
        q.ix = ix;
        if (p.kernel == kSmemTree) launch_smem_tree(in, out, q, stream);
        else launch_warp_shuffle(in, out, q, stream);
        break;
    }
    default: break;
    }
    return OPRT_SUCCESS;
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
    const bool clusters = OPRT_DEVICE_HAS_CLUSTER_LAUNCH && dev_info.cc_major >= 9;
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
                    s = gpu::cluster_fits(kPlanOp, rows_cluster_kernel(p.dtype), c, kClusterRowThreads, &fits);
                    if (s != OPRT_SUCCESS) return s;
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
    if (flight_range && L >= kFlightWarpMinAxis && L <= kFlightWarpMaxAxis && p.inner > L) {
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
    return gpu::check_launch(kExecuteOp, p.kernel_name);
}

}  // namespace oprt::reduce_sum::OPRT_GPU_BACKEND_NS
