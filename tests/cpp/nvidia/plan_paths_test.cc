// The plan switches of the tuned kernels, each tested on both sides of its
// threshold, with the kernel the plan picked asserted by name (ExpectKernel):
// elementwise and the broadcast fast path, softmax rows on part of a warp /
// in registers / in one block's shared memory / in two streaming passes (one
// block per row or split), reduce_sum rows and first-axis reductions over
// clusters or in two passes. The plans of GPUs without clusters (their portable
// fallbacks) are checked by the launch check as an A100 (tests/cpp/nvidia/launch_check).
//
// Thresholds are those of an H100/H200 (132 SMs, 227 KB of shared memory per
// block, clusters up to 16 blocks); row counts keep rows * blocks-per-row well
// above or below the SM count, so a cluster size above 8 falling back to 8 picks
// the same kernel.
#include "op_cases.h"
#include "ops/matmul/nvidia/warp_tiling_plan.h"

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

// Uniform inputs spread this wide sit near the dtype's largest finite values.
float near_range_limit(oprt_dtype_t dt) { return dt == OPRT_DTYPE_F16 ? 6.0e4f : 1.0e30f; }

// The on_chip ladder step: rows_registers at the unbounded kRegisterRows
// entries, a few lanes, a warp or a block a row (the plan takes the bulk
// kernel instead for some of these lengths, tested below).
TEST_F(NvidiaPlanPaths, SoftmaxRegistersOnChip) {
    UseVariant on_chip("on_chip");
    for (oprt_dtype_t dt : all_dtypes()) {
        const int64_t P = dt == OPRT_DTYPE_F32 ? 4 : 8;
        // Rows of one element: whichever kernel the plan takes (the axis-length-1 layout is
        // planned as a strided one), the result is checked.
        check_softmax(dt, {{600, 1}}, 1);
        {
            ExpectKernel k("rows_registers");
            // A few lanes a row, one or two vectors each.
            for (int64_t L : {int64_t(3), P * 4 + 1, P * 8}) check_softmax(dt, {{600, L}}, 1);
            for (int64_t L : {P * 16, P * 16 + 1, P * 24 + 3, P * 32}) check_softmax(dt, {{600, L}}, 1);
            check_softmax(dt, {{600, P * 32}, {}, 1}, 1);
            check_softmax(dt, {{600, P * 32}}, 1, /*specials=*/true);
            // Odd rows start off 16-byte boundaries: heads peeled, specials among them.
            check_softmax(dt, {{600, P * 24 + 3}}, 1, /*specials=*/true);
            // A warp a row (16-bit rows of 513-1024: loads staged through shared memory).
            check_softmax(dt, {{37, P * 16 + 1}}, 1);  // few rows: 32 lanes
            check_softmax(dt, {{37, P * 32}}, 1, true);
            check_softmax(dt, {{37, P * 32 + 1}}, 1);
            check_softmax(dt, {{37, 1024}}, 1);
            // Rows enough to fill the GPU, specials, misaligned rows, values near the range limit.
            check_softmax(dt, {{600, 1024}}, 1, /*specials=*/true);
            check_softmax(dt, {{600, 1000}, {}, 1}, 1);  // misaligned: element loads and -inf padding
            // In and out both off a boundary (every row peels a head), and odd rows with specials.
            check_softmax(dt, {{600, 1000}, {}, 1}, 1, false, {}, /*out_offset=*/1);
            check_softmax(dt, {{600, 1023}}, 1, /*specials=*/true);
            check_softmax(dt, {{600, 1024}}, 1, false, {}, 0, nullptr, near_range_limit(dt));
            check_softmax(dt, {{2000, 700}}, 1, /*specials=*/true);
        }
        const int64_t reg_max = 16384;  // every dtype
        {
            ExpectKernel k("rows_registers");  // a block a row
            for (int64_t L : {int64_t(1025), int64_t(1280), int64_t(2304), int64_t(3840), int64_t(4096),
                              int64_t(4097), int64_t(5000), int64_t(8191), int64_t(8193), int64_t(12289),
                              reg_max - 1, reg_max})
                check_softmax(dt, {{37, L}}, 1);
            check_softmax(dt, {{37, 4097}, {}, 1}, 1);  // misaligned rows: element loads
            check_softmax(dt, {{37, 4096}, {}, 3}, 1, false, {}, /*out_offset=*/3);  // heads on every row
            check_softmax(dt, {{37, reg_max - 1}}, 1, /*specials=*/true);           // heads on odd rows
            check_softmax(dt, {{8, 3000}}, 1, /*specials=*/true);
            // Odd lengths at the 16-bit bands' edges (a warp of 9 vectors a lane up to 2304,
            // 128 threads of 4 up to 3072): every other row off a boundary, the general form.
            for (int64_t L : {2049, 2303, 2305, 3071}) check_softmax(dt, {{37, L}}, 1, true);
            check_softmax(dt, {{8, reg_max}}, 1, true);
            check_softmax(dt, {{3, 4, 2000}, {10000, 2000, 1}}, -1);  // outer dims that do not merge
        }
        {
            ExpectKernel k("rows_block_smem");  // past the register limit, rows enough to fill the GPU
            check_softmax(dt, {{150, reg_max + 1}}, 1);
        }
    }
}

// The short-row cases of the benchmark, where the plan's kRegisterRows entries
// are decided (tests/cpp/nvidia/bench/softmax_rows.cu): whichever kernel the
// plan picks (rows_registers for the rows an entry takes), with odd lengths,
// offset data and special values at the same row counts.
TEST_F(NvidiaPlanPaths, SoftmaxShortRowBenchShapes) {
    // The production plan takes every one of these (and the odd lengths one short)
    // to rows_registers (kRegisterRows), 2032x2304 to its persistent form; the
    // ladder's on_chip step takes its unbounded entries.
    for (oprt_dtype_t dt : all_dtypes()) {
        for (const auto &rc : std::vector<std::pair<int64_t, int64_t>>{
                 {4, 1024}, {144, 1280}, {1008, 1280}, {1024, 1024}, {1008, 2304}, {2032, 2304},
                 {784, 3840}, {4080, 1536}, {32768, 128}, {1024, 4096}, {16384, 1024}}) {
            const int64_t rows = rc.first, L = rc.second;
            ExpectKernel k(rows == 2032 ? "rows_registers_persistent" : "rows_registers");
            check_softmax(dt, {{rows, L}}, 1, /*specials=*/rows >= 6);
            check_softmax(dt, {{rows, L - 1}}, 1);  // odd rows off 16-byte boundaries
            check_softmax(dt, {{rows, L}, {}, 1}, 1, false, {}, /*out_offset=*/1);  // heads on every row
            check_softmax(dt, {{rows, L}}, 1, false, {}, /*out_offset=*/1);  // in and out apart
        }
    }
}

