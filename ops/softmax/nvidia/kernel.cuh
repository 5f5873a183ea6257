// softmax kernels, shared by every GPU backend through device_traits.cuh:
// out = exp(x - max) / sum(exp(x - max)) along one axis, in f32, rounded once
// on store. NaN propagates (through the sum); a slice of all -inf gives NaN,
// as in PyTorch (exp(-inf - -inf) is NaN). Here: the running (max, sum)
// rules, dense rows in one block's shared memory, longer rows in two
// streaming passes (a block per row, or split over blocks), and the strided
// kernels for other layouts. Shorter rows: rows_registers.cuh.
#pragma once

#include <cstdint>
#include <type_traits>

#include "runtime/gpu/device_traits.cuh"
#include "runtime/gpu/gpu_common.cuh"
#include "runtime/gpu/gpu_reduce.cuh"

namespace oprt::softmax::gpu_kernels {

using gpu::F32Pair;
using gpu::OuterIndex;
using gpu::Vec;

// The accurate expf (about 1 ulp): the f32 results stay within ~1e-6 of a
// float64 reference, which __expf's |x|-proportional error would not.
__device__ __forceinline__ float exp_f32(float x) { return expf(x); }

// exp(x) at the precision the output keeps: expf for f32; for f16/bf16 (11
// or 8 significant bits) the special-function unit's 2^x, one instruction
// instead of ~10, which keeps 16-bit rows memory-bound.
constexpr float kLog2e = 1.44269504088896341f;

template <typename T>
__device__ __forceinline__ float exp_out(float x) {
    if constexpr (std::is_same<T, float>::value) {
        return expf(x);
    } else {
        return dev::exp2_approx(x * kLog2e);
    }
}

__device__ __forceinline__ float neg_inf() { return -__int_as_float(0x7f800000); }

// ---- Running (max, sum) ------------------------------------------------------
// (m, s) stands for s * exp(m) = sum of exp(x) seen so far. Rules that keep the
// special values right:
// - m only grows on x > m, so it is never NaN; a NaN x lands in s via exp(NaN).
// - x == -inf adds nothing (its exp is 0), which also avoids exp(-inf - -inf).
// - x == +inf gives exp(inf - inf) = NaN in s: PyTorch's NaN for such rows.
// The writing pass computes exp(x - m) / s; a row of all -inf keeps m = -inf
// and there exp(-inf - -inf) = NaN, as required.
__device__ __forceinline__ void online_add(F32Pair &ms, float x) {
    if (x > ms.a) {
        ms.b *= exp_f32(ms.a - x);
        ms.a = x;
    }
    if (x != neg_inf()) ms.b += exp_f32(x - ms.a);
}

// Adds W values with one rescale: the max of the vector first, then W exps.
template <int W>
__device__ __forceinline__ void online_add_vec(F32Pair &ms, const float (&x)[W]) {
    static_assert((W & (W - 1)) == 0, "W: a power of two");
    float vmax = x[0];
#pragma unroll
    for (int e = 1; e < W; ++e) vmax = fmaxf(vmax, x[e]);
    if (vmax > ms.a) {
        ms.b *= exp_f32(ms.a - vmax);
        ms.a = vmax;
    }
    // The W exps are added pairwise before joining the running sum: W times
    // shorter f32 add chains on rows of millions of elements.
    float e[W];
#pragma unroll
    for (int i = 0; i < W; ++i) e[i] = x[i] != neg_inf() ? exp_f32(x[i] - ms.a) : 0.0f;
#pragma unroll
    for (int h = W / 2; h > 0; h /= 2)
#pragma unroll
        for (int i = 0; i < h; ++i) e[i] += e[i + h];
    ms.b += e[0];
}

// Joins two running pairs. A part with s == 0 saw only -inf and adds nothing
// (skipping it avoids exp(-inf - -inf)); a NaN s stays NaN.
struct CombineOp {
    __device__ __forceinline__ F32Pair operator()(F32Pair x, F32Pair y) const {
        const float m = fmaxf(x.a, y.a);
        const float sx = x.b == 0.0f ? 0.0f : x.b * exp_f32(x.a - m);
        const float sy = y.b == 0.0f ? 0.0f : y.b * exp_f32(y.a - m);
        return F32Pair{m, sx + sy};
    }
};

__device__ __forceinline__ F32Pair empty_pair() { return F32Pair{neg_inf(), 0.0f}; }

// How a row (x in, y out) is read and written with 16-byte vectors: its
// `head` elements before x's first 16-byte boundary go one per thread (head <
// threads), the rest as vectors, when y sits at the same offset from a
// boundary; otherwise vec is false and the row goes element by element. Rows
// of odd length thus keep their vectors ((8192, 4095) bf16: 138 us with
// vectors on aligned rows only; H200, 2026-11-30).
struct RowHead {
    int64_t head;
    bool vec;
};
template <typename T>
__device__ __forceinline__ RowHead row_head(const T *x, const T *y, int64_t L, int64_t threads) {
    const uintptr_t mx = reinterpret_cast<uintptr_t>(x) % gpu::kVectorBytes;
    const uintptr_t my = reinterpret_cast<uintptr_t>(y) % gpu::kVectorBytes;
    const int64_t h = gpu::elements_before_vector_boundary(x, L);
    if (mx != my || mx % sizeof(T) != 0 || h >= threads) return RowHead{0, false};
    return RowHead{h, true};
}

// ---- Streaming spans (rows longer than shared memory holds) ----------------------

// Calls f(q, v) for this thread's 16-byte vectors v = x[q] of x[0..nv), q =
// tid, tid + nt, ...: four loads in flight, then one at a time (eight in
// flight measured slower: 2116 against 2712 GB/s at 16384 bf16).
template <typename T, typename F>
__device__ __forceinline__ void for_each_vector(const T *__restrict__ x, int64_t nv, int64_t tid, int64_t nt, F f) {
    constexpr int P = gpu::vector_width<T>();
    int64_t q = tid;
    for (; q + 3 * nt < nv; q += 4 * nt) {
        Vec<T, P> v[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) v[u] = gpu::load_vec<P>(x + (q + u * nt) * P);
#pragma unroll
        for (int u = 0; u < 4; ++u) f(q + u * nt, v[u]);
    }
    for (; q < nv; q += nt) f(q, gpu::load_vec<P>(x + q * P));
}

// Running (max, sum) of x[0..n) over nt cooperating threads: vectors after
// the elements before x's first 16-byte boundary; four vectors in flight.
// The loop is for_each_vector's, written out: through its callback ptxas gave
// the bf16 two-pass kernels 52 and 59 registers instead of 53 and 56.
template <typename T>
__device__ __forceinline__ F32Pair span_stats(const T *__restrict__ x, int64_t n, int64_t tid, int64_t nt) {
    constexpr int P = gpu::vector_width<T>();
    const int64_t head = gpu::elements_before_vector_boundary(x, n);
    F32Pair ms = empty_pair();
    for (int64_t i = tid; i < head; i += nt) online_add(ms, dev::to_f32(x[i]));
    const T *body = x + head;
    const int64_t nvec = (n - head) / P;
    int64_t q = tid;
    for (; q + 3 * nt < nvec; q += 4 * nt) {
        Vec<T, P> v[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) v[u] = gpu::load_vec<P>(body + (q + u * nt) * P);
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            float f[P];
#pragma unroll
            for (int e = 0; e < P; ++e) f[e] = dev::to_f32(v[u].v[e]);
            online_add_vec<P>(ms, f);
        }
    }
    for (; q < nvec; q += nt) {
        const Vec<T, P> v = gpu::load_vec<P>(body + q * P);
        float f[P];
#pragma unroll
        for (int e = 0; e < P; ++e) f[e] = dev::to_f32(v.v[e]);
        online_add_vec<P>(ms, f);
    }
    for (int64_t i = head + nvec * P + tid; i < n; i += nt) online_add(ms, dev::to_f32(x[i]));
    return ms;
}

