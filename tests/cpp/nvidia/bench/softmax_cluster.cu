// Long softmax rows (4096 columns and more): a row per thread-block cluster,
// its slices in the blocks' shared memory, against the library's plan.
//
// The candidate (cluster_rows_kernel) is QuACK's long-row design written in
// CUDA: each of a cluster's C blocks copies its slice of the row (L / C
// elements) into shared memory with bulk copies (gpu_bulk_copy.cuh; `pieces`
// copies, each on its own barrier, so the max pass starts when the first
// lands), takes the slice's max and its sum of exp(x - max) from shared
// memory, and puts the pair where the cluster can read it; after one cluster
// barrier every warp reads the C pairs through distributed shared memory
// (dev::cluster_map), joins them in the same order in every block, and the
// block writes its slice's outputs. HBM is read once and written once; no
// workspace, no second kernel, no block waits on another through global
// memory. A row is one launch's cluster: the grid is rows * C blocks, and the
// blocks resident on an SM (as many as their slices fit its shared memory)
// overlap one slice's copy with another's math.
//
// Measured on the H200 (2026-12-04): slower than the plan at every shape,
// 0.67-0.97x (docs/kernels/softmax.md, "Tried and measured slower"); kept as
// the starting point for a faster form (one read of shared memory into
// registers, the copies overlapped with the math within a block).
//
// For each shape and dtype: the plan (oprt_execute_softmax; its kernel name)
// and the candidate at C = 1, 2, 4, 8, 16 blocks a row (16 is a non-portable
// cluster size), 128, 256 or 512 threads a block and 1 or 4 pieces, where the
// slice fits a block's shared memory. Every launch first runs once on random
// data into a NaN-poisoned output and is checked against a float64 reference
// (the tests' tolerances); a failing one is reported and not timed. Times:
// launches captured in a CUDA graph, the median of several replays
// (graph_timing.cuh); cases moving less than 240 MiB rotate input/output sets
// over at least that much (the DRAM condition of tests/run_ops.py).
//
// Build (from the repository root, after building the NVIDIA library in build-nvidia):
//   cmake --build build-nvidia --target camp_softmax_cluster_bench -j2
//   build-nvidia/tests/cpp/nvidia/camp_softmax_cluster_bench [--dtype f32,f16,bf16] [--shape 2048x65536,...]
// It needs libcamp_ops.so at run time (LD_LIBRARY_PATH=<folder holding it>).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ops/softmax/nvidia/kernel.cuh"
#include "runtime/gpu/gpu_bulk_copy.cuh"
#include "tests/cpp/nvidia/bench/softmax_common.cuh"

namespace sm = oprt::softmax::gpu_kernels;
namespace gpu = oprt::gpu;
namespace bulk = oprt::gpu::bulk;

