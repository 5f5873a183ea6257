// A ladder of streaming-kernel variants for the elementwise framework: which
// grid shape and how many 16-byte accesses in flight per thread reach the
// copy ceiling on this GPU. Not part of the build or the tests; compile by hand:
//   nvcc -O3 -arch=sm_90 -std=c++17 -I . -o ew_variants tests/cpp/nvidia/bench/elementwise_variants.cu
//   ./ew_variants            # prints one line per variant and size
// Each variant: 20 launches captured in a CUDA graph, median of 7 replays;
// GB/s counts bytes read + written. cudaMemcpyAsync is the reference.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <vector>

#include "tests/cpp/nvidia/bench/graph_timing.cuh"

enum Grid { kOneShot = 0, kGridStride = 1, kChunked = 2 };

template <bool kHint>
__device__ __forceinline__ float4 ld(const float4 *p) {
    if constexpr (kHint) return __ldcs(p);
    else return *p;
}
template <bool kHint>
__device__ __forceinline__ void st(float4 *p, float4 v) {
    if constexpr (kHint) __stcs(p, v);
    else *p = v;
}

// out = a (NIn 1) or a + b (NIn 2) over nvec float4s; U accesses per operand in flight.
template <int U, int kGrid, bool kHint, int NIn>
__global__ void variant(float4 *out, const float4 *a, const float4 *b, int64_t nvec) {
    const int64_t nt = blockDim.x, tile = nt * U;
    int64_t begin, end, step;
    if (kGrid == kChunked) {
        const int64_t g = 32, units = (nvec + g - 1) / g, per = units / gridDim.x, extra = units % gridDim.x;
        const int64_t bb = blockIdx.x;
        const int64_t u0 = bb * per + (bb < extra ? bb : extra), u1 = u0 + per + (bb < extra ? 1 : 0);
        begin = u0 * g;
        end = u1 * g < nvec ? u1 * g : nvec;
        step = tile;
    } else {
        begin = int64_t(blockIdx.x) * tile;
        end = nvec;
        step = int64_t(gridDim.x) * tile;
    }
    for (int64_t base = begin + threadIdx.x; base < end; base += step) {
        float4 x[U], y[U];
#pragma unroll
        for (int j = 0; j < U; ++j) {
            const int64_t q = base + j * nt;
            if (q < end) {
                x[j] = ld<kHint>(a + q);
                if (NIn > 1) y[j] = ld<kHint>(b + q);
            }
        }
#pragma unroll
        for (int j = 0; j < U; ++j) {
            const int64_t q = base + j * nt;
            if (q < end) {
                float4 r = x[j];
                if (NIn > 1) r = make_float4(x[j].x + y[j].x, x[j].y + y[j].y, x[j].z + y[j].z, x[j].w + y[j].w);
                st<kHint>(out + q, r);
            }
        }
    }
}

struct Bufs {
    float4 *out, *a, *b;
    int64_t nvec;
};

template <typename F>
double time_graph(F launch, cudaStream_t s) {
    return graph_seconds_per_launch(launch, s, 20, 7);
}

template <int U, int kGrid, bool kHint, int NIn>
void run(const char *name, const Bufs &B, int threads, int blocks_per_sm, int sms, cudaStream_t s) {
    const int64_t tile = int64_t(threads) * U;
    int64_t blocks = (B.nvec + tile - 1) / tile;
    if (kGrid != kOneShot) blocks = std::min<int64_t>(blocks, int64_t(sms) * blocks_per_sm);
    auto launch = [&] {
        variant<U, kGrid, kHint, NIn><<<unsigned(blocks), threads, 0, s>>>(B.out, B.a, B.b, B.nvec);
    };
    const double t = time_graph(launch, s);
    const double bytes = double(B.nvec) * 16 * (NIn + 1);
    std::printf("%-6s %-34s thr %4d grid %7lld  %8.1f us  %6.0f GB/s\n", NIn > 1 ? "add" : "copy", name, threads,
                (long long)blocks, t * 1e6, bytes / t / 1e9);
    std::fflush(stdout);
}

int main() {
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int64_t mib : {256, 1024}) {
        Bufs B;
        B.nvec = mib * (1 << 20) / 16;
        CK(cudaMalloc(&B.out, B.nvec * 16));
        CK(cudaMalloc(&B.a, B.nvec * 16));
        CK(cudaMalloc(&B.b, B.nvec * 16));
        CK(cudaMemset(B.a, 0x3c, B.nvec * 16));
        CK(cudaMemset(B.b, 0x3d, B.nvec * 16));
        std::printf("# %lld MiB per tensor\n", (long long)mib);
        {
            const double t = time_graph([&] { CK(cudaMemcpyAsync(B.out, B.a, B.nvec * 16, cudaMemcpyDeviceToDevice, s)); }, s);
            std::printf("%-6s %-34s %29.1f us  %6.0f GB/s\n", "copy", "cudaMemcpyAsync", t * 1e6, B.nvec * 32.0 / t / 1e9);
        }
        for (int nin = 1; nin <= 2; ++nin) {
            auto go = [&](auto nin_c) {
                constexpr int N = decltype(nin_c)::value;
                run<4, kOneShot, false, N>("oneshot U4 (HEAD)", B, 256, 0, sms, s);
                run<1, kOneShot, false, N>("oneshot U1", B, 256, 0, sms, s);
                run<2, kOneShot, false, N>("oneshot U2", B, 256, 0, sms, s);
                run<4, kGridStride, false, N>("gridstride U4 x8/SM", B, 256, 8, sms, s);
                run<4, kChunked, false, N>("chunked U4 x8/SM (library)", B, 256, 8, sms, s);
                run<8, kChunked, false, N>("chunked U8 x8/SM", B, 256, 8, sms, s);
                run<2, kChunked, false, N>("chunked U2 x8/SM", B, 256, 8, sms, s);
                run<4, kChunked, false, N>("chunked U4 x16/SM", B, 256, 16, sms, s);
                run<4, kChunked, false, N>("chunked U4 x4/SM 512t", B, 512, 4, sms, s);
                run<4, kChunked, true, N>("chunked U4 x8/SM cs-hints", B, 256, 8, sms, s);
                run<4, kGridStride, true, N>("gridstride U4 x8/SM cs-hints", B, 256, 8, sms, s);
            };
            if (nin == 1) go(std::integral_constant<int, 1>{});
            else go(std::integral_constant<int, 2>{});
        }
        CK(cudaFree(B.out));
        CK(cudaFree(B.a));
        CK(cudaFree(B.b));
    }
    return 0;
}
