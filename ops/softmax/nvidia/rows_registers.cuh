// softmax of dense rows held in registers (up to 16384 f32 / 8192 16-bit
// columns in the plan), loaded straight from global memory: one kernel whose
// shape (threads per row, vectors per thread) is a pair of template
// parameters, and its launcher. Shared by every GPU backend through
// device_traits.cuh.
//
// Idea: a row of up to kThreads * kVecs 16-byte vectors is read once into the
// registers of a group of kThreads threads (thread t holds vectors t,
// t + kThreads, ...: each load instruction of the group is coalesced). Every
// load is issued before any value is used, so a thread has kVecs requests in
// flight. The max and the sum are shuffle butterflies within the group; a
// group wider than a warp adds one shared-memory exchange between its warps
// (one barrier). One exp per element, one reciprocal per row, then the stores.
// Groups within a warp share a block of kRegisterRowsMinBlock threads, one row
// per group; groups of whole warps are a block each (their warps meet in
// shared memory, one row per block).
// Few threads per row and many vectors each: fewer, larger rows per SM;
// many threads per row and one vector each: more warps, less latency per row.
// Two more template parameters trade registers for resident warps, whose
// loads in flight set the bandwidth: kMinBlocks asks ptxas for that many
// blocks per SM (a register cap; 0 asks nothing, which is not the same as 1:
// an explicit 1 lets ptxas take more registers, f32 512 x 2 37 against 32,
// three blocks an SM instead of four, and ran 5-8% slower on the H200,
// 2026-12-02), and kStaged copies the loads into shared
// memory (cp.async) so no registers wait for them. 16-bit rows of 513-1024
// take both: a warp a row, 32 values a lane, 8 blocks of 128 threads an SM
// (at most 64 registers).
// The plan (softmax_cuda.cu, kRegisterRows) picks the shape per row length.
#pragma once

#include <cstdint>

#include "ops/softmax/nvidia/kernel.cuh"

namespace oprt::softmax::gpu_kernels {

// Threads of a block of groups within a warp.
constexpr int kRegisterRowsMinBlock = 128;

template <int kThreads>
constexpr int register_rows_block() {
    return kThreads <= dev::kWarpSize ? kRegisterRowsMinBlock : kThreads;
}

// v joined over the kThreads threads of a row (op: max or sum). Within a warp:
// shuffles. Wider (one row per block): each warp's value in `slots`, one
// barrier, then every thread joins the slots in the same order, so all get the
// same bits. Each call takes its own slots (one use each: no second barrier).
template <int kThreads, typename Op>
__device__ __forceinline__ float row_allreduce(float v, Op op, float *slots) {
    if constexpr (kThreads <= dev::kWarpSize) {
        (void)slots;
        return gpu::group_allreduce<kThreads>(v, op);
    } else {
        constexpr int kWarps = kThreads / dev::kWarpSize;
        v = gpu::warp_allreduce(v, op);
        if (threadIdx.x % dev::kWarpSize == 0) slots[threadIdx.x / dev::kWarpSize] = v;
        __syncthreads();
        float r = slots[0];
#pragma unroll
        for (int w = 1; w < kWarps; ++w) r = op(r, slots[w]);
        return r;
    }
}

// One thread's kVecs vectors of a row through shared memory: thread t of a
// group of kThreads takes vectors t, t + kThreads, ... (coalesced). Whole
// vectors below vec_end are copied asynchronously (dev::copy_async_16), the
// rest element by element below end; past end, -inf. Each thread reads back
// only its own slots (slots[j * blockDim.x + threadIdx.x]): no barrier.
template <typename T, int kThreads, int kVecs>
__device__ __forceinline__ void stage_row_share(uint4 *slots, const T *x, int vec_end, int end, int t,
                                                float (&f)[kVecs * gpu::vector_width<T>()]) {
    constexpr int P = gpu::vector_width<T>();
    static_assert(sizeof(Vec<T, P>) == 16, "16-byte vectors");
    uint4 *mine = slots + threadIdx.x;
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
        const int e0 = (j * kThreads + t) * P;
        if (e0 + P <= vec_end) dev::copy_async_16(mine + j * blockDim.x, x + e0);
    }
    dev::wait_copies();
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
        const int e0 = (j * kThreads + t) * P;
        Vec<T, P> v;
        if (e0 + P <= vec_end) {
            const uint4 bits = mine[j * blockDim.x];
            memcpy(&v, &bits, sizeof v);
        } else {
#pragma unroll
            for (int e = 0; e < P; ++e) v.v[e] = e0 + e < end ? x[e0 + e] : dev::from_f32<T>(neg_inf());
        }
        float w[P];
        gpu::widen(v, w);
#pragma unroll
        for (int e = 0; e < P; ++e) f[j * P + e] = w[e];
    }
}

