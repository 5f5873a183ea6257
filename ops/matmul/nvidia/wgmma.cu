// matmul on Hopper tensor cores (sm_90a): TMA + wgmma + a warp-specialized pipeline.
//
// Idea: a block of three warpgroups owns a 128 x BN tile of C (BN = 256, 128 or 64, picked so
// the tiles fill the SMs). Warpgroup 0 is the producer: one thread issues TMA copies of the
// next 128x64 slice of A and 64xBN slice of B into a ring of shared-memory stages and
// waits only for a stage to be released. Warpgroups 1 and 2 are consumers, each computing 64
// rows of the tile with wgmma.mma_async m64nBNk16 straight from shared memory into f32
// registers. Each stage has two mbarriers: "full" (TMA bytes arrived: the producer announces
// the byte count, the copies complete it) and "empty" (every consumer warp is done reading).
// setmaxnreg moves registers from the producer (40) to the consumers (232) for the
// accumulators. The grid is persistent (one block per SM walking the tiles in an order that
// keeps B tiles in L2), so the producer already loads the next tile while the consumers
// store the last one, registers straight to global with bounds checks.
//
// Shared-memory layouts are the ones TMA writes with 128-byte swizzle and wgmma reads
// through a matrix descriptor: rows of 64 16-bit values (128 bytes), the 16-byte chunks of
// row r XORed with r % 8, 8-row groups 1024 bytes apart.
//   A (K-major, rows = M): one 128x64 box; a k16 step starts 32 bytes further into the rows.
//   B K-major (column-major B, rows = N): one BNx64 box, read like A.
//   B N-major (row-major B, rows = K): BN/64 boxes of 64(N) x 64(K), 8 KB apart; wgmma reads
//     it transposed (tnspB = 1): 64-column blocks 8 KB apart (leading byte offset), 8-row K
//     groups 1024 bytes apart (stride byte offset); a k16 step starts 16 rows (2 KB) further.
// TMA fills what lies outside the matrix with zeros, so tails of M, N and K need no code.
#include "ops/matmul/nvidia/wgmma.cuh"

#include <cuda.h>  // CUtensorMap and its enums (types only: the encoder comes from the runtime)
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <mutex>
#include <type_traits>

namespace oprt::matmul::OPRT_GPU_BACKEND_NS {
namespace wgmma_detail {

constexpr int kBM = 128, kBK = 64;          // block tile rows, k-tile depth (64 values = 128 bytes)
constexpr int kThreads = 384;               // producer warpgroup + 2 consumer warpgroups
constexpr int kConsumerWarps = 8;
constexpr int kATileBytes = kBM * kBK * 2;  // 16 KB
constexpr int kGroupM = 16;                 // rasterization: 16 M-tiles walk a column of N-tiles together
constexpr int kProducerRegs = 40, kConsumerRegs = 232;  // 128 * (40 + 2 * 232) = 64512 <= 65536

template <int BN>
struct Config {
    static constexpr int kBTileBytes = BN * kBK * 2;
    static constexpr int kStageBytes = kATileBytes + kBTileBytes;
    static constexpr int kStages = (192 * 1024) / kStageBytes;  // 4, 6, 8 stages for BN 256, 128, 64
    // Stages, their full and empty barriers, and room to align the stages to 1024 bytes.
    static constexpr int kSmemBytes = kStages * kStageBytes + 2 * kStages * 8 + 1024;
};

struct Epilogue {
    void *c;
    int64_t c_row, c_col;
    int m, n, k;
    bool pairs;  // C contiguous along N, pairs of columns 4-byte aligned
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// wgmma.mma_async m64nNk16, f32 += A(smem) * B(smem), by descriptor. TransB = 1 reads B
// N-major. Operands: N/2 accumulators, the two descriptors, scale-d (1: accumulate).
template <int N, bool Bf16>
struct Wgmma;
template <> struct Wgmma<256, true> {
    template <int TransB>
    __device__ __forceinline__ static void mma(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
            "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
            "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
            "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
            "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
            "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
            "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
            "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
            "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
            "}, %128, %129, p, 1, 1, 0, %131;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
              "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
              "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
              "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
              "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
              "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
              "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
              "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
              "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
              "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
              "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
              "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
              "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
              "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
              "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
            : "l"(desc_a), "l"(desc_b), "r"(1), "n"(TransB));
    }
};

template <> struct Wgmma<256, false> {
    template <int TransB>
    __device__ __forceinline__ static void mma(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {"
            "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
            "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
            "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
            "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
            "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
            "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
            "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
            "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
            "}, %128, %129, p, 1, 1, 0, %131;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
              "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
              "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
              "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
              "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
              "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
              "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
              "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
              "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
              "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
              "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
              "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
              "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
              "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
              "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
            : "l"(desc_a), "l"(desc_b), "r"(1), "n"(TransB));
    }
};

template <> struct Wgmma<128, true> {
    template <int TransB>
    __device__ __forceinline__ static void mma(float (&d)[64], uint64_t desc_a, uint64_t desc_b) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
            "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
            "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
            "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
            "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
            "}, %64, %65, p, 1, 1, 0, %67;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
              "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
              "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
              "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
              "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
              "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
              "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
            : "l"(desc_a), "l"(desc_b), "r"(1), "n"(TransB));
    }
};

