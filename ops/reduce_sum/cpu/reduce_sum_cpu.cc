// reduce_sum on the CPU. Dense rows: 16 f32 lanes the compiler vectorizes,
// each lane's partial sum of 4 elements added in f64, rows split across threads when
// there are fewer rows than threads. Inner runs (reducing a non-last axis):
// eight rows at a time are added pairwise into a block of up to 4096 f64 totals,
// vectorized along the contiguous outputs, so memory is read once, in row order.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "runtime/cpu/cpu_convert.h"
#include "runtime/cpu/cpu_parallel.h"
#include "runtime/internal/dtype.h"
#include "ops/reduce_sum/reduce_sum_backends.h"

namespace oprt::reduce_sum::cpu {
namespace {

using oprt::cpu::kParallelGrain;
using oprt::cpu::max_threads;
using oprt::cpu::parallel_for;

// Items per chunk of a parallel_for whose items cost `per_item` elements each.
int64_t grain_of(int64_t per_item) { return per_item > 0 ? (kParallelGrain + per_item - 1) / per_item : 1; }

// Accuracy: no f32 sum ever holds more than a few elements. Dense rows: 16
// lanes, each adding kRun = 4 elements in f32 before its f64 lane takes them
// (numpy's pairwise sum runs 16 elements through each f32 accumulator and joins
// in f32); strided rows add every element in f64; inner runs add kRowsPerGroup
// = 8 rows pairwise in f32 per output, then f64. 10^7 x 0.1f is then within 1e-7 of
// the exact sum, on every path (docs/kernels/reduce_sum.md, "Accuracy").
constexpr int64_t kChunk = 4096;  // f16 elements widened at a time (dense rows)
constexpr int64_t kRun = 4;
constexpr int64_t kRowsPerGroup = 8;  // inner runs: rows summed in f32 before joining the f64 totals
// Outputs per task on the inner path: eight rows' segments of up to 16 KiB (f32)
// are read side by side, and the block's f64 totals (32 KiB) stay in L1/L2. One
// core, f32, GB/s: (128, 65536) over its first axis 19.5 at 1024 columns, 31.0 at
// 4096, 29.5 at 16384; (16384, 16384) 15.1 / 19.7 / 17.2 (2-core CI machine,
// 2026-12-02).
constexpr int64_t kBlock = 4096;
constexpr int64_t kMinBlock = 1024;  // a block is not cut below this to even out the threads
constexpr int64_t kInnerChunk = 512;  // f16 inner runs: columns widened at a time (8 rows: 16 KiB)
constexpr int64_t kWideBlock = 1024;
constexpr int64_t kSlicesPerThread = 8;  // slices of a split axis, at most
constexpr int64_t kSliceElements = 4 * kParallelGrain;  // narrower blocks add their rows in turn (see below)
static_assert(kWideBlock <= kRowsPerGroup * kInnerChunk, "a narrow block's running sums fit the scratch");

int64_t inner_blocks(const AxisPlan &p, int threads);

// Few long rows: every thread sums one slice of each row.
bool split_rows(const AxisPlan &p, int threads) {
    return p.outer < threads && p.axis_len >= kParallelGrain;
}

// Few output blocks, long axis: threads take slices of the axis.
bool split_axis(const AxisPlan &p, int threads) {
    const int64_t tasks = p.outer * inner_blocks(p, threads);
    return tasks < threads && p.axis_len >= 2 * threads && p.in_numel >= kParallelGrain;
}

typedef float f32x8 __attribute__((vector_size(32)));
typedef double f64x8 __attribute__((vector_size(64)));

// Blocks of 16 lanes x kRun: each lane adds kRun elements in f32, then joins
// its f64 lane; groups of 8 left join the f64 lanes directly, then the rest.
OPRT_CPU_CLONES double sum_dense_f32(const float *x, int64_t n) {
    f64x8 wide0 = {}, wide1 = {};
    int64_t i = 0;
    f32x8 a0, a1, v0, v1;
    for (; i + 16 * kRun <= n; i += 16 * kRun) {
        std::memcpy(&a0, x + i, sizeof a0);
        std::memcpy(&a1, x + i + 8, sizeof a1);
        for (int64_t r = 1; r < kRun; ++r) {
            std::memcpy(&v0, x + i + 16 * r, sizeof v0);
            std::memcpy(&v1, x + i + 16 * r + 8, sizeof v1);
            a0 += v0;
            a1 += v1;
        }
        wide0 += __builtin_convertvector(a0, f64x8);
        wide1 += __builtin_convertvector(a1, f64x8);
    }
    for (; i + 8 <= n; i += 8) {
        std::memcpy(&v0, x + i, sizeof v0);
        wide0 += __builtin_convertvector(v0, f64x8);
    }
    double rest = 0.0;
    for (; i < n; ++i) rest += double(x[i]);
    const f64x8 w = wide0 + wide1;
    return rest + (((w[0] + w[4]) + (w[2] + w[6])) + ((w[1] + w[5]) + (w[3] + w[7])));
}

template <typename T>
double sum_dense(const T *x, int64_t n) {
    if constexpr (std::is_same_v<T, float>) {
        return sum_dense_f32(x, n);
    } else {  // widened as arrays (F16C, shifts), then summed as f32
        double total = 0.0;
        float buf[kChunk];
        for (int64_t c = 0; c < n; c += kChunk) {
            const int64_t m = std::min(kChunk, n - c);
            oprt::cpu::widen(x + c, buf, m);
            total += sum_dense_f32(buf, m);
        }
        return total;
    }
}

// Every element joins one of four f64 sums (independent chains: the adds overlap).
template <typename T>
double sum_strided(const T *x, int64_t n, int64_t stride) {
    double s[4] = {};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int l = 0; l < 4; ++l) s[l] += double(to_f32(x[(i + l) * stride]));
    for (; i < n; ++i) s[0] += double(to_f32(x[i * stride]));
    return (s[0] + s[1]) + (s[2] + s[3]);
}

template <typename T>
void reduce_rows(const AxisPlan &p, const T *in, T *out) {
    const int64_t L = p.axis_len;
    const bool dense = L <= 1 || p.in_axis_stride == 1;
    auto row_sum = [&](const T *row, int64_t n) {
        return dense ? sum_dense(row, n) : sum_strided(row, n, p.in_axis_stride);
    };
    const int threads = max_threads();
    if (!split_rows(p, threads)) {
        parallel_for(p.outer, grain_of(L), [&](int64_t begin, int64_t end) {
            for (int64_t o = begin; o < end; ++o) {
                int64_t io, oo;
                axis_outer_offsets(p, o, &io, &oo);
                out[oo] = from_f32<T>(float(row_sum(in + io, L)));
            }
        });
        return;
    }
    // Few long rows: every thread sums one slice of each row. The slices'
    // sums are joined in slice order, so the result never depends on timing.
    std::vector<double> partial(size_t(threads), 0.0);
    for (int64_t o = 0; o < p.outer; ++o) {
        int64_t io, oo;
        axis_outer_offsets(p, o, &io, &oo);
        const T *row = in + io;
        parallel_for(threads, 1, [&](int64_t t0, int64_t t1) {
            for (int64_t t = t0; t < t1; ++t) {
                const int64_t begin = L * t / threads, end = L * (t + 1) / threads;
                partial[size_t(t)] = row_sum(row + begin * (dense ? 1 : p.in_axis_stride), end - begin);
            }
        });
        double total = 0.0;
        for (int t = 0; t < threads; ++t) total += partial[size_t(t)];
        out[oo] = from_f32<T>(float(total));
    }
}

// ---- Inner runs: out[j] = sum over k of in[k * stride + j], j contiguous ----
// Two loop orders, by the width of a block of outputs (columns):
//  - wide blocks (kWideBlock columns and up): eight rows at a time in one pass over
//    the block: for each column j the eight values are added pairwise in f32
//    (((r0 + r1) + (r2 + r3)) + ...), and that partial sum joins the column's f64
//    total. The loop over j is plain SIMD (a vector of columns from each of eight
//    rows); eight long streams, and the totals (up to 4096 doubles) stay in cache.
//  - narrow blocks: rows in turn, as numpy does. Each row, read front to back, is
//    added into f32 running sums (in L1); every eight rows they join the f64 totals.
//    Eight streams of a few hundred bytes each, interleaved, kept the prefetchers
//    from streaming: one core, 2^26 f32 over the first axis, GB/s (2-core CI machine,
//    2026-12-02), rows of 128: 6.7 eight-row pass / 17.9 rows in turn; 256: 11.0 /
//    16.2; 512: 15.2 / 20.3; 1024: 18.9 / 13.2.
// Either way no f32 sum holds more than eight rows.

// Pairwise sum of M rows' values at column j, in f32.
template <int M, typename T>
__attribute__((always_inline)) inline float tree(const T *const *row, int64_t j) {
    if constexpr (M == 1)
        return to_f32(row[0][j]);
    else
        return tree<M / 2>(row, j) + tree<M - M / 2>(row + M / 2, j);
}

template <int M, typename T>
__attribute__((always_inline)) inline void add_group(const T *in, int64_t stride, int64_t width,
                                                     double *__restrict__ total) {
    const T *row[M];
    for (int k = 0; k < M; ++k) row[k] = in + k * stride;
    for (int64_t j = 0; j < width; ++j) total[j] += double(tree<M>(row, j));
}

// total[j] += the sum of `count` rows at column j, j < width.
template <typename T>
__attribute__((always_inline)) inline void add_rows_impl(const T *in, int64_t stride, int64_t count,
                                                         int64_t width, double *__restrict__ total) {
    int64_t k = 0;
    for (; k + kRowsPerGroup <= count; k += kRowsPerGroup) add_group<kRowsPerGroup>(in + k * stride, stride, width, total);
    in += k * stride;
    switch (count - k) {
    case 7: add_group<7>(in, stride, width, total); break;
    case 6: add_group<6>(in, stride, width, total); break;
    case 5: add_group<5>(in, stride, width, total); break;
    case 4: add_group<4>(in, stride, width, total); break;
    case 3: add_group<3>(in, stride, width, total); break;
    case 2: add_group<2>(in, stride, width, total); break;
    case 1: add_group<1>(in, stride, width, total); break;
    default: break;
    }
}

// Compiled once per vector ISA (the templates above are inlined into each clone).
OPRT_CPU_CLONES void add_rows(const float *in, int64_t stride, int64_t count, int64_t width, double *total) {
    add_rows_impl(in, stride, count, width, total);
}
OPRT_CPU_CLONES void add_rows(const bf16_t *in, int64_t stride, int64_t count, int64_t width, double *total) {
    add_rows_impl(in, stride, count, width, total);  // bf16 -> f32 is a shift: it vectorizes in place
}
// f16 widens through F16C (cpu_convert.h): each group's rows are widened a chunk of
// columns at a time into `buf` (kRowsPerGroup x kInnerChunk floats, in L1), then added as f32.
void add_rows(const f16_t *in, int64_t stride, int64_t count, int64_t width, double *total, float *buf) {
    for (int64_t k = 0; k < count; k += kRowsPerGroup) {
        const int64_t m = std::min(kRowsPerGroup, count - k);
        for (int64_t c = 0; c < width; c += kInnerChunk) {
            const int64_t w = std::min(kInnerChunk, width - c);
            for (int64_t r = 0; r < m; ++r) oprt::cpu::widen(in + (k + r) * stride + c, buf + r * kInnerChunk, w);
            add_rows(buf, kInnerChunk, m, w, total + c);
        }
    }
}

// total[i] += acc[i] in f64, eight at a time.
OPRT_CPU_CLONES void join_f64(const float *__restrict__ acc, double *__restrict__ total, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        f32x8 a;
        f64x8 t;
        std::memcpy(&a, acc + i, sizeof a);
        std::memcpy(&t, total + i, sizeof t);
        t += __builtin_convertvector(a, f64x8);
        std::memcpy(total + i, &t, sizeof t);
    }
    for (; i < n; ++i) total[i] += double(acc[i]);
}