// The persistent entries of kRegisterRows (rows of 9-16 a SM of 2049-2304
// columns) at the edges of their band and row
// bounds, odd row counts and lengths, rows off 16-byte boundaries, outer dims
// that do not merge, special values, values near the type's range; one step
// past a bound, the entry beside it. (On an H200 a grid of resident 16-bit
// blocks takes 2112 rows at once, so the plan's 16-bit grids here loop for odd
// lengths only; NvidiaSoftmaxRowsRegisters.Persistent loops small grids over
// many rows.)
TEST_F(NvidiaPlanPaths, SoftmaxRegistersPersistent) {
    int sms = 0;
    NVT_CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int64_t s = sms;
    for (oprt_dtype_t dt : all_dtypes()) {
        const bool f32 = dt == OPRT_DTYPE_F32;
        {
            ExpectKernel k("rows_registers_persistent");
            for (int64_t L : {int64_t(2049), int64_t(2303), int64_t(2304)})
                check_softmax(dt, {{8 * s + 1, L}}, 1, /*specials=*/true);
            check_softmax(dt, {{16 * s, 2304}}, 1);
            check_softmax(dt, {{12 * s + 7, 2111}}, 1, /*specials=*/true);
            check_softmax(dt, {{12 * s + 7, 2304}, {}, 1}, 1, false, {}, /*out_offset=*/1);  // heads on every row
            check_softmax(dt, {{12 * s + 7, 2304}}, 1, false, {}, /*out_offset=*/1);  // in and out apart
            // Outer dims that do not merge.
            check_softmax(dt, {{3, 4 * s + 1, 2104}, {(4 * s + 2) * 2104, 2104, 1}}, -1);
            check_softmax(dt, {{8 * s + 1, 2304}}, 1, false, {}, 0, nullptr, near_range_limit(dt));
        }
        {
            ExpectKernel k("rows_registers");  // one step past each bound and band
            check_softmax(dt, {{8 * s, 2304}}, 1);
            if (f32) check_softmax(dt, {{16 * s + 1, 2304}}, 1);
            check_softmax(dt, {{8 * s + 1, 1536}}, 1);
            // 1537-2048: f32 512 threads of 1 vector up to 3 rows an SM, 256 of 2
            // up to 12, then 128 of 4; 16-bit 128 of 2 up to one row an SM, 256
            // of 1 up to 12, then 128 of 2.
            check_softmax(dt, {{s, 1800}}, 1);
            check_softmax(dt, {{s + 1, 1537}}, 1, /*specials=*/true);
            check_softmax(dt, {{3 * s, 2048}}, 1, /*specials=*/true);
            check_softmax(dt, {{3 * s + 1, 1537}}, 1);
            check_softmax(dt, {{12 * s, 2047}}, 1);
            check_softmax(dt, {{12 * s + 1, 2048}}, 1, /*specials=*/true);
            // 2305-4096 (16-bit 512 threads of 1 vector up to 2 rows an SM; f32 512
            // of 2 up to 3).
            check_softmax(dt, {{2 * s, 4095}}, 1, /*specials=*/true);
            check_softmax(dt, {{3 * s + 1, 4096}}, 1);
            check_softmax(dt, {{8 * s + 1, f32 ? 2308 : 2305}}, 1);  // the next band (f32: whole vectors)
        }
    }
}

TEST_F(NvidiaPlanPaths, SoftmaxBlockSharedMemory) {
    UseVariant on_chip("on_chip");
    for (oprt_dtype_t dt : all_dtypes()) {
        // Past the register limit with enough rows to fill the GPU: one block
        // per row, the row in its shared memory (as f32: up to ~57K columns).
        ExpectKernel k("rows_block_smem");
        check_softmax(dt, {{150, 16385}}, 1);
        // Every row here takes more than the default 48 KB of dynamic shared
        // memory (16385 f32 values), so the kernel must opt in (it did not, once).
        check_softmax(dt, {{150, 20003}}, 1);  // odd rows: every other row misaligned
        check_softmax(dt, {{150, 20003}}, 1, /*specials=*/true);
        check_softmax(dt, {{150, 20000}, {}, 1}, 1, false, {}, /*out_offset=*/1);  // a head on every row
        check_softmax(dt, {{150, 20000}}, 1, false, {}, /*out_offset=*/1);          // in and out apart
        check_softmax(dt, {{150, 20000}}, 1, /*specials=*/true);
        check_softmax(dt, {{150, 40000}}, 1);
        check_softmax(dt, {{140, 57000}}, 1, true);
    }
}

TEST_F(NvidiaPlanPaths, SoftmaxLongRowsTwoPass) {
    UseVariant on_chip("on_chip");
    for (oprt_dtype_t dt : all_dtypes()) {
        const bool f32 = dt == OPRT_DTYPE_F32;
        {
            // Beyond one block's shared memory, many rows: a block per row,
            // stats pass then write pass.
            ExpectKernel k("rows_long_block_two_pass");
            check_softmax(dt, {{300, 60001}}, 1);
            check_softmax(dt, {{280, 100000}}, 1, /*specials=*/true);
            check_softmax(dt, {{300, 60001}, {}, 1}, 1);
        }
        {
            ExpectKernel k("rows_long_split_two_pass");  // few rows: split over blocks
            check_softmax(dt, {{4, 100000}}, 1);
            check_softmax(dt, {{5, 40000}}, 1);  // fits shared memory, but 5 blocks would idle the GPU
            check_softmax(dt, {{20, 1000000}}, 1, /*specials=*/true);
        }
        {
            // Between SMs / 2 and 2 * SMs rows: f32 splits, f16/bf16 take a block per row.
            ExpectKernel k(f32 ? "rows_long_split_two_pass" : "rows_long_block_two_pass");
            check_softmax(dt, {{100, 120000}}, 1);
            check_softmax(dt, {{100, 200003}}, 1);
        }
    }
}

