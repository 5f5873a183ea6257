// A ladder of launch configurations for the softmax and reduce_sum kernels
// (the kernels of ops/reduce_sum/nvidia/rows.cuh and ops/softmax/nvidia/rows_registers.cuh and
// rows_streamed.cuh, launched directly): which
// configuration each plan threshold should pick on this GPU. Not part of the
// build or the tests; compile by hand from the repository root:
//   nvcc -O3 -arch=sm_90 -std=c++17 --expt-relaxed-constexpr -I include -I . \
//        -o axis_variants tests/cpp/nvidia/bench/axis_variants.cu
// Each line: 10 launches captured in a CUDA graph, median of 5 replays, ~256 MB
// of input (larger than L2); GB/s counts bytes read + written once.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ops/reduce_sum/nvidia/rows.cuh"
#include "ops/softmax/nvidia/kernel.cuh"
#include "ops/softmax/nvidia/rows_registers.cuh"
#include "ops/softmax/nvidia/rows_streamed.cuh"
#include "tests/cpp/nvidia/bench/graph_timing.cuh"

namespace sm = oprt::softmax::gpu_kernels;
namespace rs = oprt::reduce_sum::gpu_kernels;
using oprt::gpu::OuterIndex;

template <typename T>
__global__ void fill_kernel(T *p, int64_t n) {
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
        uint32_t h = uint32_t(i) * 2654435761u;
        h ^= h >> 13;
        h *= 0x5bd1e995u;
        h ^= h >> 15;
        p[i] = oprt::dev::from_f32<T>(float(h & 0xffff) / 8192.0f - 4.0f);
    }
}

cudaStream_t g_stream;
int g_sms;

// 10 launches per graph, median of 5 replays.
template <typename F>
double time_graph(F launch) {
    return graph_seconds_per_launch(launch, g_stream, 10, 5);
}

void report(const char *what, int64_t rows, int64_t L, const char *dt, double bytes, double t, const char *extra = "") {
    std::printf("%-40s %-4s %7lld x %-8lld %9.2f us %6.0f GB/s %s\n", what, dt, (long long)rows, (long long)L, t * 1e6,
                bytes / t / 1e9, extra);
    std::fflush(stdout);
}

OuterIndex rows_index(int64_t L) {
    OuterIndex ix;
    ix.ndim = 1;
    ix.shape[0] = 1 << 30;
    ix.in_strides[0] = L;
    ix.out_strides[0] = L;
    return ix;
}

template <typename T>
const char *dname() {
    return sizeof(T) == 4 ? "f32" : "bf16";
}

// ---- softmax --------------------------------------------------------------------

// One block of kThreads per row, the row in registers (rows_registers.cuh).
template <typename T, int kThreads, int V>
void sm_registers_at(const T *in, T *out, int64_t rows, int64_t L) {
    const OuterIndex ix = rows_index(L);
    const double t = time_graph([&] {
        sm::softmax_rows_registers_kernel<T, kThreads, V, 1, sm::Feed::kLoads, false>
            <<<unsigned(rows), kThreads, 0, g_stream>>>(in, out, 0, rows, L, ix);
    });
    char what[64];
    std::snprintf(what, sizeof what, "softmax registers thr %d vecs %d", kThreads, V);
    report(what, rows, L, dname<T>(), 2.0 * rows * L * sizeof(T), t);
}
template <typename T, int V>
void sm_registers(const T *in, T *out, int64_t rows, int64_t L, int threads) {
    switch (threads) {
    case 64: sm_registers_at<T, 64, V>(in, out, rows, L); break;
    case 128: sm_registers_at<T, 128, V>(in, out, rows, L); break;
    case 256: sm_registers_at<T, 256, V>(in, out, rows, L); break;
    case 512: sm_registers_at<T, 512, V>(in, out, rows, L); break;
    case 1024: sm_registers_at<T, 1024, V>(in, out, rows, L); break;
    default: break;
    }
}

