// How fast can rows move through the softmax bulk ring with no math at all,
// and does the grid's shape matter? Rows are copied global -> shared memory
// (one bulk copy per row, gpu_bulk_copy.cuh) -> global (16-byte stores) by
//   wave     one wave of resident blocks, each looping over every G-th row
//            with a ring of 3 buffers (the softmax ring's grid before v10);
//   R rows   ceil(rows / R) blocks of R rows each, in waves, all R rows asked
//            for at the start (the register ring's grid since v10: R = 2);
// next to a plain copy with one 16-byte vector per thread (the elementwise
// kernels' grid), and reads alone (one-shot, four vectors a thread) at the
// sizes of reduce_sum's small cases; last, the wave's rows on 128-byte line
// boundaries against rows off them (softmax rows of odd lengths start at every
// offset). Inputs rotate over enough buffer sets to
// pass 240 MiB, as in the harness. Not part of the build or the tests;
// compile by hand:
//   nvcc -O3 -arch=sm_90 -std=c++17 -I . -I include -o bulk_ring_grids tests/cpp/nvidia/bench/bulk_ring_grids.cu
//   ./bulk_ring_grids
// H200 output (2026-11-30) and what it means: docs/kernels/softmax.md, step 5.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "runtime/gpu/gpu_bulk_copy.cuh"
#include "tests/cpp/nvidia/bench/graph_timing.cuh"

namespace bulk = oprt::gpu::bulk;

constexpr int kMaxStages = 4;

// Rows r = blockIdx.x + k * gridDim.x, `pitch` bytes apart; `stages` buffers of one row each.
__global__ void ring_copy(const char *__restrict__ in, char *__restrict__ out, int rows, int row_bytes, int stages,
                          int pitch) {
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ __align__(8) uint64_t full[kMaxStages];
    auto row_of = [&](int k) { return int(blockIdx.x) + k * int(gridDim.x); };
    auto fetch = [&](int k, int b) {
        if (row_of(k) >= rows) return;
        bulk::expect_bytes(&full[b], unsigned(row_bytes));
        bulk::copy_to_shared(smem + b * row_bytes, in + size_t(row_of(k)) * pitch, unsigned(row_bytes), &full[b]);
    };
    if (threadIdx.x == 0) {
        for (int b = 0; b < stages; ++b) bulk::init(&full[b]);
        for (int k = 0; k < stages; ++k) fetch(k, k);
    }
    __syncthreads();
    uint32_t phases = 0;
    for (int k = 0, b = 0; row_of(k) < rows; ++k) {
        bulk::wait(&full[b], (phases >> b) & 1u);
        phases ^= 1u << b;
        const uint4 *src = reinterpret_cast<const uint4 *>(smem + b * row_bytes);
        uint4 *dst = reinterpret_cast<uint4 *>(out + size_t(row_of(k)) * pitch);
        for (int q = threadIdx.x; q < row_bytes / 16; q += blockDim.x) dst[q] = src[q];
        __syncthreads();  // the buffer is read: refill it
        if (threadIdx.x == 0) {
            bulk::fence_before_async_write();
            fetch(k + stages, b);
        }
        b = b + 1 == stages ? 0 : b + 1;
    }
}

__global__ void vector_copy(const uint4 *__restrict__ in, uint4 *__restrict__ out, size_t n) {
    const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}

// Four vectors a thread, summed; one atomic per block keeps the reads live.
__global__ void read_sum(const float4 *__restrict__ in, float *__restrict__ out, size_t n) {
    __shared__ float warp_sums[32];
    const size_t i = size_t(blockIdx.x) * blockDim.x * 4 + threadIdx.x;
    float4 v[4];
    for (int j = 0; j < 4; ++j) v[j] = i + j * blockDim.x < n ? in[i + j * blockDim.x] : make_float4(0, 0, 0, 0);
    float s = 0.0f;
    for (int j = 0; j < 4; ++j) s += (v[j].x + v[j].y) + (v[j].z + v[j].w);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(~0u, s, o);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.0f;
        for (unsigned w = 0; w < blockDim.x / 32; ++w) t += warp_sums[w];
        atomicAdd(out + blockIdx.x % 1024, t);
    }
}

// Buffer sets of `bytes` in and out, enough to pass 240 MiB together.
struct Sets {
    std::vector<char *> in, out;
    explicit Sets(size_t bytes) {
        const size_t n = std::max<size_t>(2, (240ull << 20) / (2 * bytes) + 1);
        for (size_t i = 0; i < n; ++i) {
            char *a, *b;
            CK(cudaMalloc(&a, bytes));
            CK(cudaMalloc(&b, bytes));
            CK(cudaMemset(a, int(i % 7) + 1, bytes));
            in.push_back(a);
            out.push_back(b);
        }
    }
    ~Sets() {
        for (size_t i = 0; i < in.size(); ++i) {
            cudaFree(in[i]);
            cudaFree(out[i]);
        }
    }
};