// Rows of up to kThreads * kVecs * P elements (P = 16 bytes / sizeof(T)).
// kGeneral false: row r at r * L in and out, every row on a 16-byte boundary
// and L whole vectors (the launcher checks), so each vector is wholly in the
// row or past its end, and a row's offset is one multiply. kGeneral true: any
// outer layout (OuterIndex), rows at any offset (row_head in kernel.cuh:
// thread t < head holds element t, the vectors start at the boundary), and
// element loads where a row's vectors cannot be used. Keeping the general
// form out of the common one saves 8-11 registers a thread (ptxas, sm_90:
// bf16 128 x 1: 29 against 40).
template <typename T, int kThreads, int kVecs, int kMinBlocks, bool kStaged, bool kGeneral>
__global__ void __launch_bounds__(register_rows_block<kThreads>(), kMinBlocks)
softmax_rows_registers_kernel(const T *__restrict__ in, T *__restrict__ out, int64_t row0, int64_t rows, int64_t L,
                              OuterIndex ix) {
    static_assert(kThreads <= dev::kWarpSize ? (kThreads & (kThreads - 1)) == 0 : kThreads % dev::kWarpSize == 0,
                  "a group is a power of two within a warp, or whole warps");
    gpu::enter_overlapped_kernel();
    constexpr int P = gpu::vector_width<T>();
    constexpr int E = kVecs * P;
    constexpr int kRowsPerBlock = register_rows_block<kThreads>() / kThreads;
    constexpr int kSlots = kThreads > dev::kWarpSize ? kThreads / dev::kWarpSize : 1;
    __shared__ float max_slots[kSlots], sum_slots[kSlots];
    __shared__ uint4 stage[kStaged ? kVecs * register_rows_block<kThreads>() : 1];
    const int t = int(threadIdx.x) % kThreads;
    // One row a group, no loop (a loop's state costs registers): rows
    // row0 + blockIdx.x * kRowsPerBlock, ... Groups past the last row still
    // join their warp's shuffles, then leave.
    {
        const int64_t row = row0 + int64_t(blockIdx.x) * kRowsPerBlock + int(threadIdx.x) / kThreads;
        const bool valid = row < rows;
        int64_t io = row * L, oo = row * L;
        RowHead rh{0, true};
        if constexpr (kGeneral) {
            if (valid) ix.offsets(row, &io, &oo);
            rh = valid ? row_head<true>(in + io, out + oo, L, kThreads) : RowHead{0, false};
        }
        float hx = kGeneral && t < rh.head ? dev::to_f32(in[io + t]) : neg_inf();
        const T *x_row = in + io + rh.head;
        T *y_row = out + oo + rh.head;
        // The row fits the group (the launcher checks), so int indexes do.
        const int n = valid ? int(L - rh.head) : 0;
        float x[E];
        // All loads first. Past the row's end: -inf, which moves no max and adds 0.
        if constexpr (kStaged) {
            stage_row_share<T, kThreads, kVecs>(stage, x_row, rh.vec ? n : 0, kGeneral ? n : 0, t, x);
        } else {
#pragma unroll
            for (int j = 0; j < kVecs; ++j) {
                const int e0 = (j * kThreads + t) * P;
                if (rh.vec && e0 + P <= n) {
                    const Vec<T, P> v = gpu::load_vec<P>(x_row + e0);
                    float w[P];
                    gpu::widen(v, w);
#pragma unroll
                    for (int e = 0; e < P; ++e) x[j * P + e] = w[e];
                } else {
#pragma unroll
                    for (int e = 0; e < P; ++e)
                        x[j * P + e] = kGeneral && e0 + e < n ? dev::to_f32(x_row[e0 + e]) : neg_inf();
                }
            }
        }
        // NaN: fmaxf skips it, its exp makes the sum NaN, so the row is NaN.
        // A row of all -inf keeps m = -inf: exp(-inf - -inf) = NaN, as PyTorch.
        float m = hx;
#pragma unroll
        for (int c = 0; c < E; ++c) m = fmaxf(m, x[c]);
        m = row_allreduce<kThreads>(m, gpu::MaxOp{}, max_slots);
        float s = 0.0f;
        if constexpr (kGeneral) {
            hx = exp_out<T>(hx - m);
            s = hx;
        }
#pragma unroll
        for (int c = 0; c < E; ++c) {
            x[c] = exp_out<T>(x[c] - m);
            s += x[c];
        }
        s = row_allreduce<kThreads>(s, gpu::SumOp{}, sum_slots);
        const float inv = 1.0f / s;
        if (!valid) return;
        if (kGeneral && t < rh.head) out[oo + t] = dev::from_f32<T>(hx * inv);
#pragma unroll
        for (int j = 0; j < kVecs; ++j) {
            const int e0 = (j * kThreads + t) * P;
            if (rh.vec && e0 + P <= n) {
                Vec<T, P> v;
#pragma unroll
                for (int e = 0; e < P; ++e) v.v[e] = dev::from_f32<T>(x[j * P + e] * inv);
                gpu::store_out_vec<P>(y_row + e0, v);
            } else if constexpr (kGeneral) {
#pragma unroll
                for (int e = 0; e < P; ++e)
                    if (e0 + e < n) y_row[e0 + e] = dev::from_f32<T>(x[j * P + e] * inv);
            }
        }
    }
}

