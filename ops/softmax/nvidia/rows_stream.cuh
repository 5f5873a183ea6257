// Softmax of rows longer than a cluster's registers hold (beyond 262144
// elements), or of long rows where clusters cannot run.
//
// Idea: two passes over the block's slice of the row (the row split over a
// cluster of C blocks as in rows_cluster.cuh, or one block per row): the
// first streams the slice with 16-byte vectors, four in flight per thread,
// keeping a running (max, sum) per thread (one rescale per vector); the pairs
// are joined over the block and then over the cluster (cluster_join); the
// second pass reads the slice again and writes exp(x - max) / sum. A slice is
// re-read microseconds after its first read, while the few slices in flight
// on the GPU (one or two per SM) still sit in L2: HBM sees about one read.
#pragma once

#include "ops/softmax/nvidia/rows_cluster.cuh"

namespace oprt::softmax::gpu_kernels {

// Adds P values with one rescale: the max of the vector first, then P exps
// (against the running max: exp_out, at the output's precision).
template <typename T, int P>
__device__ __forceinline__ void online_add_vec(F32Pair &ms, const float (&x)[P]) {
    float vmax = x[0];
#pragma unroll
    for (int e = 1; e < P; ++e) vmax = fmaxf(vmax, x[e]);
    if (vmax > ms.a) {
        ms.b *= exp_f32(ms.a - vmax);
        ms.a = vmax;
    }
#pragma unroll
    for (int e = 0; e < P; ++e)
        if (x[e] != neg_inf()) ms.b += exp_out<T>(x[e], ms.a);
}

template <typename T>
__global__ void __launch_bounds__(kClusterThreads)
softmax_rows_stream_kernel(const T *__restrict__ in, T *__restrict__ out, ClusterRows p) {
    gpu::enter_overlapped_kernel();
    constexpr int P = gpu::vector_width<T>();
    constexpr int kInFlight = 4;
    __shared__ gpu::BlockReduceScratch<F32Pair> scratch;
    __shared__ F32Pair slots[2];
    __shared__ F32Pair row_stats;
    const unsigned C = dev::cluster_size();
    const int64_t tid = threadIdx.x, nt = blockDim.x;
    int parity = 0;
    for (int64_t row = blockIdx.x / C; row < p.rows; row += gridDim.x / C, parity ^= 1) {
        int64_t io, oo;
        p.ix.offsets(row, &io, &oo);
        const RowIO<T> r(in + io, out + oo, p.L, p.slice_vecs * C);
        // This block's vectors [q0, q1) of the row (none past its end).
        const int64_t q0 = int64_t(dev::cluster_rank()) * p.slice_vecs;
        const int64_t q1 = q0 + p.slice_vecs < r.vectors() ? q0 + p.slice_vecs : r.vectors();
        F32Pair ms = empty_pair();
        int64_t q = q0 + tid;
        for (; q + (kInFlight - 1) * nt < q1; q += kInFlight * nt) {
            float f[kInFlight][P];
#pragma unroll
            for (int u = 0; u < kInFlight; ++u) r.load(q + u * nt, f[u]);
#pragma unroll
            for (int u = 0; u < kInFlight; ++u) online_add_vec<T>(ms, f[u]);
        }
        for (; q < q1; q += nt) {
            float f[P];
            r.load(q, f);
            online_add_vec<T>(ms, f);
        }
        ms = gpu::block_allreduce(ms, CombineOp{}, empty_pair(), scratch);
        const F32Pair row_ms = cluster_join(ms, slots, parity, row_stats);
        const float inv = 1.0f / row_ms.b;  // a row of all -inf: max -inf, sum 0: NaN outputs
        for (q = q0 + tid; q < q1; q += nt) {
            float f[P];
            r.load(q, f);
#pragma unroll
            for (int e = 0; e < P; ++e) f[e] = exp_out<T>(f[e], row_ms.a);
            r.store(q, f, inv);
        }
    }
    if (C > 1) dev::cluster_sync();  // no block leaves while another may still read its slots
}

template <typename T>
oprt_status_t launch_rows_stream(const ClusterRows &p, const T *in, T *out, dev::stream_t stream, const char *op) {
    return launch_clusters(&softmax_rows_stream_kernel<T>, p, in, out, stream, op);
}

}  // namespace oprt::softmax::gpu_kernels
