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
// 2026-12-02), and kStages 1 copies the loads into shared memory (cp.async)
// so no registers wait for them. 16-bit rows of 513-1024 take both: a warp a
// row, 32 values a lane, 8 blocks of 128 threads an SM (at most 64 registers).
// kStages 2 or more is the persistent form: a grid of the blocks resident at
// once (the launcher's max_blocks), each group looping over rows with the
// grid's stride, its next kStages - 1 rows' copies in flight in a ring of
// kStages stages in shared memory while it reduces this one.
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
// same bits. Each call takes its own slots (one use each a row: no second barrier).
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

// Where a group's row lies: the offsets of its first element in and out, its
// head (the elements before its first 16-byte boundary, one a thread: general
// form only), the elements from there (n, 0 past the last row), whether its
// vectors can be used (vec) and whether the row exists (valid). The row fits
// the group (the launcher checks), so int indexes do.
struct RowAt {
    int64_t io, oo;
    int head, n;
    bool vec, valid;
};
template <typename T, int kThreads, bool kGeneral>
__device__ __forceinline__ RowAt row_at(const T *in, const T *out, int64_t row, int64_t rows, int64_t L,
                                        const OuterIndex &ix) {
    RowAt r{row * L, row * L, 0, 0, true, row < rows};
    if constexpr (kGeneral) {
        if (r.valid) ix.offsets(row, &r.io, &r.oo);
        const RowHead rh = r.valid ? row_head<true>(in + r.io, out + r.oo, L, kThreads) : RowHead{0, false};
        r.head = int(rh.head);
        r.vec = rh.vec;
    }
    r.n = r.valid ? int(L - r.head) : 0;
    return r;
}

// The head element thread t holds (general form), else -inf.
template <typename T, bool kGeneral>
__device__ __forceinline__ float head_value(const T *in, const RowAt &r, int t) {
    return kGeneral && t < r.head ? dev::to_f32(in[r.io + t]) : neg_inf();
}

// Thread t's kVecs vectors of row r into x, straight from global memory:
// vectors t, t + kThreads, ... of the row (each load instruction of the group
// is coalesced); past the row's end -inf, which moves no max and adds 0.
template <typename T, int kThreads, int kVecs, bool kGeneral>
__device__ __forceinline__ void load_row(const T *in, const RowAt &r, int t,
                                         float (&x)[kVecs * gpu::vector_width<T>()]) {
    constexpr int P = gpu::vector_width<T>();
    const T *x_row = in + r.io + r.head;
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
        const int e0 = (j * kThreads + t) * P;
        if (r.vec && e0 + P <= r.n) {
            const Vec<T, P> v = gpu::load_vec<P>(x_row + e0);
            float w[P];
            gpu::widen(v, w);
#pragma unroll
            for (int e = 0; e < P; ++e) x[j * P + e] = w[e];
        } else {
#pragma unroll
            for (int e = 0; e < P; ++e)
                x[j * P + e] = kGeneral && e0 + e < r.n ? dev::to_f32(x_row[e0 + e]) : neg_inf();
        }
    }
}

// The same through shared memory. copy_row starts asynchronous copies
// (dev::copy_async_16) of the row's whole vectors into a stage of kVecs *
// kBlock 16-byte slots, thread i's vector j in slot j * kBlock + i; once they
// landed, read_stage takes them back, the rest element by element from global
// memory. Each thread reads only its own slots: no barrier.
template <typename T, int kThreads, int kVecs, int kBlock>
__device__ __forceinline__ void copy_row(uint4 *stage, const T *in, const RowAt &r, int t) {
    constexpr int P = gpu::vector_width<T>();
    static_assert(sizeof(Vec<T, P>) == 16, "16-byte vectors");
    const T *x_row = in + r.io + r.head;
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
        const int e0 = (j * kThreads + t) * P;
        if (r.vec && e0 + P <= r.n) dev::copy_async_16(stage + j * kBlock + threadIdx.x, x_row + e0);
    }
}
template <typename T, int kThreads, int kVecs, int kBlock, bool kGeneral>
__device__ __forceinline__ void read_stage(const uint4 *stage, const T *in, const RowAt &r, int t,
                                           float (&x)[kVecs * gpu::vector_width<T>()]) {
    constexpr int P = gpu::vector_width<T>();
    const T *x_row = in + r.io + r.head;
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
        const int e0 = (j * kThreads + t) * P;
        Vec<T, P> v;
        if (r.vec && e0 + P <= r.n) {
            const uint4 bits = stage[j * kBlock + threadIdx.x];
            memcpy(&v, &bits, sizeof v);
        } else {
#pragma unroll
            for (int e = 0; e < P; ++e)
                v.v[e] = kGeneral && e0 + e < r.n ? x_row[e0 + e] : dev::from_f32<T>(neg_inf());
        }
        float w[P];
        gpu::widen(v, w);
#pragma unroll
        for (int e = 0; e < P; ++e) x[j * P + e] = w[e];
    }
}

