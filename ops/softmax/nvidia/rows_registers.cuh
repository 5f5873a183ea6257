// softmax of dense rows held in registers (up to 16384 columns in the
// plan, 32768 for few 16-bit rows), loaded straight from global memory:
// one kernel whose shape (threads per row, vectors per thread) is a pair
// of template parameters, and its launcher. Shared by every GPU backend.
//
// A row of up to kThreads * kVecs 16-byte vectors is read once into the
// registers of a group of kThreads threads (thread t holds vectors t,
// t + kThreads, ...: each load instruction of the group is coalesced), every
// load issued before any value is used. Max and sum are shuffle butterflies
// within the group, plus one shared-memory exchange between the warps of a
// wider group. Groups within a warp share a block of kRegisterRowsMinBlock
// threads, a row a group; wider groups are a block each.
// kMinBlocks asks ptxas for that many blocks per SM (a register cap; 0 asks
// nothing, unlike 1: f32 512 x 2 took 37 registers against 32 with 1, three
// blocks an SM instead of four, 5-8% slower; H200, 2026-12-02). kFeed says
// how a row reaches the registers (Feed, below). The plan (kRegisterRows in
// softmax_cuda.cu) picks the shape and feed per row length.
#pragma once

#include <cstdint>

#include "ops/softmax/nvidia/kernel.cuh"

namespace oprt::softmax::gpu_kernels {

// Threads of a block of groups within a warp.
constexpr int kRegisterRowsMinBlock = 128;

// How a group's row reaches its registers (the kernel's kFeed).
//   kLoads: loads straight from global memory, one row a group.
//   kStaged: asynchronous copies (cp.async) into shared memory first, one row
//     a group: no registers wait for copies in flight, so more bytes are.
//   kPersistent, kPersistentRing: a grid of the blocks resident at once, each
//     group looping over rows with the grid's stride, its next row in flight
//     while it reduces this one: loaded into a second set of registers
//     (kPersistent), or copied into the second stage of a two-stage ring in
//     shared memory (kPersistentRing).
enum class Feed { kLoads, kStaged, kPersistent, kPersistentRing };
constexpr bool is_persistent(Feed f) { return f == Feed::kPersistent || f == Feed::kPersistentRing; }

template <int kThreads>
constexpr int register_rows_block() {
    return kThreads <= dev::kWarpSize ? kRegisterRowsMinBlock : kThreads;
}

// v joined over the kThreads threads of a row (op: max or sum): shuffles
// within a warp; wider, each warp's value in `slots`, one barrier, then every
// thread joins the slots in the same order (the same bits for all). Each call
// takes its own slots (one use a row: no second barrier).
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

// Where a group's row lies: its offsets in and out, its head (elements
// before its first 16-byte boundary, one a thread: general form only), the
// elements from there (n, 0 past the last row), whether its vectors can be
// used (vec) and whether it exists (valid). The row fits the group, so int
// indexes do.
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
        const RowHead rh = r.valid ? row_head(in + r.io, out + r.oo, L, kThreads) : RowHead{0, false};
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

// Thread t's kVecs raw vectors of row r, straight from global memory:
// vectors t, t + kThreads, ... of the row (each load instruction of the group
// is coalesced); past the row's end -inf, which moves no max and adds 0. The
// general form reads element by element where a vector cannot be used.
template <typename T, int kThreads, int kVecs, bool kGeneral>
__device__ __forceinline__ void load_vecs(const T *in, const RowAt &r, int t,
                                          Vec<T, gpu::vector_width<T>()> (&v)[kVecs]) {
    constexpr int P = gpu::vector_width<T>();
    const T *x_row = in + r.io + r.head;
    Vec<T, P> past_end;
#pragma unroll
    for (int e = 0; e < P; ++e) past_end.v[e] = dev::from_f32<T>(neg_inf());
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
        const int e0 = (j * kThreads + t) * P;
        if (r.vec && e0 + P <= r.n) {
            v[j] = gpu::load_vec<P>(x_row + e0);
        } else {
            v[j] = past_end;
            if constexpr (kGeneral) {
#pragma unroll
                for (int e = 0; e < P; ++e)
                    if (e0 + e < r.n) v[j].v[e] = x_row[e0 + e];
            }
        }
    }
}

