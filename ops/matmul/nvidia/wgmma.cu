// matmul on Hopper tensor cores (sm_90a): TMA + wgmma + a warp-specialized pipeline.
//
// Tiles. A block owns a BM x BN tile of C at a time: 128x256, 64x128 or 64x64 (the
// plan table at the bottom picks one per shape). The grid is persistent: one block per SM
// walks the work units (tile, piece of K) in an order that keeps B tiles in L2.
//
// Warpgroups (128 threads each).
// - Warpgroup 0, the producer: gives up registers (setmaxnreg 40) and one thread issues TMA
//   copies of the next k-tiles (a BMx64 slice of A and a 64xBN slice of B each) into a ring
//   of shared-memory stages, KT k-tiles a stage.
// - Warpgroups 1 .. BM/64, the consumers: take the registers (setmaxnreg 232), each computes
//   64 rows of the tile with wgmma.mma_async m64nBNk16 from shared memory into f32
//   registers, keeping one stage's MMAs in flight while the next stage is loaded.
//
// The barrier ring. Each stage has two mbarriers. "full": the producer announces the stage's
// byte count, the TMA copies complete it; consumers wait on it. "empty": one arrival per
// consumer warp once its MMAs on the stage are done; the producer waits on it before
// refilling the stage. Stage i % kStages is used in round i / kStages, whose parity is the
// phase to wait for.
//
// Stages of two k-tiles (KT = 2, the 64x64 tiles). A block streams its k-tiles one stage
// after another, and a stage costs about the same however many bytes it brings: with TMA
// copies alone (H200, 2026-12-03, data in the L2) an SM took in 16 KB stages in 8 KB boxes
// at about 100 GB/s, 32 KB stages in 16 KB boxes at 126-129. Two k-tiles a stage load B
// N-major as one 128-row box per 64 columns and A as two boxes; K pieces are whole stages,
// and a k-tile past the end of K is filled with zeros and multiplied like the others.
//
// Split-K. Where the tiles alone do not fill the SMs (M = 16, N = 1024, K = 4096: 8 tiles of
// 64x128), K is cut into `splits` pieces that run as separate work units; each writes its
// f32 partial tile to a workspace and splitk_reduce sums the pieces into C in split order.
//
// Cluster K. Where the 64x64 tiles fill at most half the SMs (64 x 4096 x 4096: 64 tiles),
// each tile's K is cut in two pieces run by the two blocks of a cluster, no workspace and no
// second kernel: piece 0 (the first 7/16 of K) writes its f32 sums straight into piece 1's
// epilogue buffers (distributed shared memory) and signals piece 1's mbarrier; piece 1 (the
// rest) adds them to its own and stores C. Piece 0 is shorter so that its hand-over happens
// while piece 1 still streams its last k-tiles (64 x 4096 x 4096 with B in the L2, H200,
// 2026-12-04, before the end barrier below: halves 8.5-8.6 us, 7/16 8.0-8.2, 3/8 8.2). A
// cluster barrier at the end keeps piece 1's block alive until piece 0 has written into it
// (compute-sanitizer's racecheck cannot tell that from the mbarrier alone); it costs about
// 0.3 us there.
//
// Epilogue. Consumers store C in 64x64 chunks: registers -> shared memory (swizzled like the
// operands) -> a TMA store that runs on while they start the next tile (two buffers per
// consumer). Meanwhile the producer already loads the next tile's stages. Where TMA cannot
// store C (odd strides, split-K partials), threads store pairs of columns from registers.
// Launches are overlapped (programmatic dependent launch): a kernel's prologue runs during
// the previous kernel's tail. The plan launches some products of 65-128 rows plainly, where
// that measured faster (see kPlan).
//
// Shared-memory layouts are the ones TMA writes with 128-byte swizzle and wgmma reads
// through a matrix descriptor: rows of 64 16-bit values (128 bytes), the 16-byte chunks of
// row r XORed with r % 8, 8-row groups 1024 bytes apart.
//   A (K-major, rows = M): one BMx64 box; a k16 step starts 32 bytes further into the rows.
//   B K-major (column-major B, rows = N): one BNx64 box, read like A.
//   B N-major (row-major B, rows = K): BN/64 boxes of 64(N) x 64KT(K), 8KT KB apart; wgmma
//     reads it transposed (tnspB = 1): 64-column blocks 8KT KB apart (leading byte offset),
//     8-row K groups 1024 bytes apart (stride byte offset); a k16 step starts 16 rows (2 KB)
//     further.
//   With KT = 2, A's and (K-major) B's slices of the two k-tiles lie one after the other.
// TMA fills what lies outside the matrix with zeros, so tails of M, N and K need no code.
// Where all of M fits in fewer rows than a tile (16 x 4096 x 4096), A's box has only M rows
// (rounded up to 8): the rest of the tile's rows in shared memory are never written, and the
// rows of C they give are never stored. Zero-filling 48 rows of every stage for nothing
// slowed those products (TMA counts and writes the filled bytes as it does loaded ones).
#include "ops/matmul/nvidia/wgmma.cuh"
#include "ops/matmul/nvidia/smem_opt_in.cuh"

#include <cuda.h>  // CUtensorMap and its enums (types only: the encoder comes from the runtime)
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <mutex>
#include <type_traits>