// Elements one row of softmax_rows_registers_kernel<T, kThreads, kVecs, ...> holds.
template <typename T>
constexpr int64_t register_rows_capacity(int threads, int vecs) {
    return int64_t(threads) * vecs * gpu::vector_width<T>();
}

// Launches the kernel over `rows` rows of L <= register_rows_capacity columns.
// aligned: every row of in and out starts on a 16-byte boundary (data pointers
// and outer strides); with one outer dimension of stride L in and out and L
// whole vectors, the common form runs, else the general one.
template <typename T, int kThreads, int kVecs, int kMinBlocks = 0, bool kStaged = false>
void launch_register_rows(const T *in, T *out, int64_t rows, int64_t L, bool aligned, const OuterIndex &ix,
                          dev::stream_t stream) {
    constexpr int kBlock = register_rows_block<kThreads>();
    constexpr int64_t kRowsPerBlock = kBlock / kThreads;
    const bool dense = ix.ndim <= 1 && ix.in_row_stride < 0 &&
                       (rows <= 1 || (ix.in_strides[0] == L && ix.out_strides[0] == L));
    const bool common = aligned && dense && L % gpu::vector_width<T>() == 0;
    auto *kernel = common ? &softmax_rows_registers_kernel<T, kThreads, kVecs, kMinBlocks, kStaged, false>
                          : &softmax_rows_registers_kernel<T, kThreads, kVecs, kMinBlocks, kStaged, true>;
    // A block per kRowsPerBlock rows; more rows than one grid takes: several launches.
    const int64_t step = gpu::kMaxGridBlocks * kRowsPerBlock;
    for (int64_t row0 = 0; row0 < rows || row0 == 0; row0 += step) {
        const int64_t blocks = gpu::clamp64(gpu::ceil_div(rows - row0, kRowsPerBlock), 1, gpu::kMaxGridBlocks);
        gpu::launch_overlapped(kernel, unsigned(blocks), unsigned(kBlock), 0, stream, in, out, row0, rows, L, ix);
    }
}

}  // namespace oprt::softmax::gpu_kernels
