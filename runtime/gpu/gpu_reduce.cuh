// Warp, sub-warp and block reductions shared by reduce_sum and softmax. The
// warp width comes from device_traits.cuh (32 on NVIDIA, 64 on MetaX), so no
// algorithm here assumes 32 lanes. Every result is produced in a fixed order:
// the same input and launch shape give bit-identical sums.
#pragma once

#include "runtime/gpu/device_traits.cuh"

namespace oprt::gpu {

// A pair of f32 values reduced together (softmax's running max and sum).
struct F32Pair {
    float a, b;
};

// Shuffles for the value types reductions use.
__device__ __forceinline__ float shfl_xor_value(float v, int offset) { return dev::shfl_xor(v, offset); }
__device__ __forceinline__ F32Pair shfl_xor_value(F32Pair v, int offset) {
    return F32Pair{dev::shfl_xor(v.a, offset), dev::shfl_xor(v.b, offset)};
}

struct SumOp {
    __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};
struct MaxOp {
    __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// All-reduce inside aligned groups of G lanes (G a power of two <= warp width):
// a butterfly, so every lane of the group ends with the result. Every lane of
// the warp must call it (the shuffles name the full warp).
template <int G, typename V, typename Op>
__device__ __forceinline__ V group_allreduce(V v, Op op) {
    static_assert(G >= 1 && G <= dev::kWarpSize && (G & (G - 1)) == 0, "G: power of two <= warp");
#pragma unroll
    for (int offset = G / 2; offset > 0; offset >>= 1) v = op(v, shfl_xor_value(v, offset));
    return v;
}

template <typename V, typename Op>
__device__ __forceinline__ V warp_allreduce(V v, Op op) {
    return group_allreduce<dev::kWarpSize>(v, op);
}

// Shared scratch for block_allreduce: one slot per warp plus the broadcast slot.
template <typename V>
struct BlockReduceScratch {
    V slot[dev::kMaxWarps + 1];
};

// All-reduce over a 1-D block whose size is a multiple of the warp width.
// Warps reduce with shuffles; warp 0 reduces the per-warp results; every thread
// reads the broadcast slot. The two barriers also make back-to-back calls on
// the same scratch safe: a call's writes to slot[warp] come after every thread
// passed the previous call's second barrier, and its broadcast slot is written
// only after this call's first barrier, when all reads of the old value are done.
template <typename V, typename Op>
__device__ __forceinline__ V block_allreduce(V v, Op op, V identity, BlockReduceScratch<V> &scratch) {
    const int warp = int(threadIdx.x) / dev::kWarpSize;
    const int lane = int(threadIdx.x) % dev::kWarpSize;
    const int warps = int(blockDim.x) / dev::kWarpSize;
    v = warp_allreduce(v, op);
    if (lane == 0) scratch.slot[warp] = v;
    __syncthreads();
    if (warp == 0) {
        V w = lane < warps ? scratch.slot[lane] : identity;
        w = warp_allreduce(w, op);
        if (lane == 0) scratch.slot[dev::kMaxWarps] = w;
    }
    __syncthreads();
    return scratch.slot[dev::kMaxWarps];
}

}  // namespace oprt::gpu
