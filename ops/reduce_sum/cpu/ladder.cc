// The reduce_sum kernel ladder of the CPU backend (oprt_list_reduce_sum_variants
// with OPRT_BACKEND_CPU), plain to fastest; each step changes one idea:
//   serial  one thread, one running sum per output, one element after another
//   lanes   dense rows: 16 independent f32 partial sums (SIMD), joined in f64 per chunk;
//           16-bit types converted in blocks
//   auto    the production kernel (reduce_sum_cpu.cc): the pool's threads over rows (or
//           slices of long rows); over a non-last axis, blocks of outputs that add eight
//           rows a pass (wide) or their rows in turn (narrow), into f64 totals
// Compare them: python3 tests/run_ops.py --op reduce_sum --backend cpu --mode bench --variant all
#include <algorithm>
#include <type_traits>

#include "runtime/cpu/cpu_convert.h"
#include "runtime/cpu/cpu_parallel.h"
#include "runtime/internal/dtype.h"
#include "ops/reduce_sum/reduce_sum_backends.h"

namespace oprt::reduce_sum::cpu {
namespace {

// ---- Step 1: serial ------------------------------------------------------------------
// The definition: for every output, add its axis_len inputs in order into a double.
// Each add waits for the one before (a chain of dependent adds): no SIMD, one core.
template <typename T>
void serial(const AxisPlan &p, const ExecArgs &a) {
    const T *in = static_cast<const T *>(a.in0);
    T *out = static_cast<T *>(a.out);
    for (int64_t o = 0; o < p.outer; ++o) {
        int64_t io, oo;
        axis_outer_offsets(p, o, &io, &oo);
        for (int64_t i = 0; i < p.inner; ++i) {  // output (o, i) sums in[io + i + k * stride]
            double s = 0.0;
            for (int64_t k = 0; k < p.axis_len; ++k) s += to_f32(in[io + i + k * p.in_axis_stride]);
            out[oo + i] = from_f32<T>(float(s));
        }
    }
}

// ---- Step 2: lanes -------------------------------------------------------------------
// Dense rows only. 16 partial sums that do not wait for each other: the compiler
// keeps them in vector registers and adds 8 or 16 elements per instruction. f32
// lanes are exact enough over 4096 elements; each chunk's total joins a double.
constexpr int kLanes = 16;
constexpr int64_t kChunk = 4096;

OPRT_CPU_CLONES float lanes_sum(const float *x, int64_t n) {
    float lane[kLanes] = {};
    int64_t k = 0;
    for (; k + kLanes <= n; k += kLanes)
        for (int l = 0; l < kLanes; ++l) lane[l] += x[k + l];
    float s = 0.0f;
    for (; k < n; ++k) s += x[k];
    for (int l = 0; l < kLanes; ++l) s += lane[l];
    return s;
}

template <typename T>
double row_sum(const T *x, int64_t n) {
    double total = 0.0;
    float buf[kChunk];
    for (int64_t c = 0; c < n; c += kChunk) {
        const int64_t len = std::min(kChunk, n - c);
        if constexpr (std::is_same_v<T, float>) {
            total += lanes_sum(x + c, len);
        } else {
            oprt::cpu::widen(x + c, buf, len);  // 16-bit to f32 as a block (F16C for f16)
            total += lanes_sum(buf, len);
        }
    }
    return total;
}

template <typename T>
void lanes(const AxisPlan &p, const ExecArgs &a) {
    const T *in = static_cast<const T *>(a.in0);
    T *out = static_cast<T *>(a.out);
    for (int64_t o = 0; o < p.outer; ++o) {
        int64_t io, oo;
        axis_outer_offsets(p, o, &io, &oo);
        out[oo] = from_f32<T>(p.axis_len == 0 ? 0.0f : float(row_sum(in + io, p.axis_len)));  // `in` may be NULL when empty
    }
}

// ---- The steps' plan and run functions ---------------------------------------------------

enum Step { kSerial, kLanesStep };

template <Step S>
oprt_status_t run(const AxisPlan &p, const ExecArgs &a) {
    switch (p.dtype) {
    case OPRT_DTYPE_F32: S == kSerial ? serial<float>(p, a) : lanes<float>(p, a); break;
    case OPRT_DTYPE_F16: S == kSerial ? serial<f16_t>(p, a) : lanes<f16_t>(p, a); break;
    case OPRT_DTYPE_BF16: S == kSerial ? serial<bf16_t>(p, a) : lanes<bf16_t>(p, a); break;
    }
    return OPRT_SUCCESS;
}

oprt_status_t plan_serial(AxisPlan &p) {
    p.kernel_name = "cpu.serial";
    p.workspace_bytes = 0;
    return OPRT_SUCCESS;
}

oprt_status_t plan_lanes(AxisPlan &p) {
    if (!p.rows_contiguous(/*check_out_axis=*/false))
        return fail(OPRT_ERR_NOT_SUPPORTED,
                    "'lanes' sums each row as consecutive values: the reduced axis must have stride 1 "
                    "with nothing after it (here axis stride %lld, inner run %lld); use 'serial' or "
                    "'auto' (which sums such layouts row after row into blocks of outputs)",
                    (long long)p.in_axis_stride, (long long)p.inner);
    p.kernel_name = "cpu.lanes";
    p.workspace_bytes = 0;
    return OPRT_SUCCESS;
}

const Variant<AxisPlan> kLadderSteps[] = {
    {"serial", &plan_serial, &run<kSerial>},
    {"lanes", &plan_lanes, &run<kLanesStep>},
    {"auto", &plan},  // the production plan and kernel (reduce_sum_cpu.cc)
};

}  // namespace

const VariantList<AxisPlan> ladder = {kLadderSteps, 3};

}  // namespace oprt::reduce_sum::cpu
