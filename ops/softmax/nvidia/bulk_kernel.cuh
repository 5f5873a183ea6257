// softmax of dense rows loaded by bulk asynchronous copies (sm_90, NVIDIA only;
// softmax_cuda.cu includes it where OPRT_DEVICE_HAS_BULK_COPY_LAUNCH is 1).
//
// Idea: HBM is read once and written once, and the SM always has several
// slices in flight. Each block owns a slice of `slice` elements of a row (the
// whole row, or one of `chunks` slices of it) and a ring of `stages`
// shared-memory buffers: while it reduces and writes the slice in one buffer,
// the copy unit fills the others with the slices of its next rows
// (gpu_bulk_copy.cuh). Rows longer than one block's buffer are split over
// `chunks` blocks that swap their (max, sum) through global memory; the launch
// is cooperative, so all blocks of a row are resident together and the wait
// always ends.
//
// Per slice: a block max, then the exps against it and a block sum (f32 keeps
// the exps in place; 16-bit slices recompute them with the one-instruction
// 2^x of (x - max) * log2(e): the difference first, since max * log2(e)
// rounded would be off by far more than 1 near the range limits), then for split
// rows the row's (max, sum) from every slice's pair, each slice rescaled by
// exp(slice max - row max). A split row's pairs go through one 8-byte slot per
// slice in the workspace (set to all ones before the launch): a block
// publishes its pair with one store and reads the others' with loads issued
// together, without counters or fences (a slot carries its whole message).
#pragma once

#include <cstdint>
#include <type_traits>

#include "operator_runtime/detail/gpu_bulk_copy.cuh"
#include "ops/softmax/nvidia/kernel.cuh"

namespace oprt::softmax::gpu_kernels {

// Geometry of the bulk kernel, by value in its parameters.
struct BulkRows {
    int64_t rows = 0;
    int64_t L = 0;
    int64_t chunks = 1;             // blocks per row
    int64_t slice = 0;              // elements per block (a multiple of the vector width)
    int32_t stages = 3;             // buffers per block (3 .. kBulkMaxStages)
    int64_t row_groups = 1;         // rows in progress at once (gridDim.x / chunks)
    unsigned long long *partials = nullptr;  // split rows: [rows * chunks] (max, sum) bits, all ones at launch
    OuterIndex ix;
};

constexpr int kBulkMaxThreads = 512;
constexpr int kBulkMinStages = 3;  // the slice being written, the next one reduced, one in flight
constexpr int kBulkMaxStages = 8;
// An unpublished (max, sum) slot: a max with all bits set is a NaN, which a
// published max never is (fmaxf skips NaN and starts from -inf).
constexpr unsigned long long kSlotEmpty = ~0ull;

__device__ __forceinline__ unsigned long long pack_pair(F32Pair v) {
    return (unsigned long long)__float_as_uint(v.b) << 32 | __float_as_uint(v.a);
}
__device__ __forceinline__ F32Pair unpack_pair(unsigned long long bits) {
    return F32Pair{__uint_as_float(unsigned(bits)), __uint_as_float(unsigned(bits >> 32))};
}

// One 8-byte store (single-copy atomic): the slot holds the whole pair or
// nothing. Relaxed: the pair is the whole message, nothing else is ordered by it.
__device__ __forceinline__ void publish_slot(unsigned long long *slot, F32Pair v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(slot), "l"(pack_pair(v)) : "memory");
#endif
}

__device__ __forceinline__ unsigned long long load_slot(const unsigned long long *slot) {
    unsigned long long bits = kSlotEmpty;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(bits) : "l"(slot) : "memory");
#endif
    return bits;
}

// Slots each lane of warp 0 reads at once: one round trip to L2 for up to
// 256 slices, instead of one per slot.
constexpr int kSlotBatch = 8;

// The row's (max, sum) from every slice's published pair, joined by warp 0 in
// a fixed order (slice c on lane c % 32, in increasing c, then a butterfly),
// so every block of the row computes the same bits; broadcast through `row_stats`.
__device__ __forceinline__ F32Pair join_row_slices(const BulkRows &p, int64_t row, F32Pair *row_stats) {
    constexpr int W = dev::kWarpSize;
    if (threadIdx.x < unsigned(W)) {
        const unsigned long long *slots = p.partials + row * p.chunks;
        F32Pair acc = empty_pair();
        for (int64_t c0 = threadIdx.x; c0 < p.chunks; c0 += int64_t(kSlotBatch) * W) {
            unsigned long long bits[kSlotBatch];
#pragma unroll
            for (int j = 0; j < kSlotBatch; ++j)
                bits[j] = c0 + j * W < p.chunks ? load_slot(slots + c0 + j * W) : kSlotEmpty;
#pragma unroll
            for (int j = 0; j < kSlotBatch; ++j) {
                if (c0 + j * W >= p.chunks) break;
                while (bits[j] == kSlotEmpty) {  // not published yet: that block is behind
                    __nanosleep(32);
                    bits[j] = load_slot(slots + c0 + j * W);
                }
                acc = CombineOp{}(acc, unpack_pair(bits[j]));
            }
        }
        acc = gpu::warp_allreduce(acc, CombineOp{});
        if (threadIdx.x == 0) *row_stats = acc;
    }
    __syncthreads();
    return *row_stats;
}

