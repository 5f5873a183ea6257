// reduce_sum kernels (ops/reduce_sum/nvidia/rows.cuh, inner.cuh) launched directly, in
// the geometries camp_reduce_sum_bench times, beyond the ones the plan picks
// for the shapes of plan_paths_test.cc:
//   16 vectors in flight a thread (kBatch = 16) in the block, split and
//     cluster row kernels;
//   inner tiles of any width and height, in one pass or two (the axis in
//     chunks, their partial rows added by a second tile pass, as the plan does),
//     with 4 rows in flight a thread, and flight tiles (8 or 16) in the same geometries;
//   the sweep over all elements, its P partials added by the row kernel;
//   flight warps (G rows a warp, R in flight) over short and longer axes,
//     padded axis strides, columns that fill no whole warp;
//   the column sweep over tall narrow inputs (inner runs of 1 to 32 vectors),
//     each column's P partials added by the row kernel.
// Rows of odd lengths, rows off 16-byte boundaries (heads peeled), padded row
// strides, outputs with gaps; chunks that do not divide the axis; special values
// (inf, NaN); each output checked against a float64 reference, unwritten
// outputs caught by the NaN poison, storage between outputs checked untouched.
// Skips without a GPU.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "op_cases.h"
#include "ops/reduce_sum/nvidia/inner.cuh"
#include "ops/reduce_sum/nvidia/rows.cuh"

// Plain <<<>>> launches here (gpu::overlapped_launch_allowed, which the
// kernel headers declare, is defined once for this binary in
// softmax_rows_registers_test.cu).

