// How fast TMA copies stream into an SM: the producer/consumer ring of the matmul's wgmma
// kernel with the MMAs taken out (run by hand on an sm_90a GPU; not a ctest).
//
//   camp_tma_stream_bench
//
// Each block runs T stages through a ring of shared-memory buffers, as ops/matmul/nvidia/
// wgmma.cu does: one thread waits for a free buffer ("empty" mbarrier), announces the bytes
// and issues the copies; another waits for them ("full") and hands the buffer back at once.
// A stage is two 2-D TMA boxes of 128-byte rows (128-byte swizzle): S rows of X, P rows of
// Y. X plays A (xg groups of blocks read the same rows), Y plays B (yg different slices).
// With a cluster of 2, each block loads half of X's box and multicasts it to both. All data
// fits in the L2 and is replayed (CUDA graph, graph_timing.cuh), the "hot" condition.
//
// What it showed (H200, 2026-12-03): 16 KB stages in two 64-row boxes arrive at about
// 100 GB/s an SM, 164 ns a stage, the same with 4 or 13 buffers in the ring and with 16 or
// 64 blocks running; 32 KB stages in two 128-row boxes at 126-129 GB/s. The rate per stage,
// not the bytes, the copies' latency or the L2, limits a block that streams small stages,
// which is why the 64 x 64 matmul tiles take two k-tiles a stage. 128 blocks together take
// in at most about 9.9 TB/s; with X multicast in clusters of 2, 24 KB stages reach 13.9 TB/s
// (227 ns a stage), 9.2 TB/s read from the L2.
#include <cuda.h>  // CUtensorMap (the encoder comes from the runtime)
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "graph_timing.cuh"

// T stages a block; S and P rows a stage; ring buffers; blocks b read X's rows of group
// (b / cluster) % xg and Y's of slice b % yg; the consumer's nanoseconds of sleep between polls.
struct Args {
    int T, S, P, stages, xg, yg, sleep_ns;
};

__device__ __forceinline__ uint32_t su32(const void *p) { return uint32_t(__cvta_generic_to_shared(p)); }
// Until the barrier's phase of this parity has completed (as mbar_wait in wgmma.cu).
__device__ __forceinline__ void wait(uint32_t bar, uint32_t parity, int sleep_ns) {
    uint32_t done = 0;
    while (true) {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
        if (done) break;
        if (sleep_ns) __nanosleep(sleep_ns);
    }
}

// Thread 0 fills the ring, thread 32 empties it; CN blocks a cluster (1 or 2).
template <int CN>
__global__ void stream(const __grid_constant__ CUtensorMap mx, const __grid_constant__ CUtensorMap my, Args a) {
    extern __shared__ uint8_t raw[];
    const uint32_t base = (su32(raw) + 1023u) & ~1023u;
    const int stage_bytes = (a.S + a.P) * 128;
    const uint32_t full = base + a.stages * stage_bytes, empty = full + 8 * a.stages;
    uint32_t rank = 0;
    if (CN > 1) asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
    if (threadIdx.x == 0) {
        for (int s = 0; s < a.stages; ++s) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(full + 8 * s));
            asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(empty + 8 * s), "r"(CN));
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if (CN > 1) asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
    const int group = blockIdx.x / CN;
    const int xg = group % a.xg, yg = blockIdx.x % a.yg;
    if (threadIdx.x == 0) {
        for (int t = 0; t < a.T; ++t) {
            const uint32_t s = t % a.stages, par = (t / a.stages) & 1;
            wait(empty + 8 * s, par ^ 1, 0);
            const uint32_t bar = full + 8 * s, dst = base + s * stage_bytes;
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(stage_bytes) : "memory");
            const int xrow = (xg * a.T + t) * a.S;
            if (CN > 1) {
                const int part = a.S / CN;
                asm volatile(
                    "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                    " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst + rank * part * 128),
                    "l"(&mx), "r"(0), "r"(xrow + int(rank) * part), "r"(bar), "h"(uint16_t((1 << CN) - 1))
                    : "memory");
            } else {
                asm volatile(
                    "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
                    "l"(&mx), "r"(0), "r"(xrow), "r"(bar) : "memory");
            }
            const int yrow = (yg * a.T + t) * a.P;
            asm volatile(
                "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst + a.S * 128),
                "l"(&my), "r"(0), "r"(yrow), "r"(bar) : "memory");
        }
    } else if (threadIdx.x == 32) {
        for (int t = 0; t < a.T; ++t) {
            const uint32_t s = t % a.stages, par = (t / a.stages) & 1;
            wait(full + 8 * s, par, a.sleep_ns);
            for (int r = 0; r < CN; ++r) {
                if (CN == 1) {
                    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(empty + 8 * s) : "memory");
                } else {
                    asm volatile("{\n.reg .b32 rem;\nmapa.shared::cluster.u32 rem, %0, %1;\n"
                                 "mbarrier.arrive.shared::cluster.b64 _, [rem];\n}\n" ::"r"(empty + 8 * s), "r"(r) : "memory");
                }
            }
        }
    }
    if (CN > 1) asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

