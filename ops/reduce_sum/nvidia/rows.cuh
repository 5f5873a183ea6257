// reduce_sum over dense rows (the reduced axis is the last, with stride 1):
// G lanes a row, a block a row, a row split over blocks in two passes or over
// a cluster in one, and the sweep (the sum of all of a 16-bit tensor); their
// launch struct (RowsChoice) and launchers.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ops/reduce_sum/nvidia/kernel.cuh"

namespace oprt::reduce_sum::gpu_kernels {

// Row sums, G lanes per row (G = warp width for rows up to a few thousand
// elements, fewer lanes for very short rows). Idea: a row needs no shared
// memory or barrier: G lanes stream it with vector loads and a shuffle
// butterfly combines them; many rows per block keep the memory system busy.
template <typename Tin, typename Tout, int G>
__global__ void __launch_bounds__(256)
reduce_rows_group_kernel(const Tin *__restrict__ in, Tout *__restrict__ out, int64_t rows, int64_t L,
                         OuterIndex ix) {
    gpu::enter_overlapped_kernel_wait_first();
    const int lane = int(threadIdx.x) % G;
    const int64_t groups_per_block = blockDim.x / G;
    // `base` is the same for the whole block, so every lane of a warp runs the
    // same number of iterations and reaches the shuffles together.
    for (int64_t base = int64_t(blockIdx.x) * groups_per_block; base < rows;
         base += int64_t(gridDim.x) * groups_per_block) {
        const int64_t row = base + threadIdx.x / G;
        float acc = 0.0f;
        int64_t io = 0, oo = 0;
        if (row < rows) {
            ix.offsets(row, &io, &oo);
            acc = span_sum(in + io, L, lane, G);
        }
        acc = gpu::group_allreduce<G>(acc, gpu::SumOp{});
        if (row < rows && lane == 0) out[oo] = dev::from_f32<Tout>(acc);
    }
}

// Blocks of kernels with kBatch = 16 vectors in flight a thread hold 64
// registers of loads alone: at most 512 threads, so the compiler may use more
// than the 64 registers a thread that 1024-thread blocks allow.
constexpr int max_threads_for_batch(int batch) { return batch > 8 ? 512 : 1024; }

// The sweep's reads, added into acc (the running sums of each lane of a
// vector): slabs of blockDim.x * B vectors of x (nvec in all), slab s read by
// block s % P in round s / P (P = gridDim.x), so the P blocks read memory as
// one moving front, each thread's B loads of a slab issued together and
// added as a tree; then the vectors past the last whole slab, one a thread
// over the grid.
template <typename T, int B>
__device__ __forceinline__ void sweep_vectors(const T *__restrict__ x, int64_t nvec,
                                              float (&acc)[gpu::vector_width<T>()]) {
    constexpr int W = gpu::vector_width<T>();
    const int64_t Tn = blockDim.x, P = gridDim.x;
    const int64_t slab = Tn * B;  // vectors
    const int64_t full = nvec / slab;
    for (int64_t s = blockIdx.x; s < full; s += P) {
        const T *p = x + (s * slab + threadIdx.x) * W;
        Vec<T, W> v[B];
#pragma unroll
        for (int u = 0; u < B; ++u) v[u] = gpu::load_vec<W>(p + u * Tn * W);
#pragma unroll
        for (int e = 0; e < W; ++e) {
            float t[B];
#pragma unroll
            for (int u = 0; u < B; ++u) t[u] = dev::to_f32(v[u].v[e]);
#pragma unroll
            for (int h = 1; h < B; h *= 2)
#pragma unroll
                for (int u = 0; u + h < B; u += 2 * h) t[u] += t[u + h];
            acc[e] += t[0];
        }
    }
    for (int64_t q = full * slab + int64_t(blockIdx.x) * Tn + threadIdx.x; q < nvec; q += P * Tn) {
        const Vec<T, W> v = gpu::load_vec<W>(x + q * W);
#pragma unroll
        for (int e = 0; e < W; ++e) acc[e] += dev::to_f32(v.v[e]);
    }
}

// The sum of all n elements of one dense run, first pass: partial[b] = block
// b's share. Idea: the whole vectors read as one moving front of the P =
// gridDim.x blocks (sweep_vectors), the elements before the first 16-byte
// boundary and after the last whole vector one by one. A second pass adds the
// P partials in a fixed order.
template <typename Tin, int B>
__global__ void __launch_bounds__(512, 1)
reduce_sweep_kernel(const Tin *__restrict__ in, float *__restrict__ partial, int64_t n) {
    gpu::enter_overlapped_kernel_wait_first();
    constexpr int W = gpu::vector_width<Tin>();
    __shared__ gpu::BlockReduceScratch<float> scratch;
    const int64_t T = blockDim.x, P = gridDim.x;
    const int64_t head = gpu::elements_before_vector_boundary(in, n);
    const int64_t nvec = (n - head) / W;
    float acc[W] = {};
    sweep_vectors<Tin, B>(in + head, nvec, acc);
    const int64_t g = int64_t(blockIdx.x) * T + threadIdx.x;  // this thread of the grid
    if (g < head) acc[0] += dev::to_f32(in[g]);  // head < W: one element a thread
    for (int64_t i = head + nvec * W + g; i < n; i += P * T) acc[1] += dev::to_f32(in[i]);
    float s = 0.0f;
#pragma unroll
    for (int e = 0; e < W; ++e) s += acc[e];
    s = gpu::block_allreduce(s, gpu::SumOp{}, 0.0f, scratch);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

// Row sums, one block per row, for rows too long for one warp.
// Idea: the whole block streams the row with vector loads; warps combine with
// shuffles and then through one shared-memory slot per warp.
template <typename Tin, typename Tout, int kBatch = 8>
__global__ void __launch_bounds__(max_threads_for_batch(kBatch))
reduce_rows_block_kernel(const Tin *__restrict__ in, Tout *__restrict__ out, int64_t rows, int64_t L,
                         OuterIndex ix) {
    gpu::enter_overlapped_kernel_wait_first();
    __shared__ gpu::BlockReduceScratch<float> scratch;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        int64_t io, oo;
        ix.offsets(row, &io, &oo);
        float acc = span_sum<Tin, kBatch>(in + io, L, threadIdx.x, blockDim.x);
        acc = gpu::block_allreduce(acc, gpu::SumOp{}, 0.0f, scratch);
        if (threadIdx.x == 0) out[oo] = dev::from_f32<Tout>(acc);
    }
}

// Few long rows (the sum of all elements, say) cut into chunks so every SM
// streams a share: block b sums chunk b % chunks of row b / chunks into
// partial[b]; a second kernel adds each row's partials in a fixed order:
// deterministic, no atomics, no zeroing of the output.
template <typename Tin, int kBatch = 8>
__global__ void __launch_bounds__(max_threads_for_batch(kBatch))
reduce_rows_split_kernel(const Tin *__restrict__ in, float *__restrict__ partial, int64_t rows, int64_t L,
                         int64_t chunks, int64_t chunk_len, OuterIndex ix) {
    gpu::enter_overlapped_kernel_wait_first();
    __shared__ gpu::BlockReduceScratch<float> scratch;
    for (int64_t b = blockIdx.x; b < rows * chunks; b += gridDim.x) {
        const int64_t row = b / chunks;
        const int64_t k0 = (b - row * chunks) * chunk_len;
        const int64_t n = L - k0 < chunk_len ? L - k0 : chunk_len;
        int64_t io, oo;
        ix.offsets(row, &io, &oo);
        float acc = span_sum<Tin, kBatch>(in + io + k0, n, threadIdx.x, blockDim.x);
        acc = gpu::block_allreduce(acc, gpu::SumOp{}, 0.0f, scratch);
        if (threadIdx.x == 0) partial[b] = acc;
    }
}

// Row sums of rows too long for one block, one cluster of C blocks per row.
// Idea: each block streams one chunk of the row; the blocks' partial sums meet
// through distributed shared memory and block 0 adds them in rank order: one
// launch, no workspace, the same sum every run.
template <typename Tin, typename Tout, int kBatch = 8>
__global__ void __launch_bounds__(max_threads_for_batch(kBatch))
reduce_rows_cluster_kernel(const Tin *__restrict__ in, Tout *__restrict__ out, int64_t rows, int64_t L,
                           int64_t chunk_len, OuterIndex ix) {
    gpu::enter_overlapped_kernel_wait_first();
    __shared__ gpu::BlockReduceScratch<float> scratch;
    __shared__ float slot[2];  // this block's partial, by row parity
    const unsigned C = dev::cluster_size();
    const unsigned rank = dev::cluster_rank();
    int parity = 0;
    // Every block of a cluster runs the same rows, so all reach each cluster barrier.
    for (int64_t row = blockIdx.x / C; row < rows; row += gridDim.x / C, parity ^= 1) {
        const int64_t k0 = int64_t(rank) * chunk_len;
        const int64_t n = L - k0 < 0 ? 0 : (L - k0 < chunk_len ? L - k0 : chunk_len);
        int64_t io, oo;
        ix.offsets(row, &io, &oo);
        float acc = span_sum<Tin, kBatch>(in + io + k0, n, threadIdx.x, blockDim.x);
        acc = gpu::block_allreduce(acc, gpu::SumOp{}, 0.0f, scratch);
        if (threadIdx.x == 0) slot[parity] = acc;
        // Release/acquire: every partial is written before block 0 reads it; a
        // slot is next written two rows later, after the next cluster barrier,
        // which block 0 reaches only after these reads.
        dev::cluster_sync();
        if (rank == 0 && threadIdx.x == 0) {
            float total = 0.0f;
            for (unsigned r = 0; r < C; ++r) total += *dev::cluster_map(&slot[parity], r);
            out[oo] = dev::from_f32<Tout>(total);
        }
    }
    dev::cluster_sync();  // no block exits while block 0 may still read its slot
}

// ---- Launchers -------------------------------------------------------------------

// How rows of length L are summed: G lanes a row (group, lanes), or a block a
// row of `threads` threads with `batch` vectors in flight a thread (the block
// kernel's kBatch). The plan's rows_choice picks it.
struct RowsChoice {
    bool group;
    int lanes;
    int threads;
    int batch;
};
constexpr int kGroupThreads = 256;  // reduce_rows_group_kernel's __launch_bounds__

// Calls f(std::integral_constant<int, G>) for the runtime lane count g.
template <int G, typename F>
void with_lanes(int g, F f) {
    if (g == G) {
        f(std::integral_constant<int, G>{});
    } else if constexpr (G > 1) {
        with_lanes<G / 2>(g, f);
    }
}

// Row sums of `rows` rows of length L (L >= 1), `lanes` lanes a row (a power of
// two up to the warp width).
template <typename Tin, typename Tout>
void launch_row_groups(const Tin *in, Tout *out, int64_t rows, int64_t L, int lanes, const OuterIndex &ix,
                       dev::stream_t stream) {
    with_lanes<dev::kWarpSize>(lanes, [&](auto g) {
        constexpr int G = decltype(g)::value;
        const int64_t blocks = gpu::clamp64(gpu::ceil_div(rows, kGroupThreads / G), 1, gpu::kMaxGridBlocks);
        gpu::launch_overlapped(&reduce_rows_group_kernel<Tin, Tout, G>, unsigned(blocks), kGroupThreads, 0, stream, in,
                               out, rows, L, ix);
    });
}

// Row sums of `rows` rows of length L (L >= 1), a block of `threads` a row,
// `batch` (8, or 16 for 16-bit) vectors in flight a thread.
template <typename Tin, typename Tout>
void launch_row_blocks(const Tin *in, Tout *out, int64_t rows, int64_t L, int threads, int batch, const OuterIndex &ix,
                       dev::stream_t stream) {
    const unsigned blocks = unsigned(gpu::clamp64(rows, 1, gpu::kMaxGridBlocks));
    if constexpr (sizeof(Tin) == 2) {
        if (batch == 16) {
            gpu::launch_overlapped(&reduce_rows_block_kernel<Tin, Tout, 16>, blocks, unsigned(threads), 0, stream, in,
                                   out, rows, L, ix);
            return;
        }
    }
    gpu::launch_overlapped(&reduce_rows_block_kernel<Tin, Tout, 8>, blocks, unsigned(threads), 0, stream, in, out,
                           rows, L, ix);
}

// Split rows: `chunks` blocks a row of chunk_len elements, `batch` (8 or 16)
// vectors in flight a thread, each block's sum into partial[row * chunks +
// chunk] (workspace); then groups of finish_lanes lanes sum each row's partials.
template <typename T>
void launch_rows_split(const T *in, T *out, float *partial, int64_t rows, int64_t L, int threads, int64_t chunks,
                       int64_t chunk_len, int batch, int finish_lanes, const OuterIndex &ix, dev::stream_t stream) {
    const unsigned blocks = grid_of(rows * chunks);
    bool launched = false;
    if constexpr (sizeof(T) == 2) {
        if (batch == 16) {
            gpu::launch_overlapped(&reduce_rows_split_kernel<T, 16>, blocks, unsigned(threads), 0, stream, in, partial,
                                   rows, L, chunks, chunk_len, ix);
            launched = true;
        }
    }
    if (!launched)
        gpu::launch_overlapped(&reduce_rows_split_kernel<T, 8>, blocks, unsigned(threads), 0, stream, in, partial, rows,
                               L, chunks, chunk_len, ix);
    OuterIndex fix = ix;  // partials of a row are dense, `chunks` apart
    fix.in_row_stride = chunks;
    launch_row_groups<float, T>(partial, out, rows, chunks, finish_lanes, fix, stream);
}

// The sweep over all L elements: P blocks of `threads`, kSweepBatch vectors a
// thread a slab, P partial sums (workspace); then finish_lanes lanes sum them.
constexpr int kSweepBatch = 4;
template <typename T>
void launch_sweep(const T *in, T *out, float *partial, int64_t L, int threads, int64_t P, int finish_lanes,
                  const OuterIndex &ix, dev::stream_t stream) {
    gpu::launch_overlapped(&reduce_sweep_kernel<T, kSweepBatch>, unsigned(P), unsigned(threads), 0, stream, in, partial,
                           L);
    OuterIndex fix = ix;  // one row of P partials
    fix.in_row_stride = P;
    launch_row_groups<float, T>(partial, out, 1, P, finish_lanes, fix, stream);
}

#if OPRT_DEVICE_HAS_CLUSTER_LAUNCH
template <typename T>
oprt_status_t launch_rows_cluster(const T *in, T *out, int64_t rows, int64_t L, int threads, int64_t C,
                                  int64_t chunk_len, const OuterIndex &ix, dev::stream_t stream) {
    const unsigned blocks = unsigned(gpu::clamp64(rows, 1, gpu::kMaxGridBlocks / C) * C);
    return gpu::launch_clustered(kExecuteOp, "cudaLaunchKernelEx(reduce_rows_cluster_kernel)",
                                 &reduce_rows_cluster_kernel<T, T>, blocks,
                                 unsigned(C), unsigned(threads), 0, stream, in, out, rows, L, chunk_len, ix);
}
#endif

}  // namespace oprt::reduce_sum::gpu_kernels