TEST_F(NvidiaPlanPaths, SoftmaxBulkAsync) {
    // Rows loaded by bulk asynchronous copies into a ring of shared-memory buffers (sm_90).
    UseVariant bulk("bulk_async");
    for (oprt_dtype_t dt : all_dtypes()) {
        {
            ExpectKernel k("rows_bulk_ring");  // a row per block
            for (int64_t L : {1024, 1280, 2304, 3000, 4096})
                check_softmax(dt, {{300, L}}, 1);
            check_softmax(dt, {{300, 4096}}, 1, /*specials=*/true);
            check_softmax(dt, {{3, 4, 2000}, {10000, 2000, 1}}, -1);  // outer dims that do not merge
            check_softmax(dt, {{300, 4096}, {}, 1}, 1);  // unaligned data: the dense-row kernels run it
            check_softmax(dt, {{600, 2048}}, 1, true);  // more rows than resident blocks: both buffers cycle
            // Values near the type's range limit: exp(x - max) must take the
            // difference first (max * log2(e), rounded, is off by far more than 1).
            check_softmax(dt, {{300, 4096}}, 1, false, {}, 0, nullptr, near_range_limit(dt));
            // 16-bit exponents fold max * log2(e) into one FFMA up to |max| = 64:
            // maxima just inside and just outside that bound.
            for (float range : {60.0f, 70.0f}) check_softmax(dt, {{300, 4096}}, 1, false, {}, 0, nullptr, range);
            check_softmax(dt, {{3000, 4096}}, 1, true);  // several rows a block: the ring cycles
            check_softmax(dt, {{5000, 2048}}, 1, true);  // one wave of blocks that loop: past the third buffer
        }
        if (dt != OPRT_DTYPE_F32) {
            // 16-bit rows off 16-byte boundaries (odd lengths, offset data): the kHeads
            // instance, the aligned middle by bulk copy, the ends one per thread.
            ExpectKernel k("rows_bulk_ring");
            for (int64_t L : {2049, 2055, 4095, 4097, 8191}) check_softmax(dt, {{300, L}}, 1, /*specials=*/true);
            check_softmax(dt, {{5000, 4095}}, 1);        // several rows a block
            check_softmax(dt, {{3000, 2050}}, 1, true);  // one wave of looping blocks: the ring cycles
            check_softmax(dt, {{3, 5, 4095}}, -1);       // outer dims that do not merge
            check_softmax(dt, {{300, 4096}, {}, 1}, 1, false, {}, 1);  // in and out both one element off
            check_softmax(dt, {{300, 4095}}, 1, false, {}, 1);  // only out off: the dense-row kernels
            check_softmax(dt, {{300, 4095}}, 1, false, {}, 0, nullptr, near_range_limit(dt));
            for (float range : {60.0f, 70.0f}) check_softmax(dt, {{300, 4095}}, 1, false, {}, 0, nullptr, range);
        }
        if (dt != OPRT_DTYPE_F32) {
            ExpectKernel k("rows_bulk_ring");  // 16-bit rows of 16384: 512 threads
            check_softmax(dt, {{300, 16384}}, 1, /*specials=*/true);
            // Off 16-byte boundaries: the plain ring's kHeads instance (middle by bulk copy, ends one per thread).
            for (int64_t L : {9001, 12345, 16383}) check_softmax(dt, {{300, L}}, 1, true);
            check_softmax(dt, {{3000, 9001}}, 1);  // several rows a block: the ring cycles
            check_softmax(dt, {{300, 16384}, {}, 3}, 1, false, {}, 3);  // in and out both three elements off
            check_softmax(dt, {{300, 16383}}, 1, false, {}, 0, nullptr, near_range_limit(dt));
            for (float range : {60.0f, 70.0f}) check_softmax(dt, {{300, 16383}}, 1, false, {}, 0, nullptr, range);
            for (float range : {60.0f, 70.0f}) check_softmax(dt, {{300, 16384}}, 1, false, {}, 0, nullptr, range);
        }
        if (dt != OPRT_DTYPE_F32) {
            ExpectKernel k("rows_bulk_ring");  // many rows of 12289-16384
            check_softmax(dt, {{2500, 16384}}, 1, /*specials=*/true);
            check_softmax(dt, {{2500, 16383}}, 1, true);  // off 16-byte boundaries: the kHeads instance
            check_softmax(dt, {{2500, 16384}}, 1, false, {}, 0, nullptr, near_range_limit(dt));
        }
        if (dt == OPRT_DTYPE_F32) {
            // f32 rows off 16-byte boundaries: the plain ring's kHeads instance (the ends one per thread).
            ExpectKernel k("rows_bulk_ring");
            for (int64_t L : {1025, 2047, 4097, 8191}) check_softmax(dt, {{300, L}}, 1, /*specials=*/true);
            check_softmax(dt, {{3000, 4097}}, 1);  // several rows a block: the ring cycles
            check_softmax(dt, {{30, 20, 4095}}, -1);  // two outer dims, enough rows not to split
            check_softmax(dt, {{300, 4096}, {}, 1}, 1, false, {}, 1);  // in and out both one element off
            check_softmax(dt, {{300, 4096}, {}, 3}, 1, false, {}, 3);  // three off: a head of one element
            check_softmax(dt, {{300, 4095}}, 1, false, {}, 1);  // only out off: the dense-row kernels
            check_softmax(dt, {{300, 4097}}, 1, false, {}, 0, nullptr, near_range_limit(dt));
        }
        {
            // Enough row groups in the wave (on the H200) and rows past its first round:
            // blocks claim their next rows from a counter per slice.
            ExpectKernel k("rows_bulk_ring_split_claimed");
            check_softmax(dt, {{300, 60000}}, 1, true);
            check_softmax(dt, {{1000, 30000}}, 1);  // many claims a block
            check_softmax(dt, {{300, 60000}, {}, 5}, 1, false, {}, 5);  // in and out five elements off: kHeads
            if (dt != OPRT_DTYPE_F32) {  // 16-bit lengths off whole vectors (f32 ones: fixed groups)
                check_softmax(dt, {{300, 60001}}, 1, true);
                check_softmax(dt, {{1000, 30001}}, 1, true);
            }
        }
        {
            ExpectKernel k("rows_bulk_ring_split");  // slices of a row over blocks that swap (max, sum)
            check_softmax(dt, {{4, 100000}}, 1, true);  // few rows: split finer
            check_softmax(dt, {{1, 65536}}, 1);  // one row over 16-32 blocks
            check_softmax(dt, {{20, 1000000}}, 1, true);  // several rows per block, cooperative waits
            check_softmax(dt, {{20, 1000000}, {}, 1}, 1);  // in off, out not: the two-pass kernels
            // Rows off 16-byte boundaries: the split ring's kHeads instance.
            check_softmax(dt, {{4, 100003}}, 1, true);  // few rows: split finer
            check_softmax(dt, {{4, 12345}}, 1, true);   // a row one buffer holds, split for few rows
            check_softmax(dt, {{1, 65535}}, 1);
            check_softmax(dt, {{20, 1000001}}, 1, true);  // several rows per block
            if (dt == OPRT_DTYPE_F32) check_softmax(dt, {{300, 60001}}, 1, true);  // f32 off whole vectors
            check_softmax(dt, {{4, 100003}}, 1, false, {}, 0, nullptr, near_range_limit(dt));
            for (float range : {60.0f, 70.0f}) check_softmax(dt, {{4, 100003}}, 1, false, {}, 0, nullptr, range);
            check_softmax(dt, {{4, 100000}}, 1, false, {}, 0, nullptr, near_range_limit(dt));
            for (float range : {60.0f, 70.0f}) check_softmax(dt, {{4, 100000}}, 1, false, {}, 0, nullptr, range);
        }
        // Rows of a length that is not whole 16-byte vectors, few of them.
        check_softmax(dt, {{37, 4097}}, 1);
        check_softmax(dt, {{5, 100001}}, 1, true);
    }
}