// Two 16-bit values in one register, for the packed max (one instruction per
// pair, exact, and like fmaxf it returns the other operand for a NaN).
template <typename T>
struct Packed2;
template <>
struct Packed2<dev::half_t> {
    using type = __half2;
};
template <>
struct Packed2<dev::bf16_t> {
    using type = __nv_bfloat162;
};

// The slice's max; 16-bit slices compare packed pairs and widen once.
template <typename T>
__device__ __forceinline__ float slice_max(const T *x, int nv) {
    constexpr int P = gpu::vector_width<T>();
    if constexpr (std::is_same<T, float>::value) {
        float m = neg_inf();
        for (int q = threadIdx.x; q < nv; q += blockDim.x) {
            const Vec<T, P> v = gpu::load_vec<P>(x + q * P);
#pragma unroll
            for (int e = 0; e < P; ++e) m = fmaxf(m, v.v[e]);
        }
        return m;
    } else {
        using T2 = typename Packed2<T>::type;
        T2 m2;
        m2.x = m2.y = dev::from_f32<T>(neg_inf());
        for (int q = threadIdx.x; q < nv; q += blockDim.x) {
            const Vec<T, P> v = gpu::load_vec<P>(x + q * P);
            const T2 *pairs = reinterpret_cast<const T2 *>(&v);
#pragma unroll
            for (int e = 0; e < P / 2; ++e) m2 = __hmax2(m2, pairs[e]);
        }
        return fmaxf(dev::to_f32(m2.x), dev::to_f32(m2.y));
    }
}

// The (max, sum of exp(x - max)) of the slice in x, as block reductions; f32
// slices keep exp(x - max) in place (each thread its own slots). Loop indices
// are 32-bit: a slice is at most a shared-memory buffer.
template <typename T>
__device__ __forceinline__ F32Pair slice_stats(T *x, int nv, gpu::BlockReduceScratch<float> &scratch) {
    constexpr int P = gpu::vector_width<T>();
    const float m = gpu::block_allreduce(slice_max(x, nv), gpu::MaxOp{}, neg_inf(), scratch);
    float s = 0.0f;
    if constexpr (std::is_same<T, float>::value) {
        if (m != neg_inf()) {  // uniform over the block; exp(-inf - m) = 0, no test per element
            for (int q = threadIdx.x; q < nv; q += blockDim.x) {
                Vec<T, P> v = gpu::load_vec<P>(x + q * P);
#pragma unroll
                for (int e = 0; e < P; ++e) {
                    v.v[e] = exp_f32(v.v[e] - m);
                    s += v.v[e];
                }
                gpu::store_vec<P>(x + q * P, v);
            }
        } else {  // all -inf (and NaN): -inf adds 0, NaN stays NaN
            for (int q = threadIdx.x; q < nv; q += blockDim.x) {
                Vec<T, P> v = gpu::load_vec<P>(x + q * P);
#pragma unroll
                for (int e = 0; e < P; ++e) {
                    v.v[e] = v.v[e] != neg_inf() ? exp_f32(v.v[e] - m) : 0.0f;
                    s += v.v[e];
                }
                gpu::store_vec<P>(x + q * P, v);
            }
        }
    } else if (m != neg_inf()) {  // uniform over the block
        for (int q = threadIdx.x; q < nv; q += blockDim.x) {
            const Vec<T, P> v = gpu::load_vec<P>(x + q * P);
#pragma unroll
            for (int e = 0; e < P; ++e) s += exp_out<T>(dev::to_f32(v.v[e]) - m);
        }
    }
    s = gpu::block_allreduce(s, gpu::SumOp{}, 0.0f, scratch);
    return F32Pair{m, s};
}