// GCC's -O3 unroll-and-jam fuses this loop nest's rows in pairs and ran it
// 2.5x slower: one core summed (65536, 128) f32 over its first axis at 6 GB/s
// with it, 15 GB/s without.
#if defined(__GNUC__) && !defined(__clang__)
#define OPRT_NO_UNROLL_AND_JAM __attribute__((optimize("no-loop-unroll-and-jam")))
#else
#define OPRT_NO_UNROLL_AND_JAM
#endif

// Narrow blocks, rows in turn: acc[i] += in[k * stride + i], f32 over a group of
// kRowsPerGroup rows (acc: `width` floats of scratch), then f64. The scratch never
// overlaps the input: said with __restrict__.
template <typename T>
OPRT_NO_UNROLL_AND_JAM void add_rows_in_turn(const T *__restrict__ in, int64_t stride, int64_t count,
                                             int64_t width, float *__restrict__ acc, double *__restrict__ total) {
    for (int64_t c = 0; c < count; c += kRowsPerGroup) {
        const int64_t m = std::min(kRowsPerGroup, count - c);
        for (int64_t k = c; k < c + m; ++k) {
            const T *row = in + k * stride;
            if constexpr (std::is_same_v<T, f16_t>) {  // widened (and added) in one pass (F16C)
                if (k == c)
                    oprt::cpu::widen(row, acc, width);
                else
                    oprt::cpu::add_widened(row, acc, width);
            } else if (k == c) {  // the group's first row sets the running sums
                for (int64_t i = 0; i < width; ++i) acc[i] = to_f32(row[i]);
            } else {
                for (int64_t i = 0; i < width; ++i) acc[i] += to_f32(row[i]);
            }
        }
        join_f64(acc, total, width);
    }
}

