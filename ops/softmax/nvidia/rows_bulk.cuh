// softmax of dense rows loaded by bulk asynchronous copies, its launch
// struct (BulkRows) and launcher (sm_90, NVIDIA only; softmax_cuda.cu
// includes it where OPRT_DEVICE_HAS_BULK_COPY_LAUNCH is 1; design:
// docs/kernels/softmax.md, step 5).
//
// HBM is read once and written once, with several slices in flight: each
// block owns a slice of a row (the whole row, or one of `chunks`) and a ring
// of `stages` shared-memory buffers that the copy unit fills with its next
// rows' slices while it reduces and writes the current one. Per slice: a
// block max, the exps and a block sum (f32 keeps the exps in place; 16-bit
// slices recompute them in the write pass, one FFMA and one 2^x an element).
// Split rows swap their slices' (max, sum) through one 8-byte workspace slot
// per slice (all ones before the launch; a slot carries its whole message, so
// no counters or fences); the launch is cooperative, so every block of a row
// is resident and the wait ends.
#pragma once

#include <cstdint>
#include <type_traits>

#include "runtime/gpu/gpu_bulk_copy.cuh"
#include "ops/softmax/nvidia/kernel.cuh"

namespace oprt::softmax::gpu_kernels {

// Geometry of the bulk kernel, by value in its parameters.
struct BulkRows {
    int64_t rows = 0;
    int64_t L = 0;
    int64_t chunks = 1;             // blocks per row
    int64_t slice = 0;              // elements per block (a multiple of the vector width)
    int32_t stages = 3;             // buffers per block (3 .. kBulkMaxStages)
    int64_t row_groups = 1;         // gridDim.x / chunks; group g takes rows g, g + row_groups, ...
    unsigned long long *partials = nullptr;  // split rows: [rows * chunks] (max, sum) bits, all ones at launch
    unsigned *claims = nullptr;              // split rows: [chunks] rows claimed past the first
                                             // stages * row_groups, minus one (all ones at launch)
    OuterIndex ix;
};

constexpr int kBulkMaxThreads = 512;
constexpr int kBulkMinStages = 3;  // the slice being written, the next one reduced, one in flight
constexpr int kBulkMaxStages = 8;
// An unpublished slot: a max with all bits set is a NaN, which a published
// max never is (fmaxf skips NaN and starts from -inf).
constexpr unsigned long long kSlotEmpty = ~0ull;

__device__ __forceinline__ unsigned long long pack_pair(F32Pair v) {
    return (unsigned long long)__float_as_uint(v.b) << 32 | __float_as_uint(v.a);
}
__device__ __forceinline__ F32Pair unpack_pair(unsigned long long bits) {
    return F32Pair{__uint_as_float(unsigned(bits)), __uint_as_float(unsigned(bits >> 32))};
}

// One 8-byte store (single-copy atomic): the slot holds the whole pair or
// nothing. Relaxed: nothing else is ordered by it.
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
// 128 slices (more would hold more registers: the join keeps a batch for its
// two passes).
constexpr int kSlotBatch = 4;

// Warp 0 reads the first kEarlySlots slots of each lane (slice c on lane c %
// 32) before the block reduces its next slice, so the round trip to L2
// overlaps that work instead of stalling the block at the join (ncu, bf16
// (2048, 65536): 42% of all stall samples on the barrier behind the slot
// loads). kSlotEmpty elsewhere.
constexpr int kEarlySlots = 4;
static_assert(kEarlySlots <= kSlotBatch, "the early slots are part of the join's first batch");
struct EarlySlots {
    unsigned long long bits[kEarlySlots];
};
__device__ __forceinline__ EarlySlots load_early_slots(const BulkRows &p, int64_t row) {
    EarlySlots e;
    const bool warp0 = p.chunks > 1 && threadIdx.x < unsigned(dev::kWarpSize);
#pragma unroll
    for (int j = 0; j < kEarlySlots; ++j) {
        const int64_t c = threadIdx.x + j * dev::kWarpSize;
        e.bits[j] = warp0 && c < p.chunks ? load_slot(p.partials + row * p.chunks + c) : kSlotEmpty;
    }
    return e;
}

// sum * exp(max - m): a slice's sum against the larger max m (CombineOp's rule:
// a slice of only -inf adds nothing, a NaN sum stays NaN).
__device__ __forceinline__ float sum_against(F32Pair v, float m) { return v.b == 0.0f ? 0.0f : v.b * exp_f32(v.a - m); }

// The row's (max, sum) from every slice's published pair, joined by warp 0:
// the max first, then every slice's sum against it (independent exps, not a
// chain of combines: the join is on every block's critical path). A lane
// joins its slices in increasing c, then butterflies join the lanes: a fixed
// order, the same bits in every block of the row; broadcast through
// `row_stats`. `early`: load_early_slots; slots still empty are read again.
__device__ __forceinline__ F32Pair join_row_slices(const BulkRows &p, int64_t row, const EarlySlots &early,
                                                   F32Pair *row_stats) {
    constexpr int W = dev::kWarpSize;
    if (threadIdx.x < unsigned(W)) {
        const unsigned long long *slots = p.partials + row * p.chunks;
        F32Pair acc = empty_pair();
        for (int64_t c0 = threadIdx.x; c0 < p.chunks; c0 += int64_t(kSlotBatch) * W) {
            unsigned long long bits[kSlotBatch];
#pragma unroll
            for (int j = 0; j < kSlotBatch; ++j) {
                const int64_t c = c0 + j * W;
                if (c0 == threadIdx.x && j < kEarlySlots) bits[j] = early.bits[j];  // the first batch
                else bits[j] = c < p.chunks ? load_slot(slots + c) : kSlotEmpty;
            }
            F32Pair batch = empty_pair();
#pragma unroll
            for (int j = 0; j < kSlotBatch; ++j) {
                if (c0 + j * W >= p.chunks) break;
                while (bits[j] == kSlotEmpty) {  // not published yet: that block is behind
                    __nanosleep(32);
                    bits[j] = load_slot(slots + c0 + j * W);
                }
                batch.a = fmaxf(batch.a, unpack_pair(bits[j]).a);
            }
#pragma unroll
            for (int j = 0; j < kSlotBatch; ++j) {
                if (c0 + j * W >= p.chunks) break;
                batch.b += sum_against(unpack_pair(bits[j]), batch.a);
            }
            acc = c0 == threadIdx.x ? batch : CombineOp{}(acc, batch);  // more than one batch: over 128 slices
        }
        const float m = gpu::warp_allreduce(acc.a, gpu::MaxOp{});
        const float sum = gpu::warp_allreduce(sum_against(acc, m), gpu::SumOp{});
        if (threadIdx.x == 0) *row_stats = F32Pair{m, sum};
    }
    __syncthreads();
    return *row_stats;
}

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
    } else {  // packed pairs: one exact instruction a pair, which like fmaxf skips a NaN
        using T2 = std::conditional_t<std::is_same<T, dev::half_t>::value, __half2, __nv_bfloat162>;
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

// ---- 16-bit slices: exp as the special-function unit's 2^x ------------------
// exp(x - m) = 2^((x - m) log2(e)), the exponent minus a constant c as one
// FFMA: x log2(e) - (m log2(e) + c) when |m| <= kFoldMaxAbs ("folded": the
// roundings cost under 2^-16 in the exponent, a relative 1e-5, far below a
// 16-bit output's half unit), else (x - m) log2(e) - c (m log2(e) rounded
// would be off by more than 1 near the range limits). The loops walk
// pointers and widen bf16 pairs with gpu::widen.
constexpr float kFoldMaxAbs = 64.0f;

__device__ __forceinline__ bool exp2_folds(float m) { return fabsf(m) <= kFoldMaxAbs; }

// mc = m log2(e) + c when folded, c otherwise.
template <bool kFolded>
__device__ __forceinline__ float exp2_arg(float x, float m, float mc) {
    return kFolded ? fmaf(x, kLog2e, -mc) : fmaf(x - m, kLog2e, -mc);
}

// Whether the exponent is folded, and its constant mc (exp2_arg).
struct Exp2Form {
    bool folded;
    float mc;
};
// The sums' form: c = 0.
__device__ __forceinline__ Exp2Form sum_exponent(float m) {
    return exp2_folds(m) ? Exp2Form{true, m * kLog2e} : Exp2Form{false, 0.0f};
}
// exp(x - m) of one element (times 2^-c) by the loops' formula (the same bits).
__device__ __forceinline__ float exp2_element(float x, float m, Exp2Form w) {
    return dev::exp2_approx(w.folded ? exp2_arg<true>(x, m, w.mc) : exp2_arg<false>(x, m, w.mc));
}

// The slice's sum of exp(x - m) (c = 0). -inf elements add 2^-inf = 0.
template <typename T, bool kFolded>
__device__ __forceinline__ float slice_exp2_sum(const T *x, int nv, float m, float mc) {
    constexpr int P = gpu::vector_width<T>();
    const int step = int(blockDim.x) * P;
    float s = 0.0f;
    for (const T *xp = x + threadIdx.x * P, *end = x + nv * P; xp < end; xp += step) {
        float f[P];
        gpu::widen(gpu::load_vec<P>(xp), f);
#pragma unroll
        for (int e = 0; e < P; ++e) s += dev::exp2_approx(exp2_arg<kFolded>(f[e], m, mc));
    }
    return s;
}

// y = exp(x - m) / sum with c = log2(sum): one FFMA and one 2^x per element.
template <typename T, bool kFolded>
__device__ __forceinline__ void slice_exp2_write(const T *x, T *__restrict__ y, int nv, float m, float mc) {
    constexpr int P = gpu::vector_width<T>();
    const int step = int(blockDim.x) * P;
    y += threadIdx.x * P;
    for (const T *xp = x + threadIdx.x * P, *end = x + nv * P; xp < end; xp += step, y += step) {
        float f[P];
        gpu::widen(gpu::load_vec<P>(xp), f);
        Vec<T, P> v;
#pragma unroll
        for (int e = 0; e < P; ++e) v.v[e] = dev::from_f32<T>(dev::exp2_approx(exp2_arg<kFolded>(f[e], m, mc)));
        gpu::store_vec_global<P>(y, v);
    }
}

// The (max, sum of exp(x - max)) of the slice in x, as block reductions; f32
// slices keep exp(x - max) in place (each thread its own slots). 32-bit
// indices: a slice fits a buffer. kEnd (kHeads): this thread's end element
// xe (-inf where it has none) counts too.
template <typename T, bool kEnd = false>
__device__ __forceinline__ F32Pair slice_stats(T *x, int nv, gpu::BlockReduceScratch<float> &scratch,
                                               float xe = 0.0f) {
    constexpr int P = gpu::vector_width<T>();
    float own = slice_max(x, nv);
    if constexpr (kEnd) own = fmaxf(own, xe);
    const float m = gpu::block_allreduce(own, gpu::MaxOp{}, neg_inf(), scratch);
    float s = 0.0f;
    if (m == neg_inf()) {  // only -inf and NaN (the max skips NaN; uniform over the block)
        if constexpr (std::is_same<T, float>::value) {  // exp(x - max): 0 for -inf, NaN for NaN
            for (int q = threadIdx.x; q < nv; q += blockDim.x) {
                Vec<T, P> v = gpu::load_vec<P>(x + q * P);
#pragma unroll
                for (int e = 0; e < P; ++e) {
                    if (v.v[e] == neg_inf()) v.v[e] = 0.0f;
                    s += v.v[e];
                }
                gpu::store_vec<P>(x + q * P, v);
            }
        } else {  // the sum is 0, or a NaN of the slice if there is one
            for (int q = threadIdx.x; q < nv; q += blockDim.x) {
                float f[P];
                gpu::widen(gpu::load_vec<P>(x + q * P), f);
#pragma unroll
                for (int e = 0; e < P; ++e)
                    if (f[e] != f[e]) s = f[e];
            }
        }
        if constexpr (kEnd)
            if (xe != xe) s = xe;
    } else if constexpr (std::is_same<T, float>::value) {  // exp(-inf - m) = 0: no test per element
        for (int q = threadIdx.x; q < nv; q += blockDim.x) {
            Vec<T, P> v = gpu::load_vec<P>(x + q * P);
#pragma unroll
            for (int e = 0; e < P; ++e) {
                v.v[e] = exp_f32(v.v[e] - m);
                s += v.v[e];
            }
            gpu::store_vec<P>(x + q * P, v);
        }
        if constexpr (kEnd) s += exp_f32(xe - m);
    } else {
        const Exp2Form w = sum_exponent(m);
        s = w.folded ? slice_exp2_sum<T, true>(x, nv, m, w.mc) : slice_exp2_sum<T, false>(x, nv, m, w.mc);
        if constexpr (kEnd) s += exp2_element(xe, m, w);
    }
    s = gpu::block_allreduce(s, gpu::SumOp{}, 0.0f, scratch);
    return F32Pair{m, s};
}

// The 16-bit write pass's exponent x log2(e) - (max log2(e) + log2(sum)):
// the division folded into the constant.
__device__ __forceinline__ Exp2Form write_exponent(F32Pair row) {
    const float lg = dev::log2_approx(row.b);
    return exp2_folds(row.a) ? Exp2Form{true, fmaf(row.a, kLog2e, lg)} : Exp2Form{false, lg};
}

// y = the softmax of the slice in x, given the slice's own max (f32: x holds
// exp(x - own max)) and the row's (max, sum). Stated 16-byte stores: plain
// vector stores came out as four 4-byte ones.
template <typename T>
__device__ __forceinline__ void slice_write(const T *x, T *__restrict__ y, int nv, float own_max, F32Pair row) {
    constexpr int P = gpu::vector_width<T>();
    // A row of all -inf: max = -inf and exp(-inf - -inf) = NaN, PyTorch's NaN row.
    if constexpr (std::is_same<T, float>::value) {
        const float scale = exp_f32(own_max - row.a) / row.b;
        for (int q = threadIdx.x; q < nv; q += blockDim.x) {
            Vec<T, P> v = gpu::load_vec<P>(x + q * P);
#pragma unroll
            for (int e = 0; e < P; ++e) v.v[e] *= scale;
            gpu::store_vec_global<P>(y + q * P, v);
        }
    } else {
        const Exp2Form w = write_exponent(row);
        if (w.folded) slice_exp2_write<T, true>(x, y, nv, row.a, w.mc);
        else slice_exp2_write<T, false>(x, y, nv, row.a, w.mc);
    }
}

// The output of an end element xe by slice_write's formula (the same bits).
template <typename T>
__device__ __forceinline__ T end_output(float xe, float own_max, F32Pair row) {
    if constexpr (std::is_same<T, float>::value) {
        // A slice of only -inf stored exp(-inf - -inf) as 0, not NaN (slice_stats).
        const float e = xe == neg_inf() ? 0.0f : exp_f32(xe - own_max);
        return e * (exp_f32(own_max - row.a) / row.b);
    } else {
        return dev::from_f32<T>(exp2_element(xe, row.a, write_exponent(row)));
    }
}

// A row off 16-byte boundaries (kHeads): the buffer holds its middle, whole
// vectors from the row's first 128-byte line on (copies at differing offsets
// within their lines ran ~5% slower; H200, 2026-11-30); the head before it
// and the up to P - 1 elements after it (the tail) go one per thread:
// threads 0 .. kLineElems - 1 the head, kLineElems on the tail.
constexpr int64_t kLineBytes = 128;
struct RowEnds {
    int64_t head;  // elements before the middle
    int64_t mid;   // elements of the middle: whole vectors
};
template <typename T>
__device__ __forceinline__ RowEnds row_ends(const T *x, int64_t L) {
    constexpr int64_t P = gpu::vector_width<T>();
    const int64_t misalign = int64_t(reinterpret_cast<uintptr_t>(x) % kLineBytes);
    int64_t h = misalign ? (kLineBytes - misalign) / int64_t(sizeof(T)) : 0;
    if (h > L) h = L;
    return RowEnds{h, (L - h) / P * P};
}
// Of the middle, the elements from k0 on that a block of `slice` takes (0
// past its end: the middle is shorter than the row by its head and tail).
__device__ __forceinline__ int64_t middle_share(RowEnds r, int64_t k0, int64_t slice) {
    const int64_t left = r.mid - k0;
    return left <= 0 ? 0 : left < slice ? left : slice;
}
// This thread's element of the head or tail of x (L elements), or -1
// (blocks have at least kLineElems + P threads).
template <typename T>
__device__ __forceinline__ int64_t row_end_element(RowEnds r, int64_t L) {
    constexpr int64_t kLineElems = kLineBytes / int64_t(sizeof(T));
    const int64_t t = int64_t(threadIdx.x);
    if (t < r.head) return t;
    if (t >= kLineElems && t - kLineElems < L - r.head - r.mid) return r.head + r.mid + (t - kLineElems);
    return -1;
}

// Iteration k of a block reduces row k + 1's slice before it writes row k's:
// a split row's pairs arrive while the block works.
// kHeads: rows off 16-byte boundaries or not whole vectors, in and out at
// the same offset: the buffers get the row's aligned middle, the ends go one
// per thread (of the row's first block, for split rows).
// kClaim (split rows): a block's first `stages` rows are those of its row
// group, the next ones claimed from its slice's counter, one claim ahead.
// Rows are claimed and worked in increasing order, so the lowest unfinished
// row always has a block for every slice: the joins end.
template <typename T, bool kHeads = false, bool kClaim = false>
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
    // The block's k-th row (k counts iterations: 32 bits, a row has >= 1024 elements).
    // kClaim: rows k .. k + S - 1 sit in slots k % 8 ..., written by thread 0
    // when it asks for the row's slice, read by the others after a barrier.
    static_assert((kBulkMaxStages & (kBulkMaxStages - 1)) == 0, "row slots: a power of two, at least S");
    __shared__ int64_t row_slot[kBulkMaxStages];
    auto row_of = [&](int k) {
        if constexpr (kClaim) return row_slot[k & (kBulkMaxStages - 1)];
        else return first + int64_t(k) * p.row_groups;
    };
    // Thread 0's next row (kClaim): the atomic's round trip to L2 overlaps a
    // whole row's work before the row is needed.
    unsigned claimed = 0;  // rows past the first S * row_groups
    auto claim = [&] { return atomicAdd(&p.claims[chunk], 1u) + 1u; };
    // Row k sits in buffer k % S, tracked as a running index (no division);
    // bit b of `phases` is the parity the next wait on buffer b expects.
    auto buffer = [&](int b) { return ring + b * p.slice; };
    uint32_t phases = 0;
    auto wait_buffer = [&](int b) {
        gpu::bulk::wait(&full[b], (phases >> b) & 1u);
        phases ^= 1u << b;
    };

    // Thread 0 asks for the slice of the block's k-th row into buffer b.
    auto fetch = [&](int k, int b) {
        if (row_of(k) >= p.rows) return;
        int64_t io, oo;
        p.ix.offsets(row_of(k), &io, &oo);
        if constexpr (kHeads) {  // the block's share of the row's aligned middle (maybe none)
            const RowEnds r = row_ends(in + io, p.L);
            const unsigned share_bytes = unsigned(middle_share(r, k0, p.slice) * int64_t(sizeof(T)));
            gpu::bulk::expect_bytes(&full[b], share_bytes);
            if (share_bytes > 0) gpu::bulk::copy_to_shared(buffer(b), in + io + r.head + k0, share_bytes, &full[b]);
        } else {
            gpu::bulk::expect_bytes(&full[b], bytes);
            gpu::bulk::copy_to_shared(buffer(b), in + io + k0, bytes, &full[b]);
        }
    };
    // Row k is done with buffer b (every thread): thread 0 asks for row k + S into it.
    auto refill = [&](int k, int b) {
        __syncthreads();
        if (threadIdx.x == 0) {
            gpu::bulk::fence_before_async_write();
            if constexpr (kClaim) {
                row_slot[(k + S) & (kBulkMaxStages - 1)] = int64_t(S) * p.row_groups + claimed;
                claimed = claim();
            }
            fetch(k + S, b);
        }
    };
    if (threadIdx.x == 0) {
        for (int b = 0; b < S; ++b) gpu::bulk::init(&full[b]);
        if constexpr (kClaim) {
            for (int k = 0; k < S; ++k) row_slot[k] = first + int64_t(k) * p.row_groups;
            claimed = claim();
        }
        for (int k = 0; k < S; ++k) fetch(k, k);
    }
    __syncthreads();
    if (first >= p.rows) return;

    // kHeads: this thread's end element of the block's k-th row (-inf: none),
    // loaded a row ahead of its use.
    auto end_element = [&](int k) {
        if (row_of(k) >= p.rows) return neg_inf();
        int64_t io, oo;
        p.ix.offsets(row_of(k), &io, &oo);
        const int64_t e = row_end_element<T>(row_ends(in + io, p.L), p.L);
        return e >= 0 ? dev::to_f32(in[io + e]) : neg_inf();
    };
    // Row k's offsets and this block's vectors of it (kHeads: of the row's
    // aligned middle, which starts r.head elements in).
    auto share = [&](int k, int64_t *io, int64_t *oo, RowEnds *r) {
        p.ix.offsets(row_of(k), io, oo);
        if constexpr (kHeads) {
            *r = row_ends(in + *io, p.L);
            return int(middle_share(*r, k0, p.slice) / P);
        } else {
            *r = RowEnds{0, p.L};
            return nv;
        }
    };
    // kHeads: the row's ends go one per thread of its first block.
    auto own_end = [&](int k) { return kHeads && chunk == 0 ? end_element(k) : neg_inf(); };
    // The write needs row k's share again. f32 rows off boundaries carry it
    // from the reduce (11-18% faster: their instance no longer spills); 16-bit
    // ones work it out again (carried, ptxas keeps their instance at 64
    // registers with a spill: 8-10% slower; H200, 2026-11-30).
    constexpr bool kCarryShare = kHeads && sizeof(T) == 4;
    struct Share {
        RowEnds r;
        int nv;
    };
    // Waits for row k's slice in buffer b and reduces it (with the end element
    // xe); split rows publish the pair.
    auto stats = [&](int k, int b, float xe, Share *g) {
        wait_buffer(b);
        T *const slice = buffer(b);  // before the share, as it was: the 16-bit instances' PTX stays as measured
        int64_t io, oo;
        RowEnds r;
        const int nvk = share(k, &io, &oo, &r);
        if constexpr (kCarryShare) *g = Share{r, nvk};
        const F32Pair ms = slice_stats<T, kHeads>(slice, nvk, scratch, xe);
        if (p.chunks > 1 && threadIdx.x == 0) publish_slot(&p.partials[row_of(k) * p.chunks + chunk], ms);
        return ms;
    };
    float cur_end = own_end(0), next_end = own_end(1);
    Share cur_share, next_share{};
    F32Pair cur = stats(0, 0, cur_end, &cur_share);
    for (int k = 0, b = 0; row_of(k) < p.rows; ++k) {
        const int next_b = b + 1 == S ? 0 : b + 1;
        const EarlySlots early = load_early_slots(p, row_of(k));
        // kClaim: row k + 2 was claimed at the last refill, after its barrier;
        // its end is read after the next reduce's barriers instead.
        float later_end = kClaim ? neg_inf() : own_end(k + 2);
        F32Pair next{};
        if (row_of(k + 1) < p.rows) next = stats(k + 1, next_b, next_end, &next_share);
        if constexpr (kClaim) later_end = row_of(k + 1) < p.rows ? own_end(k + 2) : neg_inf();
        const F32Pair row = p.chunks > 1 ? join_row_slices(p, row_of(k), early, &row_stats) : cur;
        int64_t io, oo;
        RowEnds r;
        int nvk = share(k, &io, &oo, &r);
        if constexpr (kCarryShare) {
            r = cur_share.r;
            nvk = cur_share.nv;
        }
        slice_write(buffer(b), out + oo + r.head + k0, nvk, cur.a, row);
        if constexpr (kHeads) {
            const int64_t e = chunk == 0 ? row_end_element<T>(r, p.L) : -1;
            if (e >= 0) out[oo + e] = end_output<T>(cur_end, cur.a, row);
        }
        refill(k, b);
        cur = next;
        if constexpr (kCarryShare) cur_share = next_share;
        cur_end = next_end;
        next_end = later_end;
        b = next_b;
    }
#endif
}


