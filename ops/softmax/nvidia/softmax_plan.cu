// softmax on NVIDIA GPUs: the kernel choice at descriptor creation (plan) and
// the launches at execute (run). MetaX compiles this file unchanged against
// its device traits (ops/softmax/metax/softmax_metax.maca).
//
// Dense rows (axis stride 1 in and out, nothing after it), by V, the row's
// 16-byte vectors (row_vectors: P = 4 f32 or 8 f16/bf16 elements a vector;
// one more where rows are not whole vectors), and K, the vectors a thread
// holds (at most 32 / P: 32 values):
//   V <= 16              rows_registers_warp   next_pow2(V) lanes per row, K = 1,
//                                              several rows per warp
//   V <= warp * 32 / P   rows_registers_warp   a warp per row, K = ceil(V / warp)
//                                              (up to 1024 elements)
//   V <= 512 * 32 / P    rows_registers_block  a block per row, next_pow2(V / K) threads
//                                              (64 .. 512; up to 16384 elements)
//   V <= 16 * that       rows_cluster          C = next_pow2(V / (512 * 32 / P)) blocks of
//                                              a cluster per row (2 .. 16; sm_90, where the
//                                              device runs clusters of C)
//   longer, or no such cluster
//                        rows_stream           rows split over 16 blocks of a cluster, else
//                                              8, else one block per row; two passes
// Other layouts (a non-last axis, a strided last axis):
//   outer * inner >= 512 * SMs  strided_thread_per_slice
//   fewer slices                strided_tile (bx x by threads per group of slices)
// Rows off 16-byte boundaries need no choice of their own: every row kernel
// takes them (common.cuh, RowIO).
#include <cstdint>

#include "runtime/gpu/gpu_runtime.h"
#include "ops/softmax/nvidia/ladder.cuh"
#include "ops/softmax/nvidia/rows_cluster.cuh"
#include "ops/softmax/nvidia/rows_registers.cuh"
#include "ops/softmax/nvidia/rows_stream.cuh"
#include "ops/softmax/nvidia/strided.cuh"
#include "ops/softmax/softmax_backends.h"