// y[i] = exp(x[i] - m) * inv for i in [0, n), vectorized when x and y share
// their misalignment.
template <typename T>
__device__ __forceinline__ void span_write(const T *__restrict__ x, T *__restrict__ y, int64_t n, float m,
                                           float inv, int64_t tid, int64_t nt) {
    constexpr int P = gpu::vector_width<T>();
    const bool same = reinterpret_cast<uintptr_t>(x) % gpu::kVectorBytes ==
                      reinterpret_cast<uintptr_t>(y) % gpu::kVectorBytes;
    const int64_t head = same ? gpu::elements_before_vector_boundary(x, n) : n;  // no common alignment: all scalar
    for (int64_t i = tid; i < head; i += nt) y[i] = dev::from_f32<T>(exp_f32(dev::to_f32(x[i]) - m) * inv);
    const int64_t nvec = (n - head) / P;
    for (int64_t q = tid; q < nvec; q += nt) {
        Vec<T, P> v = gpu::load_vec<P>(x + head + q * P);
#pragma unroll
        for (int e = 0; e < P; ++e) v.v[e] = dev::from_f32<T>(exp_f32(dev::to_f32(v.v[e]) - m) * inv);
        // Stated: a plain vector store here compiled to P scalar stores.
        gpu::store_vec_global<P>(y + head + q * P, v);
    }
    for (int64_t i = head + nvec * P + tid; i < n; i += nt)
        y[i] = dev::from_f32<T>(exp_f32(dev::to_f32(x[i]) - m) * inv);
}

