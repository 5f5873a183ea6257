// The one CuTe elementwise kernel behind launch_cute_{copy,vector_add,relu}
// (cute_launch.h): out[i] = op(in0[i][, in1[i]]) over n contiguous elements.
//
// Full tiles of kTile elements go through a CuTe tiled copy whose atom moves 128
// bits per thread (UniversalCopy<uint128_t>): global -> registers, op on the
// register fragment, registers -> global. The tail (< kTile elements) is done
// element by element. Block b handles tiles b, b + grid, ... (grid-stride).
#pragma once

#include <cstdint>

#include <cute/tensor.hpp>

#include "runtime/gpu/device_traits.cuh"
#include "runtime/internal/dispatch.h"
#include "runtime/internal/error.h"
#include "runtime/gpu/gpu_runtime.h"
#include "runtime/internal/plan.h"

namespace oprt::cute_kernels {

constexpr int kCuteThreads = 128;
constexpr int kCuteUnroll = 4;  // 128-bit accesses in flight per thread and operand

template <typename T, int kInputs, class Op>
__global__ void __launch_bounds__(kCuteThreads)
    cute_elementwise_kernel(T *out, const T *in0, const T *in1, int64_t n, Op op) {
    using namespace cute;
    constexpr int kVec = 16 / sizeof(T);  // elements per 128-bit access
    constexpr int kTile = kCuteThreads * kVec * kCuteUnroll;
    // Thread t owns kVec consecutive elements, then the next kCuteThreads * kVec
    // further: consecutive threads touch consecutive 16 bytes (coalesced).
    auto tiled_copy = make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, T>{},
                                      make_layout(Int<kCuteThreads>{}),
                                      make_layout(Int<kVec>{}));
    auto thr_copy = tiled_copy.get_slice(threadIdx.x);
    const int64_t full_tiles = n / kTile;
    auto tile_shape = make_shape(Int<kTile>{});
    Tensor g_out = zipped_divide(make_tensor(make_gmem_ptr(out), make_shape(n)), tile_shape);
    Tensor g_in0 = zipped_divide(make_tensor(make_gmem_ptr(in0), make_shape(n)), tile_shape);
    Tensor g_in1 = zipped_divide(make_tensor(make_gmem_ptr(kInputs == 2 ? in1 : in0),
                                             make_shape(n)), tile_shape);
    for (int64_t tile = blockIdx.x; tile < full_tiles; tile += gridDim.x) {
        Tensor src0 = thr_copy.partition_S(g_in0(_, tile));
        Tensor dst = thr_copy.partition_D(g_out(_, tile));
        Tensor frag0 = make_fragment_like(src0);
        copy(tiled_copy, src0, frag0);
        if constexpr (kInputs == 2) {
            Tensor src1 = thr_copy.partition_S(g_in1(_, tile));
            Tensor frag1 = make_fragment_like(src1);
            copy(tiled_copy, src1, frag1);
            CUTE_UNROLL
            for (int i = 0; i < size(frag0); ++i) frag0(i) = op(frag0(i), frag1(i));
        } else {
            CUTE_UNROLL
            for (int i = 0; i < size(frag0); ++i) frag0(i) = op(frag0(i));
        }
        copy(tiled_copy, frag0, dst);
    }
    // The tail: fewer than kTile elements, by the block that would own the next tile.
    if (blockIdx.x == full_tiles % gridDim.x) {
        for (int64_t i = full_tiles * kTile + threadIdx.x; i < n; i += kCuteThreads) {
            if constexpr (kInputs == 2) out[i] = op(in0[i], in1[i]);
            else out[i] = op(in0[i]);
        }
    }
}

// Checks the layout and pointers, then launches. `name` is the kernel's name
// for errors ("nvidia.cute_copy").
template <typename T, int kInputs, class Op>
oprt_status_t launch_cute_elementwise(const char *op_name, const char *name,
                                      const ElementwisePlan &p, const ExecArgs &args, Op op) {
    if (!p.contiguous)
        return fail(OPRT_ERR_NOT_SUPPORTED,
                    "%s: %s handles contiguous operands only (same dense layout, no broadcast)",
                    op_name, name);
    const void *ptrs[3] = {args.out, args.in0, args.in1};
    for (int i = 0; i <= kInputs; ++i)
        if (reinterpret_cast<uintptr_t>(ptrs[i]) % 16 != 0)
            return fail(OPRT_ERR_NOT_SUPPORTED,
                        "%s: %s needs 16-byte aligned pointers for its 128-bit accesses", op_name,
                        name);
    // The frontend has checked that the buffers are device memory of the current device.
    if (p.numel == 0) return OPRT_SUCCESS;
    constexpr int64_t kTile = kCuteThreads * (16 / sizeof(T)) * kCuteUnroll;
    const int64_t tiles = p.numel / kTile + 1;  // + the tail's owner
    // Grid-stride beyond 64K blocks: enough to fill any GPU several times over.
    const unsigned grid = static_cast<unsigned>(tiles < 65536 ? tiles : 65536);
    cute_elementwise_kernel<T, kInputs, Op>
        <<<grid, kCuteThreads, 0, static_cast<cudaStream_t>(args.stream)>>>(
            static_cast<T *>(args.out), static_cast<const T *>(args.in0),
            static_cast<const T *>(args.in1), p.numel, op);
    return gpu::check_launch(op_name, name);
}

}  // namespace oprt::cute_kernels