TEST_F(NvidiaPlanPaths, SoftmaxPlanTakesBulkWhereFaster) {
    // The plan (no variant set): rows of up to 16384 columns run rows_registers
    // (kRegisterRows), longer ones the bulk kernel, split over blocks, unless
    // a cluster holds them (rows_cluster, tested below).
    for (oprt_dtype_t dt : {OPRT_DTYPE_F16, OPRT_DTYPE_BF16}) {
        ExpectKernel k("rows_registers");
        check_softmax(dt, {{300, 2048}}, 1);
        check_softmax(dt, {{300, 8191}}, 1);
        check_softmax(dt, {{300, 16384}}, 1, /*specials=*/true);
        check_softmax(dt, {{2500, 16383}}, 1, true);  // off 16-byte boundaries: the general form
        check_softmax(dt, {{2500, 12289}}, 1);        // the shortest row of the 512 x 4 entry
    }
    for (oprt_dtype_t dt : all_dtypes()) {
        ExpectKernel k("rows_bulk_ring_split");
        check_softmax(dt, {{20, 1000000}}, 1);
    }
    for (oprt_dtype_t dt : {OPRT_DTYPE_F16, OPRT_DTYPE_BF16}) {
        ExpectKernel k("rows_bulk_ring_split_claimed");  // rows enough to fill the GPU, and more
        check_softmax(dt, {{300, 60001}}, 1);  // not whole vectors (no cluster): kHeads
    }
    {
        ExpectKernel k("rows_registers");
        check_softmax(OPRT_DTYPE_F32, {{300, 4096}}, 1);
        check_softmax(OPRT_DTYPE_BF16, {{300, 1536}}, 1);
        // Past the measured entries' lengths or rows per SM: the unbounded ones.
        check_softmax(OPRT_DTYPE_F32, {{300, 8192}}, 1);
        check_softmax(OPRT_DTYPE_BF16, {{5000, 1536}}, 1);
    }
    {
        ExpectKernel k("rows_bulk_ring_split");  // f32 off whole 16-byte vectors: kHeads, fixed groups
        check_softmax(OPRT_DTYPE_F32, {{300, 60001}}, 1);
        check_softmax(OPRT_DTYPE_F32, {{2048, 50257}}, 1, /*specials=*/true);  // GPT-2's vocabulary
    }
    {
        ExpectKernel k("rows_bulk_ring_split_claimed");  // 16-bit off whole vectors: kHeads, claimed
        check_softmax(OPRT_DTYPE_BF16, {{2048, 50257}}, 1, /*specials=*/true);
    }
}

