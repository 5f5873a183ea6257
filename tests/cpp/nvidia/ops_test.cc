// Every operator x dtype on the nvidia backend, on shapes on both sides of each
// threshold the plans use (vector width, sub-warp / warp / block / split /
// streaming row kernels, inner and strided paths), with strided, broadcast,
// misaligned and in-place layouts. Thresholds quoted are those of an H100/H200
// (132 SMs, 227 KB of shared memory per block); shapes are chosen so that each
// path is also taken on GPUs with somewhat fewer or more SMs.
#include "op_cases.h"

namespace nvt {
namespace {

class NvidiaOps : public ::testing::Test {
protected:
    void SetUp() override { NVT_SKIP_WITHOUT_CUDA(); }
    NvidiaBackend backend_;
};

// ---- Elementwise ----------------------------------------------------------------

TEST_F(NvidiaOps, ElementwiseContiguousSizes) {
    // Around the vector widths (4 f32 / 8 f16, bf16), the unroll tile and odd tails.
    const std::vector<int64_t> sizes = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33, 1000, 1023, 4096 + 3,
                                        65536 + 5, (1 << 20) + 3};
    for (Ew op : {Ew::kCopy, Ew::kAdd, Ew::kRelu})
        for (oprt_dtype_t dt : all_dtypes())
            for (int64_t n : sizes) check_elementwise(op, dt, {{n}}, {{n}}, {{n}});
}

TEST_F(NvidiaOps, ElementwiseMisaligned) {
    // Same misalignment on every pointer: scalar head, then 16-byte vectors.
    // Different misalignments: narrower vectors or scalar.
    for (Ew op : {Ew::kCopy, Ew::kAdd, Ew::kRelu})
        for (oprt_dtype_t dt : all_dtypes())
            for (int64_t n : {int64_t(1), int64_t(6), int64_t(1001), int64_t(70001)}) {
                check_elementwise(op, dt, {{n}, {}, 1}, {{n}, {}, 1}, {{n}, {}, 1});
                check_elementwise(op, dt, {{n}, {}, 3}, {{n}, {}, 3}, {{n}, {}, 3});
                check_elementwise(op, dt, {{n}, {}, 0}, {{n}, {}, 1}, {{n}, {}, 2});
                check_elementwise(op, dt, {{n}, {}, 2}, {{n}, {}, 0}, {{n}, {}, 2});
            }
}

TEST_F(NvidiaOps, ElementwiseMultiDimContiguous) {
    for (Ew op : {Ew::kCopy, Ew::kAdd, Ew::kRelu})
        for (oprt_dtype_t dt : all_dtypes()) {
            check_elementwise(op, dt, {{257, 129}}, {{257, 129}}, {{257, 129}});
            check_elementwise(op, dt, {{3, 1, 5, 7}}, {{3, 1, 5, 7}}, {{3, 1, 5, 7}});
            check_elementwise(op, dt, {{}}, {{}}, {{}});  // 0-d: one element
        }
}

TEST_F(NvidiaOps, ElementwiseStridedAndBroadcast) {
    for (oprt_dtype_t dt : all_dtypes()) {
        for (Ew op : {Ew::kCopy, Ew::kRelu}) {
            check_elementwise(op, dt, {{64, 33}}, {{64, 33}, {1, 64}});                 // transposed input
            check_elementwise(op, dt, {{100}, {2}}, {{100}});                          // strided output
            check_elementwise(op, dt, {{40, 30}, {1, 40}}, {{40, 30}});                 // transposed output
            check_elementwise(op, dt, {{257, 129}}, {{1, 129}});                        // row broadcast
            check_elementwise(op, dt, {{257, 129}}, {{257, 1}});                        // column broadcast
            check_elementwise(op, dt, {{17, 9}}, {{}});                                 // scalar broadcast
            check_elementwise(op, dt, {{6, 5, 4}}, {{6, 5, 4}, {1, 6 * 4 * 2, 6}});     // permuted, gappy
            check_elementwise(op, dt, {{4097, 33}}, {{4097, 33}, {40, 1}});            // row-padded input
        }
        check_elementwise(Ew::kAdd, dt, {{257, 129}}, {{257, 129}}, {{129}});         // bias
        check_elementwise(Ew::kAdd, dt, {{257, 129}}, {{257, 1}}, {{1, 129}});        // outer sum
        check_elementwise(Ew::kAdd, dt, {{33, 65}}, {{33, 65}, {1, 33}}, {{}});       // transposed + scalar
        check_elementwise(Ew::kAdd, dt, {{100}, {3}}, {{100}, {2}}, {{100}, {}, 1});  // all strided
    }
}

TEST_F(NvidiaOps, ElementwiseInPlace) {
    for (Ew op : {Ew::kCopy, Ew::kRelu})
        for (oprt_dtype_t dt : all_dtypes()) {
            check_elementwise(op, dt, {{70001}}, {{70001}}, {}, /*in_place=*/true);
            check_elementwise(op, dt, {{1001}, {}, 1}, {{1001}, {}, 1}, {}, true);
            check_elementwise(op, dt, {{64, 33}, {1, 64}}, {{64, 33}, {1, 64}}, {}, true);
        }
}

TEST_F(NvidiaOps, ReluSlopes) {
    for (oprt_dtype_t dt : all_dtypes())
        for (float slope : {0.0f, 0.01f, -0.5f, 1.0f, 3.0f}) check_elementwise(Ew::kRelu, dt, {{1000}}, {{1000}}, {}, false, slope);
}

TEST_F(NvidiaOps, ElementwiseNonDefaultStream) {
    cudaStream_t s;
    NVT_CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (oprt_dtype_t dt : all_dtypes()) check_elementwise(Ew::kAdd, dt, {{12345}}, {{12345}}, {{12345}}, false, 0, s);
    NVT_CUDA_OK(cudaStreamSynchronize(s));
    NVT_CUDA_OK(cudaStreamDestroy(s));
}

// ---- reduce_sum -------------------------------------------------------------------

TEST_F(NvidiaOps, ReduceSumRowsShort) {
    // Sub-warp and warp per row: up to 1024 (f32) / 2048 (16-bit) columns.
    for (oprt_dtype_t dt : all_dtypes())
        for (int64_t L : {1, 2, 3, 4, 5, 8, 9, 17, 31, 32, 33, 64, 100, 128, 129, 255, 1000, 1024, 1025, 2048})
            check_reduce_sum(dt, {{37, L}}, 1);
}

TEST_F(NvidiaOps, ReduceSumRowsManyRows) {
    for (oprt_dtype_t dt : all_dtypes()) {
        check_reduce_sum(dt, {{65536, 128}}, 1);
        check_reduce_sum(dt, {{70000, 3}}, -1);
        check_reduce_sum(dt, {{1000, 2049}}, 1);  // block per row (16-bit: just past the warp limit)
        check_reduce_sum(dt, {{600, 5000}}, 1);   // block per row
    }
}

TEST_F(NvidiaOps, ReduceSumRowsLongAndSplit) {
    for (oprt_dtype_t dt : all_dtypes()) {
        check_reduce_sum(dt, {{3, 5000}}, 1);           // few rows, below the split minimum: block per row
        check_reduce_sum(dt, {{100, 20000}}, 1);        // f32: split in a few chunks
        check_reduce_sum(dt, {{2, 1 << 20}}, 1);        // split
        check_reduce_sum(dt, {{1 << 22}}, 0);           // sum of everything: split over the whole GPU
        check_reduce_sum(dt, {{3 * (1 << 20) + 7}}, 0); // odd length
        check_reduce_sum(dt, {{1, 3 * (1 << 20) + 7}}, 1, /*keepdims=*/true);
        check_reduce_sum(dt, {{2, 1 << 20}}, 1, false, Fill::kUniform);
    }
}

TEST_F(NvidiaOps, ReduceSumRowsMisalignedAndStridedOuter) {
    for (oprt_dtype_t dt : all_dtypes()) {
        check_reduce_sum(dt, {{37, 1000}, {}, 1}, 1);                      // rows start off 16-byte boundaries
        check_reduce_sum(dt, {{5, 1 << 18}, {}, 3}, 1);                   // split, misaligned
        check_reduce_sum(dt, {{4, 6, 50}, {700, 100, 1}}, 2);             // outer dims that do not merge
        check_reduce_sum(dt, {{4, 6, 50}, {700, 100, 1}}, 2, true, Fill::kIntegers, {12, 2, 1}, 1);  // gappy out
        check_reduce_sum(dt, {{8, 3000}, {3001, 1}}, 1);                   // padded rows
    }
}

TEST_F(NvidiaOps, ReduceSumInnerAxis) {
    for (oprt_dtype_t dt : all_dtypes()) {
        check_reduce_sum(dt, {{7, 3}}, 0);
        check_reduce_sum(dt, {{1000, 37}}, 0);             // odd inner: scalar columns, split along the axis
        check_reduce_sum(dt, {{65536, 128}}, 0);           // first axis: vector columns, split
        check_reduce_sum(dt, {{100000, 8}}, 0);            // narrow inner, long axis
        check_reduce_sum(dt, {{3, 500, 40}}, 1);           // middle axis
        check_reduce_sum(dt, {{3, 500, 40}}, 1, true);     // keepdims
        check_reduce_sum(dt, {{8, 1 << 21}}, 0);           // wide inner: enough tiles, no split
        check_reduce_sum(dt, {{1000, 64}, {}, 1}, 0);      // misaligned: scalar fallback at run time
        check_reduce_sum(dt, {{300, 64}, {128, 1}}, 0);    // padded rows
        check_reduce_sum(dt, {{2, 1000, 3, 16}}, 1);       // outer and inner both > 1
        check_reduce_sum(dt, {{65536, 128}}, 0, false, Fill::kUniform);
    }
}

TEST_F(NvidiaOps, ReduceSumStridedAxis) {
    for (oprt_dtype_t dt : all_dtypes()) {
        // inner == 1 with an axis stride != 1 (the output is gappy so nothing is dense).
        check_reduce_sum(dt, {{140000, 4}, {1, 140000}}, 1, false, Fill::kIntegers, {2});  // thread per output
        check_reduce_sum(dt, {{64, 300}, {1, 64}}, 1, false, Fill::kIntegers, {2});        // tile, one block per output
        check_reduce_sum(dt, {{4, 100000}, {1, 4}}, 1, false, Fill::kIntegers, {2});       // tile, split
        check_reduce_sum(dt, {{40, 30}, {1, 40}}, 1);                                      // transposed input
        check_reduce_sum(dt, {{40, 30}, {1, 40}}, 0);
    }
}

TEST_F(NvidiaOps, ReduceSumEmptyAndScalar) {
    for (oprt_dtype_t dt : all_dtypes()) {
        check_reduce_sum(dt, {{3, 0}}, 1);     // empty axis: zeros
        check_reduce_sum(dt, {{0, 5}}, 0);     // empty axis, inner run
        check_reduce_sum(dt, {{0, 5}}, 1);     // empty output: nothing runs
        check_reduce_sum(dt, {{2, 0, 3}}, 1, true);
        check_reduce_sum(dt, {{}}, 0);         // 0-d input
        check_reduce_sum(dt, {{1}}, 0);
    }
}

// ---- softmax ----------------------------------------------------------------------

TEST_F(NvidiaOps, SoftmaxRowsInRegisters) {
    // Sub-warp (<= 64 f32 / 128 16-bit columns) and warp (<= 1024) per row,
    // every columns-per-lane variant, odd lengths (misaligned rows).
    for (oprt_dtype_t dt : all_dtypes())
        for (int64_t L : {1, 2, 3, 4, 5, 8, 16, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 500, 511,
                          512, 513, 1000, 1023, 1024})
            check_softmax(dt, {{37, L}}, 1);
}

TEST_F(NvidiaOps, SoftmaxRowsPastAWarp) {
    // Rows past a warp: a block a row in registers, then the longer rows' kernels.
    for (oprt_dtype_t dt : all_dtypes())
        for (int64_t L : {1025, 2048, 4097, 16387, 50000}) check_softmax(dt, {{5, L}}, -1);
}

TEST_F(NvidiaOps, SoftmaxRowsStreaming) {
    for (oprt_dtype_t dt : all_dtypes()) {
        // Beyond shared memory (f32 > ~57K, 16-bit > ~115K columns), enough
        // rows for one block per row: two reads, one write, no workspace.
        check_softmax(dt, {{300, dt == OPRT_DTYPE_F32 ? 60001 : 120001}}, 1);
        // Few long rows: split over blocks with workspace stats.
        check_softmax(dt, {{1, 1 << 20}}, 1);
        check_softmax(dt, {{3, 300007}}, 1);
        check_softmax(dt, {{2, 1 << 20}, {}, 1}, 1);  // misaligned input and output
    }
}

TEST_F(NvidiaOps, SoftmaxSpecialValues) {
    // Rows of all -inf give NaN; a NaN or +inf makes its row NaN; -inf among
    // finite values is 0. In every row path and the strided ones.
    for (oprt_dtype_t dt : all_dtypes()) {
        for (int64_t L : {1, 3, 40, 128, 1000, 3000})
            check_softmax(dt, {{6, L}}, 1, /*specials=*/true);
        check_softmax(dt, {{300, dt == OPRT_DTYPE_F32 ? 60001 : 120001}}, 1, true);
        check_softmax(dt, {{4, 300007}}, 1, true);
        check_softmax(dt, {{100, 6}}, 0, true);
        check_softmax(dt, {{20000, 8}}, 0, true);
    }
}

TEST_F(NvidiaOps, SoftmaxStrided) {
    for (oprt_dtype_t dt : all_dtypes()) {
        check_softmax(dt, {{1000, 37}}, 0);              // few slices: tile kernel
        check_softmax(dt, {{4, 50, 300}}, 1);            // middle axis
        check_softmax(dt, {{30, 100000}}, 0);            // many slices: thread per slice
        check_softmax(dt, {{64, 100}, {1, 64}}, 1);      // strided last axis: tile, one slice per block
        check_softmax(dt, {{2, 5000, 3}}, 1);            // long axis, narrow inner
        check_softmax(dt, {{37, 129}}, 1, false, {1, 37}); // dense input, transposed output
        check_softmax(dt, {{6, 7, 9}, {1, 6 * 9, 6}}, 2); // permuted input
    }
}

TEST_F(NvidiaOps, SoftmaxScalarAndOuterDims) {
    for (oprt_dtype_t dt : all_dtypes()) {
        check_softmax(dt, {{}}, 0);
        check_softmax(dt, {{4, 6, 50}, {700, 100, 1}}, 2);
        check_softmax(dt, {{4, 6, 2000}, {14000, 2000, 1}}, -1);
        check_softmax(dt, {{4, 6, 1000}, {7000, 1000, 1}}, -1);  // warp rows over two outer dims
    }
}

TEST_F(NvidiaOps, NonDefaultStreamForAxisOps) {
    cudaStream_t s;
    NVT_CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (oprt_dtype_t dt : all_dtypes()) {
        check_reduce_sum(dt, {{1 << 20}}, 0, false, Fill::kIntegers, {}, 0, s);
        check_softmax(dt, {{2, 1 << 20}}, 1, false, {}, 0, s);
    }
    NVT_CUDA_OK(cudaStreamSynchronize(s));
    NVT_CUDA_OK(cudaStreamDestroy(s));
}

}  // namespace
}  // namespace nvt
