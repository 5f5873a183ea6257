// The matmul kernel ladder of the CPU backend (oprt_list_matmul_variants with
// OPRT_BACKEND_CPU), plain to fastest; each step changes one idea:
//   naive   the definition: for each C element, a dot product along K (B read down a
//           column: a new cache line per product for a row-major B)
//   ikj     the loops reordered: a row of C accumulates a[i][p] * (row p of B), so the
//           inner loop runs along rows of B and C, and vectorizes when they are dense
//   packed  cache blocking: A and B slices packed into contiguous f32 panels, a 6 x 32
//           register-blocked micro-kernel (blocked.h), one thread
//   auto    the production kernel (matmul_cpu.cc): the packed step over the pool's threads
// Compare them: python3 tests/run_ops.py --op matmul --backend cpu --mode bench --variant all
#include <algorithm>
#include <type_traits>
#include <vector>

#include "ops/matmul/cpu/blocked.h"
#include "ops/matmul/matmul_backends.h"

namespace oprt::matmul::cpu {
namespace {

// ---- Step 1: naive -----------------------------------------------------------------------
// One f32 sum per C element, every operand through its strides.
template <typename T>
void naive(const MatmulPlan &g, const ExecArgs &args) {
    const T *a = static_cast<const T *>(args.in0);
    const T *b = static_cast<const T *>(args.in1);
    T *c = static_cast<T *>(args.out);
    for (int64_t i = 0; i < g.m; ++i)
        for (int64_t j = 0; j < g.n; ++j) {
            float s = 0.0f;
            for (int64_t p = 0; p < g.k; ++p) s += to_f32(a[i * g.a_row + p * g.a_col]) * to_f32(b[p * g.b_row + j * g.b_col]);
            c[i * g.c_row + j * g.c_col] = from_f32<T>(s);
        }
}

// ---- Step 2: ikj ---------------------------------------------------------------------------
// A row of C is summed in an f32 buffer: for each p, acc += a[i][p] * B[p][:]. Every
// access of the inner loop is the next element when B's rows are dense.
OPRT_CPU_CLONES void axpy(int64_t n, float alpha, const float *x, float *y) {
    for (int64_t j = 0; j < n; ++j) y[j] += alpha * x[j];
}

template <typename T>
void ikj(const MatmulPlan &g, const ExecArgs &args) {
    const T *a = static_cast<const T *>(args.in0);
    const T *b = static_cast<const T *>(args.in1);
    T *c = static_cast<T *>(args.out);
    std::vector<float> acc(size_t(g.n)), brow(size_t(g.n));
    for (int64_t i = 0; i < g.m; ++i) {
        std::fill(acc.begin(), acc.end(), 0.0f);
        for (int64_t p = 0; p < g.k; ++p) {
            const float aip = to_f32(a[i * g.a_row + p * g.a_col]);
            const T *src = b + p * g.b_row;
            if constexpr (std::is_same_v<T, float>) {
                if (g.b_col == 1) {
                    axpy(g.n, aip, src, acc.data());
                    continue;
                }
            }
            for (int64_t j = 0; j < g.n; ++j) brow[size_t(j)] = to_f32(src[j * g.b_col]);
            axpy(g.n, aip, brow.data(), acc.data());
        }
        for (int64_t j = 0; j < g.n; ++j) c[i * g.c_row + j * g.c_col] = from_f32<T>(acc[size_t(j)]);
    }
}

// ---- The steps' plan and run functions ---------------------------------------------------

enum Step { kNaive, kIkj, kPacked };

template <Step S, typename T>
void run_step(const MatmulPlan &p, const ExecArgs &a) {
    if constexpr (S == kNaive) naive<T>(p, a);
    if constexpr (S == kIkj) ikj<T>(p, a);
    if constexpr (S == kPacked) gemm_blocked<T>(p, a, /*threaded=*/false);
}

template <Step S>
oprt_status_t run_variant(const MatmulPlan &p, const ExecArgs &a) {
    switch (p.dtype) {
    case OPRT_DTYPE_F32: run_step<S, float>(p, a); break;
    case OPRT_DTYPE_F16: run_step<S, f16_t>(p, a); break;
    case OPRT_DTYPE_BF16: run_step<S, bf16_t>(p, a); break;
    }
    return OPRT_SUCCESS;
}

template <Step S>
oprt_status_t plan_step(MatmulPlan &p) {
    static const char *const kNames[] = {"cpu.naive", "cpu.ikj", "cpu.packed"};
    p.kernel = int32_t(S) + 1;
    p.kernel_name = kNames[S];
    p.workspace_bytes = 0;
    return OPRT_SUCCESS;
}

const Variant<MatmulPlan> kLadderSteps[] = {
    {"naive", &plan_step<kNaive>, &run_variant<kNaive>},
    {"ikj", &plan_step<kIkj>, &run_variant<kIkj>},
    {"packed", &plan_step<kPacked>, &run_variant<kPacked>},
    {"auto", &plan},  // the production plan and kernel (matmul_cpu.cc)
};

}  // namespace

const VariantList<MatmulPlan> ladder = {kLadderSteps, 4};

}  // namespace oprt::matmul::cpu