// ---- Dense rows held in shared memory, one block per row -----------------------------

// Geometry of the shared-memory kernel, by value in its parameters.
struct SmemRows {
    int64_t rows = 0;
    int64_t L = 0;
    int64_t cached = 0;  // of a row, the elements kept in shared memory (a multiple of the vector width)
    OuterIndex ix;
};

// Softmax of rows held in shared memory, one block per row. HBM is read
// once: the row stays in shared memory as f32; a block max, the exps stored
// in place, a block sum, and the write pass scales what is on chip. A row
// larger than shared memory streams its tail twice, last in the read pass
// and first in the write pass, so the second read comes from L2. Each thread
// reads back only the slots it wrote: no barrier for the row. (Split over a
// cluster it measured slower, 32K to 2^20 columns: docs/kernels/softmax.md.)
template <typename T>
__global__ void __launch_bounds__(512)
softmax_rows_smem_kernel(const T *__restrict__ in, T *__restrict__ out, SmemRows p) {
    gpu::enter_overlapped_kernel();
    constexpr int P = gpu::vector_width<T>();
    extern __shared__ __align__(16) unsigned char smem_raw[];
    float *buf = reinterpret_cast<float *>(smem_raw);
    __shared__ gpu::BlockReduceScratch<float> scratch;
    const int64_t tid = threadIdx.x, nt = blockDim.x;
    for (int64_t row = blockIdx.x; row < p.rows; row += gridDim.x) {
        int64_t io, oo;
        p.ix.offsets(row, &io, &oo);
        const int64_t n = p.L;
        // The row's elements before its first 16-byte boundary (row_head) go
        // with the streamed tail; the cached part starts at the boundary.
        const RowHead rh = row_head(in + io, out + oo, n, nt);
        const T *head_x = in + io;
        T *head_y = out + oo;
        const T *x = head_x + rh.head;
        T *y = head_y + rh.head;
        const int64_t nh = n - rh.head;  // elements from the boundary on
        const int64_t cached = nh < p.cached ? nh : p.cached;
        const int64_t cv = rh.vec ? cached / P : 0;  // vectors of the cached part; the rest one by one

        // Read pass: the cached part into shared memory as f32.
        float m = neg_inf();
        for_each_vector(x, cv, tid, nt, [&](int64_t q, const Vec<T, P> &v) {
            Vec<float, P> f;
#pragma unroll
            for (int e = 0; e < P; ++e) {
                f.v[e] = dev::to_f32(v.v[e]);
                m = fmaxf(m, f.v[e]);
            }
            gpu::store_vec<P>(buf + q * P, f);
        });
        for (int64_t i = cv * P + tid; i < cached; i += nt) {
            buf[i] = dev::to_f32(x[i]);
            m = fmaxf(m, buf[i]);
        }
        // The tail beyond shared memory, streamed (read again from L2 below):
        // a running (max, sum), rescaled to the row max once that is known.
        F32Pair tail = rh.head > 0 ? span_stats(head_x, rh.head, tid, nt) : empty_pair();
        if (cached < nh) tail = CombineOp{}(tail, span_stats(x + cached, nh - cached, tid, nt));
        m = gpu::block_allreduce(fmaxf(m, tail.a), gpu::MaxOp{}, neg_inf(), scratch);

        // The thread's own slots: exp against the row max, in place. -inf adds
        // 0, also when the whole row is -inf; that row's sum stays 0 and
        // 0 * (1 / 0) gives its NaN outputs.
        float s = tail.b == 0.0f ? 0.0f : tail.b * exp_f32(tail.a - m);
        for (int64_t q = tid; q < cv; q += nt) {
            Vec<float, P> f = gpu::load_vec<P>(buf + q * P);
#pragma unroll
            for (int e = 0; e < P; ++e) {
                f.v[e] = f.v[e] != neg_inf() ? exp_out<T>(f.v[e] - m) : 0.0f;
                s += f.v[e];
            }
            gpu::store_vec<P>(buf + q * P, f);
        }
        for (int64_t i = cv * P + tid; i < cached; i += nt) {
            buf[i] = buf[i] != neg_inf() ? exp_out<T>(buf[i] - m) : 0.0f;
            s += buf[i];
        }
        s = gpu::block_allreduce(s, gpu::SumOp{}, 0.0f, scratch);
        const float inv = 1.0f / s;

        // Write pass: the streamed tail first (most recently read, still in L2), then shared memory.
        if (cached < nh) span_write(x + cached, y + cached, nh - cached, m, inv, tid, nt);
        if (rh.head > 0) span_write(head_x, head_y, rh.head, m, inv, tid, nt);
        for (int64_t q = tid; q < cv; q += nt) {
            const Vec<float, P> f = gpu::load_vec<P>(buf + q * P);
            Vec<T, P> v;
#pragma unroll
            for (int e = 0; e < P; ++e) v.v[e] = dev::from_f32<T>(f.v[e] * inv);
            gpu::store_out_vec<P>(y + q * P, v);
        }
        for (int64_t i = cv * P + tid; i < cached; i += nt) y[i] = dev::from_f32<T>(buf[i] * inv);
    }
}

