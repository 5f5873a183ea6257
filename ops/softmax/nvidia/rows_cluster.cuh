// softmax of long dense rows over a thread-block cluster (sm_90), held in
// registers: one kernel whose block shape (threads, 16-byte vectors a
// thread) is a pair of template parameters, and its launcher.
//
// A row too long for one block's registers is cut into C slices of at most
// kThreads * kVecs vectors, one per block of a cluster of C blocks. Each
// block loads its slice once from global memory (thread t holds vectors t,
// t + kThreads, ...; every load issued before any value is used), takes the
// slice's max m and its sum s of exp(x - m), and pushes the pair (m, s) into
// the shared memory of every block of the cluster (st.async through
// distributed shared memory, each store counted on the receiving block's
// mbarrier). Each block waits on its own barrier for the C pairs, reads them
// one a lane and joins them with shuffle butterflies (the same bits in every
// block): the row's max M, then its sum S = sum of s * exp(m - M). Each block
// writes exp(x - M) / S for its slice. HBM is read once and written once: no
// workspace, one launch, and no block waits on another through global memory.
// The one cluster barrier is split: its arrival at the start (after the
// barrier's init), its wait just before the push, so that it costs nothing by
// then; no block waits for the others at the end, since none exits before
// every pair it is sent has arrived. Read with cluster barriers around the
// pairs instead (a full barrier before the reads, another before exit), the
// kernel ran 1-16% slower (H100, 2026-12-06), and the plan had to keep it to
// 8 waves of blocks. The idea is QuACK's softmax for long rows, written in CUDA.
//
// Where a thread holds at most 32 values, their exp(x - m) is kept as 32
// floats for the store (exp taken once). More 16-bit values than that stay as
// loaded, 16 bits each (half the registers of floats), and exp(x - max) is
// taken twice, for the sum and for the store.
#pragma once

#include <cstdint>

#include "ops/softmax/nvidia/kernel.cuh"
#include "ops/softmax/nvidia/rows_registers.cuh"
#include "runtime/gpu/gpu_bulk_copy.cuh"

namespace oprt::softmax::gpu_kernels {

// Blocks a cluster at most: the pairs a block receives (kClusterRows' entries
// take up to this many). 9-16 are the non-portable cluster sizes, which the
// launch opts the kernel into.
constexpr int kMaxClusterBlocks = 16;

// An empty asm that claims to change v's 32-bit words: no instruction, but
// the compiler cannot reuse what it derived from v before (the widened 16-bit
// values), so each pass widens v again instead of keeping 64 floats live
// beside the 16-bit ones (128 x 8 bf16 at 64 registers spilled 280 bytes).
template <typename V>
__device__ __forceinline__ void rewiden_later(V &v) {
    static_assert(sizeof(V) % 4 == 0, "32-bit words");
    uint32_t w[sizeof(V) / 4];
    memcpy(w, &v, sizeof v);
#pragma unroll
    for (unsigned i = 0; i < sizeof(V) / 4; ++i) asm volatile("" : "+r"(w[i]));
    memcpy(&v, w, sizeof v);
}

// Row row0 + blockIdx.x / C (in and out at ix's offsets), its slice
// blockIdx.x % C of `slice` elements (a multiple of P, at most kThreads *
// kVecs * P). Rows start on 16-byte boundaries in and out and L is whole
// vectors (the launcher checks). The grid is a whole number of clusters of C
// blocks, so every block of a cluster has the same row.
template <typename T, int kThreads, int kVecs, int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
softmax_rows_cluster_kernel(const T *__restrict__ in, T *__restrict__ out, int64_t row0, int64_t L, int slice,
                            OuterIndex ix) {
    static_assert(kThreads % dev::kWarpSize == 0, "whole warps");
    gpu::enter_overlapped_kernel();
    constexpr int P = gpu::vector_width<T>();
    constexpr bool kKeepExp = kVecs * P <= 32;
    constexpr int kSlots = kThreads / dev::kWarpSize;
    __shared__ float max_slots[kSlots], sum_slots[kSlots];
    __shared__ F32Pair pairs[kMaxClusterBlocks];  // block r's (max, sum) at r, pushed by block r
    __shared__ uint64_t pairs_in;  // counts the bytes of pairs that arrived
    const unsigned C = dev::cluster_size();
    if (threadIdx.x == 0) gpu::bulk::init(&pairs_in);
    dev::cluster_arrive_relaxed();  // waited for before the push: every block's barrier is initialized
    const int64_t start = int64_t(dev::cluster_rank()) * slice;
    const int n = int(L - start < slice ? L - start : slice);  // elements of this block's slice
    int64_t io, oo;
    ix.offsets(row0 + blockIdx.x / C, &io, &oo);
    const T *x = in + io + start;
    const int t = int(threadIdx.x);

    Vec<T, P> v[kVecs];
    float ex[kKeepExp ? kVecs : 1][P];  // exp(x - m_exp), where kept
    Vec<T, P> past_end;  // -inf moves no max and adds 0
#pragma unroll
    for (int e = 0; e < P; ++e) past_end.v[e] = dev::from_f32<T>(neg_inf());
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
        const int e0 = (j * kThreads + t) * P;
        v[j] = e0 < n ? gpu::load_vec<P>(x + e0) : past_end;
    }