namespace {

constexpr int kMaxPieces = 4;
constexpr int64_t kDramBytes = int64_t(240) << 20;
constexpr size_t kMaxSliceBytes = 226 * 1024;  // a block's shared memory (227 KiB) less its static part

// Vectors [v0, v1) of piece i of a slice of nv vectors in `pieces` pieces
// (whole rounds of the block's threads).
struct Piece {
    int v0, v1;
};
template <int kThreads>
__device__ __forceinline__ Piece piece_of(int i, int nv, int pieces) {
    const int per = ((nv + pieces - 1) / pieces + kThreads - 1) / kThreads * kThreads;
    const int v0 = i * per < nv ? i * per : nv;
    return Piece{v0, v0 + per < nv ? v0 + per : nv};
}

// Row blockIdx.x / C, slice `rank` of `slice` elements (L a multiple of C * 16 bytes).
template <typename T, int kThreads>
__global__ void __launch_bounds__(kThreads) cluster_rows_kernel(const T *__restrict__ in, T *__restrict__ out,
                                                                int64_t L, int slice, int pieces) {
    constexpr int P = gpu::vector_width<T>();
    extern __shared__ __align__(128) unsigned char smem_raw[];
    const T *const x = reinterpret_cast<const T *>(smem_raw);
    __shared__ __align__(8) uint64_t full[kMaxPieces];
    __shared__ gpu::BlockReduceScratch<float> scratch;
    __shared__ float2 pair;
    const unsigned C = oprt::dev::cluster_size(), rank = oprt::dev::cluster_rank();
    const int64_t row = blockIdx.x / C;
    const int64_t k0 = int64_t(rank) * slice;
    const int nv = int((L - k0 < slice ? L - k0 : slice) / P);
    if (threadIdx.x == 0) {
        for (int i = 0; i < pieces; ++i) bulk::init(&full[i]);
        for (int i = 0; i < pieces; ++i) {
            const Piece pc = piece_of<kThreads>(i, nv, pieces);
            const unsigned bytes = unsigned(pc.v1 - pc.v0) * 16u;
            bulk::expect_bytes(&full[i], bytes);
            if (bytes > 0)
                bulk::copy_to_shared(smem_raw + size_t(pc.v0) * 16, in + row * L + k0 + int64_t(pc.v0) * P, bytes,
                                     &full[i]);
        }
    }
    __syncthreads();
    float m = sm::neg_inf();
    for (int i = 0; i < pieces; ++i) {
        const Piece pc = piece_of<kThreads>(i, nv, pieces);
        bulk::wait(&full[i], 0);
        for (int q = pc.v0 + int(threadIdx.x); q < pc.v1; q += kThreads) {
            float f[P];
            gpu::widen(gpu::load_vec<P>(x + q * P), f);
#pragma unroll
            for (int e = 0; e < P; ++e) m = fmaxf(m, f[e]);
        }
    }
    m = gpu::block_allreduce(m, gpu::MaxOp{}, sm::neg_inf(), scratch);
    float s = 0.0f;
    for (int q = int(threadIdx.x); q < nv; q += kThreads) {
        float f[P];
        gpu::widen(gpu::load_vec<P>(x + q * P), f);
#pragma unroll
        for (int e = 0; e < P; ++e) s += sm::exp_out(f[e] - m);
    }
    s = gpu::block_allreduce(s, gpu::SumOp{}, 0.0f, scratch);
    if (threadIdx.x == 0) pair = make_float2(m, s);
    __cluster_barrier_arrive();  // the pair, to the cluster (release; the wait acquires)
    __cluster_barrier_wait();
    // Lane r reads rank r's pair; the joins' order is the same in every block.
    const unsigned lane = threadIdx.x % 32;
    const float2 v = lane < C ? *oprt::dev::cluster_map(&pair, lane) : make_float2(sm::neg_inf(), 0.0f);
    const float row_max = gpu::warp_allreduce(v.x, gpu::MaxOp{});
    const float row_sum =
        gpu::warp_allreduce(v.y == 0.0f ? 0.0f : v.y * sm::exp_f32(v.x - row_max), gpu::SumOp{});
    __cluster_barrier_arrive();  // this block has read the others' pairs
    const float inv = 1.0f / row_sum;
    T *const y = out + row * L + k0;
    for (int q = int(threadIdx.x); q < nv; q += kThreads) {
        float f[P];
        gpu::widen(gpu::load_vec<P>(x + q * P), f);
        gpu::Vec<T, P> o;
#pragma unroll
        for (int e = 0; e < P; ++e) o.v[e] = oprt::dev::from_f32<T>(sm::exp_out(f[e] - row_max) * inv);
        gpu::store_vec_global<P>(y + q * P, o);
    }
    __cluster_barrier_wait();  // no block leaves while another may still read its pair
}

cudaStream_t g_stream;

struct Candidate {
    std::string name;
    int C = 0, threads = 0, pieces = 0;
    SoftmaxPlan plan;  // the library (plan.desc set), else the candidate
};

template <typename T, int kThreads>
cudaError_t launch_cluster_t(const T *in, T *out, int64_t rows, int64_t L, int C, int pieces) {
    auto *kernel = &cluster_rows_kernel<T, kThreads>;
    static bool configured = false;
    if (!configured) {
        CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kMaxSliceBytes)));
        CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        configured = true;
    }
    const int slice = int(L / C);
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = unsigned(C);
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(unsigned(rows * C));
    config.blockDim = dim3(kThreads);
    config.dynamicSmemBytes = size_t(slice) * sizeof(T);
    config.stream = g_stream;
    config.attrs = &attr;
    config.numAttrs = 1;
    return cudaLaunchKernelEx(&config, kernel, in, out, L, slice, pieces);
}