// Softmax of long rows, one block per row, no workspace: a streaming pass
// keeps a running (max, sum) per thread (one rescale per vector), a block
// reduction joins them, a second pass writes. The second read mostly hits
// L2: on the H200 this beats holding rows of 64K-128K columns in shared
// memory, where one or two blocks per SM stall on every row's reductions.
template <typename T>
__global__ void __launch_bounds__(1024)
softmax_rows_long_kernel(const T *__restrict__ in, T *__restrict__ out, int64_t rows, int64_t L,
                         OuterIndex ix) {
    gpu::enter_overlapped_kernel();
    __shared__ gpu::BlockReduceScratch<F32Pair> scratch;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        int64_t io, oo;
        ix.offsets(row, &io, &oo);
        F32Pair ms = span_stats(in + io, L, threadIdx.x, blockDim.x);
        ms = gpu::block_allreduce(ms, CombineOp{}, empty_pair(), scratch);
        span_write(in + io, out + oo, L, ms.a, 1.0f / ms.b, threadIdx.x, blockDim.x);
    }
}

// Split long rows (few rows: every SM streams a chunk), first pass:
// stats[row * chunks + c] = the running (max, sum) of chunk c.
template <typename T>
__global__ void __launch_bounds__(1024)
softmax_rows_split_stats_kernel(const T *__restrict__ in, F32Pair *__restrict__ stats, int64_t rows,
                                int64_t L, int64_t chunks, int64_t chunk_len, OuterIndex ix) {
    gpu::enter_overlapped_kernel();
    __shared__ gpu::BlockReduceScratch<F32Pair> scratch;
    for (int64_t b = blockIdx.x; b < rows * chunks; b += gridDim.x) {
        const int64_t row = b / chunks;
        const int64_t k0 = (b - row * chunks) * chunk_len;
        const int64_t n = L - k0 < chunk_len ? L - k0 : chunk_len;
        int64_t io, oo;
        ix.offsets(row, &io, &oo);
        F32Pair ms = span_stats(in + io + k0, n, threadIdx.x, blockDim.x);
        ms = gpu::block_allreduce(ms, CombineOp{}, empty_pair(), scratch);
        if (threadIdx.x == 0) stats[b] = ms;
    }
}

// Second pass: each block joins its row's chunk stats (a fixed order: every
// block of the row gets the same max and sum) and writes its chunk.
template <typename T>
__global__ void __launch_bounds__(1024)
softmax_rows_split_write_kernel(const T *__restrict__ in, T *__restrict__ out,
                                const F32Pair *__restrict__ stats, int64_t rows, int64_t L,
                                int64_t chunks, int64_t chunk_len, OuterIndex ix) {
    gpu::enter_overlapped_kernel();
    __shared__ gpu::BlockReduceScratch<F32Pair> scratch;
    for (int64_t b = blockIdx.x; b < rows * chunks; b += gridDim.x) {
        const int64_t row = b / chunks;
        const int64_t k0 = (b - row * chunks) * chunk_len;
        const int64_t n = L - k0 < chunk_len ? L - k0 : chunk_len;
        F32Pair ms = empty_pair();
        for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) ms = CombineOp{}(ms, stats[row * chunks + c]);
        ms = gpu::block_allreduce(ms, CombineOp{}, empty_pair(), scratch);
        int64_t io, oo;
        ix.offsets(row, &io, &oo);
        span_write(in + io + k0, out + oo + k0, n, ms.a, 1.0f / ms.b, threadIdx.x, blockDim.x);
    }
}

