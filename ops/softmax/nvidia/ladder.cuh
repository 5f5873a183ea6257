// The plain steps of the softmax kernel ladder (oprt_list_softmax_variants):
//   three_pass  three kernels, one thread per slice: max, sum of exp, normalize
//   warp_fused  one kernel, one warp per slice, the same three loops over memory
//   online      one warp per slice, one reading pass keeping a running (max, sum),
//               then the writing pass: the slice is read twice, not three times
// then the plan's own kernels ("on_chip", "bulk_async"). Element (o, k, i) is
// read at in_off(o) + k * S + i, so these run every layout (SliceParams,
// strided.cuh). Special values as in kernel.cuh.
#pragma once

#include <cstdint>

#include "ops/softmax/nvidia/kernel.cuh"
#include "ops/softmax/nvidia/strided.cuh"

namespace oprt::softmax::gpu_kernels {

constexpr int kLadderWarpThreads = 256;

// Step 1: calls f(t, io, oo) for this thread's slices t, one a thread.
template <typename F>
__device__ __forceinline__ void for_each_thread_slice(const SliceParams &q, F f) {
    for (int64_t t = gpu::global_thread_index(); t < q.outer * q.inner; t += gpu::grid_threads()) {
        int64_t io, oo;
        q.start(t, &io, &oo);
        f(t, io, oo);
    }
}

// Step 1, pass 1: m[t] = the slice's max (NaN-ignoring: NaN reaches the output via the sum).
template <typename T>
__global__ void softmax_pass_max_kernel(const T *__restrict__ in, float *__restrict__ m, SliceParams q) {
    for_each_thread_slice(q, [&](int64_t t, int64_t io, int64_t) {
        float v = neg_inf();
        for (int64_t k = 0; k < q.L; ++k) v = fmaxf(v, dev::to_f32(in[io + k * q.S_in]));
        m[t] = v;
    });
}

// Step 1, pass 2: s[t] = sum_k exp(x_k - m[t]), reading the slice again. One
// thread adds all L terms in sequence: a float sum would drift by up to
// L * 2^-24 (about 1e-3 at 2^14 terms), so this step sums in double.
template <typename T>
__global__ void softmax_pass_sum_kernel(const T *__restrict__ in, const float *__restrict__ m,
                                        float *__restrict__ s, SliceParams q) {
    for_each_thread_slice(q, [&](int64_t t, int64_t io, int64_t) {
        const float mt = m[t];
        double acc = 0.0;
        for (int64_t k = 0; k < q.L; ++k) acc += exp_f32(dev::to_f32(in[io + k * q.S_in]) - mt);
        s[t] = float(acc);
    });
}

// Step 1, pass 3: y = exp(x - m) / s, reading the slice a third time.
template <typename T>
__global__ void softmax_pass_normalize_kernel(const T *__restrict__ in, T *__restrict__ out,
                                              const float *__restrict__ m, const float *__restrict__ s,
                                              SliceParams q) {
    for_each_thread_slice(q, [&](int64_t t, int64_t io, int64_t oo) {
        const float mt = m[t], inv = 1.0f / s[t];
        for (int64_t k = 0; k < q.L; ++k)
            out[oo + k * q.S_out] = dev::from_f32<T>(exp_f32(dev::to_f32(in[io + k * q.S_in]) - mt) * inv);
    });
}

// Steps 2 and 3: calls f(io, oo, L, lane) for this warp's slices, one a warp.
// The loop's base is the same for the whole block, so the lanes of a warp
// loop together; past the last slice L is 0.
template <typename F>
__device__ __forceinline__ void for_each_warp_slice(const SliceParams &q, F f) {
    constexpr int64_t kWarps = kLadderWarpThreads / dev::kWarpSize;
    const int lane = int(threadIdx.x) % dev::kWarpSize;
    const int64_t n = q.outer * q.inner;
    for (int64_t base = int64_t(blockIdx.x) * kWarps; base < n; base += int64_t(gridDim.x) * kWarps) {
        const int64_t t = base + threadIdx.x / dev::kWarpSize;
        int64_t io = 0, oo = 0;
        const bool live = t < n;
        if (live) q.start(t, &io, &oo);
        f(io, oo, live ? q.L : 0, lane);
    }
}

// Step 2: the lanes stride along the slice, so each pass is coalesced when
// the axis is dense; max and sum are shuffle butterflies; one launch, no
// workspace, but the slice is still read three times.
template <typename T>
__global__ void __launch_bounds__(kLadderWarpThreads)
softmax_warp_fused_kernel(const T *__restrict__ in, T *__restrict__ out, SliceParams q) {
    for_each_warp_slice(q, [&](int64_t io, int64_t oo, int64_t L, int lane) {
        float m = neg_inf();
        for (int64_t k = lane; k < L; k += dev::kWarpSize) m = fmaxf(m, dev::to_f32(in[io + k * q.S_in]));
        m = gpu::warp_allreduce(m, gpu::MaxOp{});
        float s = 0.0f;
        for (int64_t k = lane; k < L; k += dev::kWarpSize) s += exp_f32(dev::to_f32(in[io + k * q.S_in]) - m);
        s = gpu::warp_allreduce(s, gpu::SumOp{});
        const float inv = 1.0f / s;
        for (int64_t k = lane; k < L; k += dev::kWarpSize)
            out[oo + k * q.S_out] = dev::from_f32<T>(exp_out(dev::to_f32(in[io + k * q.S_in]) - m) * inv);
    });
}

// Step 3: each lane keeps s * exp(m) of what it saw (online_add rescales s
// when the max grows), the lanes' pairs join with CombineOp, then one
// writing pass: two reads of the slice instead of three.
template <typename T>
__global__ void __launch_bounds__(kLadderWarpThreads)
softmax_online_kernel(const T *__restrict__ in, T *__restrict__ out, SliceParams q) {
    for_each_warp_slice(q, [&](int64_t io, int64_t oo, int64_t L, int lane) {
        F32Pair ms = empty_pair();
        for (int64_t k = lane; k < L; k += dev::kWarpSize) online_add(ms, dev::to_f32(in[io + k * q.S_in]));
        ms = gpu::warp_allreduce(ms, CombineOp{});
        const float inv = 1.0f / ms.b;
        for (int64_t k = lane; k < L; k += dev::kWarpSize)
            out[oo + k * q.S_out] = dev::from_f32<T>(exp_out(dev::to_f32(in[io + k * q.S_in]) - ms.a) * inv);
    });
}

// ---- Launchers -------------------------------------------------------------------

// Step 1 keeps every slice's max and sum between its passes: the workspace's floats.
inline size_t three_pass_workspace(int64_t slices) { return size_t(2 * slices) * sizeof(float); }

template <typename T>
void launch_three_pass(const T *in, T *out, float *workspace, const SliceParams &q, dev::stream_t stream) {
    const int64_t slices = q.outer * q.inner;
    float *m = workspace, *s = m + slices;
    const unsigned blocks = grid_of(gpu::ceil_div(slices, kLadderWarpThreads));  // a thread a slice
    softmax_pass_max_kernel<T><<<blocks, kLadderWarpThreads, 0, stream>>>(in, m, q);
    softmax_pass_sum_kernel<T><<<blocks, kLadderWarpThreads, 0, stream>>>(in, m, s, q);
    softmax_pass_normalize_kernel<T><<<blocks, kLadderWarpThreads, 0, stream>>>(in, out, m, s, q);
}

// Steps 2 and 3: a warp a slice.
inline unsigned warp_slice_blocks(const SliceParams &q) {
    return grid_of(gpu::ceil_div(q.outer * q.inner, kLadderWarpThreads / dev::kWarpSize));
}
template <typename T>
void launch_warp_fused(const T *in, T *out, const SliceParams &q, dev::stream_t stream) {
    softmax_warp_fused_kernel<T><<<warp_slice_blocks(q), kLadderWarpThreads, 0, stream>>>(in, out, q);
}
template <typename T>
void launch_online(const T *in, T *out, const SliceParams &q, dev::stream_t stream) {
    softmax_online_kernel<T><<<warp_slice_blocks(q), kLadderWarpThreads, 0, stream>>>(in, out, q);
}

}  // namespace oprt::softmax::gpu_kernels