template <typename T>
cudaError_t launch(const Candidate &c, const void *in, void *out, int64_t rows, int64_t L) {
    if (c.plan.desc != nullptr) {
        execute_softmax_plan(c.plan, in, out, g_stream);
        return cudaSuccess;
    }
    const T *i = static_cast<const T *>(in);
    T *o = static_cast<T *>(out);
    switch (c.threads) {
    case 128: return launch_cluster_t<T, 128>(i, o, rows, L, c.C, c.pieces);
    case 256: return launch_cluster_t<T, 256>(i, o, rows, L, c.C, c.pieces);
    default: return launch_cluster_t<T, 512>(i, o, rows, L, c.C, c.pieces);
    }
}

struct Result {
    std::string shape, dtype, plan_kernel, best;
    double plan_us = 0, best_us = 0, gbs = 0;
};
std::vector<Result> g_results;

template <typename T>
void run_case(int64_t rows, int64_t L) {
    constexpr int P = gpu::vector_width<T>();
    const int64_t n = rows * L;
    const size_t bytes = size_t(n) * sizeof(T);
    const int64_t sets = std::max<int64_t>(1, (kDramBytes + 2 * int64_t(bytes) - 1) / (2 * int64_t(bytes)));
    char shape[32];
    std::snprintf(shape, sizeof shape, "%lldx%lld", (long long)rows, (long long)L);
    std::printf("\n== %s %s: %.0f MiB moved a call, %lld sets\n", shape, dtype_name<T>(), 2.0 * double(bytes) / (1 << 20),
                (long long)sets);
    std::fflush(stdout);

    std::vector<T> host(static_cast<size_t>(n));
    // Each part of the rows its own generator (the host's cores make the data).
    parallel_for(
        rows,
        [&](int64_t b, int64_t e, int64_t) {
            std::mt19937 rng(uint32_t(b * 131 + L));
            std::uniform_real_distribution<float> uni(-8.0f, 8.0f);
            for (int64_t i = b * L; i < e * L; ++i) host[size_t(i)] = from_float<T>(uni(rng));
        },
        1);
    char *in = nullptr, *out = nullptr;
    CK(cudaMalloc(&in, bytes * size_t(sets)));
    CK(cudaMalloc(&out, bytes * size_t(sets)));
    CK(cudaMemcpy(in, host.data(), bytes, cudaMemcpyHostToDevice));
    for (int64_t k = 1; k < sets; ++k) CK(cudaMemcpy(in + k * bytes, in, bytes, cudaMemcpyDeviceToDevice));

    // The float64 reference, kept as float (its rounding, 6e-8, is far below the tolerances).
    std::vector<float> want(static_cast<size_t>(n));
    parallel_for(
        rows,
        [&](int64_t b, int64_t e, int64_t) {
            for (int64_t r = b; r < e; ++r)
                softmax_reference_row(host.data() + r * L, L,
                                      [&](int64_t k, double y) { want[size_t(r * L + k)] = float(y); });
        },
        1);

    std::vector<Candidate> list;
    {
        Candidate c;
        c.plan = make_softmax_plan<T>(in, out, rows, L);
        c.name = "plan " + c.plan.kernel;
        list.push_back(c);
    }
    for (int C : {1, 2, 4, 8, 16})
        for (int threads : {128, 256, 512})
            for (int pieces : {1, kMaxPieces}) {
                if (L % (int64_t(C) * P) != 0) continue;
                const int64_t slice = L / C;
                if (size_t(slice) * sizeof(T) > kMaxSliceBytes || slice / P < int64_t(threads) * pieces) continue;
                Candidate c;
                c.C = C;
                c.threads = threads;
                c.pieces = pieces;
                char name[64];
                std::snprintf(name, sizeof name, "cluster c%d t%d p%d", C, threads, pieces);
                c.name = name;
                list.push_back(c);
            }

    std::vector<T> got(static_cast<size_t>(n));
    std::vector<double> us(list.size(), -1);
    for (size_t i = 0; i < list.size(); ++i) {
        const Candidate &c = list[i];
        CK(cudaMemsetAsync(out, 0xFF, bytes, g_stream));  // NaN in every dtype
        cudaError_t e = launch<T>(c, in, out, rows, L);
        if (e == cudaSuccess) e = cudaGetLastError();
        if (e == cudaSuccess) e = cudaStreamSynchronize(g_stream);
        if (e != cudaSuccess) {
            std::printf("  FAIL %-24s launch: %s: not timed\n", c.name.c_str(), cudaGetErrorString(e));
            (void)cudaGetLastError();
            continue;
        }
        CK(cudaMemcpy(got.data(), out, bytes, cudaMemcpyDeviceToHost));
        std::vector<int64_t> bad(size_t(rows), 0);
        parallel_for(
            rows,
            [&](int64_t b, int64_t e2, int64_t) {
                for (int64_t i = b * L; i < e2 * L; ++i) {
                    const double w = want[size_t(i)], err = std::fabs(double(to_float(got[size_t(i)])) - w);
                    if (!(err <= softmax_atol<T>() + softmax_rtol<T>() * w)) ++bad[size_t(b)];
                }
            },
            1);
        int64_t wrong = 0;
        for (int64_t b : bad) wrong += b;
        if (wrong > 0) {
            std::printf("  FAIL %-24s %lld wrong elements: not timed\n", c.name.c_str(), (long long)wrong);
            continue;
        }
        int64_t k = 0;
        const int launches = int(sets >= 20 ? sets : sets * ((20 + sets - 1) / sets));
        us[i] = 1e6 * graph_seconds_per_launch(
                          [&] {
                              const int64_t set = k++ % sets;
                              (void)launch<T>(c, in + set * bytes, out + set * bytes, rows, L);
                          },
                          g_stream, launches, 5);
        std::printf("  %-34s %9.2f us %6.0f GB/s\n", c.name.c_str(), us[i], 2.0 * double(bytes) / us[i] * 1e-3);
        std::fflush(stdout);
    }
    size_t best = 1;
    for (size_t i = 1; i < list.size(); ++i)
        if (us[i] > 0 && (us[best] <= 0 || us[i] < us[best])) best = i;
    Result r{shape, dtype_name<T>(), list[0].name.substr(5), best < list.size() ? list[best].name : "-", us[0],
             best < list.size() ? us[best] : -1, 0};
    r.gbs = r.best_us > 0 ? 2.0 * double(bytes) / r.best_us * 1e-3 : 0;
    g_results.push_back(r);
    destroy_softmax_plan(list[0].plan);
    CK(cudaFree(in));
    CK(cudaFree(out));
}

}  // namespace

