// softmax on NVIDIA GPUs: kernel choice at descriptor creation (plan) and
// launches at execute (run). Kernels live in kernel.cuh.
//
// Choice, in this order (P = elements per 16-byte vector: 4 f32, 8 f16/bf16):
//   dense rows (inner == 1, axis stride 1 in and out):
//     L <= P * warp / 2                    -> sub-warp per row, row in registers
//     L <= 1024                            -> warp per row, row in registers
//     L * sizeof(T) fits shared memory     -> block per row, row in shared memory
//     longer, few rows (outer < 2 * SMs)   -> split rows: stats pass + write pass (workspace)
//     longer                               -> block per row: stats pass + write pass
//   otherwise (non-last axis, strided axis):
//     outer * inner >= 512 * SMs           -> thread per slice
//     fewer slices                         -> bx x by tile per slice group
#include <cstdint>
#include <type_traits>

#include "operator_runtime/detail/gpu_runtime.h"
#include "ops/softmax/nvidia/kernel.cuh"
#include "ops/softmax/softmax_backends.h"

namespace oprt::softmax::nvidia {
namespace {

using namespace oprt::softmax::gpu_kernels;
using gpu::ceil_div;
using gpu::clamp64;
using gpu::kMaxGridBlocks;
using gpu::next_pow2;

constexpr const char *kOp = "oprt_execute_softmax";
constexpr const char *kPlanOp = "oprt_create_softmax_descriptor";

// AxisPlan::kernel values. launch[] holds, per kernel:
//   kRowsWarp: [0] lanes per row, [1] columns per lane
//   kRowsBlockSmem: [0] threads, [1] dynamic shared memory bytes
//   kRowsLong: [0] threads
//   kRowsSplit: [0] threads, [1] chunks per row, [2] chunk length
//   kStridedTile: [0] bx, [1] by
enum Kernel : int32_t {
    kRowsWarp = 1,
    kRowsBlockSmem = 2,
    kRowsLong = 3,
    kRowsSplit = 4,
    kStridedThread = 5,
    kStridedTile = 6,
};

constexpr int kWarpKernelThreads = 128;
constexpr int64_t kWarpMaxCols = 1024;
constexpr int kLongThreads = 1024;
constexpr int kStridedThreads = 256;
constexpr int64_t kLongBlocksPerSm = 2;        // 2 x 1024 threads fill an SM
constexpr int64_t kSlicesPerSmForThreads = 512;
constexpr size_t kStaticSmemReserve = 1024;    // block-reduction scratch beside the row
constexpr size_t kWorkspaceAlign = gpu::kVectorBytes;

int64_t elems_per_vector(oprt_dtype_t dtype) { return dtype == OPRT_DTYPE_F32 ? 4 : 8; }
int64_t elem_size(oprt_dtype_t dtype) { return dtype == OPRT_DTYPE_F32 ? 4 : 2; }

int block_smem_threads(int64_t L) { return L <= 4096 ? 256 : (L <= 16384 ? 512 : 1024); }

size_t row_smem_bytes(int64_t L, int64_t size) {
    return size_t(ceil_div(L * size, gpu::kVectorBytes) * gpu::kVectorBytes);
}

template <int G, typename F>
void with_lanes(int g, F f) {
    if (g == G) {
        f(std::integral_constant<int, G>{});
    } else if constexpr (G > 1) {
        with_lanes<G / 2>(g, f);
    }
}

template <typename T, int G, int C>
void launch_warp_rows(const T *in, T *out, int64_t rows, int64_t L, const gpu::OuterIndex &ix,
                      dev::stream_t stream) {
    const int64_t blocks = clamp64(ceil_div(rows, kWarpKernelThreads / G), 1, kMaxGridBlocks);
    softmax_rows_warp_kernel<T, G, C><<<unsigned(blocks), kWarpKernelThreads, 0, stream>>>(in, out, rows, L, ix);
}

template <typename T>
void launch_warp(const T *in, T *out, int64_t rows, int64_t L, int lanes, int cols,
                 const gpu::OuterIndex &ix, dev::stream_t stream) {
    constexpr int P = gpu::vector_width<T>();
    if (lanes < dev::kWarpSize) {  // short rows: one vector per lane
        with_lanes<dev::kWarpSize / 2>(lanes, [&](auto g) {
            launch_warp_rows<T, decltype(g)::value, P>(in, out, rows, L, ix, stream);
        });
        return;
    }
    constexpr int W = dev::kWarpSize;
    if (cols <= P) launch_warp_rows<T, W, P>(in, out, rows, L, ix, stream);
    else if (cols <= 8) launch_warp_rows<T, W, (8 > P ? 8 : P)>(in, out, rows, L, ix, stream);
    else if (cols <= 16) launch_warp_rows<T, W, 16>(in, out, rows, L, ix, stream);
    else launch_warp_rows<T, W, 32>(in, out, rows, L, ix, stream);
}

template <typename T>
oprt_status_t launch_long(const T *in, T *out, int64_t rows, int64_t L, const gpu::OuterIndex &ix,
                          dev::stream_t stream) {
    const int64_t blocks = clamp64(rows, 1, kMaxGridBlocks);
    softmax_rows_long_kernel<T><<<unsigned(blocks), kLongThreads, 0, stream>>>(in, out, rows, L, ix);
    return OPRT_SUCCESS;
}

template <typename T>
oprt_status_t run_typed(const AxisPlan &p, const ExecArgs &args, dev::stream_t stream) {
    const T *in = static_cast<const T *>(args.in0);
    T *out = static_cast<T *>(args.out);
    const gpu::OuterIndex ix = gpu::outer_index(p);
    const int64_t L = p.axis_len, rows = p.outer;
    switch (p.kernel) {
    case kRowsWarp:
        launch_warp(in, out, rows, L, int(p.launch[0]), int(p.launch[1]), ix, stream);
        return OPRT_SUCCESS;
    case kRowsBlockSmem: {
        const size_t smem = size_t(p.launch[1]);
        gpu::DeviceInfo info;
        oprt_status_t s = gpu::current_device(kOp, &info);
        if (s != OPRT_SUCCESS) return s;
        // Planned on a device with more shared memory than this one: the
        // streaming kernel needs none and gives the same results.
        if (smem + kStaticSmemReserve > info.smem_per_block_optin) return launch_long(in, out, rows, L, ix, stream);
        const void *kernel = reinterpret_cast<const void *>(&softmax_rows_block_smem_kernel<T>);
        if ((s = gpu::allow_dynamic_smem(kOp, kernel, smem)) != OPRT_SUCCESS) return s;
        const int64_t blocks = clamp64(rows, 1, kMaxGridBlocks);
        softmax_rows_block_smem_kernel<T>
            <<<unsigned(blocks), unsigned(p.launch[0]), smem, stream>>>(in, out, rows, L, ix);
        return OPRT_SUCCESS;
    }
    case kRowsLong: return launch_long(in, out, rows, L, ix, stream);
    case kRowsSplit: {
        const int threads = int(p.launch[0]);
        const int64_t chunks = p.launch[1], chunk_len = p.launch[2];
        const uintptr_t ws = reinterpret_cast<uintptr_t>(args.workspace);
        F32Pair *stats = reinterpret_cast<F32Pair *>((ws + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign);
        const int64_t blocks = clamp64(rows * chunks, 1, kMaxGridBlocks);
        softmax_rows_split_stats_kernel<T>
            <<<unsigned(blocks), threads, 0, stream>>>(in, stats, rows, L, chunks, chunk_len, ix);
        softmax_rows_split_write_kernel<T>
            <<<unsigned(blocks), threads, 0, stream>>>(in, out, stats, rows, L, chunks, chunk_len, ix);
        return OPRT_SUCCESS;
    }
    case kStridedThread:
    case kStridedTile: {
        SliceParams q;
        q.outer = p.outer;
        q.inner = p.inner;
        q.L = L;
        q.in_stride = p.in_axis_stride;
        q.out_stride = p.out_axis_stride;
        q.ix = ix;
        if (p.kernel == kStridedThread) {
            const int64_t blocks = clamp64(ceil_div(p.outer * p.inner, kStridedThreads), 1, kMaxGridBlocks);
            softmax_strided_thread_kernel<T><<<unsigned(blocks), kStridedThreads, 0, stream>>>(in, out, q);
        } else {
            q.bx = int32_t(p.launch[0]);
            q.by = int32_t(p.launch[1]);
            q.tiles = ceil_div(p.inner, q.bx);
            const int64_t blocks = clamp64(p.outer * q.tiles, 1, kMaxGridBlocks);
            softmax_strided_tile_kernel<T><<<unsigned(blocks), unsigned(q.bx * q.by), 0, stream>>>(in, out, q);
        }
        return OPRT_SUCCESS;
    }
    default: return OPRT_SUCCESS;
    }
}

}  // namespace

oprt_status_t plan(AxisPlan &p) {
    p.workspace_bytes = 0;
    const int64_t L = p.axis_len;
    const int64_t P = elems_per_vector(p.dtype);
    if (p.in_numel == 0) {  // nothing will run; any valid choice
        p.kernel = kRowsWarp;
        p.kernel_name = "rows_subwarp_registers";
        p.launch[0] = 1;
        p.launch[1] = P;
        return OPRT_SUCCESS;
    }
    gpu::DeviceInfo info;
    const oprt_status_t s = gpu::current_device(kPlanOp, &info);
    if (s != OPRT_SUCCESS) return s;
    const int64_t sms = info.sm_count;

    if (p.rows_contiguous(/*check_out_axis=*/true)) {
        if (L <= kWarpMaxCols) {
            p.kernel = kRowsWarp;
            if (L <= P * (dev::kWarpSize / 2)) {
                p.kernel_name = "rows_subwarp_registers";
                p.launch[0] = next_pow2(ceil_div(L, P));
                p.launch[1] = P;
            } else {
                p.kernel_name = "rows_warp_registers";
                p.launch[0] = dev::kWarpSize;
                const int64_t cols = next_pow2(ceil_div(L, dev::kWarpSize));
                p.launch[1] = cols > P ? cols : P;
            }
            return OPRT_SUCCESS;
        }
        const size_t smem = row_smem_bytes(L, elem_size(p.dtype));
        if (smem + kStaticSmemReserve <= info.smem_per_block_optin) {
            p.kernel = kRowsBlockSmem;
            p.kernel_name = "rows_block_smem";
            p.launch[0] = block_smem_threads(L);
            p.launch[1] = int64_t(smem);
            return OPRT_SUCCESS;
        }
        const int64_t target = kLongBlocksPerSm * sms;
        if (p.outer < target) {
            const int64_t max_chunks = ceil_div(L, int64_t(kLongThreads) * P * 4);
            int64_t chunks = clamp64(ceil_div(target, p.outer), 1, max_chunks);
            if (chunks > 1) {
                const int64_t chunk_len = ceil_div(ceil_div(L, chunks), 256) * 256;
                chunks = ceil_div(L, chunk_len);
                p.kernel = kRowsSplit;
                p.kernel_name = "rows_long_split_two_pass";
                p.launch[0] = kLongThreads;
                p.launch[1] = chunks;
                p.launch[2] = chunk_len;
                p.workspace_bytes = size_t(p.outer * chunks) * sizeof(F32Pair) + kWorkspaceAlign;
                return OPRT_SUCCESS;
            }
        }
        p.kernel = kRowsLong;
        p.kernel_name = "rows_long_block_two_pass";
        p.launch[0] = kLongThreads;
        return OPRT_SUCCESS;
    }

    if (p.outer * p.inner >= kSlicesPerSmForThreads * sms) {
        p.kernel = kStridedThread;
        p.kernel_name = "strided_thread_per_slice";
        return OPRT_SUCCESS;
    }
    const int64_t bx = clamp64(next_pow2(p.inner), 1, 32);  // 32 inner positions: a full 128-byte f32 line
    p.kernel = kStridedTile;
    p.kernel_name = "strided_tile";
    p.launch[0] = bx;
    p.launch[1] = kStridedThreads / bx;
    return OPRT_SUCCESS;
}

oprt_status_t run(const AxisPlan &p, const ExecArgs &args) {
    oprt_status_t s;
    if ((s = gpu::check_device_pointer(kOp, "out", args.out)) != OPRT_SUCCESS) return s;
    if ((s = gpu::check_device_pointer(kOp, "in", args.in0)) != OPRT_SUCCESS) return s;
    if (p.workspace_bytes > 0 &&
        (s = gpu::check_device_pointer(kOp, "workspace", args.workspace)) != OPRT_SUCCESS)
        return s;
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

}  // namespace oprt::softmax::nvidia