template <> struct Wgmma<128, false> {
    template <int TransB>
    __device__ __forceinline__ static void mma(float (&d)[64], uint64_t desc_a, uint64_t desc_b) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {"
            "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
            "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
            "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
            "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
            "}, %64, %65, p, 1, 1, 0, %67;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
              "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
              "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
              "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
              "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
              "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
              "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
            : "l"(desc_a), "l"(desc_b), "r"(1), "n"(TransB));
    }
};

template <> struct Wgmma<64, true> {
    template <int TransB>
    __device__ __forceinline__ static void mma(float (&d)[32], uint64_t desc_a, uint64_t desc_b) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
            "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
            "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
            "}, %32, %33, p, 1, 1, 0, %35;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
              "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
              "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
            : "l"(desc_a), "l"(desc_b), "r"(1), "n"(TransB));
    }
};

template <> struct Wgmma<64, false> {
    template <int TransB>
    __device__ __forceinline__ static void mma(float (&d)[32], uint64_t desc_a, uint64_t desc_b) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {"
            "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
            "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
            "}, %32, %33, p, 1, 1, 0, %35;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
              "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
              "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
            : "l"(desc_a), "l"(desc_b), "r"(1), "n"(TransB));
    }
};

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
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
    uint32_t done = 0;
    do {
        asm volatile(
            "{\n.reg .pred p;\n"
            "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
            "selp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done)
            : "r"(bar), "r"(parity)
            : "memory");
    } while (!done);
}

// 2-D TMA copy of the box at (c0 innermost, c1) into shared memory; completes `bar`'s bytes.
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap *map, int c0, int c1, uint32_t bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::
            "r"(dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
        : "memory");
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

// Tile number -> first row and column, kGroupM M-tiles at a time down each column of N-tiles
// (the same order in producer and consumers).
template <int BN>
__device__ __forceinline__ void tile_origin(int tile, int tiles_m, int tiles_n, int &m0, int &n0) {
    const int per_group = kGroupM * tiles_n;
    const int first_m = (tile / per_group) * kGroupM;
    const int group_m = min(tiles_m - first_m, kGroupM);
    m0 = (first_m + (tile % per_group) % group_m) * kBM;
    n0 = ((tile % per_group) / group_m) * BN;
}

template <bool Bf16>
__device__ __forceinline__ void store_pair(const Epilogue &e, int64_t row, int64_t col, float v0, float v1) {
    using T = std::conditional_t<Bf16, __nv_bfloat16, __half>;
    using T2 = std::conditional_t<Bf16, __nv_bfloat162, __half2>;
    T *c = static_cast<T *>(e.c);
    if (row >= e.m || col >= e.n) return;
    const int64_t i0 = row * e.c_row + col * e.c_col;
    if (col + 1 < e.n) {
        if (e.pairs) {
            T2 v;
            v.x = T(v0), v.y = T(v1);  // round to nearest even
            *reinterpret_cast<T2 *>(c + i0) = v;
        } else {
            c[i0] = T(v0);
            c[i0 + e.c_col] = T(v1);
        }
    } else {
        c[i0] = T(v0);
    }
}
#endif  // __CUDA_ARCH_FEAT_SM90_ALL

