// The plan switches of the tuned kernels, each tested on both sides of its
// threshold, with the kernel the plan picked asserted by name (ExpectKernel):
// elementwise and the broadcast fast path, softmax rows in registers (groups
// of lanes, a warp or a block per row), over a cluster, in two streaming
// passes, and the strided layouts, reduce_sum rows and first-axis reductions over
// clusters or in two passes. OPRT_DISABLE_CLUSTERS=1 reaches the portable
// fallbacks that GPUs without clusters take.
//
// Thresholds are those of an H100/H200 (132 SMs, 227 KB of shared memory per
// block, clusters up to 16 blocks); row counts keep rows * blocks-per-row well
// above or below the SM count, so a cluster size above 8 falling back to 8 picks
// the same kernel.
#include "op_cases.h"

namespace nvt {
namespace {

class NvidiaPlanPaths : public ::testing::Test {
protected:
    void SetUp() override { NVT_SKIP_WITHOUT_CUDA(); }
    NvidiaBackend backend_;
};

// ---- Elementwise ----------------------------------------------------------------

TEST_F(NvidiaPlanPaths, ContiguousLarge) {
    // Many blocks, odd tails and heads.
    // (One op per dtype: the kernel template is shared; sizes keep the host check short.)
    ExpectKernel k("contiguous_vectorized");
    const int64_t n32 = (int64_t(1) << 23) + 12345, n16 = (int64_t(1) << 24) + 4097;
    check_elementwise(Ew::kAdd, OPRT_DTYPE_F32, {{n32}}, {{n32}}, {{n32}});
    check_elementwise(Ew::kAdd, OPRT_DTYPE_F32, {{n32}, {}, 3}, {{n32}, {}, 3}, {{n32}, {}, 3});  // same misalignment
    check_elementwise(Ew::kCopy, OPRT_DTYPE_BF16, {{n16}}, {{n16}});
    check_elementwise(Ew::kRelu, OPRT_DTYPE_F16, {{n16}}, {{n16}});
}

TEST_F(NvidiaPlanPaths, VectorAddBroadcastRow) {
    for (oprt_dtype_t dt : all_dtypes()) {
        ExpectKernel k("broadcast_row_vectorized");
        // Row lengths: a multiple of the vector width (vector row loads) or not
        // (element loads, columns wrapping inside a vector); short and long rows.
        for (int64_t C : {int64_t(8), int64_t(129), int64_t(1000), int64_t(1001), int64_t(1024)})
            check_elementwise(Ew::kAdd, dt, {{301, C}}, {{301, C}}, {{C}});
        check_elementwise(Ew::kAdd, dt, {{4099, 1024}}, {{4099, 1024}}, {{1024}});  // many tiles per block
        check_elementwise(Ew::kAdd, dt, {{2000, 1001}}, {{2000, 1001}}, {{1, 1001}});
        check_elementwise(Ew::kAdd, dt, {{301, 1024}}, {{1024}}, {{301, 1024}});     // the row is the first input
        check_elementwise(Ew::kAdd, dt, {{4, 100, 64}}, {{4, 100, 64}}, {{64}});     // outer dims merge
        check_elementwise(Ew::kAdd, dt, {{301, 1024}}, {{301, 1024}}, {{1024}, {}, 1});  // misaligned row: element loads
        // out and the dense input misaligned: the strided kernel at run time, same results.
        check_elementwise(Ew::kAdd, dt, {{301, 1024}, {}, 1}, {{301, 1024}, {}, 1}, {{1024}});
        check_elementwise(Ew::kAdd, dt, {{301, 1024}}, {{301, 1024}, {}, 2}, {{1024}});
    }
}

TEST_F(NvidiaPlanPaths, VectorAddBroadcastScalarAndNot) {
    for (oprt_dtype_t dt : all_dtypes()) {
        {
            ExpectKernel k("broadcast_scalar_vectorized");
            check_elementwise(Ew::kAdd, dt, {{(1 << 22) + 3}}, {{(1 << 22) + 3}}, {{}});
            check_elementwise(Ew::kAdd, dt, {{77, 33}}, {{}}, {{77, 33}});
            check_elementwise(Ew::kAdd, dt, {{5}}, {{5}}, {{1}});  // less than one vector: tail only
        }
        {
            // Not the fast path: a row shorter than one vector, a column
            // broadcast, both inputs broadcast, a strided output.
            ExpectKernel k("strided_index32");
            check_elementwise(Ew::kAdd, dt, {{100, 3}}, {{100, 3}}, {{3}});
            check_elementwise(Ew::kAdd, dt, {{300, 64}}, {{300, 64}}, {{300, 1}});
            check_elementwise(Ew::kAdd, dt, {{300, 64}}, {{300, 1}}, {{64}});
            check_elementwise(Ew::kAdd, dt, {{300, 64}, {128, 1}}, {{300, 64}}, {{64}});
        }
    }
}

TEST_F(NvidiaPlanPaths, OneInputBroadcast) {
    // copy / relu from a repeated row or a scalar into a dense output.
    for (Ew op : {Ew::kCopy, Ew::kRelu})
        for (oprt_dtype_t dt : all_dtypes()) {
            {
                ExpectKernel k("broadcast_row_vectorized");
                check_elementwise(op, dt, {{1001, 1024}}, {{1024}});
                check_elementwise(op, dt, {{1001, 129}}, {{1, 129}});
            }
            {
                ExpectKernel k("broadcast_scalar_vectorized");
                check_elementwise(op, dt, {{70001}}, {{}});
            }
        }
}

// ---- softmax ----------------------------------------------------------------------
// The plan's row kernels by row length (the table in softmax_plan.cu), each on
// aligned rows, rows off 16-byte boundaries (odd lengths, in and out offsets),
// specials and values near the range limit. P: elements of a 16-byte vector.

float near_range_limit(oprt_dtype_t dt) { return dt == OPRT_DTYPE_F16 ? 6.0e4f : 1.0e30f; }

TEST_F(NvidiaPlanPaths, SoftmaxRowsRegisters) {
    for (oprt_dtype_t dt : all_dtypes()) {
        const int64_t P = dt == OPRT_DTYPE_F32 ? 4 : 8;
        {
            // Rows of up to 16 vectors on groups of lanes, then a warp per row (up to 1024 elements).
            ExpectKernel k("rows_registers_warp");
            for (int64_t L : {int64_t(1), int64_t(3), P, P * 4 + 1, P * 14, P * 16, P * 16 + 1, P * 24 + 3, P * 32,
                              int64_t(1000), int64_t(1024)})
                check_softmax(dt, {{600, L}}, 1);
            check_softmax(dt, {{37, P * 16 + 1}}, 1);  // few rows
            check_softmax(dt, {{600, P * 32}}, 1, /*specials=*/true);
            check_softmax(dt, {{600, P * 24 + 3}}, 1, /*specials=*/true);  // rows at every offset from a boundary
            check_softmax(dt, {{600, 1000}, {}, 1}, 1);                    // in off a boundary, out not: elements
            check_softmax(dt, {{600, 1000}, {}, 1}, 1, false, {}, /*out_offset=*/1);  // both off: vectors
            check_softmax(dt, {{600, 1024}}, 1, /*specials=*/true);
            check_softmax(dt, {{600, 1024}}, 1, false, {}, 0, nullptr, near_range_limit(dt));
            check_softmax(dt, {{600, P * 8}}, 1, false, {}, 0, nullptr, near_range_limit(dt));
        }
        {
            // A block per row, up to 16384 elements (a length off whole vectors needs one more).
            ExpectKernel k("rows_registers_block");
            for (int64_t L : {1023, 1025, 1280, 2304, 3840, 4096, 4097, 5000, 8191, 16000, 16384})
                check_softmax(dt, {{37, L}}, 1);
            check_softmax(dt, {{37, 4097}, {}, 1}, 1);                              // in off a boundary
            check_softmax(dt, {{37, 4096}, {}, 3}, 1, false, {}, /*out_offset=*/3);  // both off
            check_softmax(dt, {{37, 8191}}, 1, /*specials=*/true);
            check_softmax(dt, {{8, 3000}}, 1, /*specials=*/true);
            check_softmax(dt, {{8, 16384}}, 1, true);
            check_softmax(dt, {{3, 4, 2000}, {10000, 2000, 1}}, -1);  // outer dims that do not merge
            check_softmax(dt, {{300, 4096}}, 1, false, {}, 0, nullptr, near_range_limit(dt));
        }
    }
}

TEST_F(NvidiaPlanPaths, SoftmaxRowsCluster) {
    for (oprt_dtype_t dt : all_dtypes()) {
        {
            // Rows over 2-8 blocks of a cluster (the portable sizes).
            ExpectKernel k("rows_cluster");
            for (int64_t L : {16383, 16385, 20003, 40000, 65536, 100003, 131072}) check_softmax(dt, {{40, L}}, 1);
            check_softmax(dt, {{150, 20003}}, 1, /*specials=*/true);
            check_softmax(dt, {{150, 20000}, {}, 1}, 1, false, {}, /*out_offset=*/1);  // both off a boundary
            check_softmax(dt, {{150, 20000}}, 1, false, {}, /*out_offset=*/1);          // only out off
            check_softmax(dt, {{3, 5, 40000}}, -1);
            check_softmax(dt, {{1, 65535}}, 1);
            check_softmax(dt, {{40, 65536}}, 1, false, {}, 0, nullptr, near_range_limit(dt));
            check_softmax(dt, {{40, 65536}}, 1, /*specials=*/true);
        }
        // 16 blocks where the device runs such clusters, else the streaming kernel: either is right.
        check_softmax(dt, {{20, 262144}}, 1, /*specials=*/true);
        check_softmax(dt, {{20, 262143}}, 1);
    }
}

TEST_F(NvidiaPlanPaths, SoftmaxRowsStream) {
    for (oprt_dtype_t dt : all_dtypes()) {
        {
            ExpectKernel k("rows_stream");  // beyond a cluster's registers
            check_softmax(dt, {{4, 262145}}, 1);
            check_softmax(dt, {{4, 300000}}, 1, /*specials=*/true);
            check_softmax(dt, {{20, 1000000}}, 1, /*specials=*/true);
            check_softmax(dt, {{3, 1 << 20}, {}, 1}, 1);                            // in off a boundary
            check_softmax(dt, {{3, 1 << 20}, {}, 1}, 1, false, {}, /*out_offset=*/1);  // both off
            check_softmax(dt, {{2, 5, 300001}}, -1);
            check_softmax(dt, {{4, 300000}}, 1, false, {}, 0, nullptr, near_range_limit(dt));
        }
        {
            // Without clusters: one block per row streams it (the portable path, MetaX's too).
            ScopedEnv no_clusters("OPRT_DISABLE_CLUSTERS", "1");
            ExpectKernel k("rows_stream");
            check_softmax(dt, {{40, 20003}}, 1, /*specials=*/true);
            check_softmax(dt, {{40, 65536}}, 1);
            check_softmax(dt, {{4, 300000}}, 1, false, {}, /*out_offset=*/1);
        }
    }
}

TEST_F(NvidiaPlanPaths, SoftmaxStrided) {
    for (oprt_dtype_t dt : all_dtypes()) {
        {
            ExpectKernel k("strided_tile");  // few slices: a tile of threads per group of slices
            check_softmax(dt, {{33, 17, 5}}, 1);
            check_softmax(dt, {{4, 3000, 7}}, 1, /*specials=*/true);
            check_softmax(dt, {{9, 31}, {1, 9}}, 1);  // a strided last axis
        }
        {
            ExpectKernel k("strided_thread_per_slice");  // many slices: a thread each
            check_softmax(dt, {{2000, 8, 100}}, 1);
            check_softmax(dt, {{2000, 8, 100}}, 1, /*specials=*/true);
        }
    }
}

// ---- reduce_sum -------------------------------------------------------------------

TEST_F(NvidiaPlanPaths, ReduceSumRowsCluster) {
    for (oprt_dtype_t dt : all_dtypes()) {
        {
            ExpectKernel k("rows_cluster");
            check_reduce_sum(dt, {{128, 65536}}, 1);
            check_reduce_sum(dt, {{40, 1 << 18}}, 1);            // up to 16 blocks per row
            check_reduce_sum(dt, {{128, 65536 + 3}, {}, 1}, 1);  // misaligned, short last chunk
            check_reduce_sum(dt, {{64, 50000}}, 1, false, Fill::kUniform);
        }
        {
            ExpectKernel k("rows_split_two_pass");
            check_reduce_sum(dt, {{2, 1 << 20}}, 1);  // too few rows for clusters to fill the GPU
        }
        {
            ScopedEnv no_clusters("OPRT_DISABLE_CLUSTERS", "1");
            ExpectKernel k("rows_split_two_pass");
            check_reduce_sum(dt, {{128, 65536}}, 1);
        }
    }
}

TEST_F(NvidiaPlanPaths, ReduceSumInnerSplit) {
    for (oprt_dtype_t dt : all_dtypes()) {
        {
            ExpectKernel k("inner_tile_split_two_pass");
            check_reduce_sum(dt, {{200, 131072}}, 0);            // wide tiles, 8-12 chunks a tile
            check_reduce_sum(dt, {{3, 500, 1024}}, 1);           // narrowed tiles (short axis), outer and inner
            check_reduce_sum(dt, {{200, 131072}, {}, 1}, 0);     // misaligned: scalar columns at run time
            check_reduce_sum(dt, {{200, 131072}}, 0, false, Fill::kUniform);
            check_reduce_sum(dt, {{65536, 128}}, 0);             // many chunks a tile
            check_reduce_sum(dt, {{4096, 4096}}, 0);
            check_reduce_sum(dt, {{16384, 2048}}, 0, false, Fill::kUniform);
        }
        {
            ExpectKernel k("inner_tile");  // enough tiles without splitting the axis
            check_reduce_sum(dt, {{8, 1 << 21}}, 0);
            check_reduce_sum(dt, {{128, 65536}}, 0);   // axis too short to split: narrowed tiles instead
            check_reduce_sum(dt, {{128, 65536}, {}, 2}, 0);
        }
    }
}

}  // namespace
}  // namespace nvt
