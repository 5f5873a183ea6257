// 64-bit indexing end to end: copy, relu and reduce_sum on one bf16 tensor of
// more than 2^32 elements (4.3 * 10^9 by default, 8.6 GB per buffer), filled
// and checked on the device. Runs only with CAMP_LARGE_TESTS=1 (it needs about
// 18 GB of device memory); CAMP_LARGE_NUMEL overrides the element count.
//
// The input is x[i] = ((i mod 17) - 8) / 2: exact in bf16, and 17 is coprime
// with 2^31 and 2^32, so an index that wraps at either reads a different value.
// Its f32 partial sums stay small integers / 2, so every sum is exact.
#include <cuda_bf16.h>

#include <cstdlib>
#include <string>

#include "nvidia_test_support.h"

namespace nvt {
namespace {

__host__ __device__ inline float pattern(unsigned long long i) { return float(int(i % 17ull) - 8) * 0.5f; }

__global__ void fill_pattern(__nv_bfloat16 *x, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < n; i += 1ull * gridDim.x * blockDim.x)
        x[i] = __float2bfloat16(pattern(i));
}

// Counts elements of y that differ from f(pattern(i)).
template <typename F>
__global__ void count_mismatches(const __nv_bfloat16 *y, unsigned long long n, F f, unsigned long long *bad) {
    unsigned long long local = 0;
    for (unsigned long long i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < n; i += 1ull * gridDim.x * blockDim.x)
        if (__bfloat162float(y[i]) != f(i)) ++local;
    if (local) atomicAdd(bad, local);
}

struct Identity {
    __device__ float operator()(unsigned long long i) const { return pattern(i); }
};
struct Relu {
    __device__ float operator()(unsigned long long i) const {
        const float x = pattern(i);
        return x > 0.0f ? x : 0.25f * x;  // exact in bf16 for these values
    }
};
struct RowSum {  // sum of row r of a (rows, cols) view; exact in f32 and bf16
    unsigned long long cols;
    __device__ float operator()(unsigned long long r) const {
        float s = 0.0f;
        for (unsigned long long k = 0; k < cols; ++k) s += pattern(r * cols + k);
        return s;
    }
};

template <typename F>
unsigned long long mismatches(const void *y, unsigned long long n, F f, unsigned long long *counter) {
    cudaMemset(counter, 0, sizeof *counter);
    count_mismatches<<<4096, 256>>>(static_cast<const __nv_bfloat16 *>(y), n, f, counter);
    unsigned long long host = ~0ull;
    cudaMemcpy(&host, counter, sizeof host, cudaMemcpyDeviceToHost);
    return host;
}

oprt_tensor_view_t bf16_view(std::initializer_list<int64_t> shape) {
    oprt_tensor_view_t v{};
    v.dtype = OPRT_DTYPE_BF16;
    v.ndim = int32_t(shape.size());
    int d = 0;
    for (int64_t s : shape) v.shape[d++] = s;
    int64_t stride = 1;
    for (d = v.ndim - 1; d >= 0; --d) {
        v.strides[d] = stride;
        stride *= v.shape[d];
    }
    return v;
}

TEST(NvidiaLargeTensor, CopyReluReduceSumBf16Over2To32Elements) {
    NVT_SKIP_WITHOUT_CUDA();
    const char *enabled = std::getenv("CAMP_LARGE_TESTS");
    if (enabled == nullptr || std::string(enabled) != "1") {
        std::printf("[  SKIPPED ] set CAMP_LARGE_TESTS=1 to run (needs ~18 GB of device memory)\n");
        GTEST_SKIP() << "set CAMP_LARGE_TESTS=1 to run (needs ~18 GB of device memory)";
    }
    const unsigned long long cols = 1024;
    unsigned long long n = 1024ull * 4198403ull;  // 4,299,164,672 > 2^32
    if (const char *s = std::getenv("CAMP_LARGE_NUMEL")) n = std::strtoull(s, nullptr, 10);
    ASSERT_GT(n, 3000000000ull) << "CAMP_LARGE_NUMEL must exceed 3 * 10^9";
    NvidiaBackend backend;

    DeviceBuffer in, out, counter(sizeof(unsigned long long));
    const size_t bytes = size_t(n) * 2;
    cudaError_t e = in.allocate(bytes);
    if (e == cudaSuccess) e = out.allocate(bytes);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        GTEST_SKIP() << "cannot allocate 2 x " << bytes << " bytes: " << cudaGetErrorString(e);
    }
    fill_pattern<<<8192, 256>>>(static_cast<__nv_bfloat16 *>(in.get()), n);
    NVT_CUDA_OK(cudaGetLastError());
    auto *count = static_cast<unsigned long long *>(counter.get());
    const oprt_tensor_view_t flat = bf16_view({int64_t(n)});