// cuTensorMapEncodeTiled from the driver, through the runtime (no -lcuda).
PFN_cuTensorMapEncodeTiled_v12000 enc() {
    void *p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q));
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
}
// `rows` rows of 64 bf16 (128 bytes), copied in boxes of box_rows rows with 128-byte swizzle.
void make(CUtensorMap *m, void *ptr, int64_t rows, int box_rows) {
    const cuuint64_t dims[2] = {64, cuuint64_t(rows)};
    const cuuint64_t strides[1] = {128};
    const cuuint32_t box[2] = {64, cuuint32_t(box_rows)}, es[2] = {1, 1};
    if (enc()(m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, ptr, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
              CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
        std::printf("encode failed\n");
        std::exit(1);
    }
}

// Times one configuration and prints a line: what a block takes in per second ("an SM"),
// all blocks together, and what the L2 serves (less than that with multicast).
void run(const char *name, int blocks, int cn, Args a) {
    const int64_t xrows = int64_t(a.xg) * a.T * a.S, yrows = int64_t(a.yg) * a.T * a.P;
    void *x, *y;
    CK(cudaMalloc(&x, xrows * 128));
    CK(cudaMalloc(&y, yrows * 128));
    CK(cudaMemset(x, 0, xrows * 128));
    CK(cudaMemset(y, 0, yrows * 128));
    CUtensorMap mx, my;
    make(&mx, x, xrows, a.S / cn);
    make(&my, y, yrows, a.P);
    const int smem = a.stages * (a.S + a.P) * 128 + 16 * a.stages + 1024;
    cudaLaunchConfig_t c{};
    c.gridDim = dim3(blocks);
    c.blockDim = dim3(64);
    c.dynamicSmemBytes = smem;
    cudaLaunchAttribute at{};
    at.id = cudaLaunchAttributeClusterDimension;
    at.val.clusterDim = {unsigned(cn), 1, 1};
    c.attrs = &at;
    c.numAttrs = cn > 1 ? 1 : 0;
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    c.stream = s;
    if (cn > 1) {
        CK(cudaFuncSetAttribute(stream<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    } else {
        CK(cudaFuncSetAttribute(stream<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    }
    auto launch = [&] {
        if (cn > 1) CK(cudaLaunchKernelEx(&c, stream<2>, mx, my, a));
        else CK(cudaLaunchKernelEx(&c, stream<1>, mx, my, a));
    };
    const double sec = graph_seconds_per_launch(launch, s);
    const double per_block = double(a.T) * (a.S + a.P) * 128;
    const double l2 = double(blocks) * a.T * (double(a.S) / cn + a.P) * 128;
    std::printf("%-42s %3d blocks, cluster %d, %2d stages of %2d KB (%3d + %3d rows), ring %2d, sleep %2d: "
                "%6.2f us, %5.1f GB/s an SM, %5.2f TB/s in all, %5.2f TB/s read from L2, %5.1f ns a stage\n",
                name, blocks, cn, a.T, (a.S + a.P) / 8, a.S, a.P, a.stages, a.sleep_ns, sec * 1e6,
                per_block / sec / 1e9, blocks * per_block / sec / 1e12, l2 / sec / 1e12, sec * 1e9 / a.T);
    CK(cudaStreamDestroy(s));
    CK(cudaFree(x));
    CK(cudaFree(y));
}

int main() {
    // name, blocks, cluster, {T, S, P, ring, xg, yg, sleep}
    run("64 x 64 k-tiles, one a stage", 64, 1, {64, 64, 64, 13, 1, 64, 0});
    run("  16 blocks", 16, 1, {64, 64, 64, 13, 1, 16, 0});
    run("  32 blocks", 32, 1, {64, 64, 64, 13, 1, 32, 0});
    run("  ring of 6", 64, 1, {64, 64, 64, 6, 1, 64, 0});
    run("  ring of 4", 64, 1, {64, 64, 64, 4, 1, 64, 0});
    run("  consumer polls with nanosleep", 64, 1, {64, 64, 64, 13, 1, 64, 20});
    run("  256 stages", 64, 1, {256, 64, 64, 13, 1, 16, 0});
    run("two k-tiles a stage (128-row boxes)", 64, 1, {32, 128, 128, 6, 1, 64, 0});
    run("  K in two pieces: 128 blocks", 128, 1, {16, 128, 128, 6, 2, 128, 0});
    run("one k-tile a stage, 128 blocks", 128, 1, {32, 64, 64, 13, 2, 128, 0});
    run("12 KB stages (32 + 64 rows), 128 blocks", 128, 1, {64, 32, 64, 18, 2, 64, 0});
    run("8 KB stages (32 + 32 rows), 128 blocks", 128, 1, {64, 32, 32, 27, 2, 128, 0});
    run("12 KB, X multicast in clusters of 2", 128, 2, {64, 32, 64, 18, 2, 64, 0});
    run("12 KB, 64-row X multicast, clusters of 2", 128, 2, {64, 64, 32, 18, 64, 2, 0});
    run("24 KB stages (128 + 64 rows), 128 blocks", 128, 1, {32, 128, 64, 9, 64, 2, 0});
    run("24 KB, X multicast in clusters of 2", 128, 2, {32, 128, 64, 9, 64, 2, 0});
    return 0;
}