// ---- Host side: the rules the plan and the launch share, and the launchers ----------

// Split rows keep in the workspace, all ones at every launch, an 8-byte
// (max, sum) slot per slice of every row, then a 4-byte row counter per slice.
inline size_t bulk_split_state_bytes(int64_t rows, int64_t chunks) {
    return size_t(rows * chunks) * sizeof(unsigned long long) + size_t(chunks) * sizeof(unsigned);
}

// The plan's ring kernel for a dtype.
inline const void *bulk_kernel_for(oprt_dtype_t dtype) {
    return dtype == OPRT_DTYPE_F16    ? reinterpret_cast<const void *>(&softmax_rows_bulk_kernel<dev::half_t>)
           : dtype == OPRT_DTYPE_BF16 ? reinterpret_cast<const void *>(&softmax_rows_bulk_kernel<dev::bf16_t>)
                                      : reinterpret_cast<const void *>(&softmax_rows_bulk_kernel<float>);
}

// Whether every row of out sits at the same offset from a 16-byte boundary as
// its row of in, both on element boundaries: the kHeads instances then split
// every row at the same places in and out.
inline bool rows_offsets_alike(const OuterIndex &ix, const void *in, const void *out, int64_t esize) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(in), b = reinterpret_cast<uintptr_t>(out);
    if (a % uintptr_t(esize) != 0 || b % uintptr_t(esize) != 0 || (a - b) % uintptr_t(gpu::kVectorBytes) != 0)
        return false;
    for (int d = 0; d < ix.ndim; ++d)
        if (ix.shape[d] > 1 && ((ix.in_strides[d] - ix.out_strides[d]) * esize) % gpu::kVectorBytes != 0)
            return false;
    return true;
}

