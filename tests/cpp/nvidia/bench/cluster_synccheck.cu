// compute-sanitizer's synccheck and clusters of more than 8 blocks (run by hand on an sm_90
// GPU; not a ctest). The kernel is rows_cluster.cuh's exchange of (max, sum) pairs and nothing
// else: block r of a cluster of C initializes an mbarrier, announces C pairs on it, stores its
// pair into every block's shared memory (st.async, counted on that block's barrier) and waits
// for the C pairs it is sent.
//
//   camp_cluster_synccheck C BLOCKS_AN_SM      (C: 2-16; BLOCKS_AN_SM: 1 or 2)
//
// Every run checks the pairs and exits 0 when they are right. What it showed (H100, CUDA 13.0's
// compute-sanitizer, 2026-12-06): without the tool, every C and both occupancies are right (300
// clusters, 10 launches). Under `compute-sanitizer --tool synccheck`, C <= 8 is clean at one or
// two blocks an SM, and so is C = 9 or 16 at one block an SM; at two blocks an SM, C = 9 is
// reported ("Barrier error detected. Missing wait" at the block of rank 8's mbarrier.arrive)
// and stopped, and C = 16 ends in an illegal memory access. So the softmax test of the 9-16-block
// clusters (NvidiaPlanPaths.SoftmaxRowsClusterNonPortable, two blocks an SM) is left out of the
// synccheck run in scripts/gpu/validate.sh; memcheck, racecheck and initcheck run it.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

__device__ unsigned shared_address(const void *p) { return unsigned(__cvta_generic_to_shared(p)); }

__global__ void __launch_bounds__(512, 2) exchange_pairs(float *out) {
    extern __shared__ float pad[];  // sized by the launch: one or two blocks an SM
    __shared__ float2 pairs[16];
    __shared__ uint64_t bar;
    unsigned C, rank;
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(C));
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    const unsigned t = threadIdx.x;
    if (t == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(&bar)) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    pad[0] = 0.0f;
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");  // every barrier initialized
    if (t == 0)
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(&bar)),
                     "r"(C * unsigned(sizeof(float2)))
                     : "memory");
    if (t < C)  // thread t stores this block's pair into block t
        asm volatile(
            "{\n .reg .b32 d, b;\n mapa.shared::cluster.u32 d, %0, %4;\n mapa.shared::cluster.u32 b, %1, %4;\n"
            " st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [d], {%2, %3}, [b];\n}\n" ::"r"(
                shared_address(&pairs[rank])),
            "r"(shared_address(&bar)), "f"(float(rank)), "f"(1.0f), "r"(t)
            : "memory");
    unsigned done = 0;
    do {
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n"
                     " selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(shared_address(&bar))
                     : "memory");
    } while (!done);
    if (t == 0) {
        float s = 0.0f;
        for (unsigned i = 0; i < C; ++i) s += pairs[i].x + pairs[i].y;
        out[blockIdx.x] = s;
    }
}

}  // namespace

int main(int argc, char **argv) {
    const unsigned C = argc > 1 ? unsigned(atoi(argv[1])) : 9, per_sm = argc > 2 ? unsigned(atoi(argv[2])) : 2;
    if (C < 1 || C > 16 || (per_sm != 1 && per_sm != 2)) {
        fprintf(stderr, "usage: %s C(1-16) BLOCKS_AN_SM(1|2)\n", argv[0]);
        return 2;
    }
    const unsigned clusters = 300, blocks = clusters * C;
    const size_t smem = per_sm == 1 ? 120u << 10 : 4u;  // 120 KB: one block an SM
    float *out = nullptr;
    cudaMalloc(&out, blocks * sizeof(float));
    cudaFuncSetAttribute(exchange_pairs, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
    if (C > 8) cudaFuncSetAttribute(exchange_pairs, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(512);
    config.dynamicSmemBytes = smem;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = C;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    config.attrs = attr;
    config.numAttrs = 1;
    cudaError_t e = cudaSuccess;
    for (int i = 0; i < 10 && e == cudaSuccess; ++i) e = cudaLaunchKernelEx(&config, exchange_pairs, out);
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    float *h = new float[blocks];
    if (e == cudaSuccess) e = cudaMemcpy(h, out, blocks * sizeof(float), cudaMemcpyDeviceToHost);
    unsigned wrong = 0;
    const float want = C * (C - 1) / 2.0f + C;
    for (unsigned b = 0; e == cudaSuccess && b < blocks; ++b) wrong += h[b] != want;
    printf("%u clusters of %u blocks, %u an SM: %s, %u blocks wrong\n", clusters, C, per_sm, cudaGetErrorString(e),
           e == cudaSuccess ? wrong : blocks);
    delete[] h;
    return e != cudaSuccess || wrong != 0;
}