// Rows of whole vectors past 16384 columns that a cluster holds (f32: up to
// 16 blocks of 16384 values, 9-16 in the test below; 16-bit: up to 4 blocks of
// 8192 values kept as 16-bit, 5-8 of 8192 with their exps kept as floats, or
// up to 8 of 32768 past 65536 columns), with rows * blocks at least half the
// SM count (the 16-bit blocks of 32768: the whole count): a row over a
// cluster, in registers, whatever the number of waves. Few 16-bit rows of
// 16385-32768 columns (up to one an SM) take a block of 512 threads a row.
TEST_F(NvidiaPlanPaths, SoftmaxRowsCluster) {
    for (oprt_dtype_t dt : all_dtypes()) {
        const bool f32 = dt == OPRT_DTYPE_F32;
        {
            ExpectKernel k("rows_cluster");
            check_softmax(dt, {{300, 16392}}, 1, /*specials=*/true);  // 2 blocks a row (f32), 3 (16-bit)
            check_softmax(dt, {{300, 30000}}, 1, true);  // 2 / 4 blocks (16-bit: the most kept as 16-bit)
            check_softmax(dt, {{150, 40000}}, 1, true);  // 3 / 5 blocks: odd sizes, a short last slice
            check_softmax(dt, {{300, 60000}}, 1);        // 4 / 8 blocks
            check_softmax(dt, {{f32 ? 20 : 40, f32 ? 131072 : 65536}}, 1, true);  // 8 blocks
            check_softmax(dt, {{3, 50, 20000}, {51 * 20000, 20000, 1}}, -1);  // outer dims that do not merge
            check_softmax(dt, {{300, 60000}}, 1, false, {}, 0, nullptr, near_range_limit(dt));
            check_softmax(dt, {{9000, 16392}}, 1);  // 27000 blocks (16-bit): 26 waves on an H100 / H200
            for (float range : {60.0f, 70.0f}) check_softmax(dt, {{300, 60000}}, 1, false, {}, 0, nullptr, range);
            // Rows off 16-byte boundaries: the plan without clusters runs them.
            check_softmax(dt, {{300, 60000}, {}, 5}, 1, false, {}, /*out_offset=*/5);  // the ring's kHeads
            check_softmax(dt, {{300, 60000}}, 1, false, {}, /*out_offset=*/1);  // in and out apart
            check_softmax(dt, {{f32 ? 64 : 300, 32768}}, 1, true);  // f32: 128 blocks, from half the SMs
            check_softmax(dt, {{f32 ? 40 : 16, f32 ? 32768 : 40000}}, 1);  // 80 blocks
            if (!f32) {  // 16-bit rows past 8 blocks of 8192: the 512-thread shape (32768 a block)
                check_softmax(dt, {{300, 65544}}, 1, true);  // 3 blocks, the last short
                check_softmax(dt, {{40, 262144}}, 1, true);  // 8 blocks
            }
        }
        {
            ExpectKernel k("rows_bulk_ring_split");  // rows * blocks short of half the SMs: no cluster
            check_softmax(dt, {{f32 ? 8 : 4, 65536}}, 1);  // 32 blocks
            if (!f32) check_softmax(dt, {{12, 262144}}, 1);  // 96 blocks of 32768: short of the SMs
        }
        if (!f32) {
            ExpectKernel k("rows_registers");  // few 16-bit rows of 16385-32768 columns: a block a row
            check_softmax(dt, {{20, 32768}}, 1, true);
            check_softmax(dt, {{100, 20000}}, 1);
            check_softmax(dt, {{7, 16392}, {}, 3}, 1, false, {}, /*out_offset=*/3);  // off 16-byte boundaries
        }
    }
    // More blocks a row than a cluster takes (16-bit 262152 columns: 9 of 32768): the ring.
    ExpectKernel k("rows_bulk_ring_split_claimed");
    check_softmax(OPRT_DTYPE_BF16, {{100, 262152}}, 1);
}

// f32 rows on clusters of 9-16 blocks, the non-portable sizes, and past them
// the ring. A test of its own: compute-sanitizer's synccheck cannot run these
// clusters where two blocks share an SM (scripts/gpu/validate.sh leaves this
// test out of it; tests/cpp/nvidia/bench/cluster_synccheck.cu shows it on a
// kernel of a few lines).
TEST_F(NvidiaPlanPaths, SoftmaxRowsClusterNonPortable) {
    {
        ExpectKernel k("rows_cluster");
        check_softmax(OPRT_DTYPE_F32, {{300, 140000}}, 1, /*specials=*/true);  // 9 blocks, the last short
        check_softmax(OPRT_DTYPE_F32, {{40, 262144}}, 1, true);                 // 16 blocks
    }
    ExpectKernel k("rows_bulk_ring_split");  // 262148 columns: 17 blocks of 16384
    check_softmax(OPRT_DTYPE_F32, {{64, 262148}}, 1);
}

// ---- reduce_sum -------------------------------------------------------------------

TEST_F(NvidiaPlanPaths, ReduceSumRowsCluster) {
    for (oprt_dtype_t dt : all_dtypes()) {
        {
            ExpectKernel k("rows_cluster");
            check_reduce_sum(dt, {{64, 65536}}, 1);
            check_reduce_sum(dt, {{40, 1 << 18}}, 1);           // up to 16 blocks per row
            check_reduce_sum(dt, {{64, 65536 + 3}, {}, 1}, 1);  // misaligned, short last chunk
            check_reduce_sum(dt, {{64, 50000}}, 1, false, Fill::kUniform);
        }
        {
            ExpectKernel k("rows_split_two_pass");
            check_reduce_sum(dt, {{2, 1 << 20}}, 1);  // too few rows for clusters to fill the GPU
        }
    }
}

// Few long rows, about one a SM: a block a row (1024 threads f32, 512 with
// 16 vectors in flight for 16-bit), no cluster and no split.
TEST_F(NvidiaPlanPaths, ReduceSumRowsBlockARow) {
    int sms = 0;
    NVT_CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int64_t rows = sms - sms / 16;  // at least 7/8 of the SMs, fewer than 2 a SM
    for (oprt_dtype_t dt : all_dtypes()) {
        ExpectKernel k("rows_block");
        check_reduce_sum(dt, {{rows, 65536}}, 1);
        check_reduce_sum(dt, {{rows, 65536 + 3}, {}, 1}, 1);  // misaligned: heads peeled
        check_reduce_sum(dt, {{rows, 40001}}, 1, false, Fill::kUniform);
        check_reduce_sum(dt, {{sms, 1280}}, 1);  // few short rows: a block of ~4 vectors a thread
        check_reduce_sum(dt, {{4096}}, 0);        // one row
        check_reduce_sum(dt, {{3, 1277}}, 1, /*keepdims=*/true);
    }
}