// One task: outputs [0, width) of a block, `count` rows from `in`, into `total`;
// `buf`: kRowsPerGroup * kInnerChunk floats of scratch.
template <typename T>
void sum_block(const T *in, int64_t stride, int64_t count, int64_t width, double *total, float *buf) {
    if (width < kWideBlock)
        add_rows_in_turn(in, stride, count, width, buf, total);
    else if constexpr (std::is_same_v<T, f16_t>)
        add_rows(in, stride, count, width, total, buf);
    else
        add_rows(in, stride, count, width, total);
}

// Columns per task: up to kBlock, and (where a block keeps at least kMinBlock
// columns) a multiple of the thread count of equal blocks, so no thread waits on
// a last odd block.
int64_t inner_blocks(const AxisPlan &p, int threads) {
    int64_t blocks = (p.inner + kBlock - 1) / kBlock;
    const int64_t even = (blocks + threads - 1) / threads * threads;
    if (p.inner / even >= kMinBlock) blocks = even;
    return blocks;
}

template <typename T>
void reduce_inner(const AxisPlan &p, const T *in, T *out) {
    const int threads = max_threads();
    const int64_t L = p.axis_len, blocks = inner_blocks(p, threads);
    const int64_t block = (p.inner + blocks - 1) / blocks;
    const int64_t tasks = p.outer * blocks;
    // Task t: outputs [i0, i0 + width) of outer index t / blocks.
    auto locate = [&](int64_t t, int64_t *io, int64_t *oo, int64_t *i0) {
        axis_outer_offsets(p, t / blocks, io, oo);
        *i0 = (t % blocks) * block;
        return std::min(block, p.inner - *i0);
    };
    const size_t buf_len = size_t(kRowsPerGroup * kInnerChunk);
    if (split_axis(p, threads)) {
        // Few blocks, long axis: the axis is cut into slices, eight per thread (a
        // thread that loses its core leaves one slice to the others, not half the
        // work), each summed into its own f64 totals and joined in slice order, so
        // the result never depends on timing.
        for (int64_t t = 0; t < tasks; ++t) {
            int64_t io, oo, i0;
            const int64_t width = locate(t, &io, &oo, &i0);
            // At least kSliceElements inputs a slice: each slice's totals cost a pass.
            const int64_t slices = std::min(std::clamp<int64_t>(L * width / kSliceElements, threads,
                                                                kSlicesPerThread * threads), L);
            std::vector<double> parts(size_t(slices) * size_t(width), 0.0);
            parallel_for(slices, 1, [&](int64_t s0, int64_t s1) {
                std::vector<float> buf(buf_len);
                for (int64_t sl = s0; sl < s1; ++sl) {
                    const int64_t k0 = L * sl / slices, k1 = L * (sl + 1) / slices;
                    sum_block(in + io + i0 + k0 * p.in_axis_stride, p.in_axis_stride, k1 - k0, width,
                              parts.data() + size_t(sl) * size_t(width), buf.data());
                }
            });
            for (int64_t i = 0; i < width; ++i) {
                double total = 0.0;
                for (int64_t sl = 0; sl < slices; ++sl) total += parts[size_t(sl) * size_t(width) + i];
                out[oo + i0 + i] = from_f32<T>(float(total));
            }
        }
        return;
    }
    // The f64 totals and the scratch are allocated once per chunk of tasks.
    const size_t scratch = size_t(std::min(block, p.inner));
    parallel_for(tasks, grain_of(L * int64_t(scratch)), [&](int64_t begin, int64_t end) {
        std::vector<double> total(scratch);
        std::vector<float> buf(buf_len);
        for (int64_t t = begin; t < end; ++t) {
            int64_t io, oo, i0;
            const int64_t width = locate(t, &io, &oo, &i0);
            std::fill(total.begin(), total.begin() + width, 0.0);
            sum_block(in + io + i0, p.in_axis_stride, L, width, total.data(), buf.data());
            for (int64_t i = 0; i < width; ++i) out[oo + i0 + i] = from_f32<T>(float(total[size_t(i)]));
        }
    });
}

