// reduce_sum: which kernel, at which launch shape, is fastest for each bench
// case, next to the library's plan and the fastest of torch and inductor.
//
// For each case (a 2-D input summed over dim 1, dim 0, or all its elements)
// and dtype (f32, f16, bf16) it times, in two conditions,
//   hot   one input replayed (L2-resident where it fits, as a tensor the
//         previous layer just wrote);
//   dram  inputs rotated over >= 240 MiB (at most 4096 sets; a case that reads
//         more has one set: its hot and dram figures are one measurement),
// these candidates (kernels of ops/reduce_sum/nvidia/rows.cuh and inner.cuh, launched here):
//   plan            the library's choice (oprt_execute_reduce_sum; its kernel name);
// rows (dim 1, and all elements as one row):
//   group gG tT     reduce_rows_group_kernel: G lanes a row, T threads a block;
//   block tT bB     reduce_rows_block_kernel: a block of T threads a row, B
//                   16-byte vectors in flight a thread (8 or 16);
//   split tT cC bB two
//                   reduce_rows_split_kernel: C chunks a row, a block of T
//                   threads a chunk; a second kernel adds the partials (the
//                   plan's rows_split_two_pass);
//   cluster tT cC bB  reduce_rows_cluster_kernel: a cluster of C blocks a row;
// inner (dim 0):
//   tile vV tT bxX cC [two]
//                   reduce_inner_tile_kernel: T threads a block, X of them
//                   across the inner run (V-element column loads: 16 bytes, or
//                   8 on inputs of up to 2 Mi elements), T / X along the
//                   axis, the axis in C chunks (C = 1: one pass, no partials);
//                   "two": the plan's second kernel adds the chunks' partial
//                   rows.
// the library's sweep (all elements), flight tiles, flight warps and column
// sweep (dim 0) began here as candidates and are timed through the plan row
// only (--family plan: the plan row alone).
//
// Every candidate first runs twice on random data, the output poisoned with NaN
// before the second run, and its sums are checked against a float64 reference; a candidate that
// fails is reported and not timed. Times: launches captured in a CUDA graph, the
// median of several replays (graph_timing.cuh); launches go through
// gpu::launch_overlapped, as the library's do.
//
// Output, per case, dtype and condition: the plan's kernel and time, the best
// candidate and its time, and the fastest of torch and inductor in the
// benchmark run of 2026-12-05 (H200, tests/run_ops.py --op reduce_sum --mode
// bench, measured there, not here); then every candidate's time. Closing:
// a summary table, the cases where a candidate beats the plan (as entries to
// paste into a plan table), and how the 16-vector forms compare with their
// 8-vector twins at equal launch shapes.
//
// Build (from the repository root, after building the NVIDIA library in build-nvidia):
//   cmake --build build-nvidia --target camp_reduce_sum_bench -j2
//   build-nvidia/tests/cpp/nvidia/camp_reduce_sum_bench [--dtype f32,f16,bf16]
//       [--case 144x1280:0,1024x1024:all,...] [--all-cases] [--family tile,split,...]
// (--case takes ROWSxCOLS:DIM with DIM 1, 0 or all; 1x4096:all is the 2^12 case;
// shapes outside the record run without a peer figure.
// By default the cases that lost to torch or inductor on 2026-12-05 run;
// --all-cases runs every case of that benchmark; --family times only the
// listed families, the plan always.)
// It needs libcamp_ops.so at run time (LD_LIBRARY_PATH=<folder holding it>).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "operator_runtime/api.h"
#include "operator_runtime/ops/reduce_sum.h"
#include "ops/reduce_sum/nvidia/inner.cuh"
#include "ops/reduce_sum/nvidia/rows.cuh"
#include "tests/cpp/nvidia/bench/sweep_common.cuh"
#include "tests/cpp/nvidia/bench/graph_timing.cuh"

namespace rs = oprt::reduce_sum::gpu_kernels;
using oprt::gpu::ceil_div;
using oprt::gpu::clamp64;
using oprt::gpu::next_pow2;
using oprt::gpu::OuterIndex;

// gpu::launch_overlapped asks this (the library's own copy is internal to it):
// overlapped launches on sm_90 and later, as the library makes them.
namespace oprt::gpu {
bool overlapped_launch_allowed() {
    static const bool allowed = [] {
        int major = 0;
        return cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess && major >= 9;
    }();
    return allowed;
}
}  // namespace oprt::gpu

