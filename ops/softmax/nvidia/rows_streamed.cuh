// softmax of dense rows too long for registers, on every GPU backend: a row
// per block with as much of it as fits kept in shared memory
// (rows_block_smem), longer rows in two streaming passes, a block per row
// (rows_long_block_two_pass) or split over blocks when there are few rows
// (rows_long_split_two_pass); their launch structs and launchers.
#pragma once

#include <cstdint>

#include "ops/softmax/nvidia/kernel.cuh"

namespace oprt::softmax::gpu_kernels {

// Threads a block: rows_block_smem's (two blocks an SM), the two-pass kernels'.
constexpr int kSmemRowThreads = 512;
constexpr int kStreamThreads = 1024;

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
__global__ void __launch_bounds__(kSmemRowThreads)
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
                f.v[e] = f.v[e] != neg_inf() ? exp_out(f.v[e] - m) : 0.0f;
                s += f.v[e];
            }
            gpu::store_vec<P>(buf + q * P, f);
        }
        for (int64_t i = cv * P + tid; i < cached; i += nt) {
            buf[i] = buf[i] != neg_inf() ? exp_out(buf[i] - m) : 0.0f;
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
__global__ void __launch_bounds__(kStreamThreads)
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
__global__ void __launch_bounds__(kStreamThreads)
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
__global__ void __launch_bounds__(kStreamThreads)
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

// ---- Launchers -------------------------------------------------------------------


// f32 elements of a row one block can keep in shared memory (a multiple of P).
inline int64_t smem_row_capacity(const gpu::DeviceInfo &info, int64_t P) {
    const int64_t bytes = smem_room(info);
    return bytes > 0 ? bytes / int64_t(sizeof(float)) / P * P : 0;
}

// q.cached, the plan's choice, is bounded by this device's shared memory
// (planned on another GPU, the rest streams twice: the same results).
template <typename T>
oprt_status_t launch_rows_smem(const T *in, T *out, SmemRows q, dev::stream_t stream) {
    gpu::DeviceInfo info;
    oprt_status_t s = gpu::current_device(kExecuteOp, &info);
    if (s != OPRT_SUCCESS) return s;
    const int64_t cap = smem_row_capacity(info, gpu::vector_width<T>());
    if (q.cached > cap) q.cached = cap;
    const size_t smem = size_t(q.cached) * sizeof(float);
    const void *kernel = reinterpret_cast<const void *>(&softmax_rows_smem_kernel<T>);
    if ((s = gpu::allow_dynamic_smem(kExecuteOp, kernel, smem)) != OPRT_SUCCESS) return s;
    gpu::launch_overlapped(&softmax_rows_smem_kernel<T>, grid_of(q.rows), kSmemRowThreads, smem, stream, in, out, q);
    return OPRT_SUCCESS;
}

template <typename T>
void launch_rows_long(const T *in, T *out, int64_t rows, int64_t L, const OuterIndex &ix, dev::stream_t stream) {
    gpu::launch_overlapped(&softmax_rows_long_kernel<T>, grid_of(rows), kStreamThreads, 0, stream, in, out, rows, L,
                           ix);
}

// Split rows: `chunks` blocks a row, each of chunk_len elements (the last
// one shorter), their (max, sum) pairs in `stats` (rows * chunks, workspace).
struct SplitRows {
    int64_t rows = 0;
    int64_t L = 0;
    int64_t chunks = 1;
    int64_t chunk_len = 0;
    OuterIndex ix;
};
inline size_t split_rows_workspace(int64_t rows, int64_t chunks) { return size_t(rows * chunks) * sizeof(F32Pair); }

template <typename T>
void launch_rows_split(const T *in, T *out, F32Pair *stats, const SplitRows &q, dev::stream_t stream) {
    const unsigned blocks = grid_of(q.rows * q.chunks);
    gpu::launch_overlapped(&softmax_rows_split_stats_kernel<T>, blocks, kStreamThreads, 0, stream, in, stats, q.rows,
                           q.L, q.chunks, q.chunk_len, q.ix);
    gpu::launch_overlapped(&softmax_rows_split_write_kernel<T>, blocks, kStreamThreads, 0, stream, in, out,
                           static_cast<const F32Pair *>(stats), q.rows, q.L, q.chunks, q.chunk_len, q.ix);
}

}  // namespace oprt::softmax::gpu_kernels