    {  // copy: contiguous vectorized path over 2^32+ elements
        NVT_CUDA_OK(cudaMemset(out.get(), 0xFF, bytes));
        oprt_copy_descriptor_t d;
        NVT_OPRT_OK(oprt_create_copy_descriptor(&d, &flat, &flat));
        NVT_OPRT_OK(oprt_execute_copy(d, nullptr, 0, out.get(), in.get(), nullptr));
        oprt_destroy_copy_descriptor(d);
        EXPECT_EQ(mismatches(out.get(), n, Identity{}, count), 0ull) << "copy";
    }
    {  // relu
        NVT_CUDA_OK(cudaMemset(out.get(), 0xFF, bytes));
        oprt_relu_descriptor_t d;
        NVT_OPRT_OK(oprt_create_relu_descriptor(&d, &flat, &flat, 0.25f));
        NVT_OPRT_OK(oprt_execute_relu(d, nullptr, 0, out.get(), in.get(), nullptr));
        oprt_destroy_relu_descriptor(d);
        EXPECT_EQ(mismatches(out.get(), n, Relu{}, count), 0ull) << "relu";
    }
    {  // reduce_sum of everything: one row of 2^32+ elements, split over the GPU
        const oprt_tensor_view_t scalar = bf16_view({});
        oprt_reduce_sum_descriptor_t d;
        NVT_OPRT_OK(oprt_create_reduce_sum_descriptor(&d, &scalar, &flat, 0));
        size_t ws_bytes = 0;
        NVT_OPRT_OK(oprt_get_reduce_sum_workspace_size(d, &ws_bytes));
        DeviceBuffer ws(ws_bytes);
        NVT_CUDA_OK(cudaMemset(out.get(), 0xFF, 2));
        NVT_OPRT_OK(oprt_execute_reduce_sum(d, ws.get(), ws_bytes, out.get(), in.get(), nullptr));
        oprt_destroy_reduce_sum_descriptor(d);
        float want = 0.0f;  // whole periods of 17 sum to 0
        for (unsigned long long i = n - n % 17; i < n; ++i) want += pattern(i);
        __nv_bfloat16 got_bits;
        NVT_CUDA_OK(cudaMemcpy(&got_bits, out.get(), 2, cudaMemcpyDeviceToHost));
        uint16_t raw;
        std::memcpy(&raw, &got_bits, 2);
        EXPECT_EQ(oprt::bf16_to_f32(oprt::bf16_t{raw}), want) << "reduce_sum over all " << n << " elements";
    }
    {  // reduce_sum over the last axis of (n / 1024, 1024): row offsets beyond 2^32
        const unsigned long long rows = n / cols;
        const oprt_tensor_view_t in2 = bf16_view({int64_t(rows), int64_t(cols)});
        const oprt_tensor_view_t out2 = bf16_view({int64_t(rows)});
        oprt_reduce_sum_descriptor_t d;
        NVT_OPRT_OK(oprt_create_reduce_sum_descriptor(&d, &out2, &in2, 1));
        size_t ws_bytes = 0;
        NVT_OPRT_OK(oprt_get_reduce_sum_workspace_size(d, &ws_bytes));
        DeviceBuffer ws(ws_bytes);
        NVT_CUDA_OK(cudaMemset(out.get(), 0xFF, rows * 2));
        NVT_OPRT_OK(oprt_execute_reduce_sum(d, ws.get(), ws_bytes, out.get(), in.get(), nullptr));
        oprt_destroy_reduce_sum_descriptor(d);
        EXPECT_EQ(mismatches(out.get(), rows, RowSum{cols}, count), 0ull) << "reduce_sum rows";
    }
    NVT_CUDA_OK(cudaDeviceSynchronize());
}

}  // namespace
}  // namespace nvt
