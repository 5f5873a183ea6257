// Hopper (sm_90) bulk asynchronous copies: global memory -> shared memory by
// the copy engine of the SM (the TMA unit), completion counted in bytes on a
// shared-memory barrier (mbarrier). NVIDIA only: include it from code built
// only where OPRT_DEVICE_HAS_BULK_COPY_LAUNCH is 1 (device_traits.cuh).
//
// Why: one thread asks for tens of kilobytes with one instruction, and the
// bytes arrive while every thread of the block does something else. A
// streaming kernel that loads through registers has only the loads its
// threads can keep in flight; here the whole buffer is in flight at once.
//
// Use (one buffer):
//   init(bar) by one thread; __syncthreads();
//   one thread: expect_bytes(bar, n); copy_to_shared(dst, src, n, bar);
//   every thread: wait(bar, parity);   // parity: 0, 1, 0, ... per use of bar
// Before a buffer that threads have read is refilled: __syncthreads(), then
// the issuing thread calls fence_before_async_write() (the generic reads are
// ordered before the asynchronous writes).
// The same barriers count stores from the other blocks of a cluster
// (store_pair_to_cluster: st.async into a block's shared memory).
#pragma once

#include <cstdint>

namespace oprt::gpu::bulk {

// Source, destination and size of a bulk copy: multiples of 16 bytes.
constexpr int64_t kAlign = 16;

__device__ __forceinline__ unsigned shared_address(const void *p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void init(uint64_t *bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(bar)) : "memory");
    // Makes the initialized barrier visible to the asynchronous proxy (the copy unit).
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

// One arrival (the issuing thread's) that also announces `bytes` of copies.
__device__ __forceinline__ void expect_bytes(uint64_t *bar, unsigned bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)), "r"(bytes)
                 : "memory");
#endif
}

// dst[0..bytes) = src[0..bytes), completing `bytes` on bar.
__device__ __forceinline__ void copy_to_shared(void *dst, const void *src, unsigned bytes, uint64_t *bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
            shared_address(dst)),
        "l"(src), "r"(bytes), "r"(shared_address(bar))
        : "memory");
#endif
}

// Blocks until the barrier's phase `parity` completed (all its bytes arrived).
__device__ __forceinline__ void wait(uint64_t *bar, unsigned parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const unsigned addr = shared_address(bar);
    unsigned done = 0;
    do {
        asm volatile(
            "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done)
            : "r"(addr), "r"(parity)
            : "memory");
    } while (!done);
#endif
}

// Stores (a, b) at `dst` in the shared memory of block `rank` of the cluster
// (the address dst has in this block), completing 8 bytes on that block's
// barrier `bar` (likewise this block's address of it).
__device__ __forceinline__ void store_pair_to_cluster(void *dst, float a, float b, uint64_t *bar, unsigned rank) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile(
        "{\n .reg .b32 rd, rb;\n mapa.shared::cluster.u32 rd, %0, %4;\n mapa.shared::cluster.u32 rb, %1, %4;\n"
        " st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [rd], {%2, %3}, [rb];\n}\n" ::"r"(
            shared_address(dst)),
        "r"(shared_address(bar)), "f"(a), "f"(b), "r"(rank)
        : "memory");
#endif
}

// Orders this thread's (and, after a barrier, the block's) generic accesses of
// shared memory before later asynchronous-proxy writes to it.
__device__ __forceinline__ void fence_before_async_write() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

}  // namespace oprt::gpu::bulk
