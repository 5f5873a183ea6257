// reduce_sum on NVIDIA GPUs: kernel choice at descriptor creation (plan) and
// launches at execute (run). Kernels live in kernel.cuh.
//
// Choice, in this order:
//   axis_len == 0                        -> zeros
//   dense rows (inner == 1, axis stride 1):
//     L <= warp * W * 8 (1024 f32, 2048 f16/bf16)          -> G lanes per row
//     few rows (outer < 4 * SMs) and L >= 16384            -> two-pass split rows
//     otherwise                                            -> one block per row
//   strided rows with many outputs (inner == 1, outer >= 1024 * SMs) -> thread per output
//   everything else (inner > 1, or few strided rows)       -> inner tile, split
//     along the axis (two passes) when outer * tiles cannot fill the GPU
// (W = elements per 16-byte vector.) Split passes keep their partial sums in
// the caller's workspace and add them in a fixed order: deterministic, no
// atomics, no memset.
#include <cstdint>
#include <type_traits>

#include "operator_runtime/detail/gpu_runtime.h"
#include "ops/reduce_sum/nvidia/kernel.cuh"
#include "ops/reduce_sum/reduce_sum_backends.h"

namespace oprt::reduce_sum::nvidia {
namespace {

using namespace oprt::reduce_sum::gpu_kernels;
using gpu::ceil_div;
using gpu::clamp64;
using gpu::kMaxGridBlocks;
using gpu::next_pow2;

constexpr const char *kOp = "oprt_execute_reduce_sum";
constexpr const char *kPlanOp = "oprt_create_reduce_sum_descriptor";

// AxisPlan::kernel values. launch[] holds, per kernel:
//   kRowsGroup: [0] lanes per row    kRowsBlock: [0] threads
//   kRowsSplit: [0] threads, [1] chunks per row, [2] chunk length
//   kInnerTile: [0] vector width V, [1] chunks along the axis, [2] chunk length, [3] threads
enum Kernel : int32_t {
    kZero = 1,
    kRowsGroup = 2,
    kRowsBlock = 3,
    kRowsSplit = 4,
    kInnerTile = 5,
    kStrided = 6,
};

constexpr int kGroupThreads = 256;
constexpr int kSplitThreads = 512;
constexpr int kInnerThreads = 512;
constexpr int kFinalizeThreads = 1024;
constexpr int kStridedThreads = 256;
constexpr int64_t kVectorsPerLane = 8;       // a row up to this many vectors per lane fits one warp
constexpr int64_t kSplitMinRow = 16384;      // shorter rows are never split
constexpr int64_t kBlocksPerSmTarget = 4;    // 4 x 512 threads fill an SM
constexpr int64_t kStridedOutputsPerSm = 1024;

// Workspace pointers are rounded up to a vector boundary; plans ask for the slack.
constexpr size_t kWorkspaceAlign = gpu::kVectorBytes;

int64_t elems_per_vector(oprt_dtype_t dtype) { return dtype == OPRT_DTYPE_F32 ? 4 : 8; }

// Rows of length L with W elements per vector: lanes per row (group) or block size.
struct RowsChoice {
    bool group;
    int lanes;
    int threads;
};
RowsChoice rows_choice(int64_t L, int64_t W) {
    if (L <= dev::kWarpSize * W * kVectorsPerLane) {
        const int64_t lanes = next_pow2(ceil_div(L > 0 ? L : 1, W));
        return {true, int(lanes < dev::kWarpSize ? lanes : dev::kWarpSize), kGroupThreads};
    }
    return {false, 0, int(clamp64(next_pow2(ceil_div(L, W * 4)), 128, 512))};
}

// bx x by tile of the inner kernel for `threads` threads and V-wide columns.
struct TileShape {
    int bx, by;
    int64_t tiles;
};
TileShape tile_shape(int64_t inner, int V, int threads) {
    const int64_t columns = ceil_div(inner, V);
    const int bx = int(clamp64(next_pow2(columns), 1, threads));
    return {bx, threads / bx, ceil_div(columns, bx)};
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

// Row sums of `rows` rows of length L (L >= 1), group or block kernel by L.
template <typename Tin, typename Tout>
void launch_rows(const Tin *in, Tout *out, int64_t rows, int64_t L, const gpu::OuterIndex &ix,
                 dev::stream_t stream) {
    const RowsChoice rc = rows_choice(L, gpu::vector_width<Tin>());
    if (rc.group) {
        with_lanes<dev::kWarpSize>(rc.lanes, [&](auto lanes) {
            constexpr int G = decltype(lanes)::value;
            const int64_t blocks = clamp64(ceil_div(rows, kGroupThreads / G), 1, kMaxGridBlocks);
            reduce_rows_group_kernel<Tin, Tout, G>
                <<<unsigned(blocks), kGroupThreads, 0, stream>>>(in, out, rows, L, ix);
        });
    } else {
        const int64_t blocks = clamp64(rows, 1, kMaxGridBlocks);
        reduce_rows_block_kernel<Tin, Tout><<<unsigned(blocks), rc.threads, 0, stream>>>(in, out, rows, L, ix);
    }
}

template <typename Tin, typename Tout>
void launch_inner(const Tin *in, Tout *out, float *partial, InnerParams q, int V, int threads,
                  dev::stream_t stream) {
    const TileShape t = tile_shape(q.inner, V, threads);
    q.bx = t.bx;
    q.by = t.by;
    q.tiles = t.tiles;
    const dim3 grid(unsigned(clamp64(q.outer * q.tiles, 1, kMaxGridBlocks)), unsigned(q.chunks));
    const size_t smem = size_t(threads) * size_t(V) * sizeof(float);
    with_vector_width<gpu::vector_width<Tin>()>(V, [&](auto width) {
        constexpr int kV = decltype(width)::value;
        reduce_inner_tile_kernel<Tin, Tout, kV><<<grid, threads, smem, stream>>>(in, out, partial, q);
    });
}

float *aligned_workspace(void *workspace) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(workspace);
    return reinterpret_cast<float *>((p + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign);
}

template <typename T>
void run_typed(const AxisPlan &p, const ExecArgs &args, dev::stream_t stream) {
    const T *in = static_cast<const T *>(args.in0);
    T *out = static_cast<T *>(args.out);
    const gpu::OuterIndex ix = gpu::outer_index(p);
    const int64_t L = p.axis_len;
    switch (p.kernel) {
    case kZero: {
        const int64_t blocks = clamp64(ceil_div(p.outer * p.inner, 256), 1, kMaxGridBlocks);
        reduce_zero_kernel<T><<<unsigned(blocks), 256, 0, stream>>>(out, p.outer, p.inner, ix);
        return;
    }
    case kRowsGroup:
    case kRowsBlock: launch_rows(in, out, p.outer, L, ix, stream); return;
    case kRowsSplit: {
        const int threads = int(p.launch[0]);
        const int64_t chunks = p.launch[1], chunk_len = p.launch[2];
        float *partial = aligned_workspace(args.workspace);
        const int64_t blocks = clamp64(p.outer * chunks, 1, kMaxGridBlocks);
        reduce_rows_split_kernel<T>
            <<<unsigned(blocks), threads, 0, stream>>>(in, partial, p.outer, L, chunks, chunk_len, ix);
        gpu::OuterIndex fix = ix;  // partials of a row are dense, `chunks` apart
        fix.in_row_stride = chunks;
        launch_rows<float, T>(partial, out, p.outer, chunks, fix, stream);
        return;
    }
    case kStrided: {
        const int64_t blocks = clamp64(ceil_div(p.outer, kStridedThreads), 1, kMaxGridBlocks);
        reduce_strided_kernel<T>
            <<<unsigned(blocks), kStridedThreads, 0, stream>>>(in, out, p.outer, L, p.in_axis_stride, ix);
        return;
    }
    case kInnerTile: {
        InnerParams q;
        q.outer = p.outer;
        q.inner = p.inner;
        q.L = L;
        q.S = p.in_axis_stride;
        q.chunks = p.launch[1];
        q.chunk_len = p.launch[2];
        q.ix = ix;
        int V = int(p.launch[0]);
        if (!gpu::aligned_to(in, size_t(V) * sizeof(T))) V = 1;  // same sums, scalar loads
        const int threads = int(p.launch[3]);
        if (q.chunks == 1) {
            launch_inner<T, T>(in, out, nullptr, q, V, threads, stream);
            return;
        }
        float *partial = aligned_workspace(args.workspace);
        launch_inner<T, T>(in, out, partial, q, V, threads, stream);
        // Second pass: partial is [chunks][outer][inner]; reduce its first axis.
        InnerParams f;
        f.outer = p.outer;
        f.inner = p.inner;
        f.L = q.chunks;
        f.S = p.outer * p.inner;
        f.chunks = 1;
        f.chunk_len = q.chunks;
        f.ix = ix;
        f.ix.in_row_stride = p.inner;
        int fv = 4;
        while (fv > 1 && p.inner % fv != 0) fv /= 2;
        launch_inner<float, T>(partial, out, nullptr, f, fv, kFinalizeThreads, stream);
        return;
    }
    default: return;
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
    const oprt_status_t s = gpu::current_device(kPlanOp, &dev_info);
    if (s != OPRT_SUCCESS) return s;
    const int64_t sms = dev_info.sm_count;
    const int64_t L = p.axis_len;
    const int64_t W = elems_per_vector(p.dtype);

    if (p.rows_contiguous(/*check_out_axis=*/false)) {
        const RowsChoice rc = rows_choice(L, W);
        if (rc.group) {
            p.kernel = kRowsGroup;
            p.kernel_name = rc.lanes < dev::kWarpSize ? "rows_subwarp" : "rows_warp";
            p.launch[0] = rc.lanes;
            return OPRT_SUCCESS;
        }
        const int64_t target = kBlocksPerSmTarget * sms;
        if (p.outer < target && L >= kSplitMinRow) {
            const int64_t max_chunks = ceil_div(L, int64_t(kSplitThreads) * W * 4);
            int64_t chunks = clamp64(ceil_div(target, p.outer), 1, max_chunks);
            if (chunks > 1) {
                const int64_t chunk_len = ceil_div(ceil_div(L, chunks), 256) * 256;
                chunks = ceil_div(L, chunk_len);
                p.kernel = kRowsSplit;
                p.kernel_name = "rows_split_two_pass";
                p.launch[0] = kSplitThreads;
                p.launch[1] = chunks;
                p.launch[2] = chunk_len;
                p.workspace_bytes = size_t(p.outer * chunks) * sizeof(float) + kWorkspaceAlign;
                return OPRT_SUCCESS;
            }
        }
        p.kernel = kRowsBlock;
        p.kernel_name = "rows_block";
        p.launch[0] = rc.threads;
        return OPRT_SUCCESS;
    }

    if (p.inner == 1 && p.outer >= kStridedOutputsPerSm * sms) {
        p.kernel = kStrided;
        p.kernel_name = "strided_thread_per_output";
        return OPRT_SUCCESS;
    }

    int64_t V = W;
    while (V > 1 && !divisible(p, V)) V /= 2;
    const TileShape t = tile_shape(p.inner, int(V), kInnerThreads);
    const int64_t blocks = p.outer * t.tiles;
    const int64_t target = kBlocksPerSmTarget * sms;
    int64_t chunks = 1, chunk_len = L;
    if (blocks < target) {
        const int64_t max_chunks = clamp64(ceil_div(L, int64_t(t.by) * 8), 1, 65535);
        chunks = clamp64(ceil_div(target, blocks), 1, max_chunks);
        chunk_len = ceil_div(L, chunks);
        chunks = ceil_div(L, chunk_len);
    }
    p.kernel = kInnerTile;
    p.kernel_name = chunks > 1 ? "inner_tile_split_two_pass" : "inner_tile";
    p.launch[0] = V;
    p.launch[1] = chunks;
    p.launch[2] = chunk_len;
    p.launch[3] = kInnerThreads;
    if (chunks > 1)
        p.workspace_bytes = size_t(chunks * p.outer * p.inner) * sizeof(float) + kWorkspaceAlign;
    return OPRT_SUCCESS;
}

oprt_status_t run(const AxisPlan &p, const ExecArgs &args) {
    oprt_status_t s;
    if ((s = gpu::check_device_pointer(kOp, "out", args.out)) != OPRT_SUCCESS) return s;
    if (p.axis_len > 0 && (s = gpu::check_device_pointer(kOp, "in", args.in0)) != OPRT_SUCCESS) return s;
    if (p.workspace_bytes > 0 &&
        (s = gpu::check_device_pointer(kOp, "workspace", args.workspace)) != OPRT_SUCCESS)
        return s;
    dev::stream_t stream = static_cast<dev::stream_t>(args.stream);
    switch (p.dtype) {
    case OPRT_DTYPE_F32: run_typed<float>(p, args, stream); break;
    case OPRT_DTYPE_F16: run_typed<dev::half_t>(p, args, stream); break;
    case OPRT_DTYPE_BF16: run_typed<dev::bf16_t>(p, args, stream); break;
    }
    return gpu::check_launch(kOp, p.kernel_name);
}

}  // namespace oprt::reduce_sum::nvidia
