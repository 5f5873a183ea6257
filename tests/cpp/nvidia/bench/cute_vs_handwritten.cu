// CuTe kernels against the hand-written ones, in one run on one GPU: copy,
// vector_add and relu (slope 0.1) in f32, f16 and bf16 over contiguous sizes from
// L2-resident to HBM-bound. Built with CuTe as camp_cute_bench (a standalone
// executable: both kinds of kernels are internal to camp_ops):
//   ./camp_cute_bench            # one line per op, dtype and size
// Each measurement: 20 launches captured in a CUDA graph, the median of 7 replays;
// GB/s counts the bytes read + written. Exits non-zero when no GPU is visible.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "runtime/gpu/cute_launch.h"
#include "ops/copy/copy_backends.h"
#include "ops/relu/relu_backends.h"
#include "ops/vector_add/vector_add_backends.h"
#include "tests/cpp/nvidia/bench/graph_timing.cuh"

namespace {

using oprt::ElementwisePlan;
using oprt::ExecArgs;
using Launch = oprt_status_t (*)(const ElementwisePlan &, const ExecArgs &);

// Milliseconds per launch, or a negative value when the launch was refused.
double time_launch(Launch fn, const ElementwisePlan &p, const ExecArgs &args, cudaStream_t s) {
    if (fn(p, args) != OPRT_SUCCESS) return -1;  // the refusal check
    return graph_seconds_per_launch([&] { fn(p, args); }, s) * 1e3;
}

struct Case {
    const char *op;
    int inputs;
    float scalar;
    oprt_status_t (*plan)(ElementwisePlan &);
    Launch hand;
    Launch cute;
};

}  // namespace

int main() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        std::printf("camp_cute_bench: no CUDA device visible\n");
        return 1;
    }
    cudaDeviceProp prop{};
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf("# %s: CuTe vs hand-written elementwise kernels (contiguous, 16-byte aligned)\n",
                prop.name);
    std::printf("%-10s %-5s %11s %10s %10s %10s %10s %7s\n", "op", "dtype", "elements",
                "hand_us", "hand_GB/s", "cute_us", "cute_GB/s", "cute/hand");
    const Case cases[] = {
        {"copy", 1, 0.0f, oprt::copy::nvidia::plan, oprt::copy::nvidia::run,
         oprt::cute_kernels::launch_cute_copy},
        {"vector_add", 2, 0.0f, oprt::vector_add::nvidia::plan, oprt::vector_add::nvidia::run,
         oprt::cute_kernels::launch_cute_vector_add},
        {"relu", 1, 0.1f, oprt::relu::nvidia::plan, oprt::relu::nvidia::run,
         oprt::cute_kernels::launch_cute_relu},
    };
    const oprt_dtype_t dtypes[] = {OPRT_DTYPE_F32, OPRT_DTYPE_F16, OPRT_DTYPE_BF16};
    const int64_t sizes[] = {1 << 16, 1 << 20, (1 << 24) + 3, 1 << 28};
    const int64_t max_bytes = (int64_t(1) << 28) * 4;
    void *buf[3];
    for (void *&b : buf) {
        CK(cudaMalloc(&b, max_bytes));
        CK(cudaMemset(b, 0, max_bytes));
    }
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (const Case &c : cases)
        for (oprt_dtype_t d : dtypes)
            for (int64_t n : sizes) {
                ElementwisePlan p;
                p.dtype = d;
                p.num_inputs = c.inputs;
                p.numel = n;
                p.ndim = 1;
                p.shape[0] = n;
                for (int i = 0; i <= c.inputs; ++i) p.strides[i][0] = 1;
                p.contiguous = true;
                p.scalar = c.scalar;
                if (c.plan(p) != OPRT_SUCCESS) {
                    std::printf("%s: plan failed\n", c.op);
                    return 1;
                }
                ExecArgs args;
                args.out = buf[0];
                args.in0 = buf[1];
                args.in1 = buf[2];
                args.stream = s;
                const double hand = time_launch(c.hand, p, args, s);
                const double cute = time_launch(c.cute, p, args, s);
                const double bytes = double(n) * (d == OPRT_DTYPE_F32 ? 4 : 2) * (c.inputs + 1);
                std::printf("%-10s %-5s %11lld %10.2f %10.1f %10.2f %10.1f %7.2f\n", c.op,
                            oprt_dtype_string(d), static_cast<long long>(n), hand * 1e3,
                            bytes / (hand * 1e-3) / 1e9, cute * 1e3, bytes / (cute * 1e-3) / 1e9,
                            hand / cute);
            }
    CK(cudaStreamDestroy(s));
    for (void *b : buf) CK(cudaFree(b));
    return 0;
}
