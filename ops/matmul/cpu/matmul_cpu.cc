// matmul on the CPU: the blocked kernel of blocked.h (packed f32 panels and a
// register-blocked micro-kernel) over the pool's threads, one C tile per task.
// numpy's np.matmul (OpenBLAS, hand-written assembly kernels) is the peer in the
// benchmark; this is the same design written as portable C++ with GCC vector types.
#include "ops/matmul/cpu/blocked.h"
#include "ops/matmul/matmul_backends.h"

#include <cstring>

namespace oprt::matmul::cpu {

namespace {

// The micro-kernel, one body for every vector width W: kMR rows of kCols columns of C (from
// column 0 of b's panel, whose rows are kNR floats apart), each row kCols / W GCC vectors
// of W floats kept in registers from the first load of C (or zeros) to the last store;
// each step of p loads the panel's row once and adds a(i, p) times it into row i, one
// broadcast-multiply-add a vector.
// Spelled with vector types, not left to the auto-vectorizer, which laid the 6 x 16 sums
// out in a permuted order, spilled some of them and shuffled them back at the end. The
// sums are read and written through a vector type of float alignment (a load or a store
// each), not copied with memcpy, which took their addresses and sent all twelve through
// the stack on every call. The multiply and the add fuse into one FMA because this file is
// compiled with -ffp-contract=fast (CMakeLists.txt; g++ keeps them apart in ISO C++ mode).
template <int W>
struct FloatVector {  // (an alias in the function below would lose the attributes: g++ drops them there)
    typedef float type __attribute__((vector_size(W * sizeof(float))));
    typedef float unaligned __attribute__((vector_size(W * sizeof(float)), aligned(alignof(float))));
};

template <int W, int kCols>
__attribute__((always_inline)) inline void micro_kernel_w(int64_t kc, const float *a, int64_t a_rs, int64_t a_cs,
                                                          const float *b, float *c, int64_t ldc, bool first) {
    using Vec = typename FloatVector<W>::type;
    using Memory = typename FloatVector<W>::unaligned;  // a Vec at any float's address
    static_assert(sizeof(Vec) == W * sizeof(float), "a vector of W floats");
    constexpr int kVecs = kCols / W;
    Vec acc[kMR][kVecs];
#pragma GCC unroll 6
    for (int64_t i = 0; i < kMR; ++i)
#pragma GCC unroll 4
        for (int v = 0; v < kVecs; ++v)
            acc[i][v] = first ? Vec{} : Vec(*reinterpret_cast<const Memory *>(c + i * ldc + v * W));
    const float *a_row[kMR];
    for (int64_t i = 0; i < kMR; ++i) a_row[i] = a + i * a_rs;
#pragma GCC unroll 4
    for (int64_t p = 0; p < kc; ++p) {
        Vec row_of_b[kVecs];
#pragma GCC unroll 4
        for (int v = 0; v < kVecs; ++v) row_of_b[v] = *reinterpret_cast<const Memory *>(b + p * kNR + v * W);
#pragma GCC unroll 6
        for (int64_t i = 0; i < kMR; ++i) {
            const float ai = a_row[i][p * a_cs];
#pragma GCC unroll 4
            for (int v = 0; v < kVecs; ++v) acc[i][v] += ai * row_of_b[v];
        }
    }
#pragma GCC unroll 6
    for (int64_t i = 0; i < kMR; ++i)
#pragma GCC unroll 4
        for (int v = 0; v < kVecs; ++v) *reinterpret_cast<Memory *>(c + i * ldc + v * W) = acc[i][v];
}

// Which width runs: chosen once from what the CPU has. AVX-512 holds a row of the panel's
// 32 columns in two registers: 12 independent sums, enough multiply-adds in flight to cover
// their latency on both FMA units (6 x 16 in 6 registers: 117 against 160 GFLOP/s with
// the panels in L1, one core of a Xeon with AVX-512, 2026-12-06). AVX2 (16 registers)
// takes the panel in two halves of 16 columns, two registers a row; GCC lowers a vector
// wider than the ISA's registers badly, so each ISA gets its own width rather than one
// function cloned per ISA.
#if OPRT_CPU_X86_MULTIVERSION
__attribute__((target("avx512f"))) void micro_kernel_avx512(int64_t kc, const float *a, int64_t a_rs, int64_t a_cs,
                                                           const float *b, float *c, int64_t ldc, bool first) {
    micro_kernel_w<16, 32>(kc, a, a_rs, a_cs, b, c, ldc, first);
}
__attribute__((target("avx2,fma"))) void micro_kernel_avx2(int64_t kc, const float *a, int64_t a_rs, int64_t a_cs,
                                                          const float *b, float *c, int64_t ldc, bool first) {
    micro_kernel_w<8, 16>(kc, a, a_rs, a_cs, b, c, ldc, first);
    micro_kernel_w<8, 16>(kc, a, a_rs, a_cs, b + 16, c + 16, ldc, first);
}
#endif
void micro_kernel_baseline(int64_t kc, const float *a, int64_t a_rs, int64_t a_cs, const float *b, float *c,
                           int64_t ldc, bool first) {
    micro_kernel_w<4, 16>(kc, a, a_rs, a_cs, b, c, ldc, first);
    micro_kernel_w<4, 16>(kc, a, a_rs, a_cs, b + 16, c + 16, ldc, first);
}

using MicroKernel = void (*)(int64_t, const float *, int64_t, int64_t, const float *, float *, int64_t, bool);

MicroKernel pick_micro_kernel() {
#if OPRT_CPU_X86_MULTIVERSION
    if (__builtin_cpu_supports("avx512f")) return micro_kernel_avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return micro_kernel_avx2;
#endif
    return micro_kernel_baseline;
}

}  // namespace

void micro_kernel(int64_t kc, const float *a, int64_t a_rs, int64_t a_cs, const float *b, float *c, int64_t ldc,
                  bool first) {
    static const MicroKernel chosen = pick_micro_kernel();
    chosen(kc, a, a_rs, a_cs, b, c, ldc, first);
}

oprt_status_t plan(MatmulPlan &p) {
    p.kernel = 0;
    p.kernel_name = "cpu.packed_threads";
    p.workspace_bytes = 0;
    return OPRT_SUCCESS;
}

oprt_status_t run(const MatmulPlan &p, const ExecArgs &a) {
    switch (p.dtype) {
    case OPRT_DTYPE_F32: gemm_blocked<float>(p, a, /*threaded=*/true); break;
    case OPRT_DTYPE_F16: gemm_blocked<f16_t>(p, a, true); break;
    case OPRT_DTYPE_BF16: gemm_blocked<bf16_t>(p, a, true); break;
    }
    return OPRT_SUCCESS;
}

}  // namespace oprt::matmul::cpu