int main(int argc, char **argv) {
    std::string dtypes, shapes;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--dtype") == 0) dtypes = argv[i + 1];
        else if (std::strcmp(argv[i], "--shape") == 0) shapes = argv[i + 1];
        else {
            std::printf("usage: %s [--dtype f32,f16,bf16] [--shape ROWSxCOLS,...]\n", argv[0]);
            return 2;
        }
    }
    CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
    const int64_t kShapes[][2] = {{8192, 4096},   {4096, 16384},  {2048, 65536},
                                  {1024, 131072}, {256, 262144}, {256, 1048576}};
    for (const auto &s : kShapes) {
        char name[32];
        std::snprintf(name, sizeof name, "%lldx%lld", (long long)s[0], (long long)s[1]);
        if (!listed(shapes, name)) continue;
        if (listed(dtypes, "f32")) run_case<float>(s[0], s[1]);
        if (listed(dtypes, "bf16")) run_case<__nv_bfloat16>(s[0], s[1]);
        if (listed(dtypes, "f16")) run_case<__half>(s[0], s[1]);
    }
    std::printf("\n%-12s %-5s %-30s %9s %-24s %9s %8s %7s\n", "shape", "dtype", "plan", "plan us", "best cluster",
                "us", "plan/it", "GB/s");
    for (const Result &r : g_results)
        std::printf("%-12s %-5s %-30s %9.2f %-24s %9.2f %7.2fx %7.0f\n", r.shape.c_str(), r.dtype.c_str(),
                    r.plan_kernel.c_str(), r.plan_us, r.best.c_str(), r.best_us, r.plan_us / r.best_us, r.gbs);
    return 0;
}