namespace nvt {
namespace {

namespace rk = oprt::reduce_sum::gpu_kernels;
using oprt::gpu::OuterIndex;

class NvidiaReduceSumKernels : public ::testing::Test {
protected:
    void SetUp() override { NVT_SKIP_WITHOUT_CUDA(); }
};

// Calls f(T{}) with the device type of dt.
template <typename F>
void with_type(oprt_dtype_t dt, F f) {
    switch (dt) {
    case OPRT_DTYPE_F32: f(float{}); break;
    case OPRT_DTYPE_F16: f(__half{}); break;
    case OPRT_DTYPE_BF16: f(__nv_bfloat16{}); break;
    }
}

// Checks out[out_off(j)] against want[j] and the gaps of out against the poison.
void expect_sums(const Tensor &out, const std::vector<int64_t> &out_off, const std::vector<double> &want,
                 const std::string &what) {
    const Tol t = rounding_tol(out.dtype);
    std::vector<char> is_elem(size_t(out.storage_elems()), 0);
    int failures = 0;
    for (size_t j = 0; j < want.size(); ++j) {
        is_elem[size_t(out_off[j])] = 1;
        const double got = out.get(out_off[j]);
        if (!close(got, want[j], t.rtol, t.atol) && ++failures <= 5)
            ADD_FAILURE() << what << ": output " << j << " = " << got << ", want " << want[j];
    }
    if (failures > 5) ADD_FAILURE() << what << ": " << failures << " failures";
    expect_untouched_gaps(out, is_elem, what);
}

// ---- Rows ----------------------------------------------------------------------------

enum class RowForm { kBlock, kSplitTwoPass, kCluster };

// Inputs are small integers (their f32 sums are exact: only the output's
// rounding is allowed), with inf and NaN planted in some sums for `specials`.
//
// `rows` rows of L elements, row r at offset + r * row_stride; output r at
// 1 + 2 * r (gaps between outputs). The row kernel `form` with `threads`
// threads, kBatch vectors in flight, `chunks` chunks a row where it splits.
template <typename T, int kBatch>
void check_rows(RowForm form, oprt_dtype_t dt, int64_t rows, int64_t L, int64_t row_stride, int64_t offset,
                int threads, int64_t chunks, bool specials = false) {
    const std::string what = std::string("rows ") + dtype_name(dt) + " form " + std::to_string(int(form)) + " b" +
                             std::to_string(kBatch) + " rows " + std::to_string(rows) + " L " + std::to_string(L) +
                             " stride " + std::to_string(row_stride) + " offset " + std::to_string(offset) + " t" +
                             std::to_string(threads) + " chunks " + std::to_string(chunks) +
                             (specials ? " specials" : "");
    SCOPED_TRACE(what);
    Tensor in, out;
    make_tensor(in, dt, {offset + (rows - 1) * row_stride + L}, {}, 0, Fill::kIntegers, 7);
    make_tensor(out, dt, {2 * rows + 1}, {}, 0, Fill::kPoison);
    if (::testing::Test::HasFatalFailure()) return;
    if (specials) {  // row 0: +inf; row 1: a NaN; row 2: +inf and -inf (NaN)
        const float inf = std::numeric_limits<float>::infinity();
        if (rows > 0) in.set(offset + L / 2, inf);
        if (rows > 1) in.set(offset + row_stride + L - 1, std::nanf(""));
        if (rows > 2) in.set(offset + 2 * row_stride, inf), in.set(offset + 2 * row_stride + L - 1, -inf);
        upload(in);
    }
    std::vector<double> want(size_t(rows), 0.0);
    std::vector<int64_t> out_off(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
        for (int64_t k = 0; k < L; ++k) want[size_t(r)] += in.get(offset + r * row_stride + k);
        out_off[size_t(r)] = 1 + 2 * r;
    }
    OuterIndex ix;
    ix.ndim = 1;
    ix.shape[0] = rows;
    ix.in_strides[0] = row_stride;
    ix.out_strides[0] = 2;
    const T *x = static_cast<const T *>(in.data()) + offset;
    T *y = static_cast<T *>(out.data()) + 1;
    const int64_t chunk_len = (L + chunks - 1) / chunks;
    const int64_t nchunks = (L + chunk_len - 1) / chunk_len;
    DeviceBuffer partial(size_t(rows * nchunks) * sizeof(float));
    float *p = static_cast<float *>(partial.get());
    {
        switch (form) {
        case RowForm::kBlock:
            rk::reduce_rows_block_kernel<T, T, kBatch><<<unsigned(rows), threads>>>(x, y, rows, L, ix);
            break;
        case RowForm::kSplitTwoPass: {
            rk::reduce_rows_split_kernel<T, kBatch>
                <<<unsigned(rows * nchunks), threads>>>(x, p, rows, L, nchunks, chunk_len, ix);
            OuterIndex fix = ix;  // the partials of a row: dense, nchunks apart
            fix.in_row_stride = nchunks;
            rk::reduce_rows_block_kernel<float, T><<<unsigned(rows), 128>>>(p, y, rows, nchunks, fix);
            break;
        }
        case RowForm::kCluster: {
            cudaLaunchConfig_t config{};
            config.gridDim = dim3(unsigned(rows * nchunks), 1, 1);
            config.blockDim = dim3(unsigned(threads), 1, 1);
            cudaLaunchAttribute attr[1];
            attr[0].id = cudaLaunchAttributeClusterDimension;
            attr[0].val.clusterDim.x = unsigned(nchunks);
            attr[0].val.clusterDim.y = 1;
            attr[0].val.clusterDim.z = 1;
            config.attrs = attr;
            config.numAttrs = 1;
            NVT_CUDA_OK(cudaLaunchKernelEx(&config, &rk::reduce_rows_cluster_kernel<T, T, kBatch>, x, y, rows, L,
                                           chunk_len, ix));
            break;
        }
        }
        NVT_CUDA_OK(cudaGetLastError());
    }
    download(out);
    expect_sums(out, out_off, want, what);
}

// The lengths and layouts every row form takes.
template <typename T, int kBatch>
void check_row_form(RowForm form, oprt_dtype_t dt) {
    const int64_t W = oprt::gpu::vector_width<T>();
    const bool split = form != RowForm::kBlock;
    for (int threads : {128, 256, 512}) {
        const int64_t chunks = split ? 5 : 1;
        // Whole vectors, batches of kBatch and the tail of fours and threes.
        const int64_t whole = threads * W * (kBatch * chunks * 2 + 7);
        check_rows<T, kBatch>(form, dt, 3, whole, whole, 0, threads, chunks);
        // Odd lengths, padded odd row strides (every row off a boundary), an offset start.
        check_rows<T, kBatch>(form, dt, 4, 100003, 100011, 3, threads, chunks);
        check_rows<T, kBatch>(form, dt, 5, 777, 781, 1, threads, split ? 3 : 1);  // chunks shorter than a thread's vector
        check_rows<T, kBatch>(form, dt, 3, 65536 + 3, 65536 + 8, 0, threads, chunks, /*specials=*/true);
    }
    if (split) {
        check_rows<T, kBatch>(form, dt, 1, 1 << 20, 1 << 20, 0, 512, form == RowForm::kCluster ? 8 : 64);
        check_rows<T, kBatch>(form, dt, 2, 300001, 300001, 1, 256, form == RowForm::kCluster ? 7 : 300);
    }
}

template <int kBatch>
void check_rows_all_dtypes(RowForm form) {
    for (oprt_dtype_t dt : all_dtypes())
        with_type(dt, [&](auto t) {
            using T = decltype(t);
            if constexpr (kBatch == 8 || sizeof(T) == 2) check_row_form<T, kBatch>(form, dt);
        });
}

TEST_F(NvidiaReduceSumKernels, RowsSixteenVectorsInFlight) {
    check_rows_all_dtypes<16>(RowForm::kBlock);
    check_rows_all_dtypes<16>(RowForm::kSplitTwoPass);
    int major = 0;
    NVT_CUDA_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    if (major < 9) {
        std::printf("cluster rows: compute capability %d < 9, no thread-block clusters: not run\n", major);
        return;
    }
    check_rows_all_dtypes<16>(RowForm::kCluster);
}

// ---- Sweep ----------------------------------------------------------------------------

// The sum of n elements from `offset` (any: heads peeled), P blocks of
// `threads` and B = 4 vectors a slab, then the row kernel over the P partials;
// the output at index 1 of 3.
template <typename T>
void check_sweep(oprt_dtype_t dt, int64_t n, int64_t offset, int P, int threads, bool specials = false) {
    const std::string what = std::string("sweep ") + dtype_name(dt) + " n " + std::to_string(n) + " offset " +
                             std::to_string(offset) + " p" + std::to_string(P) + " t" + std::to_string(threads) +
                             (specials ? " specials" : "");
    SCOPED_TRACE(what);
    Tensor in, out;
    make_tensor(in, dt, {offset + n}, {}, 0, Fill::kIntegers, 3);
    make_tensor(out, dt, {3}, {}, 0, Fill::kPoison);
    if (::testing::Test::HasFatalFailure()) return;
    if (specials) {
        in.set(offset + n - 1, std::numeric_limits<float>::infinity());
        upload(in);
    }
    double want = 0;
    for (int64_t k = 0; k < n; ++k) want += in.get(offset + k);
    DeviceBuffer partial(size_t(P) * sizeof(float));
    float *p = static_cast<float *>(partial.get());
    rk::reduce_sweep_kernel<T, 4><<<unsigned(P), unsigned(threads)>>>(static_cast<const T *>(in.data()) + offset, p, n);
    NVT_CUDA_OK(cudaGetLastError());
    OuterIndex fix;
    fix.ndim = 1;
    fix.shape[0] = 1;
    fix.in_row_stride = P;
    rk::reduce_rows_block_kernel<float, T><<<1, 128>>>(p, static_cast<T *>(out.data()) + 1, 1, P, fix);
    NVT_CUDA_OK(cudaGetLastError());
    download(out);
    expect_sums(out, {1}, {want}, what);
}

TEST_F(NvidiaReduceSumKernels, Sweep) {
    for (oprt_dtype_t dt : all_dtypes())
        with_type(dt, [&](auto t) {
            using T = decltype(t);
            check_sweep<T>(dt, 1 << 20, 0, 132, 256);
            check_sweep<T>(dt, (1 << 22) + 5, 3, 264, 512);       // off a boundary, a tail
            check_sweep<T>(dt, 1000003, 1, 100, 256, /*specials=*/true);
            check_sweep<T>(dt, 5, 1, 8, 256);                     // no whole vector
            check_sweep<T>(dt, 4096 + 7, 2, 132, 512);            // no whole slab
        });
}

// ---- Inner tiles ----------------------------------------------------------------------

// `outer` blocks of an L x inner axis (block o at offset + o * outer_stride, row k
// of it k * inner further); out[o, i] at o * (inner + 3) + i (gaps between the
// outer rows). The inner tile with V-wide columns, bx x by threads, the axis
// in `chunks` chunks (more than one: partial rows, then a second tile pass over
// them, 4-wide float columns where the inner run allows, as the plan's).
template <typename T, int V, int R = 4>
void check_tile(oprt_dtype_t dt, int64_t outer, int64_t L, int64_t inner, int64_t offset, int bx, int by,
                int64_t chunks, bool specials = false) {
    const int64_t outer_stride = L * inner + 2 * V;  // still a multiple of V
    const int64_t out_stride = inner + 3;
    const std::string what = std::string(R != 4 ? "flight r" + std::to_string(R) + " " : "inner tile ") + dtype_name(dt) + " V" + std::to_string(V) +
                             " outer " + std::to_string(outer) + " L " + std::to_string(L) + " inner " +
                             std::to_string(inner) + " offset " + std::to_string(offset) + " bx " + std::to_string(bx) +
                             " by " + std::to_string(by) + " chunks " + std::to_string(chunks) +
                             (specials ? " specials" : "");
    SCOPED_TRACE(what);
    Tensor in, out;
    make_tensor(in, dt, {offset + (outer - 1) * outer_stride + L * inner}, {}, 0, Fill::kIntegers, 11);
    make_tensor(out, dt, {outer * out_stride}, {}, 0, Fill::kPoison);
    if (::testing::Test::HasFatalFailure()) return;
    if (specials) {  // column 0: +inf; column 1: a NaN; the last: +inf and -inf (NaN)
        const float inf = std::numeric_limits<float>::infinity();
        in.set(offset + (L / 2) * inner, inf);
        in.set(offset + (L - 1) * inner + 1, std::nanf(""));
        in.set(offset + inner - 1, inf);
        in.set(offset + (L - 1) * inner + inner - 1, -inf);
        upload(in);
    }
    std::vector<double> want(size_t(outer * inner), 0.0);
    std::vector<int64_t> out_off(static_cast<size_t>(outer * inner));
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
            double s = 0;
            for (int64_t k = 0; k < L; ++k) s += in.get(offset + o * outer_stride + k * inner + i);
            want[size_t(o * inner + i)] = s;
            out_off[size_t(o * inner + i)] = o * out_stride + i;
        }
    rk::InnerParams q;
    q.outer = outer;
    q.inner = inner;
    q.L = L;
    q.S = inner;
    q.chunk_len = (L + chunks - 1) / chunks;
    q.chunks = (L + q.chunk_len - 1) / q.chunk_len;
    q.bx = bx;
    q.by = by;
    q.tiles = ((inner + V - 1) / V + bx - 1) / bx;
    q.ix.ndim = 1;
    q.ix.shape[0] = outer;
    q.ix.in_strides[0] = outer_stride;
    q.ix.out_strides[0] = out_stride;
    DeviceBuffer partial(size_t(q.chunks * outer * inner) * sizeof(float));
    float *p = q.chunks > 1 ? static_cast<float *>(partial.get()) : nullptr;
    const T *x = static_cast<const T *>(in.data()) + offset;
    T *y = static_cast<T *>(out.data());
    const dim3 grid(unsigned(outer * q.tiles), unsigned(q.chunks));
    const size_t smem = size_t(bx * by) * V * sizeof(float);
    rk::reduce_inner_tile_kernel<T, T, V, R><<<grid, unsigned(bx * by), smem>>>(x, y, p, q);
    NVT_CUDA_OK(cudaGetLastError());
    if (p != nullptr) {  // partial is [chunks][outer][inner]: reduce its first axis
        rk::InnerParams f = q;
        f.L = q.chunks;
        f.S = outer * inner;
        f.chunks = 1;
        f.chunk_len = q.chunks;
        f.ix.in_strides[0] = inner;
        f.bx = 16;
        f.by = 8;
        if (inner % 4 == 0) {
            f.tiles = (inner / 4 + f.bx - 1) / f.bx;
            rk::reduce_inner_tile_kernel<float, T, 4>
                <<<unsigned(outer * f.tiles), 128, 128 * 4 * sizeof(float)>>>(p, y, nullptr, f);
        } else {
            f.tiles = (inner + f.bx - 1) / f.bx;
            rk::reduce_inner_tile_kernel<float, T, 1>
                <<<unsigned(outer * f.tiles), 128, 128 * sizeof(float)>>>(p, y, nullptr, f);
        }
        NVT_CUDA_OK(cudaGetLastError());
    }
    download(out);
    expect_sums(out, out_off, want, what);
}

template <typename T>
void check_tiles(oprt_dtype_t dt) {
    constexpr int W = oprt::gpu::vector_width<T>();
    // Vector columns: wide and narrow tiles, tall tiles (a tree) and one row of
    // threads (none), chunks that do not divide the axis, a partial last tile.
    check_tile<T, W>(dt, 1, 144, 1280, 0, 16, 32, 4);
    check_tile<T, W>(dt, 1, 1024, 1024, 0, 32, 16, 16);
    check_tile<T, W>(dt, 1, 1000, 128 * W / 4, 0, 8, 64, 7);
    check_tile<T, W>(dt, 3, 257, 40 * W, 0, 64, 8, 5);  // three outer rows, 40 columns in tiles of 64
    check_tile<T, W>(dt, 2, 333, 24 * W, 0, 32, 1, 9);  // by == 1: no tree
    check_tile<T, W>(dt, 1, 500, 64 * W, 0, 16, 16, 3, /*specials=*/true);
    // Single columns (V = 1: odd inner runs, an input off a vector boundary).
    check_tile<T, 1>(dt, 2, 301, 131, 1, 64, 4, 6);
    check_tile<T, 1>(dt, 1, 97, 37, 0, 32, 8, 2, /*specials=*/true);
    // One pass (chunks == 1), the plan's 16-column tiles (4-wide vectors for
    // 16-bit elements too) and a split 256-byte-row tile.
    check_tile<T, 4>(dt, 1, 144, 1280, 0, 4, 64, 1);
    check_tile<T, 4>(dt, 1, 1024, 1024 + 4, 0, 4, 128, 1, /*specials=*/true);
    check_tile<T, 4>(dt, 2, 77, 52, 0, 4, 64, 1);
    check_tile<T, W>(dt, 1, 4099, 1024, 0, 16, 16, 33);
}

// Flight tiles: 16-byte columns, R rows in flight, chunks shorter and longer
// than one batch, the last batch cut by the chunk's end, outer rows, a tree
// (by > 1) and none.
template <typename T>
void check_flights(oprt_dtype_t dt) {
    constexpr int W = oprt::gpu::vector_width<T>();
    check_tile<T, W, 16>(dt, 1, 65536, 128, 0, 8, 32, 132);        // the plan's tall shape
    check_tile<T, W, 8>(dt, 1, 128, 64 * W * 32, 0, 32, 8, 1);     // the plan's wide shape, 2 batches
    check_tile<T, W, 16>(dt, 1, 128, 64 * W * 32, 0, 32, 8, 1, /*specials=*/true);
    check_tile<T, W, 16>(dt, 3, 1001, 40 * W, 0, 8, 32, 7);        // outer rows, cut batches
    check_tile<T, W, 8>(dt, 2, 333, 24 * W, 0, 32, 1, 9);          // by == 1: no tree
    check_tile<T, W, 16>(dt, 1, 37, 5 * W, 0, 8, 32, 1);           // fewer rows than threads along the axis
}

// ---- Flight warps and the column sweep -----------------------------------------------

// out[i] = sum_k in[offset + k * S + i] for i < inner (an L x inner axis, rows
// S apart, S and inner whole vectors, `offset` whole vectors), by the flight
// warp kernel with G rows a warp, R in flight, `threads` a block, a warp for
// every X = 32 / G columns; the output at element out_offset of
// inner + out_offset + 1 (poisoned around it).
template <typename T, int R, int G>
void check_flight_warp(oprt_dtype_t dt, int64_t L, int64_t inner, int64_t S, int64_t offset, int threads,
                       int64_t out_offset, bool specials = false) {
    constexpr int64_t W = oprt::gpu::vector_width<T>();
    const std::string what = std::string("flight warp ") + dtype_name(dt) + " r" + std::to_string(R) + " g" +
                             std::to_string(G) + " L " + std::to_string(L) + " inner " + std::to_string(inner) +
                             " S " + std::to_string(S) + " offset " + std::to_string(offset) + " t" +
                             std::to_string(threads) + " out offset " +
                             std::to_string(out_offset) + (specials ? " specials" : "");
    SCOPED_TRACE(what);
    Tensor in, out;
    make_tensor(in, dt, {offset + (L - 1) * S + inner}, {}, 0, Fill::kIntegers, 13);
    make_tensor(out, dt, {inner + out_offset + 1}, {}, 0, Fill::kPoison);
    if (::testing::Test::HasFatalFailure()) return;
    if (specials) {  // column 0: +inf; column 1: a NaN; the last: +inf and -inf (NaN)
        const float inf = std::numeric_limits<float>::infinity();
        in.set(offset + (L / 2) * S, inf);
        in.set(offset + (L - 1) * S + 1, std::nanf(""));
        in.set(offset + inner - 1, inf);
        in.set(offset + (L - 1) * S + inner - 1, -inf);
        upload(in);
    }
    std::vector<double> want(size_t(inner), 0.0);
    std::vector<int64_t> out_off(static_cast<size_t>(inner));
    for (int64_t i = 0; i < inner; ++i) {
        for (int64_t k = 0; k < L; ++k) want[size_t(i)] += in.get(offset + k * S + i);
        out_off[size_t(i)] = out_offset + i;
    }
    const int64_t warps = (inner / W + oprt::dev::kWarpSize / G - 1) / (oprt::dev::kWarpSize / G);
    const int64_t per_block = threads / oprt::dev::kWarpSize;
    const int64_t blocks = (warps + per_block - 1) / per_block;
    rk::reduce_inner_flight_warp_kernel<T, R, G><<<unsigned(blocks), unsigned(threads)>>>(
        static_cast<const T *>(in.data()) + offset, static_cast<T *>(out.data()) + out_offset, L, S, inner);
    NVT_CUDA_OK(cudaGetLastError());
    download(out);
    expect_sums(out, out_off, want, what);
}

template <typename T>
void check_flight_warps(oprt_dtype_t dt) {
    constexpr int64_t W = oprt::gpu::vector_width<T>();
    // The plan's geometry (G = 8, R = 16, 256 threads), at its axis lengths
    // and past them (several rounds), columns that fill no whole warp.
    for (int64_t L : {int64_t(128), int64_t(127), int64_t(64), int64_t(300)})
        check_flight_warp<T, 16, 8>(dt, L, 37 * W, 37 * W, 0, 256, 0);
    check_flight_warp<T, 16, 8>(dt, 128, 4099 * W, 4099 * W, 0, 256, 3);  // output off 16 bytes: scalar stores
    check_flight_warp<T, 16, 8>(dt, 128, 1024 * W, 1030 * W, 2 * W, 256, 1, /*specials=*/true);  // padded rows
    check_flight_warp<T, 16, 8>(dt, 100, 1000 * W, 1000 * W, 0, 256, 0);
    // Other warp shapes: a row or many a lane, 8 in flight.
    check_flight_warp<T, 8, 4>(dt, 33, 129 * W, 131 * W, W, 128, 0);
    check_flight_warp<T, 16, 16>(dt, 7, 65 * W, 65 * W, 0, 512, 0);
    check_flight_warp<T, 8, 32>(dt, 1000, 9 * W, 9 * W, 0, 256, 0, /*specials=*/true);
    check_flight_warp<T, 16, 1>(dt, 5, 300 * W, 300 * W, 0, 64, 0);  // G = 1: no shuffle
}

// The sum over the first axis of a dense L x inner input (from `offset`, whole
// vectors), inner / V a power of two dividing `threads`: the column sweep with
// P blocks and B vectors a slab, then the row kernel over each column's P
// partials (as the plan's second pass); out[i] at 1 + 2 * i (gaps between).
template <typename T, int B>
void check_column_sweep(oprt_dtype_t dt, int64_t L, int64_t inner, int64_t offset, int P, int threads,
                        bool specials = false) {
    constexpr int64_t W = oprt::gpu::vector_width<T>();
    const std::string what = std::string("column sweep ") + dtype_name(dt) + " b" + std::to_string(B) + " L " +
                             std::to_string(L) + " inner " + std::to_string(inner) + " offset " +
                             std::to_string(offset) + " p" + std::to_string(P) + " t" + std::to_string(threads) +
                             (specials ? " specials" : "");
    SCOPED_TRACE(what);
    Tensor in, out;
    make_tensor(in, dt, {offset + L * inner}, {}, 0, Fill::kIntegers, 17);
    make_tensor(out, dt, {2 * inner + 1}, {}, 0, Fill::kPoison);
    if (::testing::Test::HasFatalFailure()) return;
    if (specials) {  // column 0: +inf; column 1: a NaN (in the last rows); the last: +inf and -inf (NaN)
        const float inf = std::numeric_limits<float>::infinity();
        in.set(offset + (L / 2) * inner, inf);
        in.set(offset + (L - 1) * inner + 1, std::nanf(""));
        in.set(offset + inner - 1, inf);
        in.set(offset + (L - 1) * inner + inner - 1, -inf);
        upload(in);
    }
    std::vector<double> want(size_t(inner), 0.0);
    std::vector<int64_t> out_off(static_cast<size_t>(inner));
    for (int64_t i = 0; i < inner; ++i) {
        for (int64_t k = 0; k < L; ++k) want[size_t(i)] += in.get(offset + k * inner + i);
        out_off[size_t(i)] = 1 + 2 * i;
    }
    DeviceBuffer partial(size_t(inner * P) * sizeof(float));
    float *p = static_cast<float *>(partial.get());
    const int64_t rows = threads / std::max<int64_t>(inner / W, oprt::dev::kWarpSize);
    const size_t smem = size_t(rows * inner) * sizeof(float);
    rk::reduce_inner_column_sweep_kernel<T, B>
        <<<unsigned(P), unsigned(threads), smem>>>(static_cast<const T *>(in.data()) + offset, p, L, int(inner));
    NVT_CUDA_OK(cudaGetLastError());
    OuterIndex fix;  // column i's P partials: row i
    fix.ndim = 1;
    fix.shape[0] = inner;
    fix.in_row_stride = P;
    fix.out_strides[0] = 2;
    T *y = static_cast<T *>(out.data()) + 1;
    rk::reduce_rows_block_kernel<float, T><<<unsigned(inner), 128>>>(p, y, inner, P, fix);
    NVT_CUDA_OK(cudaGetLastError());
    download(out);
    expect_sums(out, out_off, want, what);
}

template <typename T>
void check_column_sweeps(oprt_dtype_t dt) {
    constexpr int64_t W = oprt::gpu::vector_width<T>();
    // The plan's geometry (128 elements, 512 threads, B = 4, one block a SM),
    // whole slabs and an axis whose last vectors fill no slab.
    check_column_sweep<T, 4>(dt, 65536, 128, 0, 132, 512);
    check_column_sweep<T, 4>(dt, 65539, 128, 0, 132, 512, /*specials=*/true);
    check_column_sweep<T, 4>(dt, 3001, 128, W, 132, 512);  // off the allocation's start, whole vectors
    check_column_sweep<T, 4>(dt, 5, 128, 0, 132, 512);     // no whole slab: the tail only
    // Other widths: a row of 1, 2, a warp's and 2 warps' vectors; other P, B and blocks.
    check_column_sweep<T, 8>(dt, 20001, W, 0, 7, 256);
    check_column_sweep<T, 4>(dt, 20001, 2 * W, 0, 64, 512);
    check_column_sweep<T, 4>(dt, 10007, 32 * W, 0, 132, 256, /*specials=*/true);
    check_column_sweep<T, 8>(dt, 4099, 64 * W, 0, 264, 512);
}

TEST_F(NvidiaReduceSumKernels, FlightWarps) {
    check_flight_warps<float>(OPRT_DTYPE_F32);
    check_flight_warps<__half>(OPRT_DTYPE_F16);
    check_flight_warps<__nv_bfloat16>(OPRT_DTYPE_BF16);
}

TEST_F(NvidiaReduceSumKernels, ColumnSweep) {
    check_column_sweeps<float>(OPRT_DTYPE_F32);
    check_column_sweeps<__half>(OPRT_DTYPE_F16);
    check_column_sweeps<__nv_bfloat16>(OPRT_DTYPE_BF16);
}

TEST_F(NvidiaReduceSumKernels, FlightTiles) {
    check_flights<float>(OPRT_DTYPE_F32);
    check_flights<__half>(OPRT_DTYPE_F16);
    check_flights<__nv_bfloat16>(OPRT_DTYPE_BF16);
}

TEST_F(NvidiaReduceSumKernels, InnerTiles) {
    check_tiles<float>(OPRT_DTYPE_F32);
    check_tiles<__half>(OPRT_DTYPE_F16);
    check_tiles<__nv_bfloat16>(OPRT_DTYPE_BF16);
}

}  // namespace
}  // namespace nvt