namespace oprt::matmul::OPRT_GPU_BACKEND_NS {
namespace wgmma_detail {

constexpr int kBK = 64;                                 // k-tile depth (64 values = 128 bytes)
constexpr int kSteps = kBK / 16;                        // wgmma k16 steps a k-tile
constexpr int kMaxThreads = 384;                        // producer warpgroup + up to 2 consumers
constexpr int kGroupM = 16;                             // rasterization: 16 M-tiles walk a column of N-tiles together
constexpr int kProducerRegs = 40, kConsumerRegs = 232;  // 128 * (40 + 2 * 232) = 64512 <= 65536
constexpr int kSmemMax = 227 * 1024;                    // dynamic shared memory per block on Hopper
constexpr int kEpilogueChunkBytes = 64 * 64 * 2;        // 64 rows x 64 columns of C, one TMA store box
constexpr double kClusterKShare = 7.0 / 16;             // cluster K: piece 0 takes this much of K

template <int BM, int BN, int KT = 1>
struct Config {
    static_assert(BM == 64 || BM == 128, "a consumer warpgroup computes 64 rows");
    static constexpr int kConsumers = BM / 64;
    static constexpr int kThreads = 128 * (1 + kConsumers);
    static constexpr int kATileBytes = BM * kBK * 2;
    static constexpr int kBTileBytes = BN * kBK * 2;
    static constexpr int kStageBytes = KT * (kATileBytes + kBTileBytes);  // KT k-tiles a stage
    // Two epilogue chunks per consumer (one being stored while the other is written).
    static constexpr int kEpilogueBytes = kConsumers * 2 * kEpilogueChunkBytes;
    // The stages take what is left after the epilogue buffers, 1 KB of alignment slack and
    // the barriers: 4 for 128x256, 6 for 64x64 (two k-tiles a stage).
    static constexpr int kStages = (kSmemMax - kEpilogueBytes - 1024 - 256) / kStageBytes;
    static constexpr int kSmemBytes = kStages * kStageBytes + kEpilogueBytes + (2 * kStages + 1) * 8 + 1024;
    // Cluster K: piece 0's f32 sums (64 x BN) fit in piece 1's epilogue buffers.
    static constexpr bool kClusterKFits = BN * 64 * 4 <= 2 * kEpilogueChunkBytes;
    static_assert(kSmemBytes <= kSmemMax, "shared memory");
};

// What the kernel needs besides the operands' tensor maps.
struct Params {
    void *c;
    int64_t c_row, c_col;
    int m, n, k;
    int stage_bytes;    // bytes a stage receives: A's box (M rows or fewer) and B's
    bool pairs;         // C contiguous along N, pairs of columns 4-byte aligned
    bool tma_store;     // C goes out through shared memory and TMA stores (map_c)
    int splits;         // K pieces; > 1: f32 partial tiles go to `partial` (but see cluster_k)
    bool cluster_k;     // two pieces, each tile's pair one cluster: piece 0's sums go to piece 1
    int split_k_tiles;  // k-tiles per piece (the last one may have fewer)
    float *partial;     // splits slabs of m x ldp floats
    int64_t ldp;        // n rounded up to even (partials are stored in pairs)
};

// Stores columns col and col + 1 of a row of C (rounding to nearest even), within bounds.
template <bool Bf16>
__device__ __forceinline__ void store_pair(const Params &e, int64_t row, int64_t col, float v0, float v1) {
    using T = std::conditional_t<Bf16, __nv_bfloat16, __half>;
    using T2 = std::conditional_t<Bf16, __nv_bfloat162, __half2>;
    T *c = static_cast<T *>(e.c);
    if (row >= e.m || col >= e.n) return;
    const int64_t i0 = row * e.c_row + col * e.c_col;
    if (col + 1 < e.n) {
        if (e.pairs) {
            T2 v;
            v.x = T(v0), v.y = T(v1);
            *reinterpret_cast<T2 *>(c + i0) = v;
        } else {
            c[i0] = T(v0);
            c[i0 + e.c_col] = T(v1);
        }
    } else {
        c[i0] = T(v0);
    }
}

// Two values rounded to nearest even, as the 32 bits of a pair.
template <bool Bf16>
__device__ __forceinline__ uint32_t pack(float v0, float v1) {
    if constexpr (Bf16) {
        const __nv_bfloat162 h = __floats2bfloat162_rn(v0, v1);
        return *reinterpret_cast<const uint32_t *>(&h);
    } else {
        const __half2 h = __floats2half2_rn(v0, v1);
        return *reinterpret_cast<const uint32_t *>(&h);
    }
}

// Split-K's second step: C = the sum of the partial slabs, in split order; a pair of
// columns per thread.
template <bool Bf16>
__global__ void splitk_reduce(Params p) {
#if defined(__CUDA_ARCH__)
    asm volatile("griddepcontrol.launch_dependents;\ngriddepcontrol.wait;\n" ::: "memory");  // see wgmma_kernel
#endif
    const int64_t pairs_per_row = p.ldp / 2, total = int64_t(p.m) * pairs_per_row;
    const int64_t slab = int64_t(p.m) * p.ldp;
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
        const int64_t row = i / pairs_per_row, col = 2 * (i % pairs_per_row);
        const float2 *src = reinterpret_cast<const float2 *>(p.partial + row * p.ldp + col);
        float2 s = src[0];
        for (int k = 1; k < p.splits; ++k) {
            const float2 v = src[k * slab / 2];
            s.x += v.x, s.y += v.y;
        }
        store_pair<Bf16>(p, row, col, s.x, s.y);
    }
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// wgmma.mma_async m64nNk16, f32 += A(smem) * B(smem), by descriptor. TransB = 1 reads B
// N-major. Operands: N/2 accumulators, the two descriptors, scale-d (1: accumulate). The
// instruction names every accumulator register, so the asm lists them all: the register
// numbers (REGS) and the accumulators they stand for (ACC, eight at a time); after them the
// operand numbers of desc_a, desc_b, scale-d and TransB.
#define OPRT_WGMMA_REGS_0_31 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define OPRT_WGMMA_REGS_0_63 OPRT_WGMMA_REGS_0_31 ", %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define OPRT_WGMMA_REGS_0_127 OPRT_WGMMA_REGS_0_63 ", %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define OPRT_WGMMA_ACC8(i) \
    "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define OPRT_WGMMA_ACC32(i) OPRT_WGMMA_ACC8(i), OPRT_WGMMA_ACC8(i + 8), OPRT_WGMMA_ACC8(i + 16), OPRT_WGMMA_ACC8(i + 24)
#define OPRT_WGMMA_ASM(N, TYPE, REGS, A, B, SCALE, TRANS, ...)                                             \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #SCALE ", 0;\n"                                     \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "." TYPE " {" REGS "}, %" #A ", %" #B \
                 ", p, 1, 1, 0, %" #TRANS ";\n}\n"                                                        \
                 : __VA_ARGS__                                                                             \
                 : "l"(desc_a), "l"(desc_b), "r"(1), "n"(TransB))

template <int N, bool Bf16>
struct Wgmma;
template <bool Bf16>
struct Wgmma<256, Bf16> {
    template <int TransB>
    __device__ __forceinline__ static void mma(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
        if constexpr (Bf16) {
            OPRT_WGMMA_ASM(256, "bf16", OPRT_WGMMA_REGS_0_127, 128, 129, 130, 131, OPRT_WGMMA_ACC32(0),
                           OPRT_WGMMA_ACC32(32), OPRT_WGMMA_ACC32(64), OPRT_WGMMA_ACC32(96));
        } else {
            OPRT_WGMMA_ASM(256, "f16", OPRT_WGMMA_REGS_0_127, 128, 129, 130, 131, OPRT_WGMMA_ACC32(0),
                           OPRT_WGMMA_ACC32(32), OPRT_WGMMA_ACC32(64), OPRT_WGMMA_ACC32(96));
        }
    }
};
template <bool Bf16>
struct Wgmma<128, Bf16> {
    template <int TransB>
    __device__ __forceinline__ static void mma(float (&d)[64], uint64_t desc_a, uint64_t desc_b) {
        if constexpr (Bf16) {
            OPRT_WGMMA_ASM(128, "bf16", OPRT_WGMMA_REGS_0_63, 64, 65, 66, 67, OPRT_WGMMA_ACC32(0), OPRT_WGMMA_ACC32(32));
        } else {
            OPRT_WGMMA_ASM(128, "f16", OPRT_WGMMA_REGS_0_63, 64, 65, 66, 67, OPRT_WGMMA_ACC32(0), OPRT_WGMMA_ACC32(32));
        }
    }
};
template <bool Bf16>
struct Wgmma<64, Bf16> {
    template <int TransB>
    __device__ __forceinline__ static void mma(float (&d)[32], uint64_t desc_a, uint64_t desc_b) {
        if constexpr (Bf16) {
            OPRT_WGMMA_ASM(64, "bf16", OPRT_WGMMA_REGS_0_31, 32, 33, 34, 35, OPRT_WGMMA_ACC32(0));
        } else {
            OPRT_WGMMA_ASM(64, "f16", OPRT_WGMMA_REGS_0_31, 32, 33, 34, 35, OPRT_WGMMA_ACC32(0));
        }
    }
};
#undef OPRT_WGMMA_ASM
#undef OPRT_WGMMA_ACC32
#undef OPRT_WGMMA_ACC8
#undef OPRT_WGMMA_REGS_0_127
#undef OPRT_WGMMA_REGS_0_63
#undef OPRT_WGMMA_REGS_0_31

__device__ __forceinline__ uint32_t smem_u32(const void *p) { return uint32_t(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// Waits until the barrier's phase with this parity has completed. A fresh barrier is in
// phase 0, so waiting for parity 1 returns at once (how the producer sees the empty ring).
// Cluster: acquires at cluster scope what arrivals from other blocks of the cluster released.
#define OPRT_MBAR_TRY_WAIT(SEM) \
    "{\n.reg .pred p;\nmbarrier.try_wait.parity" SEM ".shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
template <bool Cluster = false>
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
    uint32_t done = 0;
    do {
        if constexpr (Cluster)
            asm volatile(OPRT_MBAR_TRY_WAIT(".acquire.cluster") : "=r"(done) : "r"(bar), "r"(parity) : "memory");
        else
            asm volatile(OPRT_MBAR_TRY_WAIT("") : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    } while (!done);
}
#undef OPRT_MBAR_TRY_WAIT

// 2-D TMA copy of the box at (c0 innermost, c1) into shared memory; completes `bar`'s bytes.
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap *map, int c0, int c1, uint32_t bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::
            "r"(dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
        : "memory");
}
// TMA store of a box of C from shared memory, clipped to the matrix; one bulk group each.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap *map, uint32_t src, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n"
                 "cp.async.bulk.commit_group;\n" ::"l"(reinterpret_cast<uint64_t>(map)),
                 "r"(src), "r"(c0), "r"(c1)
                 : "memory");
}
// Until at most Pending of this thread's bulk stores still read shared memory.
template <int Pending>
__device__ __forceinline__ void tma_store_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(Pending) : "memory");
}
// The address of shared-memory location `addr` in the cluster's block of rank `rank`.
__device__ __forceinline__ uint32_t map_rank(uint32_t addr, uint32_t rank) {
    uint32_t out;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(out) : "r"(addr), "r"(rank));
    return out;
}
// Arrives on a barrier of another block of the cluster (a shared::cluster address),
// releasing this thread's earlier writes to the cluster.
__device__ __forceinline__ void mbar_arrive_remote(uint32_t bar) {
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Shared-memory writes of this thread become visible to TMA (the async proxy).
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// Barrier `id` among the `threads` threads of some warps (here: one warpgroup).
__device__ __forceinline__ void named_barrier(int id, int threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Shared-memory matrix descriptor: start address, leading and stride byte offsets (all in
// 16-byte units), 128-byte swizzle (layout type 1 in bits 62-63).
__device__ __forceinline__ uint64_t smem_desc(uint32_t addr, uint32_t lbo, uint32_t sbo) {
    return uint64_t((addr & 0x3FFFF) >> 4) | (uint64_t((lbo & 0x3FFFF) >> 4) << 16) |
           (uint64_t((sbo & 0x3FFFF) >> 4) << 32) | (1ull << 62);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int Pending>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}
// Keeps the compiler from moving accumulator reads or writes across the asynchronous MMAs.
template <int R>
__device__ __forceinline__ void fence_operands(float (&d)[R]) {
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

template <int Regs>
__device__ __forceinline__ void setmaxnreg_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Regs));
}
template <int Regs>
__device__ __forceinline__ void setmaxnreg_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Regs));
}

