// softmax on NVIDIA GPUs: the plan (the kernel chosen at descriptor
// creation, from the tables and thresholds here) and the dispatch of its
// launch. The kernel families, each with its launch struct and launcher:
// rows_registers.cuh, rows_streamed.cuh, rows_bulk.cuh, rows_cluster.cuh,
// strided.cuh and ladder.cuh (kernel.cuh: what they share); design and
// measurements: docs/kernels/softmax.md. P = elements per 16-byte vector (4
// f32, 8 16-bit).
//   dense rows (inner == 1, axis stride 1 in and out):
//     a kRegisterRows entry holds the row   -> rows_registers (up to 16384 columns;
//                                             32768 for 16-bit rows up to one an SM)
//     L <= one block's shared memory as f32 -> rows < SMs: split two-pass; else
//                                             rows_block_smem
//     longer: rows < 2 * SMs (f32), < SMs / 2 (16-bit) -> split two-pass; else
//                                             a block per row, two passes
//     then on sm_90, rows beyond 16384 columns -> the bulk-copy ring
//     (rows_bulk.cuh): a row per block, or split over blocks that swap
//     (max, sum), claiming rows with >= 16 row groups a wave;
//     and there, rows of whole vectors that a cluster of a kClusterRows
//     shape holds (up to 16 blocks f32, 8 16-bit), rows * C >= SMs / 2
//     (16-bit rows past 65536 columns: SMs) -> rows_cluster (in registers
//     across a cluster)
//   other layouts: outer * inner >= 512 * SMs -> a thread per slice, else tiles.
// Rows off 16-byte boundaries are seen at execute time (rows_aligned): in and
// out at the same offset, the ring's head-peeling instances; otherwise the
// dense-row kernels.
#include <cstdint>
#include <iterator>
#include <type_traits>

#include "ops/softmax/nvidia/kernel.cuh"
#include "ops/softmax/nvidia/ladder.cuh"
#include "ops/softmax/nvidia/rows_registers.cuh"
#include "ops/softmax/nvidia/rows_streamed.cuh"
#include "ops/softmax/nvidia/strided.cuh"
#include "ops/softmax/softmax_backends.h"
#if OPRT_DEVICE_HAS_BULK_COPY_LAUNCH
#include "ops/softmax/nvidia/rows_bulk.cuh"
#endif
#if OPRT_DEVICE_HAS_CLUSTER_LAUNCH
#include "ops/softmax/nvidia/rows_cluster.cuh"
#endif