// Split rows: the (max, sum) slots and the row counters set to all ones (no
// slice published, no row claimed yet), then one cooperative launch of
// q.row_groups * q.chunks blocks: every block resident at once, so a block
// waiting for its row's other slices never waits for a block that cannot start.
template <typename T>
oprt_status_t launch_bulk_split(void (*kernel)(const T *, T *, BulkRows), BulkRows q, void *workspace, const T *in,
                                T *out, int threads, size_t smem, dev::stream_t stream) {
    q.partials = gpu::aligned_workspace<unsigned long long>(workspace);
    q.claims = reinterpret_cast<unsigned *>(q.partials + q.rows * q.chunks);
    cudaError_t e = cudaMemsetAsync(q.partials, 0xFF, bulk_split_state_bytes(q.rows, q.chunks), stream);
    const char *what = "cudaMemsetAsync(softmax slice slots and row counters)";
    if (e == cudaSuccess) {
        cudaLaunchAttribute attr{};
        attr.id = cudaLaunchAttributeCooperative;
        attr.val.cooperative = 1;
        const cudaLaunchConfig_t config{dim3(unsigned(q.row_groups * q.chunks)), dim3(unsigned(threads)), smem, stream,
                                        &attr, 1};
        e = cudaLaunchKernelEx(&config, kernel, in, out, q);
        what = "cudaLaunchKernelEx(softmax_rows_bulk_kernel, cooperative)";
    }
    if (e == cudaSuccess) return OPRT_SUCCESS;
    (void)cudaGetLastError();
    return gpu::runtime_error(kExecuteOp, what, int(e));
}
// Runs q's rows on the ring (q: rows, L, chunks, slice, stages, ix; threads
// and claimed: the plan's). heads: rows off 16-byte boundaries or not whole
// vectors, in and out at the same offset (rows_offsets_alike), for the kHeads
// instances. *launched stays false where this device cannot hold every block
// of a split row at once: the caller then runs the dense-row kernels.
template <typename T>
oprt_status_t launch_rows_bulk(const T *in, T *out, BulkRows q, int threads, bool claimed, bool heads, void *workspace,
                               dev::stream_t stream, bool *launched) {
    gpu::DeviceInfo info;
    oprt_status_t s = gpu::current_device(kExecuteOp, &info);
    if (s != OPRT_SUCCESS) return s;
    const size_t smem = size_t(q.stages * q.slice) * sizeof(T);
    auto *ring = !heads ? (claimed ? &softmax_rows_bulk_kernel<T, false, true> : &softmax_rows_bulk_kernel<T>)
                        : (claimed ? &softmax_rows_bulk_kernel<T, true, true> : &softmax_rows_bulk_kernel<T, true>);
    int64_t resident = 0;
    if ((s = resident_blocks(kExecuteOp, reinterpret_cast<const void *>(ring), threads, smem, info, &resident)) !=
        OPRT_SUCCESS)
        return s;
    if (resident < q.chunks) return OPRT_SUCCESS;
    *launched = true;
    q.row_groups = gpu::clamp64(resident / q.chunks, 1, q.rows);
    if (q.chunks > 1) return launch_bulk_split(ring, q, workspace, in, out, threads, smem, stream);
    gpu::launch_overlapped(ring, unsigned(q.row_groups), unsigned(threads), smem, stream, in, out, q);
    return OPRT_SUCCESS;
}

}  // namespace oprt::softmax::gpu_kernels
