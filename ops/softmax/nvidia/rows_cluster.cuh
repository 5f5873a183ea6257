// Softmax of long dense rows split over a thread-block cluster (sm_90), each
// block holding its slice of the row in registers: rows of 16385 to 262144
// elements.
//
// Idea: the row is read once and written once, as in rows_registers.cuh, but
// it is longer than one block's registers: C blocks of one cluster (2-16,
// scheduled together on one GPC) each take a slice of slice_vecs vectors.
// Each block reduces its slice to (its max m, the sum s of exp(x - m)),
// keeping the exps in registers; the blocks swap these pairs through
// distributed shared memory (each reads the others' slots after one cluster
// barrier), join them in the same order, and scale their exps by
// exp(m - row max) / row sum. One cluster barrier per row.
// Where clusters cannot be launched (another toolchain, older code) a
// "cluster" of one block runs the same kernel: rows of up to one slice.
#pragma once

#include "ops/softmax/nvidia/common.cuh"
#include "runtime/internal/error.h"

namespace oprt::softmax::gpu_kernels {

constexpr int kClusterThreads = 512;
constexpr int kMaxClusterBlocks = 16;  // above 8: the non-portable size, where the device allows it

// Launch geometry of the cluster kernel and of the streaming one (rows_stream.cuh).
struct ClusterRows {
    int64_t rows = 0;
    int64_t L = 0;
    int32_t blocks_per_row = 1;  // C, the cluster size
    int64_t slice_vecs = 0;      // vectors of the row per block
    OuterIndex ix;
};

// The row's (max, sum) from every block's pair: this block's `mine` is put
// in its slot, and after a cluster barrier warp 0 reads the C slots (lane c
// that of block c) and joins them with a butterfly: the same order, so the
// same bits, in every block. Slots alternate by row parity: a block writes a
// slot again two rows later, after a cluster barrier that every reader of
// its previous value had to reach first.
__device__ __forceinline__ F32Pair cluster_join(F32Pair mine, F32Pair (&slots)[2], int parity,
                                                F32Pair &row_stats) {
    const unsigned C = dev::cluster_size();
    if (C == 1) return mine;  // a block per row (a plain launch): nothing to swap
    if (threadIdx.x == 0) slots[parity] = mine;
    dev::cluster_sync();  // release / acquire: every slot written before any is read
    dev::syncwarp();      // the cluster barrier lets threads pass one by one: reconverge
    if (threadIdx.x < unsigned(dev::kWarpSize)) {
        F32Pair v = threadIdx.x < C ? *dev::cluster_map(&slots[parity], threadIdx.x) : empty_pair();
        v = gpu::warp_allreduce(v, CombineOp{});
        if (threadIdx.x == 0) row_stats = v;
    }
    __syncthreads();
    return row_stats;  // rewritten only after the next row's block reductions: every thread has read it
}

template <typename T, int K>
__global__ void __launch_bounds__(kClusterThreads, 2048 / 2 / kClusterThreads)
softmax_rows_cluster_kernel(const T *__restrict__ in, T *__restrict__ out, ClusterRows p) {
    gpu::enter_overlapped_kernel();
    constexpr int P = gpu::vector_width<T>();
    __shared__ gpu::BlockReduceScratch<float> scratch;
    __shared__ F32Pair slots[2];
    __shared__ F32Pair row_stats;
    const unsigned C = dev::cluster_size();
    const int32_t tid = int32_t(threadIdx.x), nt = int32_t(blockDim.x);
    // Rows of at most 16 slices of K * kClusterThreads vectors: 32-bit indices.
    const int32_t slice = int32_t(p.slice_vecs);
    const int32_t q0 = int32_t(dev::cluster_rank()) * slice;  // this block's first vector
    int parity = 0;
    // The blocks of a cluster take the same rows, so all reach every cluster barrier.
    for (int64_t row = blockIdx.x / C; row < p.rows; row += gridDim.x / C, parity ^= 1) {
        int64_t io, oo;
        p.ix.offsets(row, &io, &oo);
        const RowIO<T, int32_t> r(in + io, out + oo, int32_t(p.L), slice * int32_t(C));
        float x[K][P];
#pragma unroll
        for (int j = 0; j < K; ++j) {
            const int32_t q = j * nt + tid;  // vectors past the slice are not this block's: padding
            if (q < slice) r.load(q0 + q, x[j]);
            else
#pragma unroll
                for (int e = 0; e < P; ++e) x[j][e] = neg_inf();
        }
        float m = neg_inf();
#pragma unroll
        for (int j = 0; j < K; ++j)
#pragma unroll
            for (int e = 0; e < P; ++e) m = fmaxf(m, x[j][e]);
        m = gpu::block_allreduce(m, gpu::MaxOp{}, neg_inf(), scratch);
        float s = 0.0f;  // a slice of only -inf keeps (-inf, 0), which adds nothing to the row
#pragma unroll
        for (int j = 0; j < K; ++j)
#pragma unroll
            for (int e = 0; e < P; ++e) {
                x[j][e] = x[j][e] != neg_inf() ? exp_out<T>(x[j][e], m) : 0.0f;
                s += x[j][e];
            }
        s = gpu::block_allreduce(s, gpu::SumOp{}, 0.0f, scratch);
        const F32Pair row_ms = cluster_join(F32Pair{m, s}, slots, parity, row_stats);
        // A row of all -inf: exp(-inf - -inf) / 0 is NaN, and so is every output.
        const float scale = exp_f32(m - row_ms.a) / row_ms.b;
#pragma unroll
        for (int j = 0; j < K; ++j) {
            const int32_t q = j * nt + tid;
            if (q < slice) r.store(q0 + q, x[j], scale);
        }
    }
    if (C > 1) dev::cluster_sync();  // no block leaves while another may still read its slots
}

#if !OPRT_DEVICE_HAS_CLUSTER_LAUNCH
// This toolchain cannot launch clusters; plans choose clusters of one block here.
inline oprt_status_t clusters_unavailable(const char *op) {
    return fail(OPRT_ERR_RUNTIME, "%s: a cluster of several blocks was planned but this build cannot launch clusters",
                op);
}
#endif

// kernel<<<rows * C blocks in clusters of C>>>(in, out, p), overlapped with
// the kernel before it where allowed; a plain launch for C == 1.
template <typename T>
oprt_status_t launch_clusters(void (*kernel)(const T *, T *, ClusterRows), const ClusterRows &p, const T *in,
                              T *out, dev::stream_t stream, const char *op) {
    const int64_t C = p.blocks_per_row;
    const unsigned blocks = unsigned(gpu::clamp64(p.rows, 1, gpu::kMaxGridBlocks / C) * C);
    if (C == 1) {
        gpu::launch_overlapped(kernel, blocks, kClusterThreads, 0, stream, in, out, p);
        return OPRT_SUCCESS;
    }
#if OPRT_DEVICE_HAS_CLUSTER_LAUNCH
    oprt_status_t s;
    if (C > 8 && (s = gpu::allow_large_clusters(op, reinterpret_cast<const void *>(kernel))) != OPRT_SUCCESS)
        return s;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(blocks, 1, 1);
    config.blockDim = dim3(unsigned(kClusterThreads), 1, 1);
    config.stream = stream;
    cudaLaunchAttribute attr[2];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = unsigned(C);
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    config.attrs = attr;
    config.numAttrs = gpu::add_overlapped_attribute(attr, 1);
    const cudaError_t e = cudaLaunchKernelEx(&config, kernel, in, out, p);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return gpu::runtime_error(op, "cudaLaunchKernelEx(softmax rows over a cluster)", int(e));
    }
    return OPRT_SUCCESS;
#else
    (void)in, (void)out, (void)stream;
    return clusters_unavailable(op);
#endif
}

template <typename T>
constexpr int kClusterVecs = 32 / gpu::vector_width<T>();  // 32 values a thread

template <typename T>
oprt_status_t launch_rows_cluster(const ClusterRows &p, const T *in, T *out, dev::stream_t stream, const char *op) {
    return launch_clusters(&softmax_rows_cluster_kernel<T, kClusterVecs<T>>, p, in, out, stream, op);
}

}  // namespace oprt::softmax::gpu_kernels