namespace oprt::softmax::OPRT_GPU_BACKEND_NS {
namespace {

using namespace oprt::softmax::gpu_kernels;
using gpu::ceil_div;
using gpu::clamp64;
using gpu::kWorkspaceAlign;

constexpr const char *kPlanOp = "oprt_create_softmax_descriptor";

// AxisPlan::kernel values, and what launch[] holds for each.
enum Kernel : int32_t {
    kRowsBlockSmem = 3,     // [0] elements of a row kept in shared memory
    kRowsSplit = 4,         // [0] chunks per row, [1] chunk length
    kStridedThread = 5,
    kStridedTile = 6,       // [0] bx, [1] by
    kRowsLong = 7,
    kThreePass = 8,         // the ladder's plain steps (ladder.cuh)
    kWarpFused = 9,
    kOnline = 10,
    kRowsBulk = 11,         // [0] threads, [1] blocks per row, [2] slice (elements a block), [3] buffers
    kRowsBulkClaimed = 12,  // the same; split rows whose blocks claim their rows (kClaim)
    kRowsRegisters = 13,    // [0] entry of kRegisterRows
    kRowsCluster = 14,      // [0] blocks a row (the cluster), [1] entry of kClusterRows; the ring's workspace
};

// ---- Plan ----------------------------------------------------------------------

// The shapes of rows_registers.cuh for dense rows: the first entry of the
// element size whose band (min_cols, max_cols] holds the row length and
// whose max_rows_per_sm (0: none) the rows stay within takes it. Bounded
// entries were each measured faster than the entries below them at the
// bench's shapes (tests/cpp/nvidia/bench/softmax_rows.cu, or
// tests/run_ops.py's chains of calls where their comments say so; a bounded
// entry of an unbounded entry's shape keeps its rows from the entry after
// it) and serve the plan only; the unbounded ones take every other row, in
// the plan and in the ladder's on_chip and bulk_async steps. threads: a
// row's (4-32, or whole warps up to 1024; powers of two); vecs: 16-byte
// vectors a thread (at most 72 values); min_blocks and feed: the kernel's
// kMinBlocks and kFeed (the persistent feeds: rows_registers_persistent).
struct RegisterRows {
    int64_t esize;  // bytes an element: 4 (f32) or 2 (f16, bf16)
    int64_t min_cols;
    int64_t max_cols;
    int64_t max_rows_per_sm;
    int threads;
    int vecs;
    int min_blocks = 0;
    Feed feed = Feed::kLoads;
};
constexpr RegisterRows kRegisterRows[] = {
    // f32, bounded (why each, with its measurements: docs/kernels/softmax.md,
    // "The production plan's short rows").
    {4, 64, 128, 249, 8, 4},
    {4, 512, 1024, 497, 128, 2},
    {4, 1024, 1280, 2, 512, 1},  // few rows: wide blocks, timed in chains of calls
    {4, 1024, 1280, 8, 256, 2},
    {4, 1536, 2048, 3, 512, 1},  // 1537-2048: 512 x 1, then 256 x 2, then 128 x 4
    {4, 1536, 2048, 12, 256, 2},
    {4, 2048, 2304, 8, 256, 4},  // the 2304 shapes take only 2049-2304
    {4, 2048, 2304, 16, 32, 18, 0, Feed::kPersistent},  // a warp a row, the next row in registers
    {4, 2304, 4096, 3, 512, 2, 3},  // capped at 3 blocks: the odd-length form keeps 40 registers
    {4, 2304, 4096, 8, 256, 4},
    {4, 2304, 4096, 63, 512, 2},
    // f32, every other row; up to 64 columns two vectors a thread.
    {4, 0, 16, 0, 4, 1},
    {4, 16, 32, 0, 4, 2},
    {4, 32, 64, 0, 8, 2},
    {4, 64, 128, 0, 16, 2},
    {4, 128, 256, 0, 32, 2},
    {4, 256, 512, 0, 32, 4},
    {4, 512, 1024, 0, 32, 8},
    {4, 1024, 2048, 0, 128, 4},
    {4, 2048, 4096, 0, 256, 4},
    {4, 4096, 8192, 0, 256, 8},
    {4, 8192, 16384, 0, 512, 8},
    // f16 / bf16, bounded.
    {2, 64, 128, 249, 8, 2},
    {2, 512, 1024, 8, 128, 1},
    {2, 1024, 1280, 2, 32, 5},  // few rows: a warp a row, timed in chains of calls
    {2, 1024, 1280, 8, 256, 1},
    {2, 1280, 1536, 8, 128, 2},
    {2, 1280, 1536, 31, 32, 6, 0, Feed::kStaged},  // a warp a row, 48 values a lane (4080x1536)
    {2, 1536, 2048, 1, 128, 2},  // keeps these rows from the next entry
    {2, 1536, 2048, 12, 256, 1},
    {2, 2048, 2304, 8, 256, 2, 8},  // the 2304 shapes take only 2049-2304; capped at 8 blocks an SM
    {2, 2048, 2304, 16, 32, 9, 0, Feed::kPersistentRing},  // a warp a row, 72 values a lane (2032x2304)
    {2, 2304, 4096, 2, 512, 1},
    {2, 2304, 4096, 63, 256, 2},
    {2, 16384, 32768, 1, 512, 8},  // up to a row an SM: a block a row (before the cluster and the ring)
    // f16 / bf16, every other row; 33-64 two vectors a thread; 513-1024 a
    // warp a row, staged, 8 blocks an SM; 2049-2304 a warp a row at 9
    // vectors, then 128 threads of 4 to 3072.
    {2, 0, 32, 0, 4, 1},
    {2, 32, 64, 0, 4, 2},
    {2, 64, 128, 0, 16, 1},
    {2, 128, 256, 0, 16, 2},
    {2, 256, 512, 0, 32, 2},
    {2, 512, 1024, 0, 32, 4, 8, Feed::kStaged},
    {2, 1024, 2048, 0, 128, 2},
    {2, 2048, 2304, 0, 32, 9},
    {2, 2304, 3072, 0, 128, 4},
    {2, 3072, 4096, 0, 256, 2},
    {2, 4096, 8192, 0, 512, 2},
    {2, 8192, 16384, 0, 512, 4},
};
constexpr size_t kRegisterRowsCount = std::size(kRegisterRows);

constexpr int64_t kSplitBlocksPerSm = 2;  // 2 x 1024 threads fill an SM
constexpr int64_t kSlicesPerSmForThreads = 512;

int64_t esize_of(oprt_dtype_t dtype) { return dtype == OPRT_DTYPE_F32 ? 4 : 2; }
int64_t round_up(int64_t v, int64_t m) { return ceil_div(v, m) * m; }

// The block-per-row two-pass kernel: any row, no workspace.
void plan_rows_long(AxisPlan &p) {
    p.kernel = kRowsLong;
    p.kernel_name = "rows_long_block_two_pass";
}

// Rows longer than the register kernels take: see the table at the top.
oprt_status_t plan_long_rows(AxisPlan &p, const gpu::DeviceInfo &info, int64_t P) {
    const int64_t L = p.axis_len, sms = info.sm_count;
    auto plan_split = [&](int64_t target) {  // true when splitting gives more than one chunk per row
        const int64_t max_chunks = ceil_div(L, int64_t(kStreamThreads) * P * 4);
        int64_t chunks = clamp64(ceil_div(target, p.outer), 1, max_chunks);
        if (chunks <= 1) return false;
        const int64_t chunk_len = ceil_div(ceil_div(L, chunks), 256) * 256;
        chunks = ceil_div(L, chunk_len);
        p.kernel = kRowsSplit;
        p.kernel_name = "rows_long_split_two_pass";
        p.launch[0] = chunks;
        p.launch[1] = chunk_len;
        p.workspace_bytes = split_rows_workspace(p.outer, chunks) + kWorkspaceAlign;
        return true;
    };
    const int64_t split_target = kSplitBlocksPerSm * sms;
    if (L <= smem_row_capacity(info, P)) {  // one block's shared memory holds the row
        if (p.outer < sms && plan_split(split_target)) return OPRT_SUCCESS;
        p.kernel = kRowsBlockSmem;
        p.kernel_name = "rows_block_smem";
        p.launch[0] = round_up(L, P);
        return OPRT_SUCCESS;
    }
    // The split's extra pass costs 16-bit rows more than idle SMs do.
    const int64_t split_below = P == 4 ? split_target : sms / 2;
    if (p.outer < split_below && plan_split(split_target)) return OPRT_SUCCESS;
    plan_rows_long(p);
    return OPRT_SUCCESS;
}

// Dense rows: rows_registers where a kRegisterRows entry takes the row (the
// bounded entries only where register_rows: the plan and the bulk launch's
// fallback, not the ladder's steps), else the shared-memory and two-pass kernels.
oprt_status_t plan_dense_rows(AxisPlan &p, const gpu::DeviceInfo &info, bool register_rows) {
    const int64_t L = p.axis_len, esize = esize_of(p.dtype);
    for (size_t i = 0; i < kRegisterRowsCount; ++i) {
        const RegisterRows &e = kRegisterRows[i];
        const bool measured = e.max_rows_per_sm != 0;
        if (e.esize == esize && L > e.min_cols && L <= e.max_cols &&
            (!measured || (register_rows && p.outer <= e.max_rows_per_sm * info.sm_count))) {
            p.kernel = kRowsRegisters;
            p.kernel_name = is_persistent(e.feed) ? "rows_registers_persistent" : "rows_registers";
            p.launch[0] = int64_t(i);  // its threads and vectors are compiled into its launch
            return OPRT_SUCCESS;
        }
    }
    return plan_long_rows(p, info, gpu::kVectorBytes / esize);
}

// ---- Rows through bulk asynchronous copies (sm_90) ----------------------------------

// Where the bulk kernel replaces the dense-row kernels.
enum class BulkUse {
    kNever,
    kWhereFaster,  // the plan: row lengths where it measured faster (bulk_faster)
    kWherever,     // the ladder's bulk_async step: every row of >= kBulkMinCols columns
};

#if OPRT_DEVICE_HAS_BULK_COPY_LAUNCH
constexpr int64_t kBulkMinCols = 1024;
// The ring takes the rows the register kernels do not hold (kRegisterRows'
// unbounded entries hold every row of up to 16384 columns).
bool bulk_faster(const AxisPlan &p) { return p.kernel != kRowsRegisters; }

// A block's ring: kBulkStages buffers of up to kBulkSliceBytes (less where
// one block's shared memory does not hold them).
constexpr int64_t kBulkSliceBytes = 32 * 1024;
constexpr int kBulkStages = 3;
static_assert(kBulkStages >= kBulkMinStages && kBulkStages <= kBulkMaxStages, "a ring the kernel takes");
constexpr int kBulkVectorsPerThread = 8;     // split rows
constexpr int kBulkRowVectorsPerThread = 4;  // a whole row per block
// Split rows: slices of at least this many bytes when a row is split only to
// give every SM work (every block of a split row must be resident).
constexpr int64_t kBulkMinSliceBytes = 8 * 1024;
// A row longer than one buffer is split into about kBulkSplitChunks slices of
// kBulkSplitMinSliceBytes up to a buffer: smaller slices make more blocks per
// SM, which hides latency, while more slices couple more blocks in each row's
// exchange (the sizes' measurements: docs/kernels/softmax.md, step 5).
constexpr int64_t kBulkSplitChunks = 32;
constexpr int64_t kBulkSplitMinSliceBytes = 16 * 1024;

// Split rows whose wave has at least this many row groups claim their rows
// (kClaim) instead of taking every row_groups-th (with 2-8 groups claiming
// was level or slower); f32 rows off whole vectors keep the fixed groups.
constexpr int64_t kClaimMinRowGroups = 16;

#endif

// Replaces a dense-row plan by the bulk kernel where `use` says so and it
// applies: an sm_90 device and kernel, and every block of a split row
// resident at once (rows off 16-byte boundaries go to the kHeads instances).
oprt_status_t plan_bulk_rows(AxisPlan &p, const gpu::DeviceInfo &info, BulkUse use) {
#if OPRT_DEVICE_HAS_BULK_COPY_LAUNCH
    const int64_t L = p.axis_len, rows = p.outer, sms = info.sm_count;
    const int64_t esize = esize_of(p.dtype), P = gpu::kVectorBytes / esize;
    if (use == BulkUse::kNever || (use == BulkUse::kWhereFaster && !bulk_faster(p))) return OPRT_SUCCESS;
    const bool whole_vectors = L % P == 0;
    if (L < kBulkMinCols || info.cc_major < 9) return OPRT_SUCCESS;
    const void *kernel = bulk_kernel_for(p.dtype);
    int ptx = 0;
    oprt_status_t s = gpu::kernel_ptx_version(kPlanOp, kernel, &ptx);
    if (s != OPRT_SUCCESS || ptx < 90) return s;

    int64_t buffer_bytes = kBulkSliceBytes;  // the ring's buffers
    if (buffer_bytes * kBulkStages > smem_room(info)) buffer_bytes = smem_room(info) / kBulkStages;
    buffer_bytes = buffer_bytes / 16 * 16;
    int64_t slice_bytes = buffer_bytes;
    if (L * esize > slice_bytes)
        slice_bytes = clamp64(round_up(ceil_div(L * esize, kBulkSplitChunks), 16),
                              kBulkSplitMinSliceBytes < slice_bytes ? kBulkSplitMinSliceBytes : slice_bytes,
                              slice_bytes);
    int64_t chunks = ceil_div(L, slice_bytes / esize);
    if (rows * chunks < sms) {  // few rows: more, smaller slices so every SM streams
        const int64_t finest = ceil_div(L * esize, kBulkMinSliceBytes);
        const int64_t wanted = ceil_div(sms, rows);
        chunks = clamp64(wanted < finest ? wanted : finest, chunks, finest > chunks ? finest : chunks);
    }
    const int64_t slice = round_up(ceil_div(L, chunks), P);
    chunks = ceil_div(L, slice);
    const size_t smem = size_t(kBulkStages * slice * esize);
    // Vectors a thread in each pass over the slice. Blocks of a whole row are
    // large (2 per SM for 32 KB rows): 4 vectors a thread keep 32 warps on the
    // SM. At least 128 threads: rows off boundaries read their ends one per
    // thread (row_end_element).
    const int vecs = chunks > 1 ? kBulkVectorsPerThread : kBulkRowVectorsPerThread;
    const int threads = int(clamp64(round_up(ceil_div(slice / P, vecs), 64), 128, kBulkMaxThreads));
    int64_t resident = 0;
    s = resident_blocks(kPlanOp, kernel, threads, smem, info, &resident);
    if (s != OPRT_SUCCESS || resident < chunks) return s;
    p.kernel = kRowsBulk;
    p.kernel_name = chunks > 1 ? "rows_bulk_ring_split" : "rows_bulk_ring";
    // Claimed rows where the wave has enough row groups and rows past its
    // first round (the launch keeps this choice, whatever it finds resident).
    if (chunks > 1 && resident / chunks >= kClaimMinRowGroups && rows > kBulkStages * (resident / chunks) &&
        (esize == 2 || whole_vectors)) {
        p.kernel = kRowsBulkClaimed;
        p.kernel_name = "rows_bulk_ring_split_claimed";
    }
    p.launch[0] = threads;
    p.launch[1] = chunks;
    p.launch[2] = slice;
    p.launch[3] = kBulkStages;
    // The dense-row plan's workspace stays covered: it runs unaligned data.
    const size_t ws = chunks > 1 ? kWorkspaceAlign + bulk_split_state_bytes(rows, chunks) : 0;
    if (ws > p.workspace_bytes) p.workspace_bytes = ws;
#else
    (void)p, (void)info, (void)use;
#endif
    return OPRT_SUCCESS;
}

oprt_status_t plan_with(AxisPlan &p, BulkUse bulk) {
    p.workspace_bytes = 0;
    if (p.in_numel == 0) {  // nothing will run; any valid choice
        plan_rows_long(p);
        return OPRT_SUCCESS;
    }
    gpu::DeviceInfo info;
    oprt_status_t s = gpu::current_device(kPlanOp, &info);
    if (s != OPRT_SUCCESS) return s;
    if (p.rows_contiguous(/*check_out_axis=*/true)) {
        if ((s = plan_dense_rows(p, info, bulk == BulkUse::kWhereFaster)) != OPRT_SUCCESS) return s;
        return plan_bulk_rows(p, info, bulk);
    }
    if (p.outer * p.inner >= kSlicesPerSmForThreads * info.sm_count) {
        p.kernel = kStridedThread;
        p.kernel_name = "strided_thread_per_slice";
        return OPRT_SUCCESS;
    }
    const int64_t bx = clamp64(gpu::next_pow2(p.inner), 1, 32);  // 32 inner positions: a full 128-byte f32 line
    p.kernel = kStridedTile;
    p.kernel_name = "strided_tile";
    p.launch[0] = bx;
    p.launch[1] = kStridedThreads / bx;
    return OPRT_SUCCESS;
}

// ---- Rows over a thread-block cluster (sm_90) ------------------------------------

#if OPRT_DEVICE_HAS_CLUSTER_LAUNCH
// rows_cluster.cuh's block shapes: the first entry of the element size whose
// cluster of max_blocks holds the row takes it. f32: 512 threads of 32
// values (16384 a block, 2 blocks an SM), up to 16 blocks (262144 columns;
// 9-16 are the non-portable cluster sizes). 16-bit, 8192 a block: up to 4
// blocks 128 threads of 64 values kept as 16-bit in 32 registers (8 blocks an
// SM at 64 registers), then up to 8 blocks 256 threads of 32 values whose
// exps are kept as floats (taken once; 4 blocks an SM at 56 registers); past
// 65536 columns 512 threads of 64 (32768 a block, 2 blocks an SM), up to 8
// blocks. The plan takes an entry's rows where their blocks (rows * C) reach
// half the SM count, or the whole count for the 16-bit blocks of 32768. The
// shapes measured against each other and against the ring:
// docs/kernels/softmax.md, "The production plan's long rows over a cluster".
struct ClusterRows {
    int64_t esize;
    int threads;
    int vecs;
    int min_blocks;
    int64_t max_blocks;  // a cluster's blocks, at most kMaxClusterBlocks
    bool from_half_the_sms;  // rows * C >= SMs / 2, else >= SMs
};
constexpr ClusterRows kClusterRows[] = {
    {4, 512, 8, 0, 16, true},
    {2, 128, 8, 8, 4, true},
    {2, 256, 4, 4, 8, true},
    {2, 512, 8, 2, 8, false},
};
constexpr size_t kClusterRowsCount = std::size(kClusterRows);
constexpr bool cluster_rows_fit_the_kernel() {
    for (const ClusterRows &c : kClusterRows)
        if (c.max_blocks < 1 || c.max_blocks > kMaxClusterBlocks) return false;
    return true;
}
static_assert(cluster_rows_fit_the_kernel(), "a cluster's blocks: 1 to kMaxClusterBlocks (the kernel's pairs)");
constexpr int64_t cluster_block_elements(const ClusterRows &c) {
    return int64_t(c.threads) * c.vecs * (gpu::kVectorBytes / c.esize);
}
// f(std::integral_constant<size_t, I>{}) for the entry I == `entry` of
// kClusterRows, where that entry is of T's size (otherwise nothing).
template <typename T, size_t I = 0, typename F>
oprt_status_t with_cluster_rows_entry(size_t entry, const F &f) {
    if constexpr (I < kClusterRowsCount) {
        if constexpr (kClusterRows[I].esize == int64_t(sizeof(T)))
            if (entry == I) return f(std::integral_constant<size_t, I>{});
        return with_cluster_rows_entry<T, I + 1>(entry, f);
    }
    return OPRT_SUCCESS;
}

// Whether clusters of C blocks of entry `entry`'s kernel for T run on this device.
template <typename T>
oprt_status_t cluster_rows_fit(size_t entry, int64_t C, bool *fits) {
    return with_cluster_rows_entry<T>(entry, [&](auto i) {
        constexpr ClusterRows c = kClusterRows[decltype(i)::value];
        auto *kernel = &softmax_rows_cluster_kernel<T, c.threads, c.vecs, c.min_blocks>;
        return gpu::cluster_fits(kPlanOp, reinterpret_cast<const void *>(kernel), C, c.threads, fits);
    });
}
#endif

// Replaces a bulk-ring plan by rows_cluster where a cluster of at most
// max_blocks blocks of a kClusterRows shape holds the row, the rows are
// whole vectors, rows * C blocks fill half the SMs (or all of them: the
// entry's from_half_the_sms) and the device runs such clusters. The bulk
// plan's workspace stays: rows off 16-byte boundaries (seen at execute) run it.
oprt_status_t plan_cluster_rows(AxisPlan &p) {
#if OPRT_DEVICE_HAS_CLUSTER_LAUNCH
    const int64_t L = p.axis_len, esize = esize_of(p.dtype), P = gpu::kVectorBytes / esize;
    if ((p.kernel != kRowsBulk && p.kernel != kRowsBulkClaimed) || L % P != 0) return OPRT_SUCCESS;
    size_t entry = 0;
    while (entry < kClusterRowsCount && (kClusterRows[entry].esize != esize ||
                                         cluster_block_elements(kClusterRows[entry]) * kClusterRows[entry].max_blocks < L))
        ++entry;
    if (entry == kClusterRowsCount) return OPRT_SUCCESS;
    const ClusterRows &shape = kClusterRows[entry];
    const int64_t C = ceil_div(L, cluster_block_elements(shape));
    gpu::DeviceInfo info;
    oprt_status_t s = gpu::current_device(kPlanOp, &info);
    if (s != OPRT_SUCCESS) return s;
    if (p.outer * C < (shape.from_half_the_sms ? info.sm_count / 2 : info.sm_count)) return OPRT_SUCCESS;
    bool fits = false;
    switch (p.dtype) {
    case OPRT_DTYPE_F32: s = cluster_rows_fit<float>(entry, C, &fits); break;
    case OPRT_DTYPE_F16: s = cluster_rows_fit<dev::half_t>(entry, C, &fits); break;
    default: s = cluster_rows_fit<dev::bf16_t>(entry, C, &fits); break;
    }
    if (s != OPRT_SUCCESS || !fits) return s;
    p.kernel = kRowsCluster;
    p.kernel_name = "rows_cluster";
    p.launch[0] = C;
    p.launch[1] = int64_t(entry);
#else
    (void)p;
#endif
    return OPRT_SUCCESS;
}

}  // namespace

oprt_status_t plan(AxisPlan &p) {
    const oprt_status_t s = plan_with(p, BulkUse::kWhereFaster);
    return s == OPRT_SUCCESS ? plan_cluster_rows(p) : s;
}

// ---- The kernel ladder (oprt_list_softmax_variants), plain to fastest -------------
namespace {

// The plain steps (ladder.cuh) run every layout; three_pass keeps the max and
// the sum of every slice in the workspace between its passes.
template <Kernel K>
oprt_status_t plan_plain(AxisPlan &p) {
    p.kernel = K;
    p.kernel_name = K == kThreePass ? "three_pass" : K == kWarpFused ? "warp_fused" : "online";
    p.workspace_bytes = K == kThreePass ? three_pass_workspace(p.outer * p.inner) + kWorkspaceAlign : 0;
    return OPRT_SUCCESS;
}

// on_chip (kNever): the dense-row kernels, loads through registers;
// bulk_async (kWherever): the same with every row of >= kBulkMinCols columns
// on the bulk-copy ring (sm_90). Dense rows only (a length-1 axis is dense in
// any layout).
template <BulkUse U>
oprt_status_t plan_dense_step(AxisPlan &p) {
    const char *step = U == BulkUse::kNever ? "on_chip" : "bulk_async";
    if (p.axis_len > 1 && !p.rows_contiguous(/*check_out_axis=*/true))
        return fail(OPRT_ERR_NOT_SUPPORTED,
                    "'%s' keeps dense rows on chip: the softmax axis must have stride 1 in and out "
                    "with nothing after it (here axis strides %lld / %lld, inner run %lld); use "
                    "'three_pass', 'warp_fused', 'online' or 'auto'",
                    step, (long long)p.in_axis_stride, (long long)p.out_axis_stride, (long long)p.inner);
    return plan_with(p, U);
}

const Variant<AxisPlan> kLadderSteps[] = {
    {"three_pass", &plan_plain<kThreePass>},
    {"warp_fused", &plan_plain<kWarpFused>},
    {"online", &plan_plain<kOnline>},
    {"on_chip", &plan_dense_step<BulkUse::kNever>},
    {"bulk_async", &plan_dense_step<BulkUse::kWherever>},
};

}  // namespace

const VariantList<AxisPlan> ladder = {kLadderSteps, int(std::size(kLadderSteps))};

// ---- Launch ----------------------------------------------------------------------
namespace {

// Launches entry `entry` of kRegisterRows: one instance of the kernel per entry of T's size.
template <typename T, size_t I = 0>
oprt_status_t launch_register_rows_entry(size_t entry, const T *in, T *out, int64_t rows, int64_t L, bool aligned,
                                         const gpu::OuterIndex &ix, dev::stream_t stream) {
    if constexpr (I < kRegisterRowsCount) {
        constexpr RegisterRows e = kRegisterRows[I];
        if constexpr (e.esize == int64_t(sizeof(T))) {
            static_assert(register_rows_capacity<T>(e.threads, e.vecs) >= e.max_cols, "the entry holds its rows");
            static_assert(e.vecs * gpu::vector_width<T>() <= 72, "at most 72 values a thread");
            if (entry == I) {
                int64_t max_blocks = gpu::kMaxGridBlocks;
                if constexpr (is_persistent(e.feed)) {  // the blocks resident at once
                    auto *kernel =
                        register_rows_kernel<T, e.threads, e.vecs, e.min_blocks, e.feed>(rows, L, aligned, ix);
                    gpu::DeviceInfo info;
                    oprt_status_t s = gpu::current_device(kExecuteOp, &info);
                    if (s == OPRT_SUCCESS)
                        s = resident_blocks(kExecuteOp, reinterpret_cast<const void *>(kernel),
                                            register_rows_block<e.threads>(), 0, info, &max_blocks);
                    if (s != OPRT_SUCCESS) return s;
                }
                launch_register_rows<T, e.threads, e.vecs, e.min_blocks, e.feed>(in, out, rows, L, aligned, ix,
                                                                                stream, max_blocks);
                return OPRT_SUCCESS;
            }
        }
        return launch_register_rows_entry<T, I + 1>(entry, in, out, rows, L, aligned, ix, stream);
    }
    return OPRT_SUCCESS;
}

template <typename T>
oprt_status_t run_typed(const AxisPlan &p, const ExecArgs &args, dev::stream_t stream);

// The ring where it takes the data; otherwise (rows off 16-byte boundaries
// at differing offsets in and out, a device that cannot hold a split row's
// blocks at once) the dense-row kernels.
template <typename T>
oprt_status_t launch_bulk(const AxisPlan &p, const ExecArgs &args, const T *in, T *out, const gpu::OuterIndex &ix,
                          dev::stream_t stream) {
#if OPRT_DEVICE_HAS_BULK_COPY_LAUNCH
    const int64_t esize = int64_t(sizeof(T));
    const bool aligned =
        p.axis_len % gpu::vector_width<T>() == 0 && rows_aligned(ix, in, out, esize, gpu::bulk::kAlign);
    if (aligned || rows_offsets_alike(ix, in, out, esize)) {
        BulkRows q;
        q.rows = p.outer;
        q.L = p.axis_len;
        q.chunks = p.launch[1];
        q.slice = p.launch[2];
        q.stages = int32_t(p.launch[3]);
        q.ix = ix;
        bool launched = false;
        const oprt_status_t s = launch_rows_bulk(in, out, q, int(p.launch[0]), p.kernel == kRowsBulkClaimed,
                                                 !aligned, args.workspace, stream, &launched);
        if (s != OPRT_SUCCESS || launched) return s;
    }
#else
    (void)in, (void)out, (void)ix;
#endif
    gpu::DeviceInfo info;
    oprt_status_t s = gpu::current_device(kExecuteOp, &info);
    if (s != OPRT_SUCCESS) return s;
    AxisPlan dense = p;
    dense.workspace_bytes = 0;
    if ((s = plan_dense_rows(dense, info, /*register_rows=*/true)) != OPRT_SUCCESS) return s;
    if (dense.workspace_bytes > p.workspace_bytes) {
        // Planned on a device unlike this one, the dense-row plan wants more
        // workspace than the caller gives: the block-per-row two-pass kernel
        // needs none and takes any row.
        plan_rows_long(dense);
        dense.workspace_bytes = 0;
    }
    return run_typed<T>(dense, args, stream);
}

// rows_cluster where the rows start on 16-byte boundaries in and out;
// otherwise the plan without clusters (the bulk ring, whose workspace the
// caller gives).
template <typename T>
oprt_status_t launch_cluster(const AxisPlan &p, const ExecArgs &args, const T *in, T *out, const gpu::OuterIndex &ix,
                             dev::stream_t stream) {
#if OPRT_DEVICE_HAS_CLUSTER_LAUNCH
    if (rows_aligned(ix, in, out, int64_t(sizeof(T)), gpu::kVectorBytes))
        return with_cluster_rows_entry<T>(size_t(p.launch[1]), [&](auto i) {
            constexpr ClusterRows c = kClusterRows[decltype(i)::value];
            return launch_cluster_rows<T, c.threads, c.vecs, c.min_blocks>(in, out, p.outer, p.axis_len,
                                                                          int(p.launch[0]), ix, stream);
        });
#else
    (void)in, (void)out, (void)ix;
#endif
    AxisPlan other = p;
    oprt_status_t s = plan_with(other, BulkUse::kWhereFaster);
    if (s != OPRT_SUCCESS) return s;
    if (other.workspace_bytes > p.workspace_bytes) plan_rows_long(other);  // planned on another device
    return run_typed<T>(other, args, stream);
}

// The slice kernels' geometry: other layouts, and the ladder's plain steps.
SliceParams slice_params(const AxisPlan &p, const gpu::OuterIndex &ix) {
    SliceParams q;
    q.outer = p.outer;
    q.inner = p.inner;
    q.L = p.axis_len;
    q.S_in = p.in_axis_stride;
    q.S_out = p.out_axis_stride;
    q.ix = ix;
    return q;
}

template <typename T>
oprt_status_t run_typed(const AxisPlan &p, const ExecArgs &args, dev::stream_t stream) {
    const T *in = static_cast<const T *>(args.in0);
    T *out = static_cast<T *>(args.out);
    const gpu::OuterIndex ix = gpu::outer_index(p);
    const int64_t L = p.axis_len, rows = p.outer;
    switch (p.kernel) {
    case kRowsRegisters:  // rows off 16-byte boundaries take the kernel's general form
        return launch_register_rows_entry(size_t(p.launch[0]), in, out, rows, L,
                                          rows_aligned(ix, in, out, int64_t(sizeof(T)), gpu::kVectorBytes), ix, stream);
    case kRowsBlockSmem: {
        SmemRows q;
        q.rows = rows;
        q.L = L;
        q.cached = p.launch[0];
        q.ix = ix;
        return launch_rows_smem(in, out, q, stream);
    }
    case kRowsLong: launch_rows_long(in, out, rows, L, ix, stream); break;
    case kRowsSplit: {
        SplitRows q;
        q.rows = rows;
        q.L = L;
        q.chunks = p.launch[0];
        q.chunk_len = p.launch[1];
        q.ix = ix;
        launch_rows_split(in, out, gpu::aligned_workspace<F32Pair>(args.workspace), q, stream);
        break;
    }
    case kRowsBulk:
    case kRowsBulkClaimed: return launch_bulk(p, args, in, out, ix, stream);
    case kRowsCluster: return launch_cluster(p, args, in, out, ix, stream);
    case kStridedThread: launch_strided_thread(in, out, slice_params(p, ix), stream); break;
    case kStridedTile:
        launch_strided_tile(in, out, slice_params(p, ix), int(p.launch[0]), int(p.launch[1]), stream);
        break;
    case kThreePass:
        launch_three_pass(in, out, gpu::aligned_workspace<float>(args.workspace), slice_params(p, ix), stream);
        break;
    case kWarpFused: launch_warp_fused(in, out, slice_params(p, ix), stream); break;
    case kOnline: launch_online(in, out, slice_params(p, ix), stream); break;
    default: break;
    }
    return OPRT_SUCCESS;
}

}  // namespace

oprt_status_t run(const AxisPlan &p, const ExecArgs &args) {
    oprt_status_t s;
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

}  // namespace oprt::softmax::OPRT_GPU_BACKEND_NS