// One block per row, the row in shared memory (smem_fraction of what a block
// may take; the rest of a longer row streams through L2 twice).
template <typename T>
void sm_smem(const T *in, T *out, int64_t rows, int64_t L, double smem_fraction = 1.0) {
    constexpr int64_t P = oprt::gpu::vector_width<T>();
    int optin = 0;
    CK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
    const int64_t cap = int64_t((optin - 1024) * smem_fraction) / 4 / P * P;
    sm::SmemRows q;
    q.rows = rows;
    q.L = L;
    q.cached = std::min((L + P - 1) / P * P, cap);
    q.ix = rows_index(L);
    const size_t smem = size_t(q.cached) * 4;
    const int threads = 512;
    auto *k = &sm::softmax_rows_smem_kernel<T>;
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, threads, smem));
    const double t = time_graph([&] { k<<<unsigned(rows), threads, smem, g_stream>>>(in, out, q); });
    char what[64], extra[64];
    std::snprintf(what, sizeof what, "softmax smem %.0f%%%s", smem_fraction * 100, q.cached < L ? " +L2 tail" : "");
    std::snprintf(extra, sizeof extra, "blocks/SM %d, cached %lld KB", per_sm, (long long)(q.cached * 4 / 1024));
    report(what, rows, L, dname<T>(), 2.0 * rows * L * sizeof(T), t, extra);
}

template <typename T>
void sm_long(const T *in, T *out, int64_t rows, int64_t L) {
    const OuterIndex ix = rows_index(L);
    const double t = time_graph([&] {
        sm::softmax_rows_long_kernel<T><<<unsigned(rows), 1024, 0, g_stream>>>(in, out, rows, L, ix);
    });
    report("softmax long: block per row, two passes", rows, L, dname<T>(), 2.0 * rows * L * sizeof(T), t);
}

template <typename T>
void sm_split(const T *in, T *out, int64_t rows, int64_t L, oprt::gpu::F32Pair *stats) {
    constexpr int64_t P = oprt::gpu::vector_width<T>();
    const int64_t target = 2 * g_sms;
    const int64_t max_chunks = (L + 1024 * P * 4 - 1) / (1024 * P * 4);
    int64_t chunks = std::max<int64_t>(1, std::min<int64_t>((target + rows - 1) / rows, max_chunks));
    const int64_t chunk_len = ((L + chunks - 1) / chunks + 255) / 256 * 256;
    chunks = (L + chunk_len - 1) / chunk_len;
    const OuterIndex ix = rows_index(L);
    const double t = time_graph([&] {
        sm::softmax_rows_split_stats_kernel<T><<<unsigned(rows * chunks), 1024, 0, g_stream>>>(in, stats, rows, L, chunks,
                                                                                               chunk_len, ix);
        sm::softmax_rows_split_write_kernel<T><<<unsigned(rows * chunks), 1024, 0, g_stream>>>(in, out, stats, rows, L,
                                                                                               chunks, chunk_len, ix);
    });
    report("softmax split two-pass (stats + write)", rows, L, dname<T>(), 2.0 * rows * L * sizeof(T), t);
}

template <typename T>
void softmax_ladder(void *in_raw, void *out_raw, oprt::gpu::F32Pair *stats) {
    T *in = static_cast<T *>(in_raw), *out = static_cast<T *>(out_raw);
    const int64_t total = (int64_t(256) << 20) / int64_t(sizeof(T));
    fill_kernel<T><<<1024, 256>>>(in, total);
    CK(cudaDeviceSynchronize());
    constexpr bool f32 = sizeof(T) == 4;
    // Rows in registers against one block's shared memory, 2K..16K columns.
    for (int64_t L : {2048, 4096, 8192, 16384}) {
        const int64_t rows = total / L;
        const int64_t P = f32 ? 4 : 8;
        for (int V : {1, 2, 4, 8}) {
            const int64_t threads = L / P / V;
            if (threads < 64 || threads > 1024) continue;
            if (V == 1) sm_registers<T, 1>(in, out, rows, L, int(threads));
            if (V == 2) sm_registers<T, 2>(in, out, rows, L, int(threads));
            if (V == 4) sm_registers<T, 4>(in, out, rows, L, int(threads));
            if (V == 8) sm_registers<T, 8>(in, out, rows, L, int(threads));
        }
        sm_smem<T>(in, out, rows, L);
    }
    // Long rows: shared memory with a tail through L2, the block two-pass, the split two-pass.
    for (int64_t L : {int64_t(32768), int64_t(65536), int64_t(131072), int64_t(1) << 20}) {
        const int64_t rows = total / L;
        sm_smem<T>(in, out, rows, L);
        sm_smem<T>(in, out, rows, L, 0.5);  // two blocks per SM, a longer tail through L2
        sm_long<T>(in, out, rows, L);
        sm_split<T>(in, out, rows, L, stats);
    }
}

// ---- reduce_sum -----------------------------------------------------------------------