// The vectors as floats. Kept apart from the loads, so that every load is
// issued before any value is used: with the conversion in the load's branch,
// nvcc converted (and took the max of) a 16-bit thread's first vector before
// it issued the second load, two trips to memory instead of one (sm_90 SASS
// of every 16-bit instance of two vectors).
template <typename T, int kVecs>
__device__ __forceinline__ void widen_row(const Vec<T, gpu::vector_width<T>()> (&v)[kVecs],
                                          float (&x)[kVecs * gpu::vector_width<T>()]) {
    constexpr int P = gpu::vector_width<T>();
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
        float w[P];
        gpu::widen(v[j], w);
#pragma unroll
        for (int e = 0; e < P; ++e) x[j * P + e] = w[e];
    }
}

// The same through shared memory: copy_row starts asynchronous copies of
// the row's whole vectors into a stage of kVecs * kBlock 16-byte slots
// (thread i's vector j in slot j * kBlock + i); once they landed, read_stage
// takes them back, the rest element by element from global memory. Each
// thread reads only its own slots: no barrier.
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
        hx = exp_out(hx - m);
        s = hx;
    }
#pragma unroll
    for (int c = 0; c < E; ++c) {
        x[c] = exp_out(x[c] - m);
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
// and L whole vectors (the launcher checks), so a vector is wholly in the row
// or past its end. kGeneral true: any outer layout, rows at any offset
// (row_head: thread t < head holds element t), element loads where vectors
// cannot be used. Keeping it apart saves 8-11 registers a thread in the
// common form (sm_90, bf16 128 x 1: 29 against 40).
template <typename T, int kThreads, int kVecs, int kMinBlocks, Feed kFeed, bool kGeneral>
__global__ void __launch_bounds__(register_rows_block<kThreads>(), kMinBlocks)
softmax_rows_registers_kernel(const T *__restrict__ in, T *__restrict__ out, int64_t row0, int64_t rows, int64_t L,
                              OuterIndex ix) {
    static_assert(kThreads <= dev::kWarpSize ? (kThreads & (kThreads - 1)) == 0 : kThreads % dev::kWarpSize == 0,
                  "a group is a power of two within a warp, or whole warps");
    gpu::enter_overlapped_kernel();
    constexpr int P = gpu::vector_width<T>();
    constexpr int E = kVecs * P;
    constexpr int kBlock = register_rows_block<kThreads>();
    constexpr int kRowsPerBlock = kBlock / kThreads;
    constexpr int kSlots = kThreads > dev::kWarpSize ? kThreads / dev::kWarpSize : 1;
    constexpr int kStage = kVecs * kBlock;  // 16-byte slots of one row's stage
    constexpr int kStages = kFeed == Feed::kStaged ? 1 : kFeed == Feed::kPersistentRing ? 2 : 0;
    static_assert(int64_t(kStages) * kStage * 16 <= 47 * 1024, "the stages fit static shared memory");
    __shared__ float max_slots[kSlots], sum_slots[kSlots];
    __shared__ uint4 stage[kStages > 0 ? kStages * kStage : 1];
    const int t = int(threadIdx.x) % kThreads;
    const int g = int(threadIdx.x) / kThreads;
    const int64_t block_row = row0 + int64_t(blockIdx.x) * kRowsPerBlock;
    // The persistent feeds: the block takes rows block_row, block_row +
    // stride, ... Every group of a block runs the same iterations (groups past
    // the last row reduce -inf and store nothing); a thread writes max_slots
    // (sum_slots) for the next row only after all passed this row's sum
    // barrier (the next row's max barrier), so after all read them: no more
    // barriers.
    const int64_t stride = int64_t(gridDim.x) * kRowsPerBlock;
    const auto row = [&](int64_t b) { return row_at<T, kThreads, kGeneral>(in, out, b + g, rows, L, ix); };
    float x[E];
    if constexpr (!is_persistent(kFeed)) {
        // One row a group, no loop (a loop's state costs registers). Groups
        // past the last row still join their warp's shuffles, then leave.
        const RowAt r = row(block_row);
        const float hx = head_value<T, kGeneral>(in, r, t);
        if constexpr (kFeed == Feed::kStaged) {  // all copies first, as the loads
            copy_row<T, kThreads, kVecs, kBlock>(stage, in, r, t);
            dev::wait_copies();
            read_stage<T, kThreads, kVecs, kBlock, kGeneral>(stage, in, r, t, x);
        } else {
            Vec<T, P> v[kVecs];
            load_vecs<T, kThreads, kVecs, kGeneral>(in, r, t, v);
            widen_row<T, kVecs>(v, x);
        }
        reduce_store<T, kThreads, kVecs, kGeneral>(x, hx, out, r, t, max_slots, sum_slots);
    } else if constexpr (kFeed == Feed::kPersistent) {
        // The next row's loads land in `next` while this row, widened into
        // x, is reduced and stored (past the last row: no loads).
        Vec<T, P> next[kVecs];
        RowAt r_next = row(block_row);
        float h_next = head_value<T, kGeneral>(in, r_next, t);
        load_vecs<T, kThreads, kVecs, kGeneral>(in, r_next, t, next);
        for (int64_t b = block_row; b < rows; b += stride) {
            const RowAt r = r_next;
            const float hx = h_next;
            widen_row<T, kVecs>(next, x);
            r_next = row(b + stride);
            h_next = head_value<T, kGeneral>(in, r_next, t);
            load_vecs<T, kThreads, kVecs, kGeneral>(in, r_next, t, next);
            reduce_store<T, kThreads, kVecs, kGeneral>(x, hx, out, r, t, max_slots, sum_slots);
        }
    } else {
        // The next row's copies land in the other stage, one commit group a
        // row (empty past the last row): waiting for all but the newest group
        // leaves this row's landed.
        copy_row<T, kThreads, kVecs, kBlock>(stage, in, row(block_row), t);
        dev::commit_copies();
        int s = 0;  // this row's stage
        for (int64_t b = block_row; b < rows; b += stride) {
            copy_row<T, kThreads, kVecs, kBlock>(stage + (1 - s) * kStage, in, row(b + stride), t);
            dev::commit_copies();
            dev::wait_copies_but_newest<1>();
            const RowAt r = row(b);
            read_stage<T, kThreads, kVecs, kBlock, kGeneral>(stage + s * kStage, in, r, t, x);
            reduce_store<T, kThreads, kVecs, kGeneral>(x, head_value<T, kGeneral>(in, r, t), out, r, t, max_slots,
                                                       sum_slots);
            s = 1 - s;
        }
    }
}

// Elements one row of softmax_rows_registers_kernel<T, kThreads, kVecs, ...> holds.
template <typename T>
constexpr int64_t register_rows_capacity(int threads, int vecs) {
    return int64_t(threads) * vecs * gpu::vector_width<T>();
}

// The instance launch_register_rows runs: the common form where every row
// of in and out starts on a 16-byte boundary (aligned), one outer dimension
// of stride L in and out and L whole vectors; else the general one.
template <typename T, int kThreads, int kVecs, int kMinBlocks = 0, Feed kFeed = Feed::kLoads>
auto register_rows_kernel(int64_t rows, int64_t L, bool aligned, const OuterIndex &ix) {
    const bool dense = ix.ndim <= 1 && ix.in_row_stride < 0 &&
                       (rows <= 1 || (ix.in_strides[0] == L && ix.out_strides[0] == L));
    const bool common = aligned && dense && L % gpu::vector_width<T>() == 0;
    return common ? &softmax_rows_registers_kernel<T, kThreads, kVecs, kMinBlocks, kFeed, false>
                  : &softmax_rows_registers_kernel<T, kThreads, kVecs, kMinBlocks, kFeed, true>;
}

// Launches the kernel over `rows` rows of L <= register_rows_capacity
// columns. The persistent feeds run one grid of at most max_blocks blocks,
// the caller's count of those resident at once.
template <typename T, int kThreads, int kVecs, int kMinBlocks = 0, Feed kFeed = Feed::kLoads>
void launch_register_rows(const T *in, T *out, int64_t rows, int64_t L, bool aligned, const OuterIndex &ix,
                          dev::stream_t stream, int64_t max_blocks = gpu::kMaxGridBlocks) {
    constexpr int kBlock = register_rows_block<kThreads>();
    constexpr int64_t kRowsPerBlock = kBlock / kThreads;
    auto *kernel = register_rows_kernel<T, kThreads, kVecs, kMinBlocks, kFeed>(rows, L, aligned, ix);
    if constexpr (is_persistent(kFeed)) {
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
