// matmul on the CPU: the blocked kernel of blocked.h (packed f32 panels and a
// register-blocked micro-kernel) over the pool's threads, one C tile per task.
// numpy's np.matmul (OpenBLAS, hand-written assembly kernels) is the peer in the
// benchmark; this is the same design written as portable C++ the compiler vectorizes.
#include "ops/matmul/cpu/blocked.h"
#include "ops/matmul/matmul_backends.h"

namespace oprt::matmul::cpu {

// The accumulators are a 6 x 16 array the compiler keeps in vector registers once
// the loops over i and j are unrolled: each step of p broadcasts one A value per row
// and multiplies it into a row of B, 16 columns at a time.
OPRT_CPU_CLONES void micro_kernel(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, bool first) {
    float acc[kMR][kNR] = {};
    for (int64_t p = 0; p < kc; ++p) {
        const float *bp = b + p * kNR;
#pragma GCC unroll 6
        for (int64_t i = 0; i < kMR; ++i) {
            const float ai = a[p * kMR + i];
#pragma GCC unroll 16
            for (int64_t j = 0; j < kNR; ++j) acc[i][j] += ai * bp[j];
        }
    }
    if (first) {
        for (int64_t i = 0; i < kMR; ++i)
            for (int64_t j = 0; j < kNR; ++j) c[i * ldc + j] = acc[i][j];
    } else {
        for (int64_t i = 0; i < kMR; ++i)
            for (int64_t j = 0; j < kNR; ++j) c[i * ldc + j] += acc[i][j];
    }
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