// A work unit: one tile of C and one piece of K. Units walk kGroupM rows of tiles down each
// column of N-tiles; the pieces of one tile are neighbours. The same order in producer and
// consumers.
struct Unit {
    int m0, n0, kt0, kt1;  // first row and column, k-tiles [kt0, kt1)
};
template <int BM, int BN>
__device__ __forceinline__ Unit unit_at(int u, const Params &p) {
    const int tiles_m = (p.m + BM - 1) / BM, tiles_n = (p.n + BN - 1) / BN;
    const int k_tiles = (p.k + kBK - 1) / kBK;
    const int split = u % p.splits, t = u / p.splits;
    const int per_group = kGroupM * tiles_n;
    const int first = (t / per_group) * kGroupM;
    const int group = min(tiles_m - first, kGroupM);
    Unit w;
    w.m0 = (first + (t % per_group) % group) * BM;
    w.n0 = ((t % per_group) / group) * BN;
    w.kt0 = split * p.split_k_tiles;
    w.kt1 = split == p.splits - 1 ? k_tiles : min(w.kt0 + p.split_k_tiles, k_tiles);
    return w;
}
#endif  // __CUDA_ARCH_FEAT_SM90_ALL

// BKMajor: B is contiguous along K (column-major B); else along N. KT: k-tiles a stage.
template <int BM, int BN, bool Bf16, bool BKMajor, int KT = 1>
__global__ void __launch_bounds__(kMaxThreads, 1)
    wgmma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                 const __grid_constant__ CUtensorMap map_c, Params p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using Cfg = Config<BM, BN, KT>;
    constexpr int kStages = Cfg::kStages;
    extern __shared__ uint8_t smem_raw[];
    const uint32_t base = (smem_u32(smem_raw) + 1023u) & ~1023u;  // 128-byte swizzle wants 1 KB alignment
    const uint32_t epilogue = base + kStages * Cfg::kStageBytes;  // kConsumers x 2 chunks of C
    const uint32_t full = epilogue + Cfg::kEpilogueBytes;         // kStages barriers of 8 bytes
    const uint32_t empty = full + kStages * 8;
    const uint32_t landed = empty + kStages * 8;  // cluster K: piece 0's sums are in piece 1's buffers

    if (threadIdx.x == 0) {
        for (int s = 0; s < kStages; ++s) {
            mbar_init(full + 8 * s, 1);                                 // the producer's arrive (plus the TMA bytes)
            mbar_init(empty + 8 * s, Cfg::kConsumers * 4);  // one arrive per consumer warp
        }
        mbar_init(landed, Cfg::kConsumers * 128);  // one arrive per consumer thread of piece 0
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    // Cluster K: piece 0 writes into piece 1's shared memory and barrier, so both blocks
    // start (and piece 1's barriers are ready) first.
    if (p.cluster_k) asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
    else __syncthreads();
    // Overlapped launch: the next kernel may launch now; global memory is touched only once
    // the previous kernel has finished (both no-ops in a plain launch).
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
    asm volatile("griddepcontrol.wait;\n" ::: "memory");

    const int tiles_m = (p.m + BM - 1) / BM, tiles_n = (p.n + BN - 1) / BN;
    const int units = tiles_m * tiles_n * p.splits;
    const int first_unit = blockIdx.x, unit_step = gridDim.x;
    const int warpgroup = threadIdx.x / 128;

    if (warpgroup == 0) {  // producer
        setmaxnreg_dec<kProducerRegs>();
        if (threadIdx.x == 0) {
            uint32_t it = 0;  // stages filled so far, over all units: stage it % kStages
            for (int u = first_unit; u < units; u += unit_step) {
                const Unit w = unit_at<BM, BN>(u, p);
                for (int kt = w.kt0; kt < w.kt1; kt += KT, ++it) {
                    const uint32_t s = it % kStages, parity = (it / kStages) & 1;
                    const uint32_t bar = full + 8 * s;
                    mbar_wait(empty + 8 * s, parity ^ 1);
                    const uint32_t sa = base + s * Cfg::kStageBytes, sb = sa + KT * Cfg::kATileBytes;
                    mbar_arrive_expect_tx(bar, p.stage_bytes);
#pragma unroll
                    for (int j = 0; j < KT; ++j) tma_load_2d(sa + j * Cfg::kATileBytes, &map_a, (kt + j) * kBK, w.m0, bar);
                    if constexpr (BKMajor) {
#pragma unroll
                        for (int j = 0; j < KT; ++j) tma_load_2d(sb + j * Cfg::kBTileBytes, &map_b, (kt + j) * kBK, w.n0, bar);
                    } else {
#pragma unroll
                        for (int j = 0; j < BN / 64; ++j) tma_load_2d(sb + j * 8192 * KT, &map_b, w.n0 + 64 * j, kt * kBK, bar);
                    }
                }
            }
        }
    } else {  // consumers: consumer c computes rows 64c .. 64c + 63 of the tile
        setmaxnreg_inc<kConsumerRegs>();
        const int consumer = warpgroup - 1;
        const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
        // Hands a stage back to the producer: one arrival per warp.
        auto release = [&](uint32_t stage) {
            if (lane == 0) mbar_arrive(empty + 8 * stage);
        };
        float d[BN / 2];
        uint32_t it = 0;
        uint32_t chunks = 0;  // epilogue chunks written so far: buffer chunks % 2
        for (int u = first_unit; u < units; u += unit_step) {
            const Unit w = unit_at<BM, BN>(u, p);
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) d[i] = 0.f;
            for (int kt = w.kt0; kt < w.kt1; kt += KT, ++it) {
                const uint32_t s = it % kStages, parity = (it / kStages) & 1;
                mbar_wait(full + 8 * s, parity);
                const uint32_t sa = base + s * Cfg::kStageBytes + consumer * 64 * 128;
                const uint32_t sb = base + s * Cfg::kStageBytes + KT * Cfg::kATileBytes;
                fence_operands(d);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < KT * kSteps; ++kk) {  // k16 step kk % kSteps of k-tile kk / kSteps
                    const int tile = kk / kSteps, step = kk % kSteps;
                    const uint64_t da = smem_desc(sa + tile * Cfg::kATileBytes + step * 32, 16, 1024);
                    if constexpr (BKMajor) {
                        Wgmma<BN, Bf16>::template mma<0>(
                            d, da, smem_desc(sb + tile * Cfg::kBTileBytes + step * 32, 16, 1024));
                    } else {
                        Wgmma<BN, Bf16>::template mma<1>(d, da, smem_desc(sb + kk * 2048, 8192 * KT, 1024));
                    }
                }
                wgmma_commit();
                // Keep this stage's MMAs in flight; the previous stage's are done, so it
                // goes back to the producer.
                wgmma_wait<1>();
                fence_operands(d);
                if (kt > w.kt0) release((it - 1) % kStages);
            }
            wgmma_wait<0>();
            fence_operands(d);
            if (w.kt1 > w.kt0) release((it - 1) % kStages);

            if constexpr (Cfg::kClusterKFits) {
                if (p.cluster_k) {
                    // Each thread's sums, in its own slots of the consumer's two epilogue
                    // buffers (16 KB): piece 0 writes them into piece 1's (rank 1 of the
                    // cluster) and has nothing to store; piece 1 adds them to its own.
                    const uint32_t park = epilogue + consumer * 2 * kEpilogueChunkBytes + 8 * (threadIdx.x % 128);
                    if (u % 2 == 0) {
                        const uint32_t remote = map_rank(park, 1);
#pragma unroll
                        for (int i = 0; i < BN / 4; ++i)
                            asm volatile("st.shared::cluster.v2.f32 [%0], {%1, %2};\n" ::"r"(remote + i * 1024),
                                         "f"(d[2 * i]), "f"(d[2 * i + 1])
                                         : "memory");
                        mbar_arrive_remote(map_rank(landed, 1));
                        continue;
                    }
                    mbar_wait<true>(landed, 0);  // one unit a block: the barrier's first phase
#pragma unroll
                    for (int i = 0; i < BN / 4; ++i) {
                        float x, y;
                        asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n"
                                     : "=f"(x), "=f"(y)
                                     : "r"(park + i * 1024)
                                     : "memory");
                        d[2 * i] += x, d[2 * i + 1] += y;
                    }
                    // The epilogue's first barrier orders these reads before C's writes.
                }
            }

            // Accumulator i: row 16 * warp + lane / 4 (+ 8 for i % 4 >= 2) of this consumer's
            // 64 rows, column 8 * (i / 4) + 2 * (lane % 4) (+ 1 for odd i).
            const int64_t row = w.m0 + consumer * 64 + warp * 16 + lane / 4;
            if (p.tma_store) {
                // 64-column chunks: the warpgroup writes one into shared memory (in the
                // 128-byte swizzled layout, which is also free of bank conflicts), one thread
                // hands it to TMA and the warpgroup goes on while the copy runs; a buffer is
                // rewritten only once the store from it two chunks ago has read it.
                const bool leader = threadIdx.x % 128 == 0;
                const int r = warp * 16 + lane / 4;  // and r + 8; r % 8 == lane / 4
#pragma unroll
                for (int q = 0; q < BN / 64; ++q, ++chunks) {
                    if (w.n0 + 64 * q >= p.n) break;  // the same for the whole warpgroup
                    const uint32_t buf = epilogue + (consumer * 2 + chunks % 2) * kEpilogueChunkBytes;
                    if (leader) tma_store_wait_read<1>();
                    named_barrier(1 + consumer, 128);
#pragma unroll
                    for (int jj = 0; jj < 8; ++jj) {
                        const int j = 8 * q + jj;
                        const uint32_t at = buf + r * 128 + ((jj ^ (lane / 4)) * 16) + 4 * (lane % 4);
                        asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(at), "r"(pack<Bf16>(d[4 * j], d[4 * j + 1])));
                        asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(at + 8 * 128),
                                     "r"(pack<Bf16>(d[4 * j + 2], d[4 * j + 3])));
                    }
                    fence_proxy_async();
                    named_barrier(1 + consumer, 128);
                    if (leader) tma_store_2d(&map_c, buf, w.n0 + 64 * q, w.m0 + consumer * 64);
                }
            } else if (p.splits == 1 || p.cluster_k) {  // straight from registers, pairs of columns
#pragma unroll
                for (int j = 0; j < BN / 8; ++j) {
                    const int64_t col = w.n0 + 8 * j + 2 * (lane % 4);
                    store_pair<Bf16>(p, row, col, d[4 * j], d[4 * j + 1]);
                    store_pair<Bf16>(p, row + 8, col, d[4 * j + 2], d[4 * j + 3]);
                }
            } else {  // f32 partials: the slab of this piece of K, pairs of columns (ldp is even)
                float *slab = p.partial + int64_t(u % p.splits) * p.m * p.ldp;
#pragma unroll
                for (int j = 0; j < BN / 8; ++j) {
                    const int64_t col = w.n0 + 8 * j + 2 * (lane % 4);
                    if (col < p.n && row < p.m)
                        *reinterpret_cast<float2 *>(slab + row * p.ldp + col) = make_float2(d[4 * j], d[4 * j + 1]);
                    if (col < p.n && row + 8 < p.m)
                        *reinterpret_cast<float2 *>(slab + (row + 8) * p.ldp + col) = make_float2(d[4 * j + 2], d[4 * j + 3]);
                }
            }
        }
    }
    // The last stores have read shared memory (they reach C before the grid completes).
    if (warpgroup > 0 && threadIdx.x % 128 == 0) tma_store_wait_read<0>();
    if (p.cluster_k) {  // neither block leaves while the other may still write into it
        __syncwarp();  // thread 0 of the producer rejoins its warp
        asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
    }
