// softmax kernels, shared by every GPU backend through device_traits.cuh.
// out = exp(x - max) / sum(exp(x - max)) along one axis, in f32, rounded once
// on store. NaN propagates (through the sum); a slice of all -inf gives NaN,
// as in PyTorch (exp(-inf - -inf) is NaN).
//
// Kernels by row length (dense rows): a sub-warp or warp per row with the row
// in registers; a block per row with the row in shared memory; for rows beyond
// shared memory, a streaming pass that keeps a running (max, sum) followed by a
// writing pass, optionally split over several blocks per row. Non-last axes
// take a strided path: threads across the inner run, the same running
// (max, sum), then a writing pass.
#pragma once

#include <cstdint>
#include <type_traits>

#include "operator_runtime/detail/device_traits.cuh"
#include "operator_runtime/detail/gpu_common.cuh"
#include "operator_runtime/detail/gpu_reduce.cuh"

namespace oprt::softmax::gpu_kernels {

using gpu::F32Pair;
using gpu::OuterIndex;
using gpu::Vec;

// The accurate expf (about 1 ulp): the f32 results stay within ~1e-6 of a
// float64 reference, which __expf's |x|-proportional error would not.
__device__ __forceinline__ float exp_f32(float x) { return expf(x); }

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

template <typename T>
__device__ __forceinline__ bool vector_aligned(const T *p) {
    return reinterpret_cast<uintptr_t>(p) % (sizeof(T) * gpu::vector_width<T>()) == 0;
}

// ---- Dense rows, row in registers ---------------------------------------------

// Softmax of rows up to kCols * G elements, G lanes per row (G = warp width,
// or fewer lanes and several rows per warp for short rows).
// Idea: the row stays in registers, so it is read once and written once; the
// max and the sum are shuffle butterflies with no shared memory or barrier.
// Lane l holds vectors l, l + G, l + 2G, ... of the row (coalesced).
template <typename T, int G, int kCols>
__global__ void __launch_bounds__(128)
softmax_rows_warp_kernel(const T *__restrict__ in, T *__restrict__ out, int64_t rows, int64_t L,
                         OuterIndex ix) {
    constexpr int P = gpu::vector_width<T>() < kCols ? gpu::vector_width<T>() : kCols;
    constexpr int kVecs = kCols / P;
    static_assert(kCols % P == 0, "a lane holds whole vectors");
    const int lane = int(threadIdx.x) % G;
    const int64_t rows_per_block = blockDim.x / G;
    // `base` is uniform over the block: all lanes of a warp run the shuffles together.
    for (int64_t base = int64_t(blockIdx.x) * rows_per_block; base < rows;
         base += int64_t(gridDim.x) * rows_per_block) {
        const int64_t row = base + threadIdx.x / G;
        const bool valid = row < rows;
        int64_t io = 0, oo = 0;
        if (valid) ix.offsets(row, &io, &oo);
        const T *x_row = in + io;
        T *y_row = out + oo;
        const bool vec_ok = vector_aligned(x_row) && vector_aligned(y_row);
        float x[kCols];
#pragma unroll
        for (int j = 0; j < kVecs; ++j) {
            const int64_t e0 = (int64_t(j) * G + lane) * P;
            if (valid && vec_ok && e0 + P <= L) {
                const Vec<T, P> v = gpu::load_vec<P>(x_row + e0);
#pragma unroll
                for (int e = 0; e < P; ++e) x[j * P + e] = dev::to_f32(v.v[e]);
            } else {
#pragma unroll
                for (int e = 0; e < P; ++e)
                    x[j * P + e] = valid && e0 + e < L ? dev::to_f32(x_row[e0 + e]) : neg_inf();
            }
        }
        // Padding is -inf: it does not move the max and its exp is 0.
        float m = neg_inf();
#pragma unroll
        for (int c = 0; c < kCols; ++c) m = fmaxf(m, x[c]);
        m = gpu::group_allreduce<G>(m, gpu::MaxOp{});
        float s = 0.0f;
#pragma unroll
        for (int c = 0; c < kCols; ++c) {
            x[c] = exp_f32(x[c] - m);
            s += x[c];
        }
        s = gpu::group_allreduce<G>(s, gpu::SumOp{});
        const float inv = 1.0f / s;
        if (!valid) continue;
#pragma unroll
        for (int j = 0; j < kVecs; ++j) {
            const int64_t e0 = (int64_t(j) * G + lane) * P;
            if (vec_ok && e0 + P <= L) {
                Vec<T, P> v;
#pragma unroll
                for (int e = 0; e < P; ++e) v.v[e] = dev::from_f32<T>(x[j * P + e] * inv);
                gpu::store_vec<P>(y_row + e0, v);
            } else {
#pragma unroll
                for (int e = 0; e < P; ++e)
                    if (e0 + e < L) y_row[e0 + e] = dev::from_f32<T>(x[j * P + e] * inv);
            }
        }
    }
}

// ---- Dense rows, row in shared memory -------------------------------------------

// Softmax of rows that fit in shared memory, one block per row.
// Idea: HBM is read once: the row is staged in shared memory in its storage
// type (the most columns per byte), max and sum are block reductions, and
// the writing pass reads shared memory. Each thread reads back only the slots
// it wrote, so the row itself needs no barrier; f32 rows keep exp(x - max) in
// place and take one exp per element.
template <typename T>
__global__ void __launch_bounds__(1024)
softmax_rows_block_smem_kernel(const T *__restrict__ in, T *__restrict__ out, int64_t rows, int64_t L,
                               OuterIndex ix) {
    constexpr int P = gpu::vector_width<T>();
    constexpr bool kKeepExp = std::is_same<T, float>::value;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *row_s = reinterpret_cast<T *>(smem_raw);
    __shared__ gpu::BlockReduceScratch<float> scratch;
    const int64_t tid = threadIdx.x, nt = blockDim.x;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        int64_t io, oo;
        ix.offsets(row, &io, &oo);
        const T *x_row = in + io;
        T *y_row = out + oo;
        const bool vec_ok = vector_aligned(x_row) && vector_aligned(y_row);
        // Vectors [0, nvec) when aligned, the rest one by one; same split in every pass.
        const int64_t nvec = vec_ok ? L / P : 0;
        const int64_t tail0 = nvec * P;

        float m = neg_inf();
        for (int64_t q = tid; q < nvec; q += nt) {
            const Vec<T, P> v = gpu::load_vec<P>(x_row + q * P);
            gpu::store_vec<P>(row_s + q * P, v);
#pragma unroll
            for (int e = 0; e < P; ++e) m = fmaxf(m, dev::to_f32(v.v[e]));
        }
        for (int64_t i = tail0 + tid; i < L; i += nt) {
            const T v = x_row[i];
            row_s[i] = v;
            m = fmaxf(m, dev::to_f32(v));
        }
        m = gpu::block_allreduce(m, gpu::MaxOp{}, neg_inf(), scratch);

        float s = 0.0f;
        for (int64_t q = tid; q < nvec; q += nt) {
            Vec<T, P> v = gpu::load_vec<P>(row_s + q * P);
#pragma unroll
            for (int e = 0; e < P; ++e) {
                const float y = exp_f32(dev::to_f32(v.v[e]) - m);
                s += y;
                if constexpr (kKeepExp) v.v[e] = y;
            }
            if constexpr (kKeepExp) gpu::store_vec<P>(row_s + q * P, v);
        }
        for (int64_t i = tail0 + tid; i < L; i += nt) {
            const float y = exp_f32(dev::to_f32(row_s[i]) - m);
            s += y;
            if constexpr (kKeepExp) row_s[i] = y;
        }
        s = gpu::block_allreduce(s, gpu::SumOp{}, 0.0f, scratch);
        const float inv = 1.0f / s;

        for (int64_t q = tid; q < nvec; q += nt) {
            Vec<T, P> v = gpu::load_vec<P>(row_s + q * P);
#pragma unroll
            for (int e = 0; e < P; ++e) {
                const float y = kKeepExp ? dev::to_f32(v.v[e]) : exp_f32(dev::to_f32(v.v[e]) - m);
                v.v[e] = dev::from_f32<T>(y * inv);
            }
            gpu::store_vec<P>(y_row + q * P, v);
        }
        for (int64_t i = tail0 + tid; i < L; i += nt) {
            const float y = kKeepExp ? dev::to_f32(row_s[i]) : exp_f32(dev::to_f32(row_s[i]) - m);
            y_row[i] = dev::from_f32<T>(y * inv);
        }
        // The next row's block reductions reuse `scratch` safely (see
        // block_allreduce); row_s slots are private to their thread.
    }
}