// The 32 MB inputs of these cases would sit in L2 if every launch read the
// same one: launch i reads copy i % 8 of a 256 MB buffer.
template <int G>
void rs_group(const float *in, float *out, int64_t rows, int64_t L) {
    const OuterIndex ix = rows_index(L);
    OuterIndex oix = ix;
    oix.out_strides[0] = 1;
    int i = 0;
    const double t = time_graph([&] {
        const float *src = in + (i++ % 8) * rows * L;
        rs::reduce_rows_group_kernel<float, float, G>
            <<<unsigned((rows + 256 / G - 1) / (256 / G)), 256, 0, g_stream>>>(src, out, rows, L, oix);
    });
    char what[64];
    std::snprintf(what, sizeof what, "reduce rows group G=%d", G);
    report(what, rows, L, "f32", 4.0 * rows * (L + 1), t);
}

void rs_cluster(const float *in, float *out, int64_t rows, int64_t L, int C, int threads) {
    OuterIndex ix = rows_index(L);
    ix.out_strides[0] = 1;
    const int64_t chunk_len = ((L + C - 1) / C + 255) / 256 * 256;
    auto *k = &rs::reduce_rows_cluster_kernel<float, float>;
    cudaLaunchConfig_t config{};
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = unsigned(C);
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    config.gridDim = dim3(unsigned(rows * C), 1, 1);
    config.blockDim = dim3(threads, 1, 1);
    config.stream = g_stream;
    config.attrs = attr;
    config.numAttrs = 1;
    if (C > 8) CK(cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    int i = 0;
    const double t = time_graph([&] {
        const float *src = in + (i++ % 8) * rows * L;
        CK(cudaLaunchKernelEx(&config, k, src, out, rows, L, chunk_len, ix));
    });
    char what[64];
    std::snprintf(what, sizeof what, "reduce rows cluster C=%d thr %d", C, threads);
    report(what, rows, L, "f32", 4.0 * rows * (L + 1), t);
}

void rs_split(const float *in, float *out, float *partial, int64_t rows, int64_t L, int64_t chunks, int threads) {
    OuterIndex ix = rows_index(L);
    ix.out_strides[0] = 1;
    const int64_t chunk_len = ((L + chunks - 1) / chunks + 255) / 256 * 256;
    chunks = (L + chunk_len - 1) / chunk_len;
    OuterIndex fix = ix;
    fix.in_row_stride = chunks;
    int i = 0;
    const double t = time_graph([&] {
        const float *src = in + (i++ % 8) * rows * L;
        rs::reduce_rows_split_kernel<float><<<unsigned(rows * chunks), threads, 0, g_stream>>>(src, partial, rows, L,
                                                                                               chunks, chunk_len, ix);
        rs::reduce_rows_group_kernel<float, float, 8>
            <<<unsigned((rows + 31) / 32), 256, 0, g_stream>>>(partial, out, rows, chunks, fix);
    });
    char what[64];
    std::snprintf(what, sizeof what, "reduce rows split %lld chunks thr %d", (long long)chunks, threads);
    report(what, rows, L, "f32", 4.0 * rows * (L + 1), t);
}

int main() {
    CK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
    void *in, *out;
    oprt::gpu::F32Pair *stats;
    CK(cudaMalloc(&in, size_t(256) << 20));
    CK(cudaMalloc(&out, size_t(256) << 20));
    CK(cudaMalloc(&stats, size_t(64) << 20));
    // reduce_sum short and long rows
    {
        float *fin = static_cast<float *>(in), *fout = static_cast<float *>(out);
        fill_kernel<float><<<1024, 256>>>(fin, int64_t(64) << 20);
        CK(cudaDeviceSynchronize());
        const int64_t rows = 65536;  // (65536, 128): 32 MB
        rs_group<2>(fin, fout, rows, 128);
        rs_group<4>(fin, fout, rows, 128);
        rs_group<8>(fin, fout, rows, 128);
        rs_group<32>(fin, fout, rows, 128);
        for (int64_t r : {int64_t(128)}) {  // (128, 65536): 32 MB
            rs_cluster(fin, fout, r, 65536, 2, 256);
            rs_cluster(fin, fout, r, 65536, 4, 256);
            rs_cluster(fin, fout, r, 65536, 8, 256);
            rs_cluster(fin, fout, r, 65536, 4, 512);
            rs_split(fin, fout, reinterpret_cast<float *>(stats), r, 65536, 5, 512);
            rs_split(fin, fout, reinterpret_cast<float *>(stats), r, 65536, 8, 256);
        }
    }
    softmax_ladder<float>(in, out, stats);
    softmax_ladder<__nv_bfloat16>(in, out, stats);
    return 0;
}