// BKMajor: B is contiguous along K (column-major B); else along N.
template <int BN, bool Bf16, bool BKMajor>
__global__ void __launch_bounds__(kThreads, 1)
    wgmma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b, Epilogue e) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    using Cfg = Config<BN>;
    constexpr int kStages = Cfg::kStages;
    extern __shared__ uint8_t smem_raw[];
    const uint32_t base = (smem_u32(smem_raw) + 1023u) & ~1023u;  // 128-byte swizzle wants 1 KB alignment
    const uint32_t full = base + kStages * Cfg::kStageBytes;      // kStages barriers of 8 bytes
    const uint32_t empty = full + kStages * 8;

    if (threadIdx.x == 0) {
        for (int s = 0; s < kStages; ++s) {
            mbar_init(full + 8 * s, 1);                 // the producer's arrive (plus the TMA bytes)
            mbar_init(empty + 8 * s, kConsumerWarps);  // one arrive per consumer warp
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    const int tiles_m = (e.m + kBM - 1) / kBM, tiles_n = (e.n + BN - 1) / BN;
    const int tiles = tiles_m * tiles_n;
    const int k_tiles = (e.k + kBK - 1) / kBK;
    const int warpgroup = threadIdx.x / 128;

    if (warpgroup == 0) {  // producer
        setmaxnreg_dec<kProducerRegs>();
        if (threadIdx.x == 0) {
            uint32_t it = 0;  // k-tiles issued so far, over all tiles: stage it % kStages
            for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
                int m0, n0;
                tile_origin<BN>(tile, tiles_m, tiles_n, m0, n0);
                for (int kt = 0; kt < k_tiles; ++kt, ++it) {
                    const uint32_t s = it % kStages, parity = (it / kStages) & 1;
                    mbar_wait(empty + 8 * s, parity ^ 1);
                    mbar_arrive_expect_tx(full + 8 * s, Cfg::kStageBytes);
                    const uint32_t sa = base + s * Cfg::kStageBytes, sb = sa + kATileBytes;
                    tma_load_2d(sa, &map_a, kt * kBK, m0, full + 8 * s);
                    if constexpr (BKMajor) {
                        tma_load_2d(sb, &map_b, kt * kBK, n0, full + 8 * s);
                    } else {
#pragma unroll
                        for (int j = 0; j < BN / 64; ++j)
                            tma_load_2d(sb + j * 8192, &map_b, n0 + 64 * j, kt * kBK, full + 8 * s);
                    }
                }
            }
        }
    } else {  // consumers: warpgroup 1 computes rows 0-63 of the tile, warpgroup 2 rows 64-127
        setmaxnreg_inc<kConsumerRegs>();
        const int consumer = warpgroup - 1;
        const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
        float d[BN / 2];
        uint32_t it = 0;
        for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
            int m0, n0;
            tile_origin<BN>(tile, tiles_m, tiles_n, m0, n0);
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) d[i] = 0.f;
            for (int kt = 0; kt < k_tiles; ++kt, ++it) {
                const uint32_t s = it % kStages, parity = (it / kStages) & 1;
                mbar_wait(full + 8 * s, parity);
                const uint32_t sa = base + s * Cfg::kStageBytes + consumer * 64 * 128;
                const uint32_t sb = base + s * Cfg::kStageBytes + kATileBytes;
                fence_operands(d);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < kBK / 16; ++kk) {
                    const uint64_t da = smem_desc(sa + kk * 32, 16, 1024);
                    if constexpr (BKMajor) {
                        Wgmma<BN, Bf16>::template mma<0>(d, da, smem_desc(sb + kk * 32, 16, 1024));
                    } else {
                        Wgmma<BN, Bf16>::template mma<1>(d, da, smem_desc(sb + kk * 2048, 8192, 1024));
                    }
                }
                wgmma_commit();
                // Keep this k-tile's MMAs in flight; the previous k-tile's are done, so its
                // stage goes back to the producer.
                wgmma_wait<1>();
                fence_operands(d);
                if (kt > 0 && lane == 0) mbar_arrive(empty + 8 * ((it - 1) % kStages));
            }
            wgmma_wait<0>();
            fence_operands(d);
            if (k_tiles > 0 && lane == 0) mbar_arrive(empty + 8 * ((it - 1) % kStages));

            // Accumulator i: row 16 * warp + lane / 4 (+ 8 for i % 4 >= 2) of this consumer's
            // 64 rows, column 8 * (i / 4) + 2 * (lane % 4) (+ 1 for odd i).
            const int64_t row = m0 + consumer * 64 + warp * 16 + lane / 4;
#pragma unroll
            for (int j = 0; j < BN / 8; ++j) {
                const int64_t col = n0 + 8 * j + 2 * (lane % 4);
                store_pair<Bf16>(e, row, col, d[4 * j], d[4 * j + 1]);
                store_pair<Bf16>(e, row + 8, col, d[4 * j + 2], d[4 * j + 3]);
            }
        }
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
                        cudaFuncGetAttributes(&attr, wgmma_kernel<256, true, false>) == cudaSuccess &&
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