// y = the softmax of the slice in x, given the slice's own max (f32: x holds
// exp(x - own max)) and the row's (max, sum). The stores are stated 16-byte
// stores (store_vec_global): plain vector stores came out as four 4-byte ones.
template <typename T>
__device__ __forceinline__ void slice_write(const T *x, T *__restrict__ y, int nv, float own_max, F32Pair row) {
    constexpr int P = gpu::vector_width<T>();
    const float inv = 1.0f / row.b;
    // A row of all -inf: max = -inf and exp(-inf - -inf) = NaN, PyTorch's NaN row.
    if constexpr (std::is_same<T, float>::value) {
        const float scale = exp_f32(own_max - row.a) * inv;
        for (int q = threadIdx.x; q < nv; q += blockDim.x) {
            Vec<T, P> v = gpu::load_vec<P>(x + q * P);
#pragma unroll
            for (int e = 0; e < P; ++e) v.v[e] *= scale;
            gpu::store_vec_global<P>(y + q * P, v);
        }
    } else {
        for (int q = threadIdx.x; q < nv; q += blockDim.x) {
            Vec<T, P> v = gpu::load_vec<P>(x + q * P);
#pragma unroll
            for (int e = 0; e < P; ++e) v.v[e] = dev::from_f32<T>(exp_out<T>(dev::to_f32(v.v[e]) - row.a) * inv);
            gpu::store_vec_global<P>(y + q * P, v);
        }
    }
}

// Iteration k of a block reduces row k + 1's slice before it writes row k's:
// a split row's pairs arrive while the block works, so it rarely waits.
template <typename T>
__global__ void __launch_bounds__(kBulkMaxThreads)
softmax_rows_bulk_kernel(const T *__restrict__ in, T *__restrict__ out, BulkRows p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
    __trap();  // plans choose this kernel only for code built for sm_90 or newer
#else
    gpu::enter_overlapped_kernel();  // a no-op in the cooperative launch of split rows
    constexpr int P = gpu::vector_width<T>();
    extern __shared__ __align__(128) unsigned char smem_raw[];
    T *const ring = reinterpret_cast<T *>(smem_raw);
    __shared__ __align__(8) uint64_t full[kBulkMaxStages];  // one barrier per buffer
    __shared__ gpu::BlockReduceScratch<float> scratch;
    __shared__ F32Pair row_stats;
    const int S = p.stages;
    const int64_t chunk = blockIdx.x % p.chunks;
    const int64_t k0 = chunk * p.slice;
    const int64_t n = p.L - k0 < p.slice ? p.L - k0 : p.slice;  // > 0: chunks = ceil(L / slice)
    const int nv = int(n / P);                                   // whole vectors: L % P == 0
    const unsigned bytes = unsigned(n * int64_t(sizeof(T)));
    const int64_t first = blockIdx.x / p.chunks;
    auto row_of = [&](int64_t k) { return first + k * p.row_groups; };
    auto buffer = [&](int64_t k) { return ring + (k % S) * p.slice; };

    // Thread 0 asks for the slice of the block's k-th row into buffer k % S.
    auto fetch = [&](int64_t k) {
        if (row_of(k) >= p.rows) return;
        int64_t io, oo;
        p.ix.offsets(row_of(k), &io, &oo);
        gpu::bulk::expect_bytes(&full[k % S], bytes);
        gpu::bulk::copy_to_shared(buffer(k), in + io + k0, bytes, &full[k % S]);
    };
    // Waits for row k's slice and reduces it; split rows publish the pair.
    auto stats = [&](int64_t k) {
        gpu::bulk::wait(&full[k % S], unsigned(k / S) & 1u);
        const F32Pair ms = slice_stats(buffer(k), nv, scratch);
        if (p.chunks > 1 && threadIdx.x == 0) publish_slot(&p.partials[row_of(k) * p.chunks + chunk], ms);
        return ms;
    };
    if (threadIdx.x == 0) {
        for (int b = 0; b < S; ++b) gpu::bulk::init(&full[b]);
        for (int k = 0; k < S; ++k) fetch(k);
    }
    __syncthreads();
    if (first >= p.rows) return;

    F32Pair cur = stats(0);
    for (int64_t k = 0; row_of(k) < p.rows; ++k) {
        F32Pair next{};
        if (row_of(k + 1) < p.rows) next = stats(k + 1);
        const F32Pair row = p.chunks > 1 ? join_row_slices(p, row_of(k), &row_stats) : cur;
        int64_t io, oo;
        p.ix.offsets(row_of(k), &io, &oo);
        slice_write(buffer(k), out + oo + k0, nv, cur.a, row);
        __syncthreads();  // every thread is done with buffer k % S: refill it
        if (threadIdx.x == 0) {
            gpu::bulk::fence_before_async_write();
            fetch(k + S);
        }
        cur = next;
    }
#endif
}

}  // namespace oprt::softmax::gpu_kernels