// Few long rows split in two passes: 256-thread chunks of at least 3 vectors
// a thread (f32), 512-thread chunks of at least 2 (16-bit; the 16-vector
// kernel under 4 vectors a thread). 16-bit sums of all of 2^20 elements or
// more: the sweep.
TEST_F(NvidiaPlanPaths, ReduceSumRowsSplit) {
    for (oprt_dtype_t dt : all_dtypes()) {
        {
            ExpectKernel k("rows_split_two_pass");
            check_reduce_sum(dt, {{144 * 1280}}, 0);  // all of (144, 1280), as one row
            check_reduce_sum(dt, {{184320 + 5}}, 0);
            check_reduce_sum(dt, {{3, 1 << 22}}, 1, false, Fill::kUniform);
            check_reduce_sum(dt, {{2, 1 << 20}}, 1);
        }
        ExpectKernel k(dt == OPRT_DTYPE_F32 ? "rows_split_two_pass" : "all_sweep_two_pass");
        check_reduce_sum(dt, {{1024 * 1024}}, 0);
        check_reduce_sum(dt, {{1, (1 << 20) + 3}, {}, 1}, 1);  // misaligned: heads peeled
        check_reduce_sum(dt, {{65536 * 128}}, 0, false, Fill::kUniform);
        check_reduce_sum(dt, {{(1 << 22) + 7}, {}, 5}, 0);
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
            check_reduce_sum(dt, {{65536, 96}}, 0);              // many chunks a tile
            check_reduce_sum(dt, {{4096, 4096}}, 0);
            check_reduce_sum(dt, {{16384, 2048}}, 0, false, Fill::kUniform);
            // A long axis over a wide inner run: 256-byte tile rows, split.
            check_reduce_sum(dt, {{20000, 1024}}, 0);
            check_reduce_sum(dt, {{20001, 1028}, {}, 2}, 0, false, Fill::kUniform);  // misaligned
        }
        {
            ExpectKernel k("inner_tile");  // small inputs: one pass over 16-column tiles
            check_reduce_sum(dt, {{144, 1280}}, 0);
            check_reduce_sum(dt, {{1024, 1024}}, 0, false, Fill::kUniform);
            check_reduce_sum(dt, {{1000, 1001}, {}, 1}, 0);  // misaligned, odd inner run
            check_reduce_sum(dt, {{3, 100, 1000}}, 1);       // a middle axis
        }
        {
            ExpectKernel k("inner_tile");  // enough tiles without splitting the axis
            check_reduce_sum(dt, {{8, 1 << 21}}, 0);
            check_reduce_sum(dt, {{96, 32768}}, 0);  // axis too short to split: narrowed tiles instead
            check_reduce_sum(dt, {{96, 32768}, {}, 2}, 0);
        }
        {
            // Outer 1, 2^22 to under 2^24 elements, both sides >= 128: flight
            // tiles, split when the axis is the longer side; an input off a
            // 16-byte boundary runs the inner tile with scalar columns. ((128,
            // 65536), and 16-bit (65536, 128): ReduceSumInnerFlightWarpAndColumnSweep.)
            ExpectKernel k("inner_flight_split_two_pass");
            if (dt == OPRT_DTYPE_F32) {
                check_reduce_sum(dt, {{65536, 128}}, 0);
                check_reduce_sum(dt, {{65536, 128}, {}, 4}, 0, false, Fill::kUniform);
            }
            check_reduce_sum(dt, {{40000, 136}}, 0);
            check_reduce_sum(dt, {{40000, 136}, {}, 4}, 0, false, Fill::kUniform);  // misaligned for 16-bit
        }
        {
            ExpectKernel k("inner_flight");
            check_reduce_sum(dt, {{200, 32768}}, 0, false, Fill::kUniform);
            check_reduce_sum(dt, {{200, 32768}, {}, 2}, 0);  // misaligned: the fallback
        }
    }
}

// First axes in the flight tiles' range (outer 1, whole 16-byte columns, 2^22
// to under 2^24 elements): an axis of 120-128 rows under a longer inner run
// takes flight warps (one pass, no workspace); 16-bit, a dense inner run of
// 128 under a longer axis the column sweep, then the row kernel over each
// column's partials (one block a SM). Inputs off a 16-byte boundary run the
// inner tile with scalar columns at execute, under the same name. Just outside
// each rule, and f32 on the column sweep's shapes, the flight tiles or inner
// tiles as before.
TEST_F(NvidiaPlanPaths, ReduceSumInnerFlightWarpAndColumnSweep) {
    for (oprt_dtype_t dt : {OPRT_DTYPE_F32, OPRT_DTYPE_F16, OPRT_DTYPE_BF16}) {
        {
            ExpectKernel k("inner_flight_warp");
            check_reduce_sum(dt, {{128, 65536}}, 0);
            check_reduce_sum(dt, {{128, 65536}}, 0, false, Fill::kUniform);
            check_reduce_sum(dt, {{127, 65536}}, 0);  // an odd axis: a round cut short
            check_reduce_sum(dt, {{120, 34960}}, 0, false, Fill::kUniform);  // the shortest axis, just over 2^22 elements
            check_reduce_sum(dt, {{128, 65536}}, 0, /*keepdims=*/true);
            check_reduce_sum(dt, {{128, 65536}, {65552, 1}}, 0);  // padded rows (axis stride 65552)
            check_reduce_sum(dt, {{128, 2, 32768}}, 0);  // an inner run of two dims
            check_reduce_sum(dt, {{128, 65536}}, 0, false, Fill::kIntegers, {}, 3);  // output off 16 bytes
            check_reduce_sum(dt, {{128, 65536}, {}, 2}, 0);  // input off 16 bytes: the fallback
            check_reduce_sum(dt, {{127, 65536}, {}, 1}, 0, false, Fill::kUniform);
        }
        {
            ExpectKernel k("inner_flight");
            check_reduce_sum(dt, {{129, 65536}}, 0);  // the axis past kFlightWarpMaxAxis
            check_reduce_sum(dt, {{256, 32768}}, 0);
        }
        {
            ExpectKernel k("inner_tile");
            check_reduce_sum(dt, {{119, 65536}}, 0);  // the axis under kFlightWarpMinAxis
            check_reduce_sum(dt, {{64, 131072}}, 0, false, Fill::kUniform);
            check_reduce_sum(dt, {{2, 128, 32768}}, 1);  // outer 2
        }
    }
    for (oprt_dtype_t dt : {OPRT_DTYPE_F16, OPRT_DTYPE_BF16}) {
        {
            ExpectKernel k("inner_column_sweep_two_pass");
            check_reduce_sum(dt, {{65536, 128}}, 0);
            check_reduce_sum(dt, {{65536, 128}}, 0, false, Fill::kUniform);
            check_reduce_sum(dt, {{65539, 128}}, 0);  // an odd axis: vectors past the last whole slab
            check_reduce_sum(dt, {{32768, 128}}, 0);  // 2^22 elements: the range's first
            check_reduce_sum(dt, {{131071, 128}}, 0, false, Fill::kUniform);  // the range's last axis
            check_reduce_sum(dt, {{65536, 128}}, 0, /*keepdims=*/true);
            check_reduce_sum(dt, {{65536, 2, 64}}, 0);  // an inner run of two dims
            check_reduce_sum(dt, {{65536, 128}}, 0, false, Fill::kIntegers, {}, 1);  // output off 16 bytes
            check_reduce_sum(dt, {{65536, 128}, {}, 4}, 0);  // input off 16 bytes: the fallback
            check_reduce_sum(dt, {{65539, 128}, {}, 1}, 0, false, Fill::kUniform);
        }
        {
            ExpectKernel k("inner_flight_split_two_pass");
            check_reduce_sum(dt, {{32768, 256}}, 0);           // an inner run of 256
            check_reduce_sum(dt, {{65536, 136}}, 0);           // 136
            check_reduce_sum(dt, {{65536, 128}, {136, 1}}, 0);  // 128, padded rows: not dense
        }
        {
            ExpectKernel k("inner_tile_split_two_pass");
            check_reduce_sum(dt, {{2, 65536, 64}}, 1);  // outer 2
            check_reduce_sum(dt, {{65536, 120}}, 0);    // an inner run under 128
        }
    }
    {
        ExpectKernel k("inner_flight_split_two_pass");
        check_reduce_sum(OPRT_DTYPE_F32, {{65539, 128}}, 0, false, Fill::kUniform);
    }
}