template <int BN, bool Bf16, bool BKMajor>
cudaError_t launch(const GemmArgs &g, int sms, cudaStream_t stream) {
    using Cfg = Config<BN>;
    const bool bf16 = Bf16;
    CUtensorMap map_a, map_b;
    if (!encode(&map_a, bf16, g.a, g.m, g.k, g.a_row, kBM, kBK)) return cudaErrorInvalidValue;
    const bool b_ok = BKMajor ? encode(&map_b, bf16, g.b, g.n, g.k, g.b_col, BN, kBK)   // rows N, K contiguous
                              : encode(&map_b, bf16, g.b, g.k, g.n, g.b_row, kBK, 64);  // rows K, N contiguous
    if (!b_ok) return cudaErrorInvalidValue;
    auto kernel = wgmma_kernel<BN, Bf16, BKMajor>;
    cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes);
    if (err != cudaSuccess) return err;
    Epilogue e{g.c, g.c_row, g.c_col, int(g.m), int(g.n), int(g.k),
               g.c_col == 1 && g.c_row % 2 == 0 && reinterpret_cast<uintptr_t>(g.c) % 4 == 0};
    const int64_t tiles = ((g.m + kBM - 1) / kBM) * ((g.n + BN - 1) / BN);
    const int grid = int(tiles < sms ? tiles : sms);
    kernel<<<grid, kThreads, Cfg::kSmemBytes, stream>>>(map_a, map_b, e);
    return cudaGetLastError();
}

template <bool Bf16, bool BKMajor>
cudaError_t launch_for_shape(const GemmArgs &g, int sms, cudaStream_t stream) {
    // The widest tile whose waves keep the SMs busy: tiles / (waves * SMs), weighted by how
    // much of the tensor cores' rate each width reaches (narrow wgmmas read more shared
    // memory per flop).
    auto score = [&](int bn, double rate) {
        const int64_t tiles = ((g.m + kBM - 1) / kBM) * ((g.n + bn - 1) / bn);
        const int64_t waves = (tiles + sms - 1) / sms;
        return rate * double(tiles) / double(waves * sms);
    };
    const double s256 = score(256, 1.0), s128 = score(128, 0.93), s64 = score(64, 0.8);
    if (s256 >= s128 && s256 >= s64) return launch<256, Bf16, BKMajor>(g, sms, stream);
    if (s128 >= s64) return launch<128, Bf16, BKMajor>(g, sms, stream);
    return launch<64, Bf16, BKMajor>(g, sms, stream);
}

// The operand's non-contiguous stride works for TMA: 16-byte multiple, and at least the
// contiguous extent (rows do not overlap), below TMA's 2^40-byte limit.
bool tma_stride_ok(int64_t stride, int64_t contiguous_extent) {
    return stride % 8 == 0 && stride >= contiguous_extent && stride < (int64_t(1) << 38);
}

}  // namespace wgmma_detail

bool wgmma_supports(const GemmArgs &g, oprt_dtype_t dtype) {
    using namespace wgmma_detail;
    if (dtype != OPRT_DTYPE_F16 && dtype != OPRT_DTYPE_BF16) return false;
    constexpr int64_t kMax = int64_t(1) << 31;
    if (g.m < 1 || g.n < 1 || g.k < 1 || g.m >= kMax || g.n >= kMax || g.k >= kMax) return false;
    if (((g.m + kBM - 1) / kBM) * ((g.n + 63) / 64) >= kMax) return false;  // tile numbers are int
    if (reinterpret_cast<uintptr_t>(g.a) % 16 != 0 || reinterpret_cast<uintptr_t>(g.b) % 16 != 0) return false;
    if (g.a_col != 1 || !tma_stride_ok(g.a_row, g.k)) return false;
    const bool b_n_major = g.b_col == 1 && tma_stride_ok(g.b_row, g.n);
    const bool b_k_major = g.b_row == 1 && tma_stride_ok(g.b_col, g.k);
    if (!b_n_major && !b_k_major) return false;
    int device = 0;
    return cudaGetDevice(&device) == cudaSuccess && device_ok(device);
}

cudaError_t wgmma_launch(const GemmArgs &g, oprt_dtype_t dtype, cudaStream_t stream) {
    using namespace wgmma_detail;
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess) return err;
    const int sms = sm_count(device);
    const bool bf16 = dtype == OPRT_DTYPE_BF16;
    const bool b_n_major = g.b_col == 1 && tma_stride_ok(g.b_row, g.n);
    if (bf16) return b_n_major ? launch_for_shape<true, false>(g, sms, stream) : launch_for_shape<true, true>(g, sms, stream);
    return b_n_major ? launch_for_shape<false, false>(g, sms, stream) : launch_for_shape<false, true>(g, sms, stream);
}

}  // namespace oprt::matmul::OPRT_GPU_BACKEND_NS