namespace {

constexpr int64_t kDramBytes = int64_t(240) << 20;  // bytes the dram condition rotates over, at least
constexpr int64_t kMaxSets = 4096;
constexpr int kHotLaunches = 20, kHotReplays = 7;
constexpr int kDramMinLaunches = 20, kDramReplays = 4;
constexpr int kAll = -1;  // dim of a case that sums every element

// The fastest of torch and torch.compile (inductor) on 2026-12-05 (H200,
// docs/perf/peers-2026-12-05-h200/reduce_sum-results.json), and our time then, us.
struct Peer {
    int64_t rows, cols;
    int dim;
    const char *dtype;
    double ours_dram, ours_hot, peer_dram, peer_hot;
};
const Peer kPeers[] = {
    {1, 4096, -1, "bf16", 1.66, 1.33, 1.52, 1.4},
    {1, 4096, -1, "f32", 1.73, 1.31, 1.64, 1.5},
    {1, 4096, -1, "f16", 1.6, 1.31, 1.55, 1.41},
    {144, 1280, -1, "bf16", 3.45, 3.01, 3.48, 2.91},
    {144, 1280, -1, "f32", 3.4, 3.07, 3.6, 3.11},
    {144, 1280, -1, "f16", 3.38, 2.91, 3.53, 2.96},
    {144, 1280, 1, "bf16", 1.8, 1.52, 1.82, 1.52},
    {144, 1280, 1, "f32", 1.88, 1.83, 1.89, 1.51},
    {144, 1280, 1, "f16", 1.78, 1.56, 1.85, 1.53},
    {144, 1280, 0, "bf16", 2.77, 2.44, 3.23, 3.0},
    {144, 1280, 0, "f32", 2.73, 2.35, 3.28, 2.88},
    {144, 1280, 0, "f16", 2.76, 2.4, 3.2, 2.84},
    {1024, 1024, -1, "bf16", 3.18, 2.63, 3.55, 3.13},
    {1024, 1024, -1, "f32", 3.82, 3.18, 4.09, 3.4},
    {1024, 1024, -1, "f16", 3.15, 2.61, 3.59, 3.12},
    {1024, 1024, 1, "bf16", 2.29, 2.21, 2.34, 1.79},
    {1024, 1024, 1, "f32", 2.88, 2.25, 2.82, 1.97},
    {1024, 1024, 1, "f16", 2.17, 1.99, 2.41, 1.93},
    {1024, 1024, 0, "bf16", 3.86, 3.44, 4.8, 4.35},
    {1024, 1024, 0, "f32", 4.0, 3.34, 5.24, 4.43},
    {1024, 1024, 0, "f16", 3.84, 3.28, 4.79, 4.4},
    {65536, 128, -1, "bf16", 6.57, 4.69, 6.68, 4.82},
    {65536, 128, -1, "f32", 10.54, 6.74, 10.5, 6.85},
    {65536, 128, -1, "f16", 6.63, 4.66, 6.73, 4.91},
    {65536, 128, 1, "bf16", 5.76, 3.86, 6.68, 6.37},
    {65536, 128, 1, "f32", 9.52, 5.91, 9.9, 6.65},
    {65536, 128, 1, "f16", 5.67, 3.72, 5.88, 3.7},
    {65536, 128, 0, "bf16", 7.72, 5.64, 8.29, 6.39},
    {65536, 128, 0, "f32", 11.46, 7.71, 11.85, 8.4},
    {65536, 128, 0, "f16", 7.77, 5.74, 8.35, 6.42},
    {128, 65536, -1, "bf16", 6.52, 4.51, 6.81, 5.01},
    {128, 65536, -1, "f32", 10.52, 6.82, 10.41, 6.78},
    {128, 65536, -1, "f16", 6.59, 4.58, 6.79, 4.99},
    {128, 65536, 1, "bf16", 6.06, 4.11, 6.83, 4.98},
    {128, 65536, 1, "f32", 9.54, 5.87, 10.35, 6.75},
    {128, 65536, 1, "f16", 6.03, 4.12, 6.83, 4.95},
    {128, 65536, 0, "bf16", 6.05, 3.52, 6.42, 4.51},
    {128, 65536, 0, "f32", 9.83, 5.87, 9.73, 5.57},
    {128, 65536, 0, "f16", 6.07, 3.6, 6.4, 4.55},
    {65536, 1024, -1, "bf16", 33.06, 32.99, 32.7, 32.76},
    {65536, 1024, -1, "f32", 62.84, 62.84, 61.83, 61.83},
    {65536, 1024, -1, "f16", 33.1, 33.02, 32.58, 32.64},
    {65536, 1024, 1, "bf16", 32.14, 32.19, 41.1, 41.12},
    {65536, 1024, 1, "f32", 61.66, 61.66, 61.24, 61.24},
    {65536, 1024, 1, "f16", 31.64, 31.7, 41.22, 41.1},
    {65536, 1024, 0, "bf16", 34.49, 34.47, 35.28, 35.31},
    {65536, 1024, 0, "f32", 63.6, 63.6, 64.81, 64.81},
    {65536, 1024, 0, "f16", 34.6, 35.04, 35.44, 35.48},
    {16384, 16384, -1, "bf16", 122.02, 122.02, 121.78, 121.78},
    {16384, 16384, -1, "f32", 239.34, 239.34, 238.79, 238.79},
    {16384, 16384, -1, "f16", 122.72, 122.72, 121.93, 121.93},
    {16384, 16384, 1, "bf16", 119.0, 119.0, 119.37, 119.37},
    {16384, 16384, 1, "f32", 236.2, 236.2, 235.43, 235.43},
    {16384, 16384, 1, "f16", 118.88, 118.88, 118.94, 118.94},
    {16384, 16384, 0, "bf16", 126.22, 126.22, 123.13, 123.13},
    {16384, 16384, 0, "f32", 243.09, 243.09, 240.11, 240.11},
    {16384, 16384, 0, "f16", 126.26, 126.26, 132.58, 132.58},
    {8, 33554432, -1, "bf16", 122.3, 122.3, 121.82, 121.82},
    {8, 33554432, -1, "f32", 239.34, 239.34, 238.79, 238.79},
    {8, 33554432, -1, "f16", 122.75, 122.75, 121.9, 121.9},
    {8, 33554432, 1, "bf16", 123.03, 123.03, 121.82, 121.82},
    {8, 33554432, 1, "f32", 240.05, 240.05, 238.27, 238.27},
    {8, 33554432, 1, "f16", 123.37, 123.37, 121.55, 121.55},
    {8, 33554432, 0, "bf16", 138.42, 138.42, 181.21, 181.21},
    {8, 33554432, 0, "f32", 273.33, 273.33, 304.72, 304.72},
    {8, 33554432, 0, "f16", 138.53, 138.53, 173.71, 173.71},
};
// A case of the record lost when ours was more than 1.01x the peer in either condition.
bool lost(const Peer &p) { return p.ours_dram > 1.01 * p.peer_dram || p.ours_hot > 1.01 * p.peer_hot; }

struct Case {
    int64_t rows, cols;
    int dim;
};
std::string case_name(const Case &c) {
    char s[64];
    std::snprintf(s, sizeof s, "%lldx%lld:%s", (long long)c.rows, (long long)c.cols,
                  c.dim == kAll ? "all" : c.dim == 1 ? "1" : "0");
    return s;
}

cudaStream_t g_stream;
int g_sms = 0;
bool g_list_only = false;  // --list: the candidates, nothing run
std::string g_families;     // --family: the families to time (empty: all); the plan always runs

OuterIndex rows_index(int64_t L) {  // dense rows of length L, one output each
    OuterIndex ix;
    ix.ndim = 1;
    ix.shape[0] = int64_t(1) << 40;
    ix.in_strides[0] = L;
    ix.out_strides[0] = 1;
    return ix;
}

// ---- Candidates -----------------------------------------------------------------------

enum Family { kPlan, kGroup, kBlock, kSplit, kCluster, kTile };
const char *family_name(Family f);

struct Candidate {
    std::string name;
    Family family = kPlan;
    int threads = 0;
    int lanes = 0;        // group: lanes a row; tile: bx
    int vec = 0;          // tile: elements a column load (V)
    int batch = 8;        // vectors in flight a thread (row kernels)
    int64_t chunks = 1;   // split / cluster / tile: chunks a row (or along the axis)
    int64_t chunk_len = 0;
    oprt_reduce_sum_descriptor_t plan = nullptr;  // the library
    void *plan_ws = nullptr;
    size_t plan_ws_bytes = 0;
    // "Twins": the same launch shape in the other form, for the closing comparisons.
    std::string shape_key;  // name without the form token
};

// The workspace of the candidates: partial sums.
struct Workspace {
    float *partial = nullptr;
    size_t partial_floats = 0;
};
Workspace g_ws;

// Rows of length L (dense), `rows` of them: the geometry of the row kernels.
struct RowsGeom {
    int64_t rows, L;
};
// Axis of length L over an inner run of `inner` (outer 1): the geometry of the inner kernels.
struct InnerGeom {
    int64_t inner, L;
};

template <typename Tin, typename Tout>
void launch_group(const Tin *in, Tout *out, int64_t rows, int64_t L, int lanes, int threads, const OuterIndex &ix) {
    const int64_t blocks = clamp64(ceil_div(rows, threads / lanes), 1, oprt::gpu::kMaxGridBlocks);
    auto go = [&](auto kernel) {
        oprt::gpu::launch_overlapped(kernel, unsigned(blocks), unsigned(threads), 0, g_stream, in, out, rows, L, ix);
    };
    switch (lanes) {
    case 1: go(&rs::reduce_rows_group_kernel<Tin, Tout, 1>); break;
    case 2: go(&rs::reduce_rows_group_kernel<Tin, Tout, 2>); break;
    case 4: go(&rs::reduce_rows_group_kernel<Tin, Tout, 4>); break;
    case 8: go(&rs::reduce_rows_group_kernel<Tin, Tout, 8>); break;
    case 16: go(&rs::reduce_rows_group_kernel<Tin, Tout, 16>); break;
    default: go(&rs::reduce_rows_group_kernel<Tin, Tout, 32>); break;
    }
}

template <typename T>
void launch_block(const T *in, T *out, int64_t rows, int64_t L, int threads, int batch) {
    const int64_t blocks = clamp64(rows, 1, oprt::gpu::kMaxGridBlocks);
    if constexpr (sizeof(T) == 2) {
        if (batch == 16) {
            oprt::gpu::launch_overlapped(&rs::reduce_rows_block_kernel<T, T, 16>, unsigned(blocks), unsigned(threads),
                                         0, g_stream, in, out, rows, L, rows_index(L));
            return;
        }
    }
    oprt::gpu::launch_overlapped(&rs::reduce_rows_block_kernel<T, T, 8>, unsigned(blocks), unsigned(threads), 0,
                                 g_stream, in, out, rows, L, rows_index(L));
}

// The plan's second pass of split rows (rows.cuh, launch_rows over the
// partials): rows of `chunks` f32 partials, a group of lanes sized to them
// (about four vectors a lane) or a block of 256 threads past 1024 partials.
template <typename T>
void launch_partials_pass(const float *partial, T *out, int64_t rows, int64_t chunks) {
    OuterIndex fix = rows_index(chunks);
    fix.in_row_stride = chunks;
    if (chunks <= 32 * 4 * 8) {
        const int lanes = int(clamp64(next_pow2(ceil_div(chunks, 16)), 1, 32));
        launch_group<float, T>(partial, out, rows, chunks, lanes, 256, fix);
    } else {
        const int threads = int(clamp64(next_pow2(ceil_div(chunks, 32)), 128, 512));
        oprt::gpu::launch_overlapped(&rs::reduce_rows_block_kernel<float, T>, unsigned(rows), unsigned(threads), 0,
                                     g_stream, partial, out, rows, chunks, fix);
    }
}

template <typename T>
void launch_split(const Candidate &c, const T *in, T *out, const RowsGeom &g) {
    const int64_t blocks = clamp64(g.rows * c.chunks, 1, oprt::gpu::kMaxGridBlocks);
    auto go = [&](auto kernel) {
        oprt::gpu::launch_overlapped(kernel, unsigned(blocks), unsigned(c.threads), 0, g_stream, in, g_ws.partial,
                                     g.rows, g.L, c.chunks, c.chunk_len, rows_index(g.L));
    };
    bool launched = false;
    if constexpr (sizeof(T) == 2) {
        if (c.batch == 16) {
            go(&rs::reduce_rows_split_kernel<T, 16>);
            launched = true;
        }
    }
    if (!launched) go(&rs::reduce_rows_split_kernel<T, 8>);
    launch_partials_pass<T>(g_ws.partial, out, g.rows, c.chunks);
}

// Whether clusters of C blocks of `threads` threads of the cluster kernel can
// run here (at least one resident at a time); allows clusters past 8 blocks.
template <typename T, int B>
bool cluster_fits(int64_t C, int threads) {
    auto *kernel = &rs::reduce_rows_cluster_kernel<T, T, B>;
    if (C > 8 && cudaFuncSetAttribute(reinterpret_cast<const void *>(kernel),
                                      cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(unsigned(C), 1, 1);
    config.blockDim = dim3(unsigned(threads), 1, 1);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = unsigned(C);
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    config.attrs = attr;
    config.numAttrs = 1;
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return clusters > 0;
}

template <typename T>
void launch_cluster(const Candidate &c, const T *in, T *out, const RowsGeom &g) {
    auto go = [&](auto kernel) {
        cudaLaunchConfig_t config{};
        config.gridDim = dim3(unsigned(clamp64(g.rows, 1, oprt::gpu::kMaxGridBlocks / c.chunks) * c.chunks), 1, 1);
        config.blockDim = dim3(unsigned(c.threads), 1, 1);
        config.stream = g_stream;
        cudaLaunchAttribute attr[2];
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = unsigned(c.chunks);
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        config.attrs = attr;
        config.numAttrs = oprt::gpu::add_overlapped_attribute(attr, 1);
        (void)cudaLaunchKernelEx(&config, kernel, in, out, g.rows, g.L, c.chunk_len, rows_index(g.L));
    };
    if constexpr (sizeof(T) == 2) {
        if (c.batch == 16) {
            go(&rs::reduce_rows_cluster_kernel<T, T, 16>);
            return;
        }
    }
    go(&rs::reduce_rows_cluster_kernel<T, T, 8>);
}

// The plan's second pass over `chunks` partial rows of `inner` f32 sums in
// g_ws.partial (finalize_tile): 128-byte tile rows of f32x4, about four
// partial rows a thread, at least 256 threads a block.
template <typename T>
void launch_tile_finalize(int64_t inner, int64_t chunks, T *out) {
    constexpr int fv = 4;
    const int64_t columns = ceil_div(inner, fv);
    const int64_t min_bx = 128 / (fv * 4);
    const int64_t by = clamp64(next_pow2(ceil_div(chunks, 4)), 1, 1024 / min_bx);
    const int64_t bx = clamp64(std::max(min_bx, 256 / by), 1, next_pow2(columns));
    rs::InnerParams f;
    f.outer = 1;
    f.inner = inner;
    f.L = chunks;
    f.S = inner;
    f.chunks = 1;
    f.chunk_len = chunks;
    f.ix = rows_index(chunks * inner);
    f.ix.out_strides[0] = inner;
    f.ix.in_row_stride = inner;
    f.bx = int(bx);
    f.by = int(by);
    f.tiles = ceil_div(columns, bx);
    oprt::gpu::launch_overlapped(&rs::reduce_inner_tile_kernel<float, T, fv>, dim3(unsigned(f.tiles), 1),
                                 unsigned(bx * by), size_t(bx * by) * fv * sizeof(float), g_stream,
                                 static_cast<const float *>(g_ws.partial), out, static_cast<float *>(nullptr), f);
}

// inner_tile over an axis of g.L rows of g.inner elements (outer 1), as the
// plan's kInnerTile case launches it (reduce_sum_cuda.cu, run_typed).
template <typename T, int V>
void launch_tile_v(const Candidate &c, const T *in, T *out, const InnerGeom &g) {
    rs::InnerParams q;
    q.outer = 1;
    q.inner = g.inner;
    q.L = g.L;
    q.S = g.inner;
    q.chunks = c.chunks;
    q.chunk_len = c.chunk_len;
    q.ix = rows_index(g.L * g.inner);
    q.ix.out_strides[0] = g.inner;
    q.bx = c.lanes;
    q.by = c.threads / c.lanes;
    q.tiles = ceil_div(ceil_div(g.inner, V), c.lanes);
    const dim3 grid(unsigned(q.tiles), unsigned(q.chunks));
    const size_t smem = size_t(c.threads) * V * sizeof(float);
    float *partial = c.chunks > 1 ? g_ws.partial : nullptr;
    oprt::gpu::launch_overlapped(&rs::reduce_inner_tile_kernel<T, T, V>, grid, unsigned(c.threads), smem, g_stream, in,
                                 out, partial, q);
    if (c.chunks == 1) return;
    launch_tile_finalize<T>(g.inner, c.chunks, out);
}
// Full 16-byte columns (V = W) or half of them.
template <typename T>
void launch_tile(const Candidate &c, const T *in, T *out, const InnerGeom &g) {
    constexpr int W = oprt::gpu::vector_width<T>();
    if (c.vec == W) launch_tile_v<T, W>(c, in, out, g);
    else launch_tile_v<T, W / 2>(c, in, out, g);
}

template <typename T>
void launch(const Candidate &c, const Case &k, const T *in, T *out) {
    const int64_t n = k.rows * k.cols;
    const RowsGeom rg = k.dim == 1 ? RowsGeom{k.rows, k.cols} : RowsGeom{1, n};
    switch (c.family) {
    case kPlan: {
        const oprt_status_t s = oprt_execute_reduce_sum(c.plan, c.plan_ws, c.plan_ws_bytes, out, in, g_stream);
        if (s != OPRT_SUCCESS) {
            std::printf("oprt_execute_reduce_sum: %s\n", oprt_last_error_message());
            std::exit(1);
        }
        return;
    }
    case kGroup: launch_group<T, T>(in, out, rg.rows, rg.L, c.lanes, c.threads, rows_index(rg.L)); return;
    case kBlock: launch_block<T>(in, out, rg.rows, rg.L, c.threads, c.batch); return;
    case kSplit: launch_split<T>(c, in, out, rg); return;
    case kCluster: launch_cluster<T>(c, in, out, rg); return;
    case kTile: launch_tile<T>(c, in, out, InnerGeom{k.cols, k.rows}); return;
    }
}

// The split chunk length the plan would use for `chunks` chunks of a row of L
// (reduce_sum_cuda.cu): whole vectors for every thread where that lengthens a
// chunk by at most an eighth, else 256-element steps.
int64_t split_chunk_len(int64_t L, int64_t chunks, int threads, int64_t W) {
    const int64_t even = ceil_div(L, chunks);
    const int64_t step = int64_t(threads) * W;
    int64_t len = ceil_div(even, step) * step;
    if (len - even > even / 8) len = ceil_div(even, 256) * 256;
    return len;
}

template <typename T>
std::vector<Candidate> candidates(const Case &k) {
    constexpr int64_t W = oprt::gpu::vector_width<T>();
    const bool wide16 = sizeof(T) == 2;  // 16-bit: the 16-vector batch is a candidate
    std::vector<Candidate> list;
    char name[96];
    auto add = [&](Candidate c, const std::string &form) {
        c.name = c.shape_key + (form.empty() ? "" : " " + form);
        list.push_back(c);
    };
    const int64_t n = k.rows * k.cols;
    if (k.dim != 0) {
        const int64_t rows = k.dim == 1 ? k.rows : 1, L = k.dim == 1 ? k.cols : n;
        if (rows >= 32 && L <= 8192)
            for (int lanes : {4, 8, 16, 32})
                for (int threads : {64, 128, 256}) {
                    if (lanes * W * 2 > L) continue;  // fewer than two vectors a lane
                    Candidate c;
                    c.family = kGroup;
                    c.lanes = lanes;
                    c.threads = threads;
                    std::snprintf(name, sizeof name, "group g%d t%d", lanes, threads);
                    c.shape_key = name;
                    add(c, "");
                }
        if (rows >= g_sms / 2 || L <= 65536)
            for (int threads : {64, 128, 256, 512, 1024})
                for (int batch : {8, 16}) {
                    if ((batch == 16 && (!wide16 || threads > 512)) || int64_t(threads) * W > 2 * L) continue;
                    Candidate c;
                    c.family = kBlock;
                    c.threads = threads;
                    c.batch = batch;
                    std::snprintf(name, sizeof name, "block t%d", threads);
                    c.shape_key = name;
                    add(c, batch == 16 ? "b16" : "b8");
                }
        if (rows < 4 * g_sms && L >= 4096) {
            std::vector<int64_t> seen;
            for (int threads : {128, 256, 512, 1024})
                for (int per_two_sms : {1, 2, 4, 8, 16}) {  // blocks: half the SMs' count to 8 a SM
                    if (threads == 128 && L >= 65536) continue;
                    const int64_t max_chunks = std::max<int64_t>(1, L / (int64_t(threads) * W));
                    int64_t chunks = clamp64(ceil_div(per_two_sms * int64_t(g_sms), 2 * rows), 1, max_chunks);
                    if (chunks < 2) continue;
                    const int64_t len = split_chunk_len(L, chunks, threads, W);
                    chunks = ceil_div(L, len);
                    const int64_t key = chunks * 4096 + threads;
                    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
                    seen.push_back(key);
                    for (int batch : {8, 16}) {
                        if (batch == 16 && (!wide16 || threads > 512)) continue;
                        Candidate c;
                        c.family = kSplit;
                        c.threads = threads;
                        c.chunks = chunks;
                        c.chunk_len = len;
                        c.batch = batch;
                        std::snprintf(name, sizeof name, "split t%d c%lld b%d", threads, (long long)chunks, batch);
                        c.shape_key = name;
                        add(c, "two");
                    }
                }
        }
        if (rows >= 8 && rows < 4 * g_sms && L >= 16384)
            for (int C : {2, 4, 8, 16})
                for (int threads : {256, 512})
                    for (int batch : {8, 16}) {
                        if (batch == 16 && !wide16) continue;
                        Candidate c;
                        c.family = kCluster;
                        c.threads = threads;
                        c.chunk_len = ceil_div(ceil_div(L, C), 256) * 256;
                        c.chunks = ceil_div(L, c.chunk_len);
                        c.batch = batch;
                        if (c.chunks < 2) continue;
                        if (!g_list_only) {
                            bool fits = false;
                            if constexpr (sizeof(T) == 2)
                                fits = batch == 16 ? cluster_fits<T, 16>(c.chunks, threads)
                                                   : cluster_fits<T, 8>(c.chunks, threads);
                            else
                                fits = cluster_fits<T, 8>(c.chunks, threads);
                            if (!fits) continue;
                        }
                        std::snprintf(name, sizeof name, "cluster t%d c%lld", threads, (long long)c.chunks);
                        c.shape_key = name;
                        add(c, batch == 16 ? "b16" : "b8");
                    }
    } else {
        const int64_t inner = k.cols, L = k.rows;
        // Inputs up to 2 Mi elements also try half-width columns, tile rows
        // under 128 bytes and 128-thread blocks: more blocks in one pass.
        const bool small = L * inner <= (int64_t(1) << 21);
        for (int64_t V : {W, W / 2}) {
            if (V != W && !small) continue;
            const int64_t columns = ceil_div(inner, V);
            for (int threads : {128, 256, 512, 1024}) {
                if (threads == 128 && !small) continue;
                for (int64_t bx = small ? 1 : 8; bx <= std::min<int64_t>(threads, next_pow2(columns)); bx *= 2) {
                    const int64_t by = threads / bx, tiles = ceil_div(columns, bx);
                    if (by > std::max<int64_t>(1, L / 2)) continue;  // threads with no row of their own
                    std::vector<int64_t> chunk_options = {1};
                    for (int per_sm : {1, 2, 4}) {
                        const int64_t max_chunks = std::max<int64_t>(1, L / (2 * by));  // two rows a thread at least
                        const int64_t ch = clamp64(ceil_div(per_sm * int64_t(g_sms), tiles), 1,
                                                   std::min<int64_t>(max_chunks, 65535));
                        const int64_t len = ceil_div(L, ch);
                        const int64_t chunks = ceil_div(L, len);
                        if (chunks > 1 &&
                            std::find(chunk_options.begin(), chunk_options.end(), chunks) == chunk_options.end())
                            chunk_options.push_back(chunks);
                    }
                    for (int64_t chunks : chunk_options) {
                        // A handful of blocks each walking a long axis: never the fastest.
                        if (chunks == 1 && tiles < g_sms / 4 && L > 4 * by * 16) continue;
                        Candidate c;
                        c.family = kTile;
                        c.vec = int(V);
                        c.threads = threads;
                        c.lanes = int(bx);
                        c.chunks = chunks;
                        c.chunk_len = ceil_div(L, chunks);
                        std::snprintf(name, sizeof name, "tile v%lld t%d bx%lld c%lld", (long long)V, threads,
                                      (long long)bx, (long long)chunks);
                        c.shape_key = name;
                        add(c, chunks == 1 ? "" : "two");
                    }
                }
            }
        }
    }
    if (!g_families.empty()) {  // --family
        std::vector<Candidate> kept;
        for (const Candidate &c : list)
            if (listed(g_families, family_name(c.family))) kept.push_back(c);
        list.swap(kept);
    }
    return list;
}

// ---- Data and checks ------------------------------------------------------------------

// Relative error of rounding a sum to T (about one unit in the last place).
template <typename T>
double out_rtol() {
    return sizeof(T) == 4 ? 1e-6 : std::is_same<T, __half>::value ? 1e-3 : 8e-3;
}

// Uniform in [-0.5, 1) times `scale`, from the element's index (a hash: any
// core makes any part). Mean 0.25 * scale: a sum of L of them is about
// 0.25 * L * scale, which the scale keeps within f16's range (run_case).
float value_at(uint64_t i, uint64_t seed, float scale) {
    uint64_t z = (i + seed) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return scale * (-0.5f + 1.5f * float(z >> 40) / float(1 << 24));
}

// The float64 sums (want) and sums of magnitudes (mag) of every output.
template <typename T>
void reference(const std::vector<T> &x, const Case &k, std::vector<double> &want, std::vector<double> &mag) {
    const int64_t R = k.rows, C = k.cols;
    if (k.dim == 1) {
        want.assign(size_t(R), 0.0);
        mag.assign(size_t(R), 0.0);
        parallel_for(R, [&](int64_t b, int64_t e, int64_t) {
            for (int64_t r = b; r < e; ++r)
                for (int64_t j = 0; j < C; ++j) {
                    const double v = to_float(x[size_t(r * C + j)]);
                    want[size_t(r)] += v;
                    mag[size_t(r)] += std::fabs(v);
                }
        });
    } else if (k.dim == 0) {
        want.assign(size_t(C), 0.0);
        mag.assign(size_t(C), 0.0);
        parallel_for(C, [&](int64_t b, int64_t e, int64_t) {
            for (int64_t r = 0; r < R; ++r)
                for (int64_t j = b; j < e; ++j) {
                    const double v = to_float(x[size_t(r * C + j)]);
                    want[size_t(j)] += v;
                    mag[size_t(j)] += std::fabs(v);
                }
        });
    } else {
        const int64_t n = R * C;
        std::vector<double> s(std::thread::hardware_concurrency() + 1, 0.0), m(s.size(), 0.0);
        parallel_for(n, [&](int64_t b, int64_t e, int64_t part) {
            double a = 0, am = 0;
            for (int64_t i = b; i < e; ++i) {
                const double v = to_float(x[size_t(i)]);
                a += v;
                am += std::fabs(v);
            }
            s[size_t(part)] = a;
            m[size_t(part)] = am;
        });
        want.assign(1, 0.0);
        mag.assign(1, 0.0);
        for (size_t p = 0; p < s.size(); ++p) want[0] += s[p], mag[0] += m[p];
    }
}

// Whether every output is within rounding to T of the float64 sum, plus the
// f32 partial sums' error the library's tests allow (tests/cpp/nvidia/op_cases.h,
// check_reduce_sum: 1e-6 of the sum of magnitudes times log2 of the axis);
// *worst: the largest error in units of that tolerance (1e30 for a NaN: an
// unwritten output).
template <typename T>
bool check(const std::vector<T> &got, const std::vector<double> &want, const std::vector<double> &mag,
           int64_t reduced, double *worst) {
    *worst = 0;
    bool ok = true;
    const double levels = std::max(1.0, std::log2(double(reduced)));
    for (size_t i = 0; i < want.size(); ++i) {
        const double tol = out_rtol<T>() * std::fabs(want[i]) + 1e-6 * mag[i] * levels;
        const double err = std::fabs(to_float(got[i]) - want[i]);
        if (!(err <= tol)) ok = false;
        *worst = std::max(*worst, std::isnan(err) ? 1e30 : err / tol);
    }
    return ok;
}

struct Result {
    std::string kase, dtype, cond, plan_kernel, best;
    double plan_us = 0, best_us = 0, peer_us = 0;
};
std::vector<Result> g_results;
std::chrono::steady_clock::time_point g_start = std::chrono::steady_clock::now();

// Per case and dtype, the best candidate by hot + dram against the plan.
struct Suggestion {
    Case k;
    std::string dtype, plan_kernel;
    Candidate best;
    double plan_us = 0, best_us = 0, best_hot = 0, best_dram = 0, peer_hot = 0, peer_dram = 0;
};
std::vector<Suggestion> g_suggestions;

// Twins: (one form's time / the other's) at equal launch shape, hot + dram.
std::map<std::string, std::vector<double>> g_twins;  // "b16/b8"

template <typename T>
void run_case(const Case &k) {
    const int64_t n = k.rows * k.cols;
    const int64_t nout = k.dim == 1 ? k.rows : k.dim == 0 ? k.cols : 1;
    const size_t bytes = size_t(n) * sizeof(T);
    const size_t pitch = (bytes + 255) / 256 * 256;
    const int64_t sets = clamp64(ceil_div(kDramBytes, int64_t(bytes)), 1, kMaxSets);
    const std::string kname = case_name(k);
    std::printf("\n== %s %s: %.2f MiB read a call, %lld sets for dram (at %.0f s)\n", kname.c_str(), dtype_name<T>(),
                double(bytes) / (1 << 20), (long long)sets,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count());
    std::fflush(stdout);

    // Sums of about 4096 at most (f16 holds up to 65504 with 1e-3 steps).
    const int64_t reduced = k.dim == 1 ? k.cols : k.dim == 0 ? k.rows : n;
    const float scale = reduced > 16384 ? float(4096.0 / (0.25 * double(reduced))) : 1.0f;
    std::vector<T> host(static_cast<size_t>(n));
    parallel_for(n, [&](int64_t b, int64_t e, int64_t) {
        for (int64_t i = b; i < e; ++i)
            host[size_t(i)] = from_float<T>(value_at(uint64_t(i), uint64_t(k.rows * 7 + k.cols), scale));
    });
    std::vector<double> want, mag;
    reference(host, k, want, mag);

    char *in = nullptr;
    T *out = nullptr;
    CK(cudaMalloc(&in, pitch * size_t(sets)));
    CK(cudaMalloc(&out, size_t(nout) * sizeof(T) * size_t(sets)));
    CK(cudaMemcpy(in, host.data(), bytes, cudaMemcpyHostToDevice));
    for (int64_t s = 1; s < sets; s *= 2)  // sets [0, s) copied to [s, 2s)
        CK(cudaMemcpy(in + s * pitch, in, size_t(std::min(s, sets - s)) * pitch, cudaMemcpyDeviceToDevice));

    std::vector<Candidate> list;
    {
        Candidate c;
        oprt_tensor_view_t v{};
        v.data = in;
        v.dtype = dtype_enum<T>();
        oprt_tensor_view_t o = v;
        o.data = out;
        int64_t axis = 0;
        if (k.dim == kAll) {  // the input as one row of n, its sum of shape (1,)
            v.ndim = 1;
            v.shape[0] = n;
            v.strides[0] = 1;
            o.ndim = 1;
            o.shape[0] = 1;
            o.strides[0] = 1;
        } else {
            v.ndim = 2;
            v.shape[0] = k.rows;
            v.shape[1] = k.cols;
            v.strides[0] = k.cols;
            v.strides[1] = 1;
            o.ndim = 1;
            o.shape[0] = nout;
            o.strides[0] = 1;
            axis = k.dim;
        }
        if (oprt_create_reduce_sum_descriptor(&c.plan, &o, &v, axis) != OPRT_SUCCESS) {
            std::printf("oprt_create_reduce_sum_descriptor: %s\n", oprt_last_error_message());
            std::exit(1);
        }
        const char *kernel = "?";
        oprt_get_reduce_sum_kernel_name(c.plan, &kernel);
        oprt_get_reduce_sum_workspace_size(c.plan, &c.plan_ws_bytes);
        if (c.plan_ws_bytes > 0) CK(cudaMalloc(&c.plan_ws, c.plan_ws_bytes));
        c.name = std::string("plan ") + kernel;
        // Its workspace tells a split plan's partial count (4 bytes each, plus 16 of alignment).
        std::printf("   plan %s, workspace %zu bytes\n", kernel, c.plan_ws_bytes);
        list.push_back(c);
    }
    for (const Candidate &c : candidates<T>(k)) list.push_back(c);
    std::printf("   %zu candidates\n", list.size() - 1);

    std::vector<T> got(static_cast<size_t>(nout));
    std::vector<double> hot_us, dram_us;
    int failed = 0;
    // Checks list[i] (twice, the output poisoned before the second run) and times it.
    auto measure = [&](size_t i) {
        hot_us.resize(list.size(), -1);
        dram_us.resize(list.size(), -1);
        const Candidate &c = list[i];
        const T *x = reinterpret_cast<const T *>(in);
        launch<T>(c, k, x, out);
        CK(cudaMemsetAsync(out, 0xFF, size_t(nout) * sizeof(T), g_stream));  // NaN in every dtype
        launch<T>(c, k, x, out);
        const cudaError_t launched = cudaGetLastError();  // a shape this GPU cannot launch: skipped
        if (launched != cudaSuccess) {
            std::printf("  FAIL %-34s launch: %s: not timed\n", c.name.c_str(), cudaGetErrorString(launched));
            ++failed;
            return;
        }
        const cudaError_t ran = cudaStreamSynchronize(g_stream);
        if (ran != cudaSuccess) {
            std::printf("  FAIL %-34s run: %s\n", c.name.c_str(), cudaGetErrorString(ran));
            std::exit(1);  // the context is lost
        }
        CK(cudaMemcpy(got.data(), out, size_t(nout) * sizeof(T), cudaMemcpyDeviceToHost));
        double worst = 0;
        if (!check(got, want, mag, reduced, &worst)) {
            std::printf("  FAIL %-34s worst error %.3g x the tolerance: not timed\n", c.name.c_str(), worst);
            ++failed;
            return;
        }
        hot_us[i] = 1e6 * graph_seconds_per_launch([&] { launch<T>(c, k, x, out); }, g_stream, kHotLaunches,
                                                   kHotReplays);
        if (sets > 1) {
            int64_t s = 0;
            const int launches = int(std::max<int64_t>(sets, kDramMinLaunches));
            dram_us[i] = 1e6 * graph_seconds_per_launch(
                                   [&] {
                                       const int64_t set = s++ % sets;
                                       launch<T>(c, k, reinterpret_cast<const T *>(in + set * pitch),
                                                 out + set * nout);
                                   },
                                   g_stream, launches, kDramReplays);
        } else {
            dram_us[i] = hot_us[i];
        }
    };
    for (size_t i = 0; i < list.size(); ++i) measure(i);

    const Peer *peer = nullptr;
    for (const Peer &p : kPeers)
        if (p.rows == k.rows && p.cols == k.cols && p.dim == k.dim && std::strcmp(p.dtype, dtype_name<T>()) == 0)
            peer = &p;
    const std::string plan_kernel = list[0].name.substr(5);
    for (int cond = 0; cond < (sets > 1 ? 2 : 1); ++cond) {
        const std::vector<double> &us = cond == 0 ? hot_us : dram_us;
        Result r;
        r.kase = kname;
        r.dtype = dtype_name<T>();
        r.cond = sets > 1 ? (cond == 0 ? "hot" : "dram") : "both";
        r.plan_kernel = plan_kernel;
        r.plan_us = us[0];
        size_t best = 0;
        for (size_t i = 1; i < list.size(); ++i)
            if (us[i] > 0 && (us[best] <= 0 || us[i] < us[best])) best = i;
        r.best = list[best].name;
        r.best_us = us[best];
        if (peer != nullptr) r.peer_us = cond == 0 ? peer->peer_hot : peer->peer_dram;
        std::printf("  %-4s plan %s %.2f us | best %s %.2f us (plan/best %.2fx)", r.cond.c_str(),
                    r.plan_kernel.c_str(), r.plan_us, r.best.c_str(), r.best_us, r.plan_us / r.best_us);
        if (peer != nullptr)
            std::printf(" | peer %.2f us (best/peer %.2fx, plan/peer %.2fx)", r.peer_us, r.best_us / r.peer_us,
                        r.plan_us / r.peer_us);
        std::printf("\n       ");
        for (size_t i = 1; i < list.size(); ++i)
            if (us[i] > 0) std::printf(" %s %.2f;", list[i].name.c_str(), us[i]);
        std::printf("\n");
        g_results.push_back(r);
    }
    if (failed > 0) std::printf("  some candidates FAILED: see above\n");

    {
        Suggestion g;
        g.k = k;
        g.dtype = dtype_name<T>();
        g.plan_kernel = plan_kernel;
        g.plan_us = hot_us[0] + dram_us[0];
        if (peer != nullptr) g.peer_hot = peer->peer_hot, g.peer_dram = peer->peer_dram;
        for (size_t i = 1; i < list.size(); ++i)
            if (hot_us[i] > 0 && (g.best_us == 0 || hot_us[i] + dram_us[i] < g.best_us)) {
                g.best_us = hot_us[i] + dram_us[i];
                g.best_hot = hot_us[i];
                g.best_dram = dram_us[i];
                g.best = list[i];
            }
        g_suggestions.push_back(g);
    }
    // Twins at equal launch shape.
    for (size_t i = 1; i < list.size(); ++i)
        for (size_t j = 1; j < list.size(); ++j) {
            if (hot_us[i] <= 0 || hot_us[j] <= 0) continue;
            const Candidate &a = list[i], &b = list[j];
            const double ratio = (hot_us[i] + dram_us[i]) / (hot_us[j] + dram_us[j]);
            if (a.family == b.family && a.family != kTile && a.batch == 16 && b.batch == 8 && a.threads == b.threads &&
                a.lanes == b.lanes && a.chunks == b.chunks)
                g_twins["b16/b8"].push_back(ratio);
        }

    for (Candidate &c : list)
        if (c.plan != nullptr) {
            oprt_destroy_reduce_sum_descriptor(c.plan);
            if (c.plan_ws != nullptr) CK(cudaFree(c.plan_ws));
        }
    CK(cudaFree(in));
    CK(cudaFree(out));
}

const char *family_name(Family f) {
    switch (f) {
    case kPlan: return "plan";
    case kGroup: return "group";
    case kBlock: return "block";
    case kSplit: return "split";
    case kCluster: return "cluster";
    case kTile: return "tile";
    }
    return "?";
}

}  // namespace

int main(int argc, char **argv) {
    std::string dtypes, cases;
    bool all_cases = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--dtype") == 0 && i + 1 < argc) dtypes = argv[++i];
        else if (std::strcmp(argv[i], "--case") == 0 && i + 1 < argc) cases = argv[++i];
        else if (std::strcmp(argv[i], "--all-cases") == 0) all_cases = true;
        else if (std::strcmp(argv[i], "--list") == 0) g_list_only = true;
        else if (std::strcmp(argv[i], "--family") == 0 && i + 1 < argc) g_families = argv[++i];
        else {
            std::printf("usage: %s [--dtype f32,f16,bf16] [--case ROWSxCOLS:DIM,...] [--all-cases] [--list]\n"
                        "    [--family plan,group,block,split,cluster,tile]\n",
                        argv[0]);
            return 2;
        }
    }
    g_start = std::chrono::steady_clock::now();
    int count = 0;
    const bool have_gpu = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
    if (!have_gpu && !g_list_only) {
        std::printf("no CUDA device visible: nothing to measure\n");
        return 0;
    }
    // The cases: by default those of the record that lost in some dtype, each in every dtype.
    std::vector<Case> run;
    for (const Peer &p : kPeers) {
        const Case k{p.rows, p.cols, p.dim};
        bool seen = false;
        for (const Case &r : run) seen = seen || (r.rows == k.rows && r.cols == k.cols && r.dim == k.dim);
        if (seen) continue;
        bool any_lost = false;
        for (const Peer &q : kPeers)
            if (q.rows == k.rows && q.cols == k.cols && q.dim == k.dim) any_lost = any_lost || lost(q);
        if (!cases.empty() ? listed(cases, case_name(k)) : (all_cases || any_lost)) run.push_back(k);
    }
    // --case entries outside the record (odd shapes, say): timed without a peer.
    for (size_t start = 0; !cases.empty() && start <= cases.size();) {
        const size_t end = std::min(cases.find(',', start), cases.size());
        long long rows = 0, cols = 0;
        char dim[8] = {};
        if (std::sscanf(cases.substr(start, end - start).c_str(), "%lldx%lld:%7s", &rows, &cols, dim) == 3 &&
            rows > 0 && cols > 0) {
            const Case k{rows, cols, std::strcmp(dim, "all") == 0 ? kAll : std::atoi(dim) == 1 ? 1 : 0};
            bool seen = false;
            for (const Case &r : run) seen = seen || case_name(r) == case_name(k);
            if (!seen) run.push_back(k);
        }
        start = end + 1;
    }
    if (g_list_only) {  // the candidates each case would time (an H200's 132 SMs without a GPU; clusters unchecked)
        if (have_gpu) CK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0));
        else g_sms = 132;
        size_t total = 0;
        for (const Case &k : run)
            for (const char *dt : {"f32", "f16", "bf16"}) {
                if (!listed(dtypes, dt)) continue;
                const std::vector<Candidate> list = std::strcmp(dt, "f32") == 0   ? candidates<float>(k)
                                                    : std::strcmp(dt, "f16") == 0 ? candidates<__half>(k)
                                                                                   : candidates<__nv_bfloat16>(k);
                std::printf("%s %s: %zu candidates\n   ", case_name(k).c_str(), dt, list.size());
                for (const Candidate &c : list) std::printf(" %s;", c.name.c_str());
                std::printf("\n");
                total += list.size();
            }
        std::printf("%zu cases, %zu candidates\n", run.size(), total);
        return 0;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device: %s, %d SMs, L2 %d MiB; library %s\n", prop.name, prop.multiProcessorCount,
                prop.l2CacheSize >> 20, oprt_version());
    g_sms = prop.multiProcessorCount;
    oprt_set_backend(OPRT_BACKEND_NVIDIA);
    CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
    g_ws.partial_floats = size_t(64) << 20;  // 256 MiB: the widest split's partial rows fit
    CK(cudaMalloc(&g_ws.partial, g_ws.partial_floats * sizeof(float)));

    for (const Case &k : run) {
        if (listed(dtypes, "f32")) run_case<float>(k);
        if (listed(dtypes, "f16")) run_case<__half>(k);
        if (listed(dtypes, "bf16")) run_case<__nv_bfloat16>(k);
    }

    std::printf("\n%-16s %-5s %-5s %-26s %9s %-34s %9s %9s %9s %9s\n", "case", "dtype", "cond", "plan", "plan us",
                "best candidate", "best us", "plan/best", "peer us", "best/peer");
    for (const Result &r : g_results) {
        std::printf("%-16s %-5s %-5s %-26s %9.2f %-34s %9.2f %8.2fx", r.kase.c_str(), r.dtype.c_str(), r.cond.c_str(),
                    r.plan_kernel.c_str(), r.plan_us, r.best.c_str(), r.best_us, r.plan_us / r.best_us);
        if (r.peer_us > 0)
            std::printf(" %9.2f %8.2fx%s", r.peer_us, r.best_us / r.peer_us,
                        r.best_us > 1.01 * r.peer_us ? "  still behind" : "");
        std::printf("\n");
    }

    // Entries for a plan table: where the best candidate beats the plan by more
    // than 2% (hot + dram). esize 2 is f16 and bf16 (they share entries); a
    // case whose two 16-bit dtypes disagree shows both lines.
    auto entries = [](const std::vector<Suggestion> &list, const char *title) {
        std::printf("\n%s: plan entries where a candidate beats the plan by > 2%% (hot + dram),\n"
                    "{esize, rows, cols, dim, \"family\", threads, lanes_or_bx, vec (tile), batch, chunks, "
                    "chunk_len}:\n",
                    title);
        for (const Suggestion &g : list) {
            const Candidate &b = g.best;
            char tail[320];
            std::snprintf(tail, sizeof tail, "// %s %s: %s %.2f -> %s %.2f us (hot + dram)", case_name(g.k).c_str(),
                          g.dtype.c_str(), g.plan_kernel.c_str(), g.plan_us, b.name.c_str(), g.best_us);
            if (g.best_us > 0 && (g.plan_us < 0 || g.plan_us > 1.02 * g.best_us)) {
                std::printf("    {%d, %lld, %lld, %d, \"%s\", %d, %d, %d, %d, %lld, %lld},  %s",
                            g.dtype == "f32" ? 4 : 2, (long long)g.k.rows, (long long)g.k.cols, g.k.dim,
                            family_name(b.family), b.threads, b.lanes, b.vec, b.batch, (long long)b.chunks,
                            (long long)b.chunk_len, tail);
            } else {
                std::printf("    %s; keep the plan", tail);
            }
            if (g.peer_hot > 0)
                std::printf("; vs peer hot %.2f/%.2f dram %.2f/%.2f%s", g.best_hot, g.peer_hot, g.best_dram,
                            g.peer_dram,
                            (g.best_hot > 1.01 * g.peer_hot || g.best_dram > 1.01 * g.peer_dram) ? " STILL BEHIND" : "");
            std::printf("\n");
        }
    };
    entries(g_suggestions, "Every form");
    std::printf("\nWhere an entry goes in ops/reduce_sum/nvidia/reduce_sum_cuda.cu (rows.cuh for kGroupThreads "
                "and launch_rows): group -> rows_choice (lanes; kGroupThreads = threads); block -> rows_choice "
                "(threads) and launch_rows (batch: the kernel's kBatch); split -> plan()'s rows_split branch "
                "(kSplitThreadsF32 / kSplitThreads16, chunks, batch); cluster -> the rows_cluster branch "
                "(kClusterRowThreads, C = chunks); tile -> the inner rules of plan() (kOnePassMaxElements, "
                "kTall*, tile_shape / kMinTileRowBytes: bx, threads, the V choice: vec, the chunk rule: "
                "kResidentBlocksPerSm, kMinChunkRows).\n");

    // The forms against their twins at equal launch shape.
    std::printf("\nForms against their twins at equal launch shape (time ratio, hot + dram; < 1: the first is faster):\n");
    for (auto &kv : g_twins) {
        std::vector<double> &v = kv.second;
        if (v.empty()) continue;
        std::sort(v.begin(), v.end());
        int wins = 0;
        for (double r : v) wins += r < 0.98 ? 1 : 0;
        std::printf("  %-8s %zu pairs: min %.2f, median %.2f, max %.2f; the first faster by > 2%% in %d\n",
                    kv.first.c_str(), v.size(), v.front(), v[v.size() / 2], v.back(), wins);
    }
    CK(cudaFree(g_ws.partial));
    CK(cudaStreamDestroy(g_stream));
    std::printf("\n%.0f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count());
    return 0;
}