// ---- Strided slices (a non-last axis, or a strided last axis) -------------------

// Geometry of the slice kernels (these and the ladder's plain steps): slice
// t = (o, i) of outer x inner, L elements apart by the axis strides.
struct SliceParams {
    int64_t outer = 1;
    int64_t inner = 1;
    int64_t L = 0;
    int64_t S_in = 0;   // axis strides, in elements
    int64_t S_out = 0;
    int32_t bx = 1;     // tile kernel: threads across the inner run
    int32_t by = 1;     // tile kernel: threads along the axis
    int64_t tiles = 1;  // tile kernel: tiles of bx inner positions per outer position
    OuterIndex ix;

    // Slice t: where its first input and output elements sit.
    __device__ __forceinline__ void start(int64_t t, int64_t *in_off, int64_t *out_off) const {
        const int64_t o = t / inner, i = t - o * inner;
        ix.offsets(o, in_off, out_off);
        *in_off += i;
        *out_off += i;
    }
};

// Many strided slices, one thread per slice: neighbouring threads own
// neighbouring inner positions, so each step along the axis is a coalesced
// read; one running (max, sum) pass, one write pass.
template <typename T>
__global__ void __launch_bounds__(256)
softmax_strided_thread_kernel(const T *__restrict__ in, T *__restrict__ out, SliceParams p) {
    gpu::enter_overlapped_kernel();
    for (int64_t t = gpu::global_thread_index(); t < p.outer * p.inner; t += gpu::grid_threads()) {
        const int64_t o = t / p.inner;
        const int64_t i = t - o * p.inner;
        int64_t io, oo;
        p.ix.offsets(o, &io, &oo);
        const T *x = in + io + i;
        T *y = out + oo + i;
        F32Pair ms = empty_pair();
        for (int64_t k = 0; k < p.L; ++k) online_add(ms, dev::to_f32(x[k * p.S_in]));
        const float inv = 1.0f / ms.b;
        for (int64_t k = 0; k < p.L; ++k)
            y[k * p.S_out] = dev::from_f32<T>(exp_f32(dev::to_f32(x[k * p.S_in]) - ms.a) * inv);
    }
}

// Few strided slices: a bx x by tile per (outer, inner tile); bx threads span
// the inner run (coalesced), by threads split the axis; their running pairs
// meet in a fixed-order shared-memory tree, then each writes its share.
template <typename T>
__global__ void __launch_bounds__(256)
softmax_strided_tile_kernel(const T *__restrict__ in, T *__restrict__ out, SliceParams p) {
    gpu::enter_overlapped_kernel();
    __shared__ F32Pair pairs[256];
    const int tx = int(threadIdx.x) % p.bx;
    const int ty = int(threadIdx.x) / p.bx;
    for (int64_t tile = blockIdx.x; tile < p.outer * p.tiles; tile += gridDim.x) {
        const int64_t o = tile / p.tiles;
        const int64_t i = (tile - o * p.tiles) * p.bx + tx;
        int64_t io, oo;
        p.ix.offsets(o, &io, &oo);
        const T *x = in + io + i;
        T *y = out + oo + i;
        F32Pair ms = empty_pair();
        if (i < p.inner)
            for (int64_t k = ty; k < p.L; k += p.by) online_add(ms, dev::to_f32(x[k * p.S_in]));
        pairs[threadIdx.x] = ms;
        __syncthreads();
        for (int h = p.by / 2; h > 0; h /= 2) {
            if (ty < h) pairs[threadIdx.x] = CombineOp{}(pairs[threadIdx.x], pairs[threadIdx.x + h * p.bx]);
            __syncthreads();
        }
        ms = pairs[tx];  // row 0 of the tile holds column tx's total
        const float inv = 1.0f / ms.b;
        if (i < p.inner)
            for (int64_t k = ty; k < p.L; k += p.by)
                y[k * p.S_out] = dev::from_f32<T>(exp_f32(dev::to_f32(x[k * p.S_in]) - ms.a) * inv);
        __syncthreads();  // the next tile overwrites pairs
    }
}

}  // namespace oprt::softmax::gpu_kernels