// ---- matmul: warp_tiling's configs and K splits ----------------------------------

// The workspace the plan asks for: more than 0 exactly when it splits K.
size_t matmul_workspace(oprt_dtype_t dt, const Spec &a_s, const Spec &b_s) {
    Tensor a, b, out;
    make_tensor(a, dt, a_s.shape, a_s.strides, a_s.offset, Fill::kPoison);
    make_tensor(b, dt, b_s.shape, b_s.strides, b_s.offset, Fill::kPoison);
    make_tensor(out, dt, {a_s.shape[0], b_s.shape[1]}, {}, 0, Fill::kPoison);
    const oprt_tensor_view_t ov = out.view(), av = a.view(), bv = b.view();
    oprt_matmul_descriptor_t desc = nullptr;
    size_t bytes = 0;
    EXPECT_EQ(oprt_create_matmul_descriptor(&desc, &ov, &av, &bv), OPRT_SUCCESS) << oprt_last_error_message();
    if (desc) {
        EXPECT_EQ(oprt_get_matmul_workspace_size(desc, &bytes), OPRT_SUCCESS);
        oprt_destroy_matmul_descriptor(desc);
    }
    return bytes;
}

// The block tile (BM x BN) of the warp_tiling config the plan picks for M x N x K on this
// GPU: the library asks the same table (warp_tiling_plan.h) with the same SM count.
std::string warp_tiling_tile(int64_t m, int64_t n, int64_t k) {
    int device = 0, sms = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
        return "no device";
    const oprt::matmul::WarpTilingShape &s =
        oprt::matmul::kWarpTilingConfigs[oprt::matmul::warp_tiling_choose(m, n, k, sms).config];
    return std::to_string(s.bm) + "x" + std::to_string(s.bn);
}

// Skinny f32 products (few tiles for the SMs): each config the plan picks, with K split
// into pieces summed by a second kernel; odd K (rows padded to 4 elements), odd N, a last
// piece shorter than the others. M x N just above 2^16 keeps the 32-row tile, up to 128
// rows the 128 x 128 tile, 33-64 rows above 3 x 2^16 the 64-row tile; below them the
// 32 x 64 tile takes over (MatmulWarpTilingSmallProducts).
TEST_F(NvidiaPlanPaths, MatmulWarpTilingSplitK) {
    ExpectKernel k("warp_tiling");
    const oprt_dtype_t f32 = OPRT_DTYPE_F32;
    struct Case {
        Spec a, b;
        const char *tile;
    };
    const Case cases[] = {
        {{{16, 2048}}, {{2048, 1024}}, "16x128"},                    // M <= 16: 16-row tiles
        {{{5, 1024}}, {{1024, 260}}, "16x128"},                      // a few rows
        {{{32, 1000}}, {{1000, 2052}}, "32x128"},                    // M <= 32; K not a whole number of pieces
        {{{64, 1000}}, {{1000, 4100}}, "64x128"},                    // M <= 64, M x N above 3 x 2^16
        {{{33, 777}, {780, 1}}, {{777, 6001}, {6004, 1}}, "64x128"},  // odd K and N, rows padded to 4
        {{{64, 1000}}, {{1000, 2052}}, "32x64"},                     // M <= 64, M x N up to 3 x 2^16
        {{{128, 1028}}, {{1028, 520}}, "128x128"},                   // M <= 128, K split
        {{{1024, 260}}, {{260, 1024}}, "128x128"},                   // 2^20 outputs: 64 tiles, 4 pieces
        {{{33, 777}, {780, 1}}, {{777, 37}, {40, 1}}, "32x64"},      // small products: the 32 x 64 tile
        {{{200, 3000}}, {{3000, 64}}, "32x64"},                      // few outputs: small tiles, deep K
    };
    for (const Case &c : cases) {
        const int64_t m = c.a.shape[0], kk = c.a.shape[1], n = c.b.shape[1];
        EXPECT_EQ(warp_tiling_tile(m, n, kk), c.tile) << m << " x " << n << " x " << kk;
        EXPECT_GT(matmul_workspace(f32, c.a, c.b), 0u) << m << " x " << n << " x " << kk << ": the plan should split K";
        check_matmul(f32, c.a, c.b);
    }
    check_matmul(f32, {{64, 1000}}, {{1000, 1028}}, {1100, 1});  // C rows padded: split sums stored as vectors
    check_matmul(f32, {{33, 777}, {780, 1}}, {{777, 2001}, {2004, 1}}, {4004, 2});  // strided C
    // Enough tiles: one piece.
    EXPECT_EQ(warp_tiling_tile(2048, 2048, 260), "128x128");
    EXPECT_EQ(matmul_workspace(f32, {{2048, 260}}, {{260, 2048}}), 0u);
    check_matmul(f32, {{2048, 260}}, {{260, 2048}});
    check_matmul(f32, {{2055, 260}}, {{260, 2053}, {2056, 1}});  // edge tiles on both sides
    // A mid-size product whose larger tiles would leave SMs idle: the 32 x 64 tile.
    EXPECT_EQ(warp_tiling_tile(512, 512, 512), "32x64");
    check_matmul(f32, {{512, 512}}, {{512, 512}});
}