int main() {
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    std::printf("%-44s %10s %8s\n", "copy (GB/s: read + write)", "us", "GB/s");
    for (size_t mib : {64, 256}) {
        const size_t bytes = mib << 20;
        Sets sets(bytes);
        size_t next = 0;
        auto report = [&](const char *what, double sec) {
            std::printf("%4zu MiB %-35s %10.2f %8.0f\n", mib, what, sec * 1e6, 2.0 * double(bytes) / sec / 1e9);
        };
        report("vector copy, a vector a thread", graph_seconds_per_launch(
                                                    [&] {
                                                        const size_t i = next++ % sets.in.size();
                                                        const size_t n = bytes / 16;
                                                        vector_copy<<<unsigned((n + 255) / 256), 256, 0, s>>>(
                                                            reinterpret_cast<const uint4 *>(sets.in[i]),
                                                            reinterpret_cast<uint4 *>(sets.out[i]), n);
                                                    },
                                                    s, int(std::max<size_t>(20, sets.in.size()))));
        for (int row_bytes : {8192, 16384, 32768}) {
            const int rows = int(bytes / size_t(row_bytes));
            const int threads = row_bytes / 16 / 4 < 128 ? 128 : row_bytes / 16 / 4;  // 4 vectors a thread
            // R = 0: one wave of looping blocks with 3 buffers; else blocks of R rows.
            for (int R : {0, 1, 2, 4}) {
                const int stages = R == 0 ? 3 : R;
                const size_t smem = size_t(stages) * size_t(row_bytes);
                CK(cudaFuncSetAttribute(ring_copy, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
                int per_sm = 0;
                CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ring_copy, threads, smem));
                if (per_sm == 0) continue;
                const int grid = R == 0 ? std::min(rows, per_sm * sms) : (rows + R - 1) / R;
                char what[64];
                if (R == 0) std::snprintf(what, sizeof what, "ring %2d KB rows, one wave (%d blocks)", row_bytes / 1024, grid);
                else std::snprintf(what, sizeof what, "ring %2d KB rows, blocks of %d rows", row_bytes / 1024, R);
                report(what, graph_seconds_per_launch(
                                 [&] {
                                     const size_t i = next++ % sets.in.size();
                                     ring_copy<<<unsigned(grid), unsigned(threads), smem, s>>>(
                                         sets.in[i], sets.out[i], rows, row_bytes, stages, row_bytes);
                                 },
                                 s, int(std::max<size_t>(20, sets.in.size()))));
            }
        }
    }
    std::printf("\n%-44s %10s %8s\n", "reads alone (GB/s: bytes read)", "us", "GB/s");
    for (size_t mib : {16, 32, 256}) {
        const size_t bytes = mib << 20;
        Sets sets(bytes);
        size_t next = 0;
        const size_t n = bytes / 16;
        const double sec = graph_seconds_per_launch(
            [&] {
                const size_t i = next++ % sets.in.size();
                read_sum<<<unsigned((n + 1023) / 1024), 256, 0, s>>>(reinterpret_cast<const float4 *>(sets.in[i]),
                                                                    reinterpret_cast<float *>(sets.out[i]), n);
            },
            s, int(std::max<size_t>(20, sets.in.size())));
        std::printf("%4zu MiB %-35s %10.2f %8.0f\n", mib, "one-shot, 4 vectors a thread", sec * 1e6,
                    double(bytes) / sec / 1e9);
    }
    // One wave of looping blocks, 3 buffers, 256 MiB of rows: all on 128-byte lines, all 16
    // bytes past one, or each 16 bytes further than the last (a pitch of row + 16 bytes).
    std::printf("\n%-44s %10s %8s\n", "rows and 128-byte lines (GB/s: read + write)", "us", "GB/s");
    {
        const size_t bytes = 256ull << 20;
        Sets sets(bytes + (1u << 20));
        size_t next = 0;
        for (int row_bytes : {16384, 32768}) {
            struct Layout {
                const char *name;
                int first, extra;
            };
            for (Layout l : {Layout{"on lines", 0, 0}, Layout{"all at +16", 16, 0}, Layout{"each further", 0, 16}}) {
                const int pitch = row_bytes + l.extra;
                const int rows = int(bytes / size_t(pitch));
                const int threads = row_bytes / 16 / 4 < 128 ? 128 : row_bytes / 16 / 4;
                const int stages = 3;
                const size_t smem = size_t(stages) * size_t(row_bytes);
                CK(cudaFuncSetAttribute(ring_copy, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
                int per_sm = 0;
                CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ring_copy, threads, smem));
                const int grid = std::min(rows, per_sm * sms);
                const double sec = graph_seconds_per_launch(
                    [&] {
                        const size_t i = next++ % sets.in.size();
                        ring_copy<<<unsigned(grid), unsigned(threads), smem, s>>>(
                            sets.in[i] + l.first, sets.out[i] + l.first, rows, row_bytes, stages, pitch);
                    },
                    s, int(std::max<size_t>(20, sets.in.size())));
                std::printf("256 MiB ring %2d KB rows, %-22s %10.2f %8.0f\n", row_bytes / 1024, l.name, sec * 1e6,
                            2.0 * double(size_t(rows) * size_t(row_bytes)) / sec / 1e9);
            }
        }
    }
    CK(cudaStreamDestroy(s));
    return 0;
}