// ---- Dense rows longer than shared memory ---------------------------------------

// Running (max, sum) of x[0..n) over nt cooperating threads: vectors after
// the elements before x's first 16-byte boundary; four vectors in flight.
template <typename T>
__device__ __forceinline__ F32Pair span_stats(const T *__restrict__ x, int64_t n, int64_t tid, int64_t nt) {
    constexpr int P = gpu::vector_width<T>();
    const int64_t misalign = int64_t(reinterpret_cast<uintptr_t>(x) % gpu::kVectorBytes);
    int64_t head = misalign ? (gpu::kVectorBytes - misalign) / int64_t(sizeof(T)) : 0;
    head = head < n ? head : n;
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
    const int64_t misalign = int64_t(reinterpret_cast<uintptr_t>(x) % gpu::kVectorBytes);
    const bool same = misalign == int64_t(reinterpret_cast<uintptr_t>(y) % gpu::kVectorBytes);
    int64_t head = misalign ? (gpu::kVectorBytes - misalign) / int64_t(sizeof(T)) : 0;
    head = same ? (head < n ? head : n) : n;  // no common alignment: all scalar
    for (int64_t i = tid; i < head; i += nt) y[i] = dev::from_f32<T>(exp_f32(dev::to_f32(x[i]) - m) * inv);
    const int64_t nvec = (n - head) / P;
    for (int64_t q = tid; q < nvec; q += nt) {
        Vec<T, P> v = gpu::load_vec<P>(x + head + q * P);
#pragma unroll
        for (int e = 0; e < P; ++e) v.v[e] = dev::from_f32<T>(exp_f32(dev::to_f32(v.v[e]) - m) * inv);
        gpu::store_vec<P>(y + head + q * P, v);
    }
    for (int64_t i = head + nvec * P + tid; i < n; i += nt)
        y[i] = dev::from_f32<T>(exp_f32(dev::to_f32(x[i]) - m) * inv);
}