// Small products (M x N <= 2^16, M above 16) take the 32 x 64 tile (128 threads, 4 x 4 a
// lane): odd M, N and K with rows padded to 4 elements (what the vector loads need),
// offsets that keep the 4-element alignment, strided and padded C, one column, many rows
// over few columns, a K split (its workspace), and the M x N bound itself.
TEST_F(NvidiaPlanPaths, MatmulWarpTilingSmallProducts) {
    ExpectKernel k("warp_tiling");
    const oprt_dtype_t f32 = OPRT_DTYPE_F32;
    struct Case {
        Spec a, b;
        std::vector<int64_t> c_strides;
        int64_t c_offset;
        bool split;  // on 132 SMs: K split into pieces (a workspace)
    };
    const Case cases[] = {
        {{{33, 17}, {20, 1}}, {{17, 65}, {68, 1}}, {}, 0, false},             // 33 x 65 x 17: 2 x 2 tiles
        {{{33, 17}, {20, 1}, 4}, {{17, 65}, {68, 1}, 8}, {130, 2}, 3, false},  // offsets, strided C
        {{{130, 1000}}, {{1000, 260}}, {}, 0, true},                          // 130 x 260 x 1000: 8 pieces
        {{{130, 1001}, {1004, 1}}, {{1001, 259}, {260, 1}}, {264, 1}, 0, true},  // odd, C rows padded
        {{{1000, 2048}}, {{2048, 65}, {68, 1}}, {}, 0, true},                 // many rows, few columns
        {{{4099, 300}}, {{300, 1}, {4, 1}}, {}, 0, true},                     // one column
        {{{17, 5}, {8, 1}}, {{5, 3}, {4, 1}}, {}, 0, false},                  // one slice, mostly padding
        {{{256, 256}}, {{256, 256}}, {}, 0, true},                            // M x N = 2^16 exactly
        {{{64, 1024}}, {{1024, 1024}}, {}, 0, true},                          // 64 rows at 2^16
        {{{64, 1024}}, {{1024, 2048}}, {}, 0, true},                          // 64 rows at 2^17
    };
    for (const Case &c : cases) {
        const int64_t m = c.a.shape[0], kk = c.a.shape[1], n = c.b.shape[1];
        EXPECT_EQ(warp_tiling_tile(m, n, kk), "32x64") << m << " x " << n << " x " << kk;
        if (c.c_strides.empty()) {
            const size_t ws = matmul_workspace(f32, c.a, c.b);
            EXPECT_EQ(ws > 0, c.split) << m << " x " << n << " x " << kk << ": workspace " << ws;
        }
        check_matmul(f32, c.a, c.b, c.c_strides, c.c_offset);
    }
    // Just past the bounds: the 32-row tile at 32 rows past 2^16, the 64-row tile at 64 rows
    // past 3 x 2^16.
    EXPECT_EQ(warp_tiling_tile(32, 2049, 1024), "32x128");
    check_matmul(f32, {{32, 1024}}, {{1024, 2049}, {2052, 1}});
    EXPECT_EQ(warp_tiling_tile(64, 2049, 1024), "32x64");
    EXPECT_EQ(warp_tiling_tile(64, 3073, 1024), "64x128");
    check_matmul(f32, {{64, 1024}}, {{1024, 3073}, {3076, 1}});
}

// The warp_tiling ladder step in f16 / bf16 takes the same plan (split sums rounded once).
TEST_F(NvidiaPlanPaths, MatmulWarpTilingSplitK16Bit) {
    UseVariant v("warp_tiling");
    for (oprt_dtype_t dt : {OPRT_DTYPE_F16, OPRT_DTYPE_BF16}) {
        check_matmul(dt, {{16, 2048}}, {{2048, 520}});
        check_matmul(dt, {{33, 777}, {780, 1}}, {{777, 37}, {40, 1}});
        check_matmul(dt, {{33, 17}, {20, 1}}, {{17, 65}, {68, 1}});  // the 32 x 64 tile
        check_matmul(dt, {{130, 1000}}, {{1000, 260}});              // the 32 x 64 tile, 8 pieces
        check_matmul(dt, {{128, 1028}}, {{1028, 520}});              // the 128 x 128 tile, K split
    }
}

// Layouts warp_tiling cannot read: the plan takes blocking_2d (no workspace), and a call
// whose pointers are not 4-element aligned runs blocking_2d in the split plan's place.
TEST_F(NvidiaPlanPaths, MatmulWarpTilingFallbacks) {
    const oprt_dtype_t f32 = OPRT_DTYPE_F32;
    {
        ExpectKernel k("blocking_2d");
        EXPECT_EQ(matmul_workspace(f32, {{16, 512}, {1, 16}}, {{512, 300}}), 0u);
        check_matmul(f32, {{16, 512}, {1, 16}}, {{512, 300}});        // a column-major
        check_matmul(f32, {{16, 777}}, {{777, 300}});                 // rows of 777: not whole vectors
        check_matmul(f32, {{64, 1000}}, {{1000, 300}, {1, 1000}});    // b column-major
    }
    ExpectKernel k("warp_tiling");
    check_matmul(f32, {{16, 2048}, {}, 1}, {{2048, 1024}});       // a misaligned: blocking_2d at run time
    check_matmul(f32, {{64, 1000}}, {{1000, 520}, {}, 2});        // b misaligned
}

}  // namespace
}  // namespace nvt