template <typename T>
void reduce(const AxisPlan &p, const ExecArgs &args) {
    const T *in = static_cast<const T *>(args.in0);
    T *out = static_cast<T *>(args.out);
    if (p.axis_len == 0) {  // empty sum: zeros, and `in` may be NULL
        for (int64_t o = 0; o < p.outer; ++o) {
            int64_t io, oo;
            axis_outer_offsets(p, o, &io, &oo);
            for (int64_t i = 0; i < p.inner; ++i) out[oo + i] = from_f32<T>(0.0f);
        }
        return;
    }
    if (p.inner > 1)
        reduce_inner(p, in, out);
    else
        reduce_rows(p, in, out);
}

}  // namespace

oprt_status_t plan(AxisPlan &plan) {
    const int threads = max_threads();
    const bool dense = plan.axis_len <= 1 || plan.in_axis_stride == 1;
    if (plan.axis_len == 0)
        plan.kernel_name = "cpu.empty_axis_zeros";
    else if (plan.inner > 1)
        plan.kernel_name = split_axis(plan, threads) ? "cpu.inner_split_axis" : "cpu.inner_blocks";
    else if (split_rows(plan, threads))
        plan.kernel_name = dense ? "cpu.rows_dense_split" : "cpu.rows_strided_split";
    else
        plan.kernel_name = dense ? "cpu.rows_dense" : "cpu.rows_strided";
    return OPRT_SUCCESS;
}

oprt_status_t run(const AxisPlan &plan, const ExecArgs &args) {
    switch (plan.dtype) {
    case OPRT_DTYPE_F32: reduce<float>(plan, args); break;
    case OPRT_DTYPE_F16: reduce<f16_t>(plan, args); break;
    case OPRT_DTYPE_BF16: reduce<bf16_t>(plan, args); break;
    }
    return OPRT_SUCCESS;
}

}  // namespace oprt::reduce_sum::cpu