    // The slice's max and its sum of exp(x - max). NaN: fmaxf skips it, its
    // exp makes the sum NaN, so the row is NaN. A slice of all -inf sums to
    // 0 (its exps are taken against 0), so it adds nothing to the row.
    float m = neg_inf();
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
        float w[P];
        gpu::widen(v[j], w);
#pragma unroll
        for (int e = 0; e < P; ++e) m = fmaxf(m, w[e]);
    }
    m = row_allreduce<kThreads>(m, gpu::MaxOp{}, max_slots);
    const float m_exp = m == neg_inf() ? 0.0f : m;
    float s = 0.0f;
    if constexpr (!kKeepExp) rewiden_later(v);
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
        float w[P];
        gpu::widen(v[j], w);
#pragma unroll
        for (int e = 0; e < P; ++e) {
            const float y = exp_out(w[e] - m_exp);
            if constexpr (kKeepExp) ex[j][e] = y;
            s += y;
        }
    }
    s = row_allreduce<kThreads>(s, gpu::SumOp{}, sum_slots);

    // The row's: lane r reads block r's pair; the max over the lanes, then
    // each slice's sum rescaled to it. A row of all -inf has M = -inf and S =
    // 0, and its outputs exp(-inf - -inf) / 0 are NaN, as PyTorch's.
    dev::cluster_wait();
    if (t == 0) gpu::bulk::expect_bytes(&pairs_in, unsigned(C * sizeof(F32Pair)));
    if (unsigned(t) < C) gpu::bulk::store_pair_to_cluster(&pairs[dev::cluster_rank()], m, s, &pairs_in, unsigned(t));
    gpu::bulk::wait(&pairs_in, 0);
    const unsigned lane = threadIdx.x % dev::kWarpSize;
    const F32Pair ms = lane < C ? pairs[lane] : F32Pair{neg_inf(), 0.0f};
    const float M = gpu::warp_allreduce(ms.a, gpu::MaxOp{});
    const float S = gpu::warp_allreduce(ms.b == 0.0f ? 0.0f : ms.b * exp_f32(ms.a - M), gpu::SumOp{});
    const float inv = 1.0f / S;
    const float scale = kKeepExp ? exp_f32(m_exp - M) * inv : inv;  // ex holds exp(x - m_exp)

    T *y_row = out + oo + start;
    if constexpr (!kKeepExp) rewiden_later(v);
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
        const int e0 = (j * kThreads + t) * P;
        if (e0 < n) {
            Vec<T, P> o;
            if constexpr (kKeepExp) {
#pragma unroll
                for (int e = 0; e < P; ++e) o.v[e] = dev::from_f32<T>(ex[j][e] * scale);
            } else {
                float w[P];
                gpu::widen(v[j], w);
#pragma unroll
                for (int e = 0; e < P; ++e) o.v[e] = dev::from_f32<T>(exp_out(w[e] - M) * scale);
            }
            gpu::store_out_vec<P>(y_row + e0, o);
        }
    }
}

#if OPRT_DEVICE_HAS_CLUSTER_LAUNCH
// Launches `rows` rows of L columns (L whole vectors, every row on a 16-byte
// boundary in and out) in clusters of C blocks, each block a slice of
// ceil(L / C) elements rounded up to whole vectors, which the block holds.
template <typename T, int kThreads, int kVecs, int kMinBlocks>
oprt_status_t launch_cluster_rows(const T *in, T *out, int64_t rows, int64_t L, int C, const OuterIndex &ix,
                                  dev::stream_t stream) {
    constexpr int64_t P = gpu::vector_width<T>();
    const int64_t slice = gpu::ceil_div(gpu::ceil_div(L, C), P) * P;
    auto *kernel = &softmax_rows_cluster_kernel<T, kThreads, kVecs, kMinBlocks>;
    const int64_t step = gpu::kMaxGridBlocks / C;  // more rows than one grid takes: several launches
    for (int64_t row0 = 0; row0 < rows; row0 += step) {
        const int64_t blocks = (rows - row0 < step ? rows - row0 : step) * C;
        const oprt_status_t s =
            gpu::launch_clustered(kExecuteOp, "cudaLaunchKernelEx(softmax_rows_cluster_kernel)", kernel,
                                  unsigned(blocks), unsigned(C), unsigned(kThreads), 0, stream, in, out, row0, L,
                                  int(slice), ix);
        if (s != OPRT_SUCCESS) return s;
    }
    return OPRT_SUCCESS;
}
#endif

}  // namespace oprt::softmax::gpu_kernels