// Row r's softmax from thread t's values x and hx (its head element, or
// -inf): the max and the sum over the group, one exp per element, one
// reciprocal, then the stores (none past the last row).
template <typename T, int kThreads, int kVecs, bool kGeneral>
__device__ __forceinline__ void reduce_store(float (&x)[kVecs * gpu::vector_width<T>()], float hx, T *out,
                                             const RowAt &r, int t, float *max_slots, float *sum_slots) {
    constexpr int P = gpu::vector_width<T>();
    constexpr int E = kVecs * P;
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
    if (!r.valid) return;
    T *y_row = out + r.oo + r.head;
    if (kGeneral && t < r.head) out[r.oo + t] = dev::from_f32<T>(hx * inv);
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
        const int e0 = (j * kThreads + t) * P;
        if (r.vec && e0 + P <= r.n) {
            Vec<T, P> v;
#pragma unroll
            for (int e = 0; e < P; ++e) v.v[e] = dev::from_f32<T>(x[j * P + e] * inv);
            gpu::store_out_vec<P>(y_row + e0, v);
        } else if constexpr (kGeneral) {
#pragma unroll
            for (int e = 0; e < P; ++e)
                if (e0 + e < r.n) y_row[e0 + e] = dev::from_f32<T>(x[j * P + e] * inv);
        }
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
// kStages: 0 loads into registers, 1 copies the row into shared memory first,
// 2 or more the persistent form (see the top of this file).
template <typename T, int kThreads, int kVecs, int kMinBlocks, int kStages, bool kGeneral>
__global__ void __launch_bounds__(register_rows_block<kThreads>(), kMinBlocks)
softmax_rows_registers_kernel(const T *__restrict__ in, T *__restrict__ out, int64_t row0, int64_t rows, int64_t L,
                              OuterIndex ix) {
    static_assert(kThreads <= dev::kWarpSize ? (kThreads & (kThreads - 1)) == 0 : kThreads % dev::kWarpSize == 0,
                  "a group is a power of two within a warp, or whole warps");
    gpu::enter_overlapped_kernel();
    constexpr int E = kVecs * gpu::vector_width<T>();
    constexpr int kBlock = register_rows_block<kThreads>();
    constexpr int kRowsPerBlock = kBlock / kThreads;
    constexpr int kSlots = kThreads > dev::kWarpSize ? kThreads / dev::kWarpSize : 1;
    constexpr int kStage = kVecs * kBlock;  // 16-byte slots of one row's stage
    static_assert(int64_t(kStages) * kStage * 16 <= 47 * 1024, "the stages fit static shared memory");
    __shared__ float max_slots[kSlots], sum_slots[kSlots];
    __shared__ uint4 stage[kStages > 0 ? kStages * kStage : 1];
    const int t = int(threadIdx.x) % kThreads;
    const int g = int(threadIdx.x) / kThreads;
    const int64_t block_row = row0 + int64_t(blockIdx.x) * kRowsPerBlock;
    float x[E];
    if constexpr (kStages <= 1) {
        // One row a group, no loop (a loop's state costs registers). Groups
        // past the last row still join their warp's shuffles, then leave.
        const RowAt r = row_at<T, kThreads, kGeneral>(in, out, block_row + g, rows, L, ix);
        const float hx = head_value<T, kGeneral>(in, r, t);
        if constexpr (kStages == 1) {  // all copies first, as the loads
            copy_row<T, kThreads, kVecs, kBlock>(stage, in, r, t);
            dev::wait_copies();
            read_stage<T, kThreads, kVecs, kBlock, kGeneral>(stage, in, r, t, x);
        } else {
            load_row<T, kThreads, kVecs, kGeneral>(in, r, t, x);
        }
        reduce_store<T, kThreads, kVecs, kGeneral>(x, hx, out, r, t, max_slots, sum_slots);
    } else {
        // Persistent: the block takes rows block_row, block_row + stride, ...
        // (stride: the grid's rows), a ring of kStages stages holding the next
        // kStages - 1 rows' copies, one commit group a row (empty past the
        // last row), while it reduces this one: waiting for all but the newest
        // kStages - 1 groups leaves this row's landed. Every group of a block
        // runs the same iterations (groups within a warp share its shuffles, a
        // block of one group its barriers); a thread writes max_slots (sum_slots)
        // for the next row only after all passed this row's sum barrier (the
        // next row's max barrier), so after all read them: no more barriers.
        // Rows past the last copy nothing: none is in flight at exit.
        const int64_t stride = int64_t(gridDim.x) * kRowsPerBlock;
#pragma unroll
        for (int k = 0; k < kStages - 1; ++k) {
            copy_row<T, kThreads, kVecs, kBlock>(
                stage + k * kStage, in, row_at<T, kThreads, kGeneral>(in, out, block_row + k * stride + g, rows, L, ix),
                t);
            dev::commit_copies();
        }
        int s = 0;  // this row's stage
        for (int64_t b = block_row; b < rows; b += stride) {
            const int ahead = s == 0 ? kStages - 1 : s - 1;  // the stage read last
            copy_row<T, kThreads, kVecs, kBlock>(
                stage + ahead * kStage, in,
                row_at<T, kThreads, kGeneral>(in, out, b + (kStages - 1) * stride + g, rows, L, ix), t);
            dev::commit_copies();
            dev::wait_copies_but_newest<kStages - 1>();
            const RowAt r = row_at<T, kThreads, kGeneral>(in, out, b + g, rows, L, ix);
            read_stage<T, kThreads, kVecs, kBlock, kGeneral>(stage + s * kStage, in, r, t, x);
            reduce_store<T, kThreads, kVecs, kGeneral>(x, head_value<T, kGeneral>(in, r, t), out, r, t, max_slots,
                                                       sum_slots);
            s = s + 1 == kStages ? 0 : s + 1;
        }
    }
}

// Elements one row of softmax_rows_registers_kernel<T, kThreads, kVecs, ...> holds.
template <typename T>
constexpr int64_t register_rows_capacity(int threads, int vecs) {
    return int64_t(threads) * vecs * gpu::vector_width<T>();
}

// The instance launch_register_rows runs for these rows. aligned: every row
// of in and out starts on a 16-byte boundary (data pointers and outer
// strides); with one outer dimension of stride L in and out and L whole
// vectors, the common form, else the general one.
template <typename T, int kThreads, int kVecs, int kMinBlocks = 0, int kStages = 0>
auto register_rows_kernel(int64_t rows, int64_t L, bool aligned, const OuterIndex &ix) {
    const bool dense = ix.ndim <= 1 && ix.in_row_stride < 0 &&
                       (rows <= 1 || (ix.in_strides[0] == L && ix.out_strides[0] == L));
    const bool common = aligned && dense && L % gpu::vector_width<T>() == 0;
    return common ? &softmax_rows_registers_kernel<T, kThreads, kVecs, kMinBlocks, kStages, false>
                  : &softmax_rows_registers_kernel<T, kThreads, kVecs, kMinBlocks, kStages, true>;
}

// Launches the kernel over `rows` rows of L <= register_rows_capacity columns.
// The persistent form (kStages >= 2) runs one grid of at most max_blocks
// blocks, the caller's count of those resident at once (occupancy times
// SMs; fewer loop more).
template <typename T, int kThreads, int kVecs, int kMinBlocks = 0, int kStages = 0>
void launch_register_rows(const T *in, T *out, int64_t rows, int64_t L, bool aligned, const OuterIndex &ix,
                          dev::stream_t stream, int64_t max_blocks = gpu::kMaxGridBlocks) {
    constexpr int kBlock = register_rows_block<kThreads>();
    constexpr int64_t kRowsPerBlock = kBlock / kThreads;
    auto *kernel = register_rows_kernel<T, kThreads, kVecs, kMinBlocks, kStages>(rows, L, aligned, ix);
    if constexpr (kStages >= 2) {
        const int64_t grid = gpu::clamp64(max_blocks, 1, gpu::kMaxGridBlocks);
        const int64_t blocks = gpu::clamp64(gpu::ceil_div(rows, kRowsPerBlock), 1, grid);
        gpu::launch_overlapped(kernel, unsigned(blocks), unsigned(kBlock), 0, stream, in, out, int64_t(0), rows, L, ix);
    } else {
        // A block per kRowsPerBlock rows; more rows than one grid takes: several launches.
        (void)max_blocks;
        const int64_t step = gpu::kMaxGridBlocks * kRowsPerBlock;
        for (int64_t row0 = 0; row0 < rows || row0 == 0; row0 += step) {
            const int64_t blocks = gpu::clamp64(gpu::ceil_div(rows - row0, kRowsPerBlock), 1, gpu::kMaxGridBlocks);
            gpu::launch_overlapped(kernel, unsigned(blocks), unsigned(kBlock), 0, stream, in, out, row0, rows, L, ix);
        }
    }
}

}  // namespace oprt::softmax::gpu_kernels