// Softmax of long rows, one block per row, no workspace.
// Idea: one streaming pass keeps a running (max, sum) per thread (one rescale
// per vector), a block reduction joins them, and a second pass writes: two
// reads and one write of HBM, whatever the row length.
template <typename T>
__global__ void __launch_bounds__(1024)
softmax_rows_long_kernel(const T *__restrict__ in, T *__restrict__ out, int64_t rows, int64_t L,
                         OuterIndex ix) {
    __shared__ gpu::BlockReduceScratch<F32Pair> scratch;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        int64_t io, oo;
        ix.offsets(row, &io, &oo);
        F32Pair ms = span_stats(in + io, L, threadIdx.x, blockDim.x);
        ms = gpu::block_allreduce(ms, CombineOp{}, empty_pair(), scratch);
        span_write(in + io, out + oo, L, ms.a, 1.0f / ms.b, threadIdx.x, blockDim.x);
    }
}

// First pass of split long rows: stats[row * chunks + c] = running (max, sum) of chunk c.
// Idea: a few long rows are cut into chunks so that every SM streams a share.
template <typename T>
__global__ void __launch_bounds__(1024)
softmax_rows_split_stats_kernel(const T *__restrict__ in, F32Pair *__restrict__ stats, int64_t rows,
                                int64_t L, int64_t chunks, int64_t chunk_len, OuterIndex ix) {
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

// Second pass of split long rows: each block joins its row's chunk stats (a
// fixed order, so every block of the row gets the same max and sum) and
// writes its chunk.
template <typename T>
__global__ void __launch_bounds__(1024)
softmax_rows_split_write_kernel(const T *__restrict__ in, T *__restrict__ out,
                                const F32Pair *__restrict__ stats, int64_t rows, int64_t L,
                                int64_t chunks, int64_t chunk_len, OuterIndex ix) {
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

// Geometry of the strided kernels, by value in their parameters.
struct SliceParams {
    int64_t outer = 1;
    int64_t inner = 1;
    int64_t L = 0;
    int64_t in_stride = 0;   // axis stride of the input
    int64_t out_stride = 0;  // axis stride of the output
    int32_t bx = 1;          // tile kernel: threads across the inner run
    int32_t by = 1;          // tile kernel: threads along the axis
    int64_t tiles = 1;       // tile kernel: tiles of bx inner positions per outer position
    OuterIndex ix;
};

// Softmax of many strided slices, one thread per slice (slice = (o, i)).
// Idea: neighbouring threads own neighbouring inner positions, so each step
// along the axis is a coalesced read; one running (max, sum) pass, one write pass.
template <typename T>
__global__ void __launch_bounds__(256)
softmax_strided_thread_kernel(const T *__restrict__ in, T *__restrict__ out, SliceParams p) {
    for (int64_t t = gpu::global_thread_index(); t < p.outer * p.inner; t += gpu::grid_threads()) {
        const int64_t o = t / p.inner;
        const int64_t i = t - o * p.inner;
        int64_t io, oo;
        p.ix.offsets(o, &io, &oo);
        const T *x = in + io + i;
        T *y = out + oo + i;
        F32Pair ms = empty_pair();
        for (int64_t k = 0; k < p.L; ++k) online_add(ms, dev::to_f32(x[k * p.in_stride]));
        const float inv = 1.0f / ms.b;
        for (int64_t k = 0; k < p.L; ++k)
            y[k * p.out_stride] = dev::from_f32<T>(exp_f32(dev::to_f32(x[k * p.in_stride]) - ms.a) * inv);
    }
}

// Softmax of few strided slices: a bx x by tile per (outer, inner tile).
// Idea: bx threads span the inner run (coalesced), by threads split the axis;
// their running pairs meet in a fixed-order shared-memory tree, then the same
// threads write their share of the slice.
template <typename T>
__global__ void __launch_bounds__(256)
softmax_strided_tile_kernel(const T *__restrict__ in, T *__restrict__ out, SliceParams p) {
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
            for (int64_t k = ty; k < p.L; k += p.by) online_add(ms, dev::to_f32(x[k * p.in_stride]));
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
                y[k * p.out_stride] = dev::from_f32<T>(exp_f32(dev::to_f32(x[k * p.in_stride]) - ms.a) * inv);
        __syncthreads();  // the next tile overwrites pairs
    }
}

}  // namespace oprt::softmax::gpu_kernels