#endif  // __CUDA_ARCH_FEAT_SM90_ALL
}

// ---- host side ----

// cuTensorMapEncodeTiled from the driver, found through the runtime (no -lcuda).
PFN_cuTensorMapEncodeTiled_v12000 encoder() {
    static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
        void *p = nullptr;
        cudaDriverEntryPointQueryResult found{};
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found) !=
                cudaSuccess ||
            found != cudaDriverEntryPointSuccess)
            p = nullptr;
        return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
    }();
    return fn;
}

// A 2-D row-major view: `cols` contiguous values per row, rows `row_stride` values apart,
// copied in boxes of box_cols x box_rows with 128-byte swizzle; zeros outside.
bool encode(CUtensorMap *map, bool bf16, const void *ptr, int64_t rows, int64_t cols, int64_t row_stride,
            uint32_t box_rows, uint32_t box_cols) {
    PFN_cuTensorMapEncodeTiled_v12000 fn = encoder();
    if (fn == nullptr) return false;
    const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};
    const cuuint64_t strides[1] = {cuuint64_t(row_stride) * 2};  // bytes, for dimension 1
    const cuuint32_t box[2] = {box_cols, box_rows};
    const cuuint32_t elem_strides[2] = {1, 1};
    return fn(map, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2,
              const_cast<void *>(ptr), dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
              CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// Whether the device is 9.0 (wgmma and setmaxnreg exist on sm_90a only) and this binary
// carries the real sm_90a kernels: built for another target the kernel is an empty stub
// that uses a handful of registers, the real one 168. Cached per device.
bool device_ok(int device) {
    constexpr int kMaxDevices = 64;
    static int state[kMaxDevices] = {};  // 0 unknown, 1 yes, 2 no
    static std::mutex mu;
    if (device < 0 || device >= kMaxDevices) return false;
    std::lock_guard<std::mutex> lock(mu);
    if (state[device] == 0) {
        int major = 0, minor = 0;
        cudaFuncAttributes attr{};
        const bool ok = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
                        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess &&
                        major == 9 && minor == 0 &&
                        cudaFuncGetAttributes(&attr, wgmma_kernel<128, 256, true, false>) == cudaSuccess &&
                        attr.binaryVersion >= 90 && attr.numRegs >= 128 && encoder() != nullptr;
        if (!ok) cudaGetLastError();  // a failed query must not surface at the caller's next check
        state[device] = ok ? 1 : 2;
    }
    return state[device] == 1;
}

int sm_count(int device) {
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    return sms > 0 ? sms : 1;
}

// The operand's non-contiguous stride works for TMA: 16-byte multiple, and at least the
// contiguous extent (rows do not overlap), below TMA's 2^40-byte limit.
bool tma_stride_ok(int64_t stride, int64_t contiguous_extent) {
    return stride % 8 == 0 && stride >= contiguous_extent && stride < (int64_t(1) << 38);
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The K split actually run for a request of `splits` pieces: k-tiles per piece, and the
// number of pieces, none of them empty.
void split_shape(const GemmArgs &g, int splits, int kt, int &split_k_tiles, int &pieces) {
    const int64_t k_tiles = ceil_div(g.k, kBK);
    const int64_t want = splits < 1 ? 1 : (splits > k_tiles ? k_tiles : splits);
    split_k_tiles = int(ceil_div(ceil_div(k_tiles, want), kt) * kt);  // whole stages of kt k-tiles
    pieces = int(ceil_div(k_tiles, split_k_tiles));
}

int64_t workspace_bytes(const GemmArgs &g, int splits, int kt) {
    int per = 0, pieces = 0;
    split_shape(g, splits, kt, per, pieces);
    return pieces > 1 ? int64_t(pieces) * g.m * (g.n + g.n % 2) * int64_t(sizeof(float)) + 16 : 0;
}

template <int BM, int BN, bool Bf16, bool BKMajor, int KT>
cudaError_t launch(const GemmArgs &g, const WgmmaChoice &choice, void *workspace, int sms, cudaStream_t stream) {
    using Cfg = Config<BM, BN, KT>;
    CUtensorMap map_a, map_b;
    const int64_t a_rows = g.m < BM ? (g.m + 7) / 8 * 8 : BM;  // see "Where all of M fits" above
    if (!encode(&map_a, Bf16, g.a, g.m, g.k, g.a_row, uint32_t(a_rows), kBK)) return cudaErrorInvalidValue;
    const bool b_ok = BKMajor ? encode(&map_b, Bf16, g.b, g.n, g.k, g.b_col, BN, kBK)  // rows N, K contiguous
                              : encode(&map_b, Bf16, g.b, g.k, g.n, g.b_row, KT * kBK, 64);  // rows K, N contiguous
    if (!b_ok) return cudaErrorInvalidValue;
    auto kernel = wgmma_kernel<BM, BN, Bf16, BKMajor, KT>;
    cudaError_t err = opt_in_smem_once<wgmma_kernel<BM, BN, Bf16, BKMajor, KT>>(Cfg::kSmemBytes);
    if (err != cudaSuccess) return err;

    Params p{};
    p.c = g.c, p.c_row = g.c_row, p.c_col = g.c_col;
    p.m = int(g.m), p.n = int(g.n), p.k = int(g.k);
    p.stage_bytes = KT * (int(a_rows * kBK * 2) + Cfg::kBTileBytes);
    p.pairs = g.c_col == 1 && g.c_row % 2 == 0 && reinterpret_cast<uintptr_t>(g.c) % 4 == 0;
    split_shape(g, choice.splits, KT, p.split_k_tiles, p.splits);
    p.ldp = g.n + g.n % 2;
    // C through TMA stores: contiguous along N, 16-byte aligned rows (else stores from registers).
    if (choice.cluster_k) {  // piece 0: kClusterKShare of the k-tiles, whole stages
        const int k_tiles = int(ceil_div(g.k, kBK));
        const int k0 = int(k_tiles * kClusterKShare) / KT * KT;
        if (!Cfg::kClusterKFits || k0 < KT || k0 >= k_tiles) return cudaErrorInvalidValue;
        p.cluster_k = true, p.splits = 2, p.split_k_tiles = k0;
    }
    p.tma_store = !choice.direct_store && (p.splits == 1 || p.cluster_k) && g.c_col == 1 &&
                  tma_stride_ok(g.c_row, g.n) && reinterpret_cast<uintptr_t>(g.c) % 16 == 0;
    CUtensorMap map_c{};
    if (p.tma_store && !encode(&map_c, Bf16, g.c, g.m, g.n, g.c_row, 64, 64)) return cudaErrorInvalidValue;
    // From the workspace's first 16-byte boundary (workspace_bytes asks for 16 more).
    p.partial = reinterpret_cast<float *>((reinterpret_cast<uintptr_t>(workspace) + 15) / 16 * 16);
    if (p.splits > 1 && !p.cluster_k && workspace == nullptr) return cudaErrorInvalidValue;

    cudaLaunchConfig_t config{};
    config.blockDim = dim3(Cfg::kThreads);
    config.dynamicSmemBytes = Cfg::kSmemBytes;
    config.stream = stream;
    cudaLaunchAttribute attrs[2];
    config.attrs = attrs;
    config.numAttrs = 0;
    if (choice.overlapped) {
        attrs[config.numAttrs].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attrs[config.numAttrs++].val.programmaticStreamSerializationAllowed = 1;
    }
    // Persistent: one block per SM, at most one per unit.
    const int64_t units = ceil_div(g.m, BM) * ceil_div(g.n, BN) * p.splits;
    config.gridDim = dim3(unsigned(units < sms ? units : sms));
    if (p.cluster_k) {  // a block per unit, the two pieces of a tile one cluster
        if (units > sms) return cudaErrorInvalidValue;
        attrs[config.numAttrs].id = cudaLaunchAttributeClusterDimension;
        attrs[config.numAttrs++].val.clusterDim = {2, 1, 1};
    }
    err = cudaLaunchKernelEx(&config, kernel, map_a, map_b, map_c, p);
    if (err != cudaSuccess || p.splits == 1 || p.cluster_k) return err;

    const int64_t pairs = g.m * (p.ldp / 2);
    config.gridDim = dim3(unsigned(ceil_div(pairs, 256) < 8 * sms ? ceil_div(pairs, 256) : 8 * sms));
    config.blockDim = dim3(256);
    config.dynamicSmemBytes = 0;
    return cudaLaunchKernelEx(&config, splitk_reduce<Bf16>, p);
}

// The kernel variants the plan picks from, each compiled for both types and both layouts of B.
using Launcher = cudaError_t (*)(const GemmArgs &, const WgmmaChoice &, void *, int, cudaStream_t);
struct Variant {
    const char *name;
    int bm, bn, kt;
    Launcher fn[2][2];  // [bf16][B contiguous along K]
};
template <int BM, int BN, int KT = 1>
constexpr Variant variant(const char *name) {
    return {name,
            BM,
            BN,
            KT,
            {{launch<BM, BN, false, false, KT>, launch<BM, BN, false, true, KT>},
             {launch<BM, BN, true, false, KT>, launch<BM, BN, true, true, KT>}}};
}
enum : int { k128x256, k64x128, k64x64 };
const Variant kVariants[] = {
    variant<128, 256>("128x256"),
    variant<64, 128>("64x128"),
    variant<64, 64, 2>("64x64"),  // stages of two k-tiles (see KT)
};
constexpr int kVariantCount = int(sizeof(kVariants) / sizeof(kVariants[0]));

// The plan: the first row whose limits hold picks the variant. "waves" counts 128x256 tiles
// per SM. K is split until the work units fill the SMs (one wave), at most max_splits ways,
// each piece at least kMinSplitKTiles k-tiles deep. overlapped: launched overlapped with the
// kernel before (else plainly). The rows come from the benchmark's sweep (tests/cpp/nvidia/bench/
// matmul_kernels.cu --sweep: its "best" line per shape, "/p" for a plain launch; the skinny
// rows under 64 chosen to beat cuBLAS both from DRAM (--rotate) and with B in the L2; at 64
// rows and more the DRAM figure decides; so does K <= 2048 under 64 rows, where one piece is
// faster from DRAM and splitting only wins some hot cases). Measured on the H200, bf16, % of
// cuBLAS from DRAM (and hot): 2026-12-04, cluster K: 64x4096x4096 95-102% (95-96%),
// 16x4096x4096 112-116% (117-118%); without the end barrier, 16-64 x 2048-4096 x 2048-4096
// and 128 x 2048 x 2048-4096 95-122% (97-135%), 96 x 2048 x 4096 81-85% (81-85%, one piece
// at most 3% faster); 2026-12-03, 8 .. 48 rows x N 1024 x K 1024-4096 and under 64 rows x K <= 2048
// 95-111% (97-116%), 64x4096x1024 98-102% (95-108%), 80, 96, 112, 120
// and 128 x 4096 x 4096 81-119% (74-136%), 96 and 128 x 8192 x 8192 91-98% (93-98%), 72 and
// 104 x 4096 x 4096 (where cuBLAS is unusually fast) 75-85% (58-70%), 1024^3 105-107%,
// 2048^3 99-100%, 4096^3 91-96%; 2026-12-02, 8192^3 100-102%. Weak: 16 x 1024 x 2048 in one
// piece 85-90% (79-90%) on 2026-12-04, where 4 pieces ran 113-118% both ways.
//
// Launched overlapped, 112 and 128 x 4096 x 4096 ran 12-16% slower than launched plainly
// (128 blocks, each streaming all of K); 64 x 4096 x 4096 (64 blocks), 128 x 4096 x 1024 and
// the large products ran 2-13% faster overlapped.
struct PlanRow {
    int64_t max_m, min_n;
    int64_t min_k_tiles, max_k_tiles;
    double max_waves;
    int variant, max_splits;
    bool overlapped;  // programmatic dependent launch (see WgmmaChoice)
    bool cluster_k;   // K in two pieces summed in a cluster (where the grid of pairs fits one wave)
};
constexpr double kAny = 1e30;
constexpr int64_t kAnyM = int64_t(1) << 62;
constexpr int kMinSplitKTiles = 8;
constexpr PlanRow kPlan[] = {
    // max_m, min_n, k-tiles, max_waves, variant, max_splits, overlapped, cluster_k
    {56, 0, 0, 32, kAny, k64x64, 1, true, false},          // under 64 rows, K <= 2048 (16 x 4096 x 1024): one piece
    {128, 2048, 32, kAnyM, kAny, k64x64, 1, true, true},   // pairs of 64x64 blocks fill at most a wave (64 x 4096 x 4096): cluster K
    {16, 0, 0, kAnyM, kAny, k64x128, 8, true, false},      // M <= 16 where cluster K is not taken (16 x 1024 x 4096: 8 pieces)
    {32, 0, 0, kAnyM, kAny, k64x128, 8, true, false},      // M <= 32 likewise (32 x 1024 x 4096: 8 pieces)
    {56, 0, 0, kAnyM, kAny, k64x64, 8, true, false},       // M <= 56 likewise (40 x 1024 x 4096): A's box 8+ rows short of 64
    {64, 0, 0, kAnyM, kAny, k64x64, 1, true, false},       // M <= 64 likewise (64 x 1024 x 4096): one piece, B from DRAM
    {96, 4096, 64, kAnyM, kAny, k64x128, 1, false, false},   // 80, 96 x 4096 x 4096: a 64x64 grid's second row of tiles is half empty
    {128, 8192, 64, kAnyM, kAny, k64x128, 1, false, false},  // 128 x 8192 x 8192: 64x64 tiles would be two waves
    {128, 4096, 64, kAnyM, kAny, k64x64, 1, false, false},   // 112, 128 x 4096 x 4096
    {128, 0, 0, kAnyM, kAny, k64x64, 1, true, false},        // other products of up to 128 rows (128 x 4096 x 1024)
    {kAnyM, 0, 0, kAnyM, 0.5, k64x128, 1, true, false},      // small products (1024^3)
    {kAnyM, 0, 0, kAnyM, kAny, k128x256, 1, true, false},    // about a wave and more (2048^3 .. 8192^3)
};

WgmmaChoice choose(const GemmArgs &g, int sms) {
    const double waves = double(ceil_div(g.m, 128) * ceil_div(g.n, 256)) / sms;
    const int64_t k_tiles = ceil_div(g.k, kBK);
    for (const PlanRow &row : kPlan) {
        if (g.m > row.max_m || g.n < row.min_n || k_tiles < row.min_k_tiles || k_tiles > row.max_k_tiles ||
            waves > row.max_waves)
            continue;
        const int variant = row.variant;
        const Variant &v = kVariants[variant];
        const int64_t units = ceil_div(g.m, v.bm) * ceil_div(g.n, v.bn);
        if (row.cluster_k && 2 * units > sms) continue;  // a block per piece, one wave
        int64_t splits = sms / units;
        const int64_t deep = k_tiles / kMinSplitKTiles;
        if (splits > row.max_splits) splits = row.max_splits;
        if (splits > deep) splits = deep;
        WgmmaChoice c;
        c.variant = variant, c.splits = splits < 1 ? 1 : int(splits), c.overlapped = row.overlapped;
        c.cluster_k = row.cluster_k;
        return c;
    }
    return WgmmaChoice{};
}

}  // namespace wgmma_detail

bool wgmma_supports(const GemmArgs &g, oprt_dtype_t dtype) {
    using namespace wgmma_detail;
    if (dtype != OPRT_DTYPE_F16 && dtype != OPRT_DTYPE_BF16) return false;
    constexpr int64_t kMax = int64_t(1) << 31;
    if (g.m < 1 || g.n < 1 || g.k < 1 || g.m >= kMax || g.n >= kMax || g.k >= kMax) return false;
    // Work units are ints: the smallest tiles, split the most (16 ways) stay below 2^31.
    if (ceil_div(g.m, 64) * ceil_div(g.n, 64) >= (kMax >> 4)) return false;
    if (reinterpret_cast<uintptr_t>(g.a) % 16 != 0 || reinterpret_cast<uintptr_t>(g.b) % 16 != 0) return false;
    if (g.a_col != 1 || !tma_stride_ok(g.a_row, g.k)) return false;
    const bool b_n_major = g.b_col == 1 && tma_stride_ok(g.b_row, g.n);
    const bool b_k_major = g.b_row == 1 && tma_stride_ok(g.b_col, g.k);
    if (!b_n_major && !b_k_major) return false;
    int device = 0;
    return cudaGetDevice(&device) == cudaSuccess && device_ok(device);
}

int wgmma_variant_count() { return wgmma_detail::kVariantCount; }

const char *wgmma_variant_name(int variant) {
    using namespace wgmma_detail;
    return variant >= 0 && variant < kVariantCount ? kVariants[variant].name : "?";
}

WgmmaChoice wgmma_choose(const GemmArgs &g, int sms) { return wgmma_detail::choose(g, sms); }

size_t wgmma_workspace_bytes(const GemmArgs &g, WgmmaChoice choice) {
    using namespace wgmma_detail;
    if (choice.variant < 0 || choice.variant >= kVariantCount || choice.cluster_k) return 0;
    return size_t(workspace_bytes(g, choice.splits, kVariants[choice.variant].kt));
}

cudaError_t wgmma_launch(const GemmArgs &g, oprt_dtype_t dtype, WgmmaChoice choice, void *workspace,
                         cudaStream_t stream) {
    using namespace wgmma_detail;
    if (choice.variant < 0 || choice.variant >= kVariantCount || choice.splits < 1 || choice.splits > 16)
        return cudaErrorInvalidValue;
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess) return err;
    const bool bf16 = dtype == OPRT_DTYPE_BF16;
    const bool b_k_major = !(g.b_col == 1 && tma_stride_ok(g.b_row, g.n));
    return kVariants[choice.variant].fn[bf16][b_k_major](g, choice, workspace, sm_count(device), stream);
}

}  // namespace oprt::matmul::OPRT_GPU_BACKEND_NS