namespace oprt::softmax::OPRT_GPU_BACKEND_NS {
namespace {

using namespace oprt::softmax::gpu_kernels;
using gpu::ceil_div;
using gpu::clamp64;
using gpu::next_pow2;

constexpr const char *kOp = "oprt_execute_softmax";
constexpr const char *kPlanOp = "oprt_create_softmax_descriptor";

// AxisPlan::kernel; launch[] holds, per kernel:
//   kRowsRegisters: [0] threads per row, [1] vectors per thread
//   kRowsCluster, kRowsStream: [0] blocks per row (cluster size), [1] vectors per block
//   kStridedTile: [0] bx, [1] by
enum Kernel : int32_t {
    kRowsRegisters = 1,
    kRowsCluster = 2,
    kRowsStream = 3,
    kStridedThread = 4,
    kStridedTile = 5,
    kThreePass = 6,  // ladder steps (ladder.cuh)
    kWarpFused = 7,
    kOnline = 8,
};

// The thresholds of the table above.
constexpr int64_t kMaxGroupVecs = 16;         // rows on groups of lanes, one vector a lane
constexpr int64_t kValuesPerThread = 32;      // K * P
constexpr int64_t kMinRowThreads = 64;        // a block per row: a multiple of 32- and 64-lane warps
constexpr int64_t kSlicesPerSmForThreads = 512;

int64_t elems_per_vector(oprt_dtype_t dtype) { return dtype == OPRT_DTYPE_F32 ? 4 : 8; }

template <typename T>
const void *address(void (*kernel)(const T *, T *, ClusterRows)) {
    return reinterpret_cast<const void *>(kernel);
}

// The cluster (kStream false) or streaming kernel of the dtype, for occupancy queries.
const void *cluster_kernel(oprt_dtype_t dtype, bool stream) {
    switch (dtype) {
    case OPRT_DTYPE_F32:
        return stream ? address(&softmax_rows_stream_kernel<float>)
                      : address(&softmax_rows_cluster_kernel<float, kClusterVecs<float>>);
    case OPRT_DTYPE_F16:
        return stream ? address(&softmax_rows_stream_kernel<dev::half_t>)
                      : address(&softmax_rows_cluster_kernel<dev::half_t, kClusterVecs<dev::half_t>>);
    default:
        return stream ? address(&softmax_rows_stream_kernel<dev::bf16_t>)
                      : address(&softmax_rows_cluster_kernel<dev::bf16_t, kClusterVecs<dev::bf16_t>>);
    }
}

// Whether clusters of C blocks of `kernel` run on the current device: a
// device and a build that launch clusters, code built for sm_90, and room for
// at least one such cluster (16: the non-portable size, not on every GPU).
oprt_status_t cluster_fits(const gpu::DeviceInfo &info, const void *kernel, int64_t C, bool *fits) {
    *fits = false;
    if (!OPRT_DEVICE_HAS_CLUSTER_LAUNCH || info.cc_major < 9 || !gpu::clusters_allowed()) return OPRT_SUCCESS;
    int ptx = 0;
    oprt_status_t s = gpu::kernel_ptx_version(kPlanOp, kernel, &ptx);
    if (s != OPRT_SUCCESS || ptx < 90) return s;
    int active = 0;
    s = gpu::max_active_clusters(kPlanOp, kernel, int(C), kClusterThreads, 0, &active);
    *fits = active > 0;
    return s;
}

// Dense rows: see the table at the top.
oprt_status_t plan_rows(AxisPlan &p, const gpu::DeviceInfo &info) {
    const int64_t P = elems_per_vector(p.dtype), W = dev::kWarpSize;
    const int64_t V = row_vectors(p.axis_len, P);
    const int64_t kmax = kValuesPerThread / P;
    p.kernel = kRowsRegisters;
    if (V <= kMaxGroupVecs) {
        p.kernel_name = "rows_registers_warp";
        p.launch[0] = next_pow2(V);
        p.launch[1] = 1;
        return OPRT_SUCCESS;
    }
    if (V <= W * kmax) {
        p.kernel_name = "rows_registers_warp";
        p.launch[0] = W;
        p.launch[1] = ceil_div(V, W);
        return OPRT_SUCCESS;
    }
    if (V <= kMaxRowThreads * kmax) {
        p.kernel_name = "rows_registers_block";
        p.launch[0] = clamp64(next_pow2(ceil_div(V, kmax)), kMinRowThreads, kMaxRowThreads);
        p.launch[1] = ceil_div(V, p.launch[0]);
        return OPRT_SUCCESS;
    }
    const int64_t C = next_pow2(ceil_div(V, kClusterThreads * kmax));
    bool fits = false;
    oprt_status_t s;
    if (C <= kMaxClusterBlocks && (s = cluster_fits(info, cluster_kernel(p.dtype, false), C, &fits)) != OPRT_SUCCESS)
        return s;
    if (fits) {
        p.kernel = kRowsCluster;
        p.kernel_name = "rows_cluster";
    } else {
        p.kernel = kRowsStream;
        p.kernel_name = "rows_stream";
        p.launch[0] = 1;
        for (int64_t c : {int64_t(kMaxClusterBlocks), int64_t(8)}) {
            if ((s = cluster_fits(info, cluster_kernel(p.dtype, true), c, &fits)) != OPRT_SUCCESS) return s;
            if (fits) {
                p.launch[0] = c;
                break;
            }
        }
    }
    if (p.kernel == kRowsCluster) p.launch[0] = C;
    p.launch[1] = ceil_div(V, p.launch[0]);
    return OPRT_SUCCESS;
}

oprt_status_t plan_strided(AxisPlan &p, const gpu::DeviceInfo &info) {
    if (p.outer * p.inner >= kSlicesPerSmForThreads * info.sm_count) {
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

template <typename T>
oprt_status_t run_typed(const AxisPlan &p, const ExecArgs &args, dev::stream_t stream) {
    const T *in = static_cast<const T *>(args.in0);
    T *out = static_cast<T *>(args.out);
    const gpu::OuterIndex ix = gpu::outer_index(p);
    switch (p.kernel) {
    case kRowsRegisters: {
        RegisterRows q;
        q.rows = p.outer;
        q.L = p.axis_len;
        q.threads_per_row = int32_t(p.launch[0]);
        q.vecs = int32_t(p.launch[1]);
        q.ix = ix;
        launch_rows_registers(q, in, out, stream);
        return OPRT_SUCCESS;
    }
    case kRowsCluster:
    case kRowsStream: {
        ClusterRows q;
        q.rows = p.outer;
        q.L = p.axis_len;
        q.blocks_per_row = int32_t(p.launch[0]);
        q.slice_vecs = p.launch[1];
        q.ix = ix;
        return p.kernel == kRowsCluster ? launch_rows_cluster(q, in, out, stream, kOp)
                                        : launch_rows_stream(q, in, out, stream, kOp);
    }
    case kStridedThread:
    case kStridedTile: {
        SliceParams q;
        q.outer = p.outer;
        q.inner = p.inner;
        q.L = p.axis_len;
        q.in_stride = p.in_axis_stride;
        q.out_stride = p.out_axis_stride;
        q.ix = ix;
        if (p.kernel == kStridedTile) {
            q.bx = int32_t(p.launch[0]);
            q.by = int32_t(p.launch[1]);
            q.tiles = ceil_div(p.inner, q.bx);
        }
        launch_strided(q, p.kernel == kStridedTile, in, out, stream);
        return OPRT_SUCCESS;
    }
    case kThreePass:
    case kWarpFused:
    case kOnline: {
        SliceSoftmax q;
        q.outer = p.outer;
        q.inner = p.inner;
        q.L = p.axis_len;
        q.S_in = p.in_axis_stride;
        q.S_out = p.out_axis_stride;
        q.ix = ix;
        launch_ladder_step(p.kernel == kThreePass ? 1 : p.kernel == kWarpFused ? 2 : 3, q, args.workspace, in, out,
                           stream);
        return OPRT_SUCCESS;
    }
    default: return OPRT_SUCCESS;
    }
}

}  // namespace

oprt_status_t plan(AxisPlan &p) {
    p.workspace_bytes = 0;
    if (p.in_numel == 0) {  // nothing will run; any valid choice
        p.kernel = kRowsRegisters;
        p.kernel_name = "rows_registers_warp";
        p.launch[0] = 1;
        p.launch[1] = 1;
        return OPRT_SUCCESS;
    }
    gpu::DeviceInfo info;
    const oprt_status_t s = gpu::current_device(kPlanOp, &info);
    if (s != OPRT_SUCCESS) return s;
    return p.rows_contiguous(/*check_out_axis=*/true) ? plan_rows(p, info) : plan_strided(p, info);
}

// ---- The kernel ladder (oprt_list_softmax_variants), plain to fastest -------------
namespace {

oprt_status_t plan_three_pass(AxisPlan &p) {
    p.kernel = kThreePass;
    p.kernel_name = "three_pass";
    // The max and the sum of every slice, between the passes.
    p.workspace_bytes = size_t(2 * p.outer * p.inner) * sizeof(float) + gpu::kWorkspaceAlign;
    return OPRT_SUCCESS;
}

oprt_status_t plan_warp_fused(AxisPlan &p) {
    p.kernel = kWarpFused;
    p.kernel_name = "warp_fused";
    p.workspace_bytes = 0;
    return OPRT_SUCCESS;
}

oprt_status_t plan_online(AxisPlan &p) {
    p.kernel = kOnline;
    p.kernel_name = "online";
    p.workspace_bytes = 0;
    return OPRT_SUCCESS;
}

// The last step is the plan itself: rows held on chip (registers, over a
// cluster for long rows), streamed twice beyond; the strided kernels for
// other layouts.
const Variant<AxisPlan> kLadderSteps[] = {
    {"three_pass", &plan_three_pass},
    {"warp_fused", &plan_warp_fused},
    {"online", &plan_online},
    {"on_chip", &plan},
};

}  // namespace

const VariantList<AxisPlan> ladder = {kLadderSteps, 4};

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
    return gpu::check_launch(kOp, p.kernel_name);
}

}  // namespace oprt::softmax::OPRT_GPU_BACKEND_NS
